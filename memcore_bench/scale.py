"""``bench scale``: the consolidation pass's partition step against exact search, and a
full and an incremental offline pass, on synthetic clustered unit vectors.

Run: ``python -m memcore_bench.scale --n 100000 --d 384 --out bench/scale.json``.
Writes the JSON (keys are a contract), a Markdown table (``.md``) and a plot (``.png``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from memcore.adapters.offline import OfflineMerger
from memcore.consolidation import Loader, plan_table, reduce_table, resolve
from memcore.core.config import ConsolidationConfig
from memcore.core.models import Kind, Memory, Status
from memcore.core.text import content_hash
from memcore.index.partition import CellIndex, Pairs, exact_pairs, hnsw_pairs
from memcore.index.table import KINDS, STATUSES, MemoryTable, Vectors, micros_time, to_micros
from memcore.index.vector_index import faiss_module
from memcore_bench.common import pyplot, save_figure
from memcore_bench.scale_store import run_store
from memcore_bench.synthetic import synthetic_text, synthetic_vectors

CONTRACT_KEYS = (
    "n", "d", "partition_seconds", "exact_seconds", "speedup", "pair_recall",
    "pass_seconds", "incremental_seconds", "incremental_ratio", "peak_rss_mb",
)  # fmt: skip
QUICK_N = 3_000
QUICK_PASSES = 2
STORE_KEYS = (
    "store_full_seconds", "store_incremental_seconds", "store_incremental_ratio",
    "redis_mb_after_first_pass", "redis_mb_after_passes", "passes", "bytes_written_full",
    "bytes_written_incremental", "worker_peak_rss_mb",
)  # fmt: skip
EXACT_FULL_MAX = 200_000  # above this the exact baseline runs on a row sample
EXACT_SAMPLE_ROWS = 2_000
HNSW_COMPARE_MAX = 200_000
def synthetic_table(vectors: np.ndarray, *, now: datetime, seed: int = 0, start: int = 0,
                    namespace: str = "bench-scale") -> MemoryTable:
    """Memories for ``vectors`` as a :class:`MemoryTable`: last use ~30 days ago on
    average, importance uniform in [0.05, 1], 1 % pinned, each from its own episode.
    A planted near-duplicate says the same thing as its source in other words."""
    n = vectors.shape[0]
    rng = np.random.default_rng(seed + 1 + start)
    cols = MemoryTable.empty_columns(n)
    now_us = to_micros(now)
    age_us = (np.asarray(rng.exponential(24.0 * 30, n)) * 3.6e9).astype(np.int64)
    cols["importance"][:] = rng.uniform(0.05, 1.0, n)
    cols["strength"][:] = 1.0 + rng.exponential(0.5, n)
    cols["confidence"][:] = 0.9
    cols["last_used"][:] = now_us - age_us
    cols["last_supported"][:] = now_us - age_us
    cols["created_at"][:] = now_us - age_us - 3_600_000_000
    cols["updated_at"][:] = cols["created_at"]
    cols["status"][:] = STATUSES.index(Status.ACTIVE)
    cols["kind"][:] = KINDS.index(Kind.KNOWLEDGE)
    cols["pinned"][:] = rng.random(n) < 0.01
    cols["n_sources"][:] = 1
    cols["version"][:] = 1
    ids = [f"m{start + i:09d}" for i in range(n)]
    texts = [synthetic_text(start + i) for i in range(n)]
    return MemoryTable(namespace, ids, texts, [content_hash(t) for t in texts],
                       Vectors(np.ones(n, dtype=bool), dense=vectors), cols)


def table_loader(table: MemoryTable) -> Loader:
    """Full records of a synthetic table's rows (what the store would return)."""

    def load(ids: Sequence[str]) -> list[Memory | None]:
        out: list[Memory | None] = []
        for memory_id in ids:
            row = table.row(memory_id)
            if row is None:
                out.append(None)
                continue
            vec = table.vectors.take([row])[0] if table.vectors.present[row] else None
            out.append(Memory.model_construct(
                id=memory_id, namespace=table.namespace, text=table.texts[row],
                vector=None if vec is None else vec.tolist(),
                importance=float(table.importance[row]),
                last_used=micros_time(int(table.last_used[row])),
                strength=float(table.strength[row]), confidence=float(table.confidence[row]),
                last_supported=micros_time(int(table.last_supported[row])),
                kind=KINDS[int(table.kind[row])], sources=[f"ep-{memory_id}"],
                support=1, explicit=bool(table.explicit[row]), pinned=bool(table.pinned[row]),
                valid_from=None, valid_until=None, expires_at=None,
                status=STATUSES[int(table.status[row])], superseded_by=None,
                derived_level=int(table.derived_level[row]), recall_count=0,
                content_hash=table.hashes[row], member_texts=[], relation=None,
                created_at=micros_time(int(table.created_at[row])),
                updated_at=micros_time(int(table.updated_at[row])),
                version=int(table.version[row])))
        return out

    return load


