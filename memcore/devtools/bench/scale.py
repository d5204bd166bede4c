"""``bench scale``: the consolidation pass's partition step against exact search, and a
full and an incremental offline pass, on synthetic clustered unit vectors.

Run: ``python -m memcore.devtools.bench.scale --n 100000 --d 384 --out bench/scale.json``.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memcore.core.config import ConsolidationConfig
from memcore.core.partition import (
    CellIndex,
    Pairs,
    borderline_pairs,
    centroid_clusters,
    exact_pairs,
    hnsw_pairs,
)
from memcore.core.vector_index import faiss_module
from memcore.devtools.bench.common import pyplot, save_figure

CONTRACT_KEYS = (
    "n", "d", "partition_seconds", "exact_seconds", "speedup", "pair_recall",
    "pass_seconds", "incremental_seconds", "incremental_ratio", "peak_rss_mb",
)  # fmt: skip
QUICK_N = 3_000
EXACT_FULL_MAX = 200_000  # above this the exact baseline runs on a row sample
EXACT_SAMPLE_ROWS = 2_000
HNSW_COMPARE_MAX = 200_000
_CHUNK = 65_536


def synthetic_vectors(n: int, d: int, *, seed: int = 0, dup_frac: float = 0.1) -> np.ndarray:
    """``n`` clustered unit vectors (float32) with planted near-duplicates.

    Topics of ~200 rows whose members have cosine ~0.4 to each other; a ``dup_frac``
    share of rows is a noisy copy of an earlier row with cosine uniform in
    [0.82, 0.995], so both merge pairs (>= 0.92) and borderline pairs exist.
    Generated in chunks so 10^6 x 384 needs no temporaries of that size.
    """
    if n < 2 or d < 2:
        raise ValueError(f"n and d must be >= 2, got n={n}, d={d}")
    rng = np.random.default_rng(seed)
    n_topics = max(8, n // 200)
    centers = rng.standard_normal((n_topics, d), dtype=np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    spread = np.float32(np.sqrt(1.5 / d))  # |noise|^2 = 1.5 -> cosine ~ 1 / 2.5
    x = np.empty((n, d), dtype=np.float32)
    for a in range(0, n, _CHUNK):
        b = min(n, a + _CHUNK)
        x[a:b] = centers[rng.integers(0, n_topics, b - a)]
        x[a:b] += spread * rng.standard_normal((b - a, d), dtype=np.float32)
        x[a:b] /= np.linalg.norm(x[a:b], axis=1, keepdims=True)
    n_dup = int(n * dup_frac)
    dup_rows = np.sort(rng.choice(np.arange(1, n), n_dup, replace=False))
    sources = (rng.random(n_dup) * dup_rows).astype(np.int64)  # always an earlier row
    cos = rng.uniform(0.82, 0.995, n_dup)
    scale = np.sqrt((1.0 / cos**2 - 1.0) / d).astype(np.float32)
    for a in range(0, n_dup, _CHUNK):
        rows = dup_rows[a : a + _CHUNK]
        noise = rng.standard_normal((rows.size, d), dtype=np.float32) * scale[a : a + _CHUNK, None]
        x[rows] = x[sources[a : a + _CHUNK]] + noise
        x[rows] /= np.linalg.norm(x[rows], axis=1, keepdims=True)
    return x


@dataclass
class Columns:
    """A namespace's memories as arrays (the offline merger's view of a snapshot)."""

    vectors: np.ndarray
    importance: np.ndarray
    strength: np.ndarray
    hours_since_use: np.ndarray
    pinned: np.ndarray
    alive: np.ndarray

    @classmethod
    def synthetic(cls, vectors: np.ndarray, *, seed: int = 0) -> Columns:
        """Random bookkeeping for ``vectors`` (last use ~30 days ago on average, 1 % pinned)."""
        n = vectors.shape[0]
        rng = np.random.default_rng(seed + 1)
        return cls(
            vectors=vectors,
            importance=np.asarray(rng.uniform(0.05, 1.0, n), dtype=np.float32),
            strength=np.asarray(1.0 + rng.exponential(0.5, n), dtype=np.float32),
            hours_since_use=np.asarray(rng.exponential(24.0 * 30, n), dtype=np.float32),
            pinned=np.asarray(rng.random(n) < 0.01),
            alive=np.ones(n, dtype=bool),
        )


def merge_clusters(cols: Columns, clusters: Sequence[Sequence[int]], strength_cap: float) -> int:
    """Merge each cluster into its strongest member; returns the rows retired.

    The survivor gets the strength-weighted centroid, the summed (capped) strength,
    the highest importance and the most recent use; the others stop being alive.
    """
    if not clusters:
        return 0
    sizes = np.fromiter((len(c) for c in clusters), dtype=np.int64, count=len(clusters))
    rows = np.fromiter((r for c in clusters for r in c), dtype=np.int64, count=int(sizes.sum()))
    cid = np.repeat(np.arange(len(clusters)), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    w = cols.strength[rows].astype(np.float32)
    centroid = np.add.reduceat(w[:, None] * cols.vectors[rows], starts, axis=0)
    centroid /= np.linalg.norm(centroid, axis=1, keepdims=True)
    # Survivor: highest strength x importance, ties to the lowest row.
    order = np.lexsort((rows, -(w * cols.importance[rows]), cid))
    survivor = rows[order[starts]]
    cols.vectors[survivor] = centroid
    cols.strength[survivor] = np.minimum(np.add.reduceat(w, starts), strength_cap)
    cols.importance[survivor] = np.maximum.reduceat(cols.importance[rows], starts)
    cols.hours_since_use[survivor] = np.minimum.reduceat(cols.hours_since_use[rows], starts)
    retired = np.setdiff1d(rows, survivor)
    cols.alive[retired] = False
    return int(retired.size)


def decay_floor_cap(cols: Columns, config: ConsolidationConfig, cap: int) -> tuple[int, int]:
    """Ebbinghaus score importance * exp(-t / (strength * tau)); tombstone below the
    floor, then beyond ``cap`` live rows by lowest score (pinned rows exempt).
    Returns (floored, capped)."""
    score = cols.importance * np.exp(
        -cols.hours_since_use / (cols.strength * np.float32(config.tau_hours))
    )
    low = cols.alive & ~cols.pinned & (score < config.floor)
    cols.alive[low] = False
    over = int(cols.alive.sum()) - cap
    capped = 0
    if over > 0:
        candidates = np.nonzero(cols.alive & ~cols.pinned)[0]
        over = min(over, candidates.size)
        # Lowest scores go; ties to the higher row (the newer one stays).
        order = np.lexsort((-candidates, score[candidates]))[:over]
        cols.alive[candidates[order]] = False
        capped = over
    return int(low.sum()), capped


def _live_pairs(pairs: Pairs, alive: np.ndarray) -> Pairs:
    i, j, s = pairs
    keep = alive[i] & alive[j]
    return i[keep], j[keep], s[keep]


def consolidate(
    cols: Columns,
    pairs: Pairs,
    config: ConsolidationConfig,
    cap: int,
) -> dict[str, int]:
    """One offline pass over ``pairs``: clusters, borderline pairs, merge, decay, floor, cap."""
    pairs = _live_pairs(pairs, cols.alive)
    weights = cols.strength.astype(np.float64)
    clusters = centroid_clusters(cols.vectors, weights, pairs, config.merge_threshold)
    border = borderline_pairs(
        pairs, clusters, config.merge_threshold, config.borderline_threshold,
        n=cols.vectors.shape[0],
    )  # fmt: skip
    merged = merge_clusters(cols, clusters, config.strength_cap)
    floored, capped = decay_floor_cap(cols, config, cap)
    return {
        "pairs": int(pairs[0].size),
        "clusters": len(clusters),
        "borderline": int(border[0].size),
        "merged": merged,
        "floored": floored,
        "capped": capped,
    }


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
) -> dict[str, Any]:
    """Run the scale benchmark once and write ``out`` (JSON), ``.md`` and ``.png``.

    ``quick`` shrinks n to 3,000. The threshold for pairs is the borderline
    threshold (the pass needs every pair the model may see). Above 200,000 rows the
    exact baseline runs on 2,000 sampled rows and ``exact_seconds`` is extrapolated
    to the full upper triangle (``exact_sampled`` says so); ``pair_recall`` is then
    measured on the pairs touching those rows.
    """
    if quick:
        n = min(n, QUICK_N)
    if n < 100 or d < 2:
        raise ValueError(f"n must be >= 100 and d >= 2, got n={n}, d={d}")
    if not (0.0 < incremental <= 0.5):
        raise ValueError(f"incremental must be in (0, 0.5], got {incremental}")
    threads = threads or os.cpu_count() or 1
    faiss_module(threads)
    config = ConsolidationConfig()
    threshold = config.borderline_threshold
    cap = int(0.95 * n)  # so the cap step has work to do
    n_new = max(1, int(n * incremental))
    all_vectors = synthetic_vectors(n + n_new, d, seed=seed)
    x = all_vectors[:n]
    result: dict[str, Any] = {"n": n, "d": d, "threshold": threshold, "threads": threads}

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

    # Full pass: partition + clusters + merge + decay + floor + cap, end to end.
    cols = Columns.synthetic(all_vectors, seed=seed)
    cols.alive[n:] = False  # the incremental rows do not exist yet
    t0 = time.perf_counter()
    index = CellIndex.train(x, seed=seed)
    index.add(x)
    full = consolidate(cols, index.pairs(x, threshold), config, cap)
    result["pass_seconds"] = time.perf_counter() - t0
    result["pass"] = full

    # Incremental pass: n_new rows arrive; only they are assigned and searched.
    t0 = time.perf_counter()
    new_rows = np.arange(n, n + n_new)
    cols.alive[new_rows] = True
    index.add(all_vectors[n:])
    pairs = index.pairs(all_vectors, threshold, query_rows=new_rows)
    inc = consolidate(cols, pairs, config, int(0.95 * (n + n_new)))
    result["incremental_seconds"] = time.perf_counter() - t0
    result["incremental_rows"] = n_new
    result["incremental"] = inc
    result["incremental_ratio"] = result["incremental_seconds"] / result["pass_seconds"]
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
        cells = [f"{r[k]:.3g}" if isinstance(r[k], float) else str(r[k]) for k in CONTRACT_KEYS]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        f"- n={r['n']}: exact baseline "
        + (f"extrapolated from {r['exact_rows']} sampled rows" if r["exact_sampled"] else "full")
        + f"; method {r['method']}; pass {r['pass']}"
        for r in results
    ]
    return "\n".join(["# bench scale", "", *lines, "", *notes, ""])


def plot(results: Sequence[dict[str, Any]], path: Path) -> None:
    """Time against n for partition and exact (bars when there is a single n)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    if len(results) == 1:
        r = results[0]
        names = ["partition", "exact", "full pass", "incremental"]
        values = [r["partition_seconds"], r["exact_seconds"], r["pass_seconds"],
                  r["incremental_seconds"]]  # fmt: skip
        ax.bar(names, values, color=["tab:blue", "tab:red", "tab:green", "tab:olive"])
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
    """``python -m memcore.devtools.bench.scale --n N [N ...] --d D --out FILE``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--d", type=int, default=384)
    parser.add_argument("--incremental", type=float, default=0.01)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    results = []
    for n in args.n:
        r = run_scale(n, args.d, args.incremental, args.quick, None,
                      threads=args.threads, seed=args.seed)  # fmt: skip
        print(json.dumps({k: r[k] for k in CONTRACT_KEYS}), flush=True)
        results.append(r)
    write_outputs(results, args.out)


if __name__ == "__main__":
    main()
