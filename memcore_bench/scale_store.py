"""``bench scale --store``: the real pass at scale, through Redis and Celery workers.

Loads ``n`` synthetic memories (the clustered vectors of :mod:`.scale`) into Redis with
the store's bulk ADD (``store.writes.add_new``: one commit per 1,000 memories,
writing exactly what the write path writes for a new memory), runs a full pass through
the consolidate workers (start -> chord of merge batches -> reduce -> commit), then
``passes`` incremental passes a simulated day apart, each after ``incremental`` x n
new memories, with the maintenance beat runs (versions past the snapshot grace
period, tombstones past theirs, audit retention) between passes. Measured: seconds
per pass, bytes sent to Redis during a pass (``INFO stats total_net_input_bytes``: the
staged records, the commit, the audit and the reads' arguments; Celery's own messages
ride along), Redis used memory, and the peak RSS of every consolidate worker process
(``VmHWM``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import redis

from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.core.models import Actor, Kind, Memory, Status
from memcore.core.text import content_hash
from memcore.store import MemoryStore
from memcore.store.connect import connect
from memcore_bench.common import running_stack
from memcore_bench.synthetic import synthetic_text

NAMESPACE = "bench-scale"
LOAD_CHUNK = 1000
START = datetime(2026, 1, 1, tzinfo=UTC)


def synthetic_memories(vectors: np.ndarray, start: int, at: datetime, seed: int
                       ) -> Iterator[list[Memory]]:
    """Chunks of memories for ``vectors`` (row ``i`` is memory ``start + i``): last use
    ~30 days before ``at`` on average, importance uniform in [0.05, 1], 1 % pinned."""
    rng = np.random.default_rng(seed + 7 + start)
    n = vectors.shape[0]
    age_h = np.asarray(rng.exponential(24.0 * 30, n))
    importance = np.asarray(rng.uniform(0.05, 1.0, n))
    strength = 1.0 + np.asarray(rng.exponential(0.5, n))
    pinned = np.asarray(rng.random(n)) < 0.01
    for a in range(0, n, LOAD_CHUNK):
        chunk = []
        for i in range(a, min(n, a + LOAD_CHUNK)):
            used = at - timedelta(hours=float(age_h[i]))
            text = synthetic_text(start + i)
            chunk.append(Memory.model_construct(
                id=f"m{start + i:09d}", namespace=NAMESPACE, text=text,
                vector=vectors[i].tolist(), importance=float(importance[i]), last_used=used,
                strength=float(strength[i]), confidence=0.9, last_supported=used,
                kind=Kind.KNOWLEDGE, sources=[f"ep{start + i}"], support=1, explicit=False,
                pinned=bool(pinned[i]), valid_from=None, valid_until=None, expires_at=None,
                status=Status.ACTIVE, superseded_by=None, derived_level=0, recall_count=0,
                content_hash=content_hash(text), member_texts=[], relation=None,
                created_at=used - timedelta(hours=1), updated_at=at, version=0,
                # every field given: model_construct then calls no default factory
                metadata={}, user_id=None, agent_id=None, run_id=None))
        yield chunk


def load(store: MemoryStore, vectors: np.ndarray, start: int, at: datetime, seed: int) -> float:
    """Bulk-load memories for ``vectors``; returns the seconds it took."""
    t0 = time.perf_counter()
    for chunk in synthetic_memories(vectors, start, at, seed):
        store.writes.add_new(NAMESPACE, chunk, actor=Actor.INGEST, reason="bench load")
    return time.perf_counter() - t0


class PeakRss:
    """Samples the RSS of a process tree (and reads each process's own high-water mark)."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[psutil.Process]:
        try:
            return [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return []

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            for proc in self._tree():
                try:
                    self.peak = max(self.peak, proc.memory_info().rss, _hwm(proc.pid))
                except psutil.Error:
                    continue

    def stop(self) -> float:
        """Stop sampling; the peak in MB."""
        self._stop.set()
        self._thread.join(timeout=5)
        for proc in self._tree():
            self.peak = max(self.peak, _hwm(proc.pid))
        return self.peak / 2**20


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its children so far."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        for proc in [root, *root.children(recursive=True)]:
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                continue
    except psutil.Error:
        pass
    return total


def _hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _progress(row: dict[str, Any]) -> None:
    """One line per step on stderr (a long run can be read, or stopped, part way)."""
    print(json.dumps(row, default=str), file=sys.stderr, flush=True)


def _net_in(r: redis.Redis) -> int:
    return int(r.info("stats")["total_net_input_bytes"])


def _used_mb(r: redis.Redis) -> float:
    return int(r.info("memory")["used_memory"]) / 2**20


def _slowest(r: redis.Redis) -> dict[str, Any]:
    """The slowest command Redis logged since the last call (then the log is cleared)."""
    entries = r.slowlog_get(1024)
    r.slowlog_reset()
    if not entries:
        return {"seconds": 0.0, "command": None}
    top = max(entries, key=lambda e: e["duration"])
    command = top["command"]
    name = (command.decode(errors="replace") if isinstance(command, bytes) else str(command))
    return {"seconds": top["duration"] / 1e6, "command": name.split()[0] if name else None}


def _pass(client: Client, store: MemoryStore, r: redis.Redis, at: datetime, full: bool,
          worker: int) -> dict[str, Any]:
    _slowest(r)
    before = _net_in(r)
    cpu = tree_cpu_seconds(worker)
    t0 = time.perf_counter()
    report = client.consolidate(NAMESPACE, now=at, full=full, timeout=3 * 3600)
    seconds = time.perf_counter() - t0
    out = {"seconds": seconds, "bytes_written": _net_in(r) - before,
           "worker_cpu_seconds": tree_cpu_seconds(worker) - cpu,
           "redis_mb": _used_mb(r), "at": at.isoformat(),
           "slowest_redis_command": _slowest(r)}
    if isinstance(report, dict):
        out.update({k: report.get(k) for k in ("to_version", "skipped")})
    out["status"] = store.records.count_by_status(NAMESPACE)
    return out


def run_store(all_vectors: np.ndarray, n: int, *, passes: int, incremental: float,
              seed: int = 0, cap: int | None = None) -> dict[str, Any]:
    """The store-backed part of ``bench scale`` (see the module docstring); returns its
    keys: ``store_full_seconds``, ``store_incremental_seconds`` (first incremental pass),
    ``store_incremental_ratio``, ``bytes_written_full``, ``bytes_written_incremental``,
    ``redis_mb_after_first_pass``, ``redis_mb_after_passes``, ``passes`` and
    ``worker_peak_rss_mb``, plus every pass under ``store_passes``."""
    n_new = max(1, int(n * incremental))
    if all_vectors.shape[0] < n + passes * n_new:
        raise ValueError("vectors: fewer rows than n plus the new memories of every pass")
    env = {"MEMCORE_CONSOLIDATION__CAP": str(cap or int(0.95 * n)),
           "MEMCORE_CONSOLIDATION__PASS_LOCK_TTL_SECONDS": "120"}
    out: dict[str, Any] = {"passes": passes, "store_new_per_pass": n_new}
    settings = Settings()
    with running_stack(None, ingest_concurrency=1, consolidate_concurrency=2, env=env) as stack:
        assert stack.redis_url
        r = connect(stack.redis_url)
        store = MemoryStore(r, check_durability=False)
        # Every command over 50 ms is logged: each pass reports its slowest one (a script
        # that blocks Redis for seconds stalls every client of the server).
        r.config_set("slowlog-log-slower-than", 50_000)
        r.config_set("slowlog-max-len", 1024)
        out["store_load_seconds"] = load(store, all_vectors[:n], 0, START, seed)
        out["redis_mb_after_load"] = _used_mb(r)
        _progress({"loaded": n, "seconds": out["store_load_seconds"],
                   "redis_mb": out["redis_mb_after_load"]})
        rss = PeakRss(stack.processes["consolidate"].pid)
        client = Client(stack.redis_url)
        rows = []
        try:
            worker = stack.processes["consolidate"].pid
            rows.append(_pass(client, store, r, START + timedelta(hours=12), full=True,
                              worker=worker))
            _progress({**rows[-1], "worker_peak_rss_mb": rss.peak / 2**20})
            for p in range(1, passes + 1):
                day = START + timedelta(days=p)
                done = store.maintenance.run(
                    NAMESPACE, day, snapshot_grace_days=settings.snapshot_grace_days,
                    tombstone_grace_days=settings.consolidation.tombstone_grace_days,
                    audit_retention_days=settings.audit_retention_days)
                rows[-1]["maintenance"] = {"versions_dropped": done.versions_dropped,
                                           "tombstones_purged": len(done.tombstones_purged),
                                           "audit_trimmed": done.audit_trimmed}
                load(store, all_vectors[n + (p - 1) * n_new: n + p * n_new],
                     n + (p - 1) * n_new, day, seed)
                rows.append(_pass(client, store, r, day + timedelta(hours=12), full=False,
                                  worker=worker))
                _progress(rows[-1])
        finally:
            client.close()
            out["worker_peak_rss_mb"] = rss.stop()
        out["store_passes"] = rows
        out["store_memories"] = sum(store.records.count_by_status(NAMESPACE).values())
    full, first = rows[0], rows[min(1, len(rows) - 1)]
    out.update(
        store_full_seconds=full["seconds"], bytes_written_full=full["bytes_written"],
        redis_mb_after_first_pass=full["redis_mb"],
        store_incremental_seconds=first["seconds"],
        bytes_written_incremental=first["bytes_written"],
        store_incremental_ratio=first["seconds"] / full["seconds"],
        store_bytes_ratio=first["bytes_written"] / max(1, full["bytes_written"]),
        redis_mb_after_passes=rows[-1]["redis_mb"],
        redis_growth=rows[-1]["redis_mb"] / full["redis_mb"],
        slowest_redis_command_seconds=max(row["slowest_redis_command"]["seconds"]
                                          for row in rows),
    )
    # The steady state: the median over the incremental passes after the first one (the
    # first also searches every survivor the full pass merged: they changed since it).
    steady = rows[2:] or rows[1:]
    out["store_ratio_definitions"] = {
        "store_incremental_ratio": "seconds of the first incremental pass (right after the "
                                   "full one) / seconds of the full pass",
        "store_bytes_ratio": "bytes sent to Redis by the first incremental pass / by the "
                             "full pass",
        "store_incremental_median_ratio": "median seconds of incremental passes 2.."
                                          f"{len(rows) - 1} / seconds of the full pass"
                                          if len(rows) > 2 else
                                          "one incremental pass: the same as the first",
        "store_bytes_median_ratio": "the same median over bytes sent to Redis",
    }
    if steady:
        seconds = float(np.median([r["seconds"] for r in steady]))
        written = float(np.median([r["bytes_written"] for r in steady]))
        cpu = float(np.median([r["worker_cpu_seconds"] for r in steady]))
        out.update(
            store_incremental_median_seconds=seconds,
            store_incremental_median_ratio=seconds / full["seconds"],
            bytes_written_incremental_median=written,
            store_bytes_median_ratio=written / max(1, full["bytes_written"]),
            worker_cpu_incremental_median_ratio=cpu / max(1e-9, full["worker_cpu_seconds"]),
        )
    return out