def consolidate_table(table: MemoryTable, config: ConsolidationConfig, now: datetime, *,
                      changed: np.ndarray | None = None, index: CellIndex | None = None
                      ) -> tuple[dict[str, int], CellIndex | None]:
    """One pass of memcore's own consolidation (plan, offline merger, reduce) over
    ``table``, in place. Returns what it did and the cell index for the next pass."""
    merger = OfflineMerger()
    plan_ = plan_table(table, config, changed=changed, index=index)
    load = table_loader(table)
    records = {m.id: m for m in load(plan_.ids()) if m is not None}
    outcomes = resolve(plan_, records, merger)
    changes = reduce_table(table, load, plan_, outcomes, now, config, summarize=merger.summarize)
    events: dict[str, int] = {}
    for e in changes.events:
        events[e.action.value] = events.get(e.action.value, 0) + 1
    return {"exact_groups": len(plan_.exact_groups), "clusters": len(plan_.clusters),
            "changed": len(changes.changed), **{k.lower(): v for k, v in events.items()}
            }, plan_.index


def _keys(pairs: Pairs, n: int) -> np.ndarray:
    return pairs[0] * np.int64(n) + pairs[1]


def _touching(pairs: Pairs, rows: np.ndarray) -> Pairs:
    mask = np.isin(pairs[0], rows) | np.isin(pairs[1], rows)
    return pairs[0][mask], pairs[1][mask], pairs[2][mask]


def _recall(found: Pairs, truth: Pairs, n: int) -> float:
    if not truth[0].size:
        return 1.0
    return float(np.isin(_keys(truth, n), _keys(found, n)).sum() / truth[0].size)


def _peak_rss_mb() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if platform.system() == "Darwin" else 1024), 1)


