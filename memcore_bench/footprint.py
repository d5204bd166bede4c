"""``bench footprint``: Redis bytes per memory, measured with ``MEMORY USAGE``.

Stores ``n`` memories of dimension ``d`` (short chat-like facts, random unit vectors)
through :meth:`Writes.add` in one namespace and reads
:func:`memcore.store.memory_store.footprint`: the record key, its content-hash key
and its share of the order log per memory, against the bytes of its text and of its
packed vector.

Run: ``python -m memcore_bench.footprint --n 10000 --d 384 --out bench/footprint.json``.
Writes the JSON (keys are a contract), ``.md`` and ``.png``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memcore.core.models import Actor, Kind, Memory, Status
from memcore.local.stack import EmbeddedRedis
from memcore.store import MemoryStore, footprint
from memcore_bench.common import (
    machine,
    markdown_table,
    pyplot,
    save_figure,
    write_outputs,
)

CONTRACT_KEYS = ("bytes_per_memory", "text_bytes_per_memory", "vector_bytes_per_memory")
QUICK_N = 200
TARGET_OVERHEAD = 1024
NAMESPACE = "bench-footprint"
_SUBJECTS = ("Caroline", "Melanie", "Jon", "Gina", "Sam", "Priya", "Tomas", "Aiko")
_FACTS = ("lives in {x}", "works as a {y} near {x}", "loves {z} on weekends",
          "adopted a dog named {w} last spring", "is training for a marathon in {x}",
          "prefers {z} to anything else", "moved to {x} for a new job as a {y}")
_X = ("Lisbon", "Oslo", "Denver", "Kyoto", "Nairobi", "Lyon")
_Y = ("nurse", "teacher", "data engineer", "carpenter", "chef")
_Z = ("pottery", "rock climbing", "baking bread", "chess", "salsa dancing")
_W = ("Biscuit", "Luna", "Pepper", "Milo")


def fact_text(rng: random.Random, i: int) -> str:
    """A short fact like the write path stores (about 8-12 words)."""
    body = rng.choice(_FACTS).format(x=rng.choice(_X), y=rng.choice(_Y), z=rng.choice(_Z),
                                     w=rng.choice(_W))
    return f"{rng.choice(_SUBJECTS)} {body} (note {i})."


def fill(store: MemoryStore, n: int, d: int, seed: int = 0) -> None:
    """Add ``n`` memories of dimension ``d`` to the benchmark namespace."""
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    kinds = list(Kind)
    for i in range(n):
        at = start + timedelta(minutes=i)
        memory = Memory(namespace=NAMESPACE, text=fact_text(rng, i),
                        vector=[float(x) for x in vectors[i]], importance=rng.random(),
                        last_used=at, kind=rng.choice(kinds[:5]), sources=[f"ep-{i}"],
                        status=Status.ACTIVE, created_at=at, updated_at=at)
        store.writes.add(NAMESPACE, memory, actor=Actor.INGEST, reason="bench footprint")


def run_footprint(n: int, d: int, *, quick: bool = False, out: Path | None = None,
                  redis_url: str | None = None, seed: int = 0) -> dict[str, Any]:
    """Measure bytes per memory once; writes ``out`` (JSON), ``.md`` and ``.png``."""
    if quick:
        n = min(n, QUICK_N)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 8 <= d <= 8192:
        raise ValueError(f"d must be in [8, 8192], got {d}")

    embedded = None if redis_url else EmbeddedRedis()
    url = redis_url or (embedded.url if embedded else "")
    t0 = time.perf_counter()
    try:
        store = MemoryStore.from_url(url)
        if redis_url:
            store.eraser.erase_namespace(NAMESPACE, datetime.now(UTC), missing_ok=True)
        fill(store, n, d, seed)
        fill_seconds = time.perf_counter() - t0
        sizes = footprint(store, NAMESPACE, sample=n)
        if redis_url:
            store.eraser.erase_namespace(NAMESPACE, datetime.now(UTC), missing_ok=True)
        store.close()
    finally:
        if embedded is not None:
            embedded.stop()
    overhead = sizes["bytes_per_memory"] - sizes["text_bytes_per_memory"]
    result: dict[str, Any] = {
        "n": n, "d": d, **{k: sizes[k] for k in CONTRACT_KEYS},
        "overhead_bytes_per_memory": overhead,
        "float32_vector_bytes": 4 * d,
        "target_overhead_bytes": TARGET_OVERHEAD,
        "meets_target": overhead <= TARGET_OVERHEAD,
        "fill_seconds": fill_seconds, "quick": quick, "machine": machine(),
    }
    if out is not None:
        write_outputs(result, Path(out), markdown(result), plot)
    return result


def markdown(result: Mapping[str, Any]) -> str:
    """The figures as a one-row table."""
    cols = ("n", "d", *CONTRACT_KEYS, "overhead_bytes_per_memory", "float32_vector_bytes")
    return "\n".join([
        "# bench footprint", "",
        "Redis `MEMORY USAGE` per memory (record + content-hash key + order-log share); "
        f"target: bytes_per_memory - text_bytes_per_memory <= {TARGET_OVERHEAD} at d=384.",
        "", markdown_table(cols, [[result[c] for c in cols]]), ""])


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Bars: total, text, vector and other bytes per memory, plus a float32 vector."""
    plt = pyplot()
    total = result["bytes_per_memory"]
    text = result["text_bytes_per_memory"]
    vector = result["vector_bytes_per_memory"]
    names = ["total", "text", "vector (int8)", "other", "float32 vector"]
    values = [total, text, vector, max(0.0, total - text - vector), result["float32_vector_bytes"]]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(names, values, color=["tab:blue", "tab:green", "tab:orange", "tab:gray", "tab:red"])
    ax.axhline(text + TARGET_OVERHEAD, color="black", linestyle="--",
               label=f"text + {TARGET_OVERHEAD} B target")
    ax.set_ylabel("bytes per memory")
    ax.set_title(f"bench footprint, n={result['n']}, d={result['d']}")
    ax.legend()
    save_figure(fig, path)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``python -m memcore_bench.footprint --n N --d D --out FILE``."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--d", type=int, default=384)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = run_footprint(args.n, args.d, quick=args.quick, out=args.out,
                           redis_url=args.redis_url, seed=args.seed)
    print(json.dumps({k: result[k] for k in ("n", "d", *CONTRACT_KEYS)}), flush=True)
    return result


if __name__ == "__main__":
    main()
