"""The layer rule of docs/architecture.md, enforced on every import (lazy ones too)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CORE = {"memcore.core"}
BASE = CORE | {"memcore.observability"}
SERVICES = BASE | {"memcore.adapters", "memcore.store", "memcore.messaging",
                   "memcore.language"}
PIPELINE = SERVICES | {"memcore.ingest", "memcore.consolidate"}
# Which memcore packages each layer may import (its own package is always allowed).
ALLOWED: dict[str, set[str]] = {
    "memcore.core": set(),
    "memcore.observability": CORE,
    "memcore.messaging": CORE,
    "memcore.adapters": BASE | {"memcore.language"},  # the offline models are English
    "memcore.language": CORE,
    "memcore.store": BASE,
    "memcore.ingest": SERVICES,
    "memcore.consolidate": SERVICES,
    "memcore.client": PIPELINE,
    "memcore.api": PIPELINE | {"memcore.client"},
    "memcore.mcp": PIPELINE | {"memcore.client", "memcore.api"},
    "memcore.devtools": PIPELINE | {"memcore.client", "memcore.api"},
    "memcore.cli": PIPELINE | {"memcore.client", "memcore.api", "memcore.mcp",
                               "memcore.devtools"},
    "workers": PIPELINE,
}
# Third-party packages only some layers may use.
RESTRICTED = {
    "redis": {"memcore.store", "memcore.messaging", "memcore.observability",
              "memcore.devtools", "memcore.cli"},
    "openai": {"memcore.adapters"},
    "celery": {"memcore.client", "memcore.cli", "memcore.devtools", "memcore.api", "workers"},
    "kombu": {"memcore.messaging", "workers"},
    "fastapi": {"memcore.api"},
    "starlette": {"memcore.api"},
    "uvicorn": {"memcore.api"},
    "mcp": {"memcore.mcp"},
    # Grammar lives in the language packs (issue 26): the core holds none.
    "spacy": {"memcore.language"},
    "tiktoken": {"memcore.client"},
}


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


def test_memory_store_is_a_facade_not_a_mixin_chain() -> None:
    from memcore.store import MemoryStore

    assert MemoryStore.__mro__ == (MemoryStore, object)


def test_imports_follow_the_layer_rule() -> None:
    assert violations() == []


def test_the_rule_catches_a_violation(tmp_path: Path) -> None:
    found = _probe("memcore/core/_layer_probe.py", "from memcore.store import keys\nimport redis\n",
                   violations)
    assert any("_layer_probe.py:1: memcore.core -> memcore.store" in p for p in found)
    assert any("_layer_probe.py:2: memcore.core uses redis" in p for p in found)


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