def _offline(result: dict[str, Any], all_vectors: np.ndarray, n: int, n_new: int, *,
             quick: bool, seed: int, compare_hnsw: bool | None) -> None:
    """Partition against exact search, and memcore's pass over columns, in process."""
    threshold = result["threshold"]
    x = all_vectors[:n]

    # Warm BLAS and FAISS so neither side pays one-time start-up costs.
    (x[:256] @ x[: min(n, 4096)].T).sum()
    # Partition: cells (IVF) vs the exact blocked product, same data.
    t0 = time.perf_counter()
    index = CellIndex.train(x, seed=seed)
    index.add(x)
    approx = index.pairs(x, threshold)
    result["partition_seconds"] = time.perf_counter() - t0
    result["method"] = (
        f"ivf (nlist={index.nlist}, probes={index.probes}, {index.quantizer} quantizer)"
    )
    del index
    sampled = n > EXACT_FULL_MAX
    if sampled:
        sample = np.sort(np.random.default_rng(seed).choice(n, EXACT_SAMPLE_ROWS, replace=False))
        t0 = time.perf_counter()
        truth = exact_pairs(x, threshold, query_rows=sample)
        measured = time.perf_counter() - t0
        exact_seconds = measured * (n - 1) / (2 * sample.size)
        found = _touching(approx, sample)
        result.update(exact_rows=int(sample.size), exact_measured_seconds=measured)
    else:
        t0 = time.perf_counter()
        truth = exact_pairs(x, threshold)
        exact_seconds = measured = time.perf_counter() - t0
        found = approx
        result["exact_rows"] = n
    result["exact_sampled"] = sampled
    result["exact_seconds"] = exact_seconds
    result["speedup"] = exact_seconds / result["partition_seconds"]
    result["pair_recall"] = _recall(found, truth, n)
    result["pairs_found"] = int(approx[0].size)
    result["pairs_exact"] = int(truth[0].size)
    result["pairs_exact_scope"] = "sampled rows" if sampled else "all"
    del approx, found

    if compare_hnsw is None:
        compare_hnsw = not quick and n <= HNSW_COMPARE_MAX
    if compare_hnsw:  # the plain HNSW kNN graph, for the record
        t0 = time.perf_counter()
        hp = hnsw_pairs(x, threshold, k=32, query_rows=sample if sampled else None)
        result["hnsw_seconds"] = time.perf_counter() - t0
        result["hnsw_recall"] = _recall(hp, truth, n)
        del hp
    del truth

    # Full pass: memcore's plan (cells) -> offline merger -> reduce (merge, expiry,
    # support, summarize-before-forget, floor, cap), over columns.
    now = datetime(2026, 1, 1, tzinfo=UTC)
    config = ConsolidationConfig(cap=int(0.95 * n))  # so the cap step has work to do
    table = synthetic_table(x, now=now, seed=seed)
    t0 = time.perf_counter()
    full, cells = consolidate_table(table, config, now)
    result["pass_seconds"] = time.perf_counter() - t0
    result["pass"] = full

    # Incremental pass: n_new memories arrive; only they are assigned and searched.
    later = datetime(2026, 1, 2, tzinfo=UTC)
    fresh = synthetic_table(all_vectors[n:n + n_new], now=later, seed=seed, start=n)
    grown = MemoryTable.concat(table, fresh)  # what a store read would return now
    del table
    changed = np.zeros(len(grown), dtype=bool)
    changed[n:] = True
    config = ConsolidationConfig(cap=int(0.95 * (n + n_new)))
    t0 = time.perf_counter()
    inc, _ = consolidate_table(grown, config, later, changed=changed, index=cells)
    result["incremental_seconds"] = time.perf_counter() - t0
    result["incremental_rows"] = n_new
    result["incremental"] = inc
    result["incremental_ratio"] = result["incremental_seconds"] / result["pass_seconds"]


def run_scale(
    n: int,
    d: int,
    incremental: float = 0.01,
    quick: bool = False,
    out: Path | None = None,
    *,
    threads: int | None = None,
    seed: int = 0,
    compare_hnsw: bool | None = None,
    store: bool = False,
    passes: int = 30,
    offline: bool = True,
) -> dict[str, Any]:
    """Run the scale benchmark once and write ``out`` (JSON), ``.md`` and ``.png``.

    ``quick`` shrinks n to 3,000. The threshold for pairs is the borderline
    threshold (the pass needs every pair the model may see). Above 200,000 rows the
    exact baseline runs on 2,000 sampled rows and ``exact_seconds`` is extrapolated
    to the full upper triangle (``exact_sampled`` says so); ``pair_recall`` is then
    measured on the pairs touching those rows.

    ``store`` adds the store-backed mode (memcore_bench.scale_store): n memories
    in Redis, a full pass and ``passes`` incremental ones through Celery workers
    (``quick``: 2 passes). ``offline=False`` skips the in-process part.
    """
    if quick:
        n = min(n, QUICK_N)
        passes = min(passes, QUICK_PASSES)
    if passes < 1:
        raise ValueError(f"passes must be >= 1, got {passes}")
    if n < 100 or d < 2:
        raise ValueError(f"n must be >= 100 and d >= 2, got n={n}, d={d}")
    if not (0.0 < incremental <= 0.5):
        raise ValueError(f"incremental must be in (0, 0.5], got {incremental}")
    threads = threads or os.cpu_count() or 1
    faiss_module(threads)
    threshold = ConsolidationConfig().borderline_threshold
    n_new = max(1, int(n * incremental))
    all_vectors = synthetic_vectors(n + n_new * (passes if store else 1), d, seed=seed)
    result: dict[str, Any] = {"n": n, "d": d, "threshold": threshold, "threads": threads}
    if offline:
        _offline(result, all_vectors, n, n_new, quick=quick, seed=seed,
                 compare_hnsw=compare_hnsw)
    if store:
        result.update(run_store(all_vectors, n, passes=passes, incremental=incremental,
                                seed=seed))
    result["peak_rss_mb"] = _peak_rss_mb()
    result["machine"] = {
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    result["quick"] = quick
    if out is not None:
        write_outputs([result], Path(out))
    return result


def markdown_table(results: Sequence[dict[str, Any]]) -> str:
    """The contract keys of each run as a Markdown table."""
    head = "| " + " | ".join(CONTRACT_KEYS) + " |"
    rule = "|" + "---|" * len(CONTRACT_KEYS)
    lines = [head, rule]
    for r in results:
        cells = [f"{r[k]:.3g}" if isinstance(r.get(k), float) else str(r.get(k, "-"))
                 for k in CONTRACT_KEYS]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        f"- n={r['n']}: exact baseline "
        + (f"extrapolated from {r['exact_rows']} sampled rows" if r["exact_sampled"] else "full")
        + f"; method {r['method']}; pass {r['pass']}"
        for r in results if "exact_sampled" in r
    ]
    stored = [r for r in results if "store_full_seconds" in r]
    if stored:
        lines += ["", "Store-backed (Redis + Celery workers):", "",
                  "| n | " + " | ".join(STORE_KEYS) + " |", "|" + "---|" * (len(STORE_KEYS) + 1)]
        lines += ["| " + " | ".join([str(r["n"]), *(f"{r[k]:.3g}" if isinstance(r[k], float)
                                                    else str(r[k]) for k in STORE_KEYS)]) + " |"
                  for r in stored]
    return "\n".join(["# bench scale", "", *lines, "", *notes, ""])


def plot(results: Sequence[dict[str, Any]], path: Path) -> None:
    """Time against n for partition and exact (bars when there is a single n)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    if len(results) == 1:
        r = results[0]
        bars = [("partition", "partition_seconds"), ("exact", "exact_seconds"),
                ("full pass", "pass_seconds"), ("incremental", "incremental_seconds"),
                ("store full", "store_full_seconds"),
                ("store incr.", "store_incremental_seconds")]
        shown = [(name, float(r[key])) for name, key in bars if key in r]
        ax.bar([b[0] for b in shown], [b[1] for b in shown], color="tab:blue")
        ax.tick_params(axis="x", labelrotation=30)
        ax.set_title(f"bench scale, n={r['n']}, d={r['d']}")
    else:
        ns = [r["n"] for r in results]
        ax.loglog(ns, [r["partition_seconds"] for r in results], "o-", label="partition (ivf)")
        ax.loglog(ns, [r["exact_seconds"] for r in results], "s--", label="exact")
        ax.loglog(ns, [r["pass_seconds"] for r in results], "^-", label="full pass")
        ax.set_xlabel("n")
        ax.legend()
        ax.set_title(f"bench scale, d={results[0]['d']}")
    ax.set_ylabel("seconds")
    save_figure(fig, path)


def write_outputs(results: Sequence[dict[str, Any]], out: Path) -> None:
    """Write the last run's JSON (with every run under ``runs``), Markdown and PNG."""
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(results[-1])
    if len(results) > 1:
        payload["runs"] = list(results)
    out.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    out.with_suffix(".md").write_text(markdown_table(results))
    plot(results, out.with_suffix(".png"))


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m memcore_bench.scale --n N [N ...] --d D --out FILE``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--d", type=int, default=384)
    parser.add_argument("--incremental", type=float, default=0.01)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", action="store_true",
                        help="also the real pass through Redis and Celery workers")
    parser.add_argument("--store-only", action="store_true", help="only the store-backed mode")
    parser.add_argument("--passes", type=int, default=30)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    results = []
    for n in args.n:
        r = run_scale(n, args.d, args.incremental, args.quick, None,
                      threads=args.threads, seed=args.seed, store=args.store or args.store_only,
                      passes=args.passes, offline=not args.store_only)  # fmt: skip
        print(json.dumps({k: r[k] for k in (*CONTRACT_KEYS, *STORE_KEYS) if k in r}), flush=True)
        results.append(r)
    write_outputs(results, args.out)


if __name__ == "__main__":
    main()
