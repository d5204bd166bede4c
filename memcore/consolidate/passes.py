"""A consolidation pass over the store, in three steps that Celery can fan out.

``start_pass`` (lock, read snapshot v, plan) -> ``merge_batch`` per batch of
clusters (one model call each; a failure leaves those clusters unmerged) ->
``finish_pass`` (reduce, write v+1, replay writes made meanwhile, swap the
pointer, release the lock). ``run_pass`` does all three in one process.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from memcore.consolidation import (
    ClusterWork,
    ConsolidationResult,
    PassChanges,
    Plan,
    consolidate,
    plan_table,
    reduce_table,
)
from memcore.core.config import ConsolidationConfig
from memcore.core.interfaces import ClusterOutcome, ClusterRequest, Merger, Verdict
from memcore.core.models import Actor, Memory, utcnow
from memcore.core.text_rules import TextRules
from memcore.index.partition import CellIndex
from memcore.index.table import MemoryTable, to_micros
from memcore.language import text_rules
from memcore.observability import metrics
from memcore.observability.instrument import InstrumentedMerger, instrument_merger
from memcore.observability.usage import collect_usage
from memcore.store import LockLost, MemoryStore, PassView, RenewedLock
from memcore.store.codec import dequantize

ENGLISH = text_rules("english")
"""The text rules a pass uses unless told (``MEMCORE_LANGUAGE``'s default)."""

log = logging.getLogger(__name__)

PASS_LOCK_TTL = 60.0
PLAN_TTL = 6 * 3600
BATCH_SIZE = 32


@dataclass
class PassReport:
    """What a pass did."""

    namespace: str
    pass_id: str
    from_version: int
    to_version: int | None = None
    clusters: int = 0
    batches: int = 0
    failed_batches: int = 0
    changed: int = 0
    """Live memories written or changed since the last pass (all of them on a first or
    full pass): what the pass had to look at."""
    merge_calls: int = 0
    written: int = 0
    """Records the commit wrote (changed or new): what the pass cost in Redis."""
    """Calls to the merger (merge batches plus summaries): what the pass cost."""
    events: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    skipped: str | None = None


@dataclass
class StartedPass:
    """A pass that holds the lock and has a plan stashed in Redis."""

    report: PassReport
    batches: list[tuple[int, int]]


@dataclass
class _Cached:
    version: int
    generation: str
    table: MemoryTable
    pending: set[str] = field(default_factory=set)
    """Ids to re-read besides what ``changed_since(version)`` lists (see ``advance``)."""


class TableCache:
    """Each worker process keeps the last table it read per namespace (bounded LRU), and a
    pass refreshes it with only the records that changed since (the undo hashes list
    them: ``Snapshots.changed_since``) instead of reading the whole namespace, twice a
    pass, every pass. A changed generation token (erase, purge, rollback) or undo hashes
    that cannot tell mean a whole read. Callers get a copy: reduce changes its table."""

    def __init__(self, max_namespaces: int = 4) -> None:
        self.max_namespaces = max_namespaces
        self._entries: OrderedDict[str, _Cached] = OrderedDict()
        self._lock = threading.Lock()
        self.whole_reads = 0
        self.refreshed_rows = 0

    def table(self, store: MemoryStore, namespace: str, version: int, *,
              copy: bool = True) -> MemoryTable:
        """The namespace as of now (the pass's view of ``version``), as columns; a copy
        unless ``copy=False`` (the caller only reads it: planning)."""
        generation = store.snapshots.generation(namespace)
        with self._lock:
            entry = self._entries.pop(namespace, None)
        table = self._refresh(store, namespace, entry, generation)
        if table is None:
            entry = None  # not held through the whole read: two tables at 10^6 is GBs
            table = store.snapshots.read_table(namespace)
            self.whole_reads += 1
        if store.snapshots.generation(namespace) == generation:  # no erase meanwhile: keep it
            with self._lock:
                self._entries[namespace] = _Cached(version, generation, table)
                while len(self._entries) > self.max_namespaces:
                    self._entries.popitem(last=False)
        return table.copy() if copy else table

    def _refresh(self, store: MemoryStore, namespace: str, entry: _Cached | None,
                 generation: str) -> MemoryTable | None:
        if entry is None or entry.generation != generation:
            return None
        ids = store.snapshots.changed_since(namespace, entry.version)
        if ids is None:
            return None
        ids |= entry.pending
        fresh, missing = store.snapshots.read_rows(namespace, sorted(ids))
        if any(entry.table.row(mid) is not None for mid in missing):
            return None  # a record vanished without a new generation: trust nothing
        try:
            entry.table.patch(fresh)
        except ValueError:
            return None
        self.refreshed_rows += len(fresh)
        entry.pending = set()
        return entry.table

    def advance(self, store: MemoryStore, namespace: str, read_at: int, committed: int,
                replayed: set[str]) -> None:
        """After a pass read at ``read_at`` committed ``committed``: label the cached table
        with the new version, so the next refresh need not list ``read_at``'s writes
        again (v0 keeps no undo hash: without this the first pass after a full one reads
        the namespace whole). What changed since the read is the pass's own records (in
        ``committed``'s undo hash) and the ops it replayed (``replayed``, kept pending);
        later writes go to ``committed``'s undo hash."""
        generation = store.snapshots.generation(namespace)
        with self._lock:
            entry = self._entries.get(namespace)
            if entry is None:
                return
            if entry.version != read_at or entry.generation != generation:
                self._entries.pop(namespace, None)  # erased or moved meanwhile: re-read
                return
            entry.version = committed
            entry.pending |= replayed

    def clear(self) -> None:
        """Forget every cached table."""
        with self._lock:
            self._entries.clear()


TABLES = TableCache()


class PackedLoader:
    """The reducer's loader over the store: memories without their vectors, each
    decoded from its packed bytes only when the pass reads or changes it (``vector``);
    the records of a full pass at 10^6 as float lists alone were gigabytes."""

    def __init__(self, store: MemoryStore, namespace: str) -> None:
        self.store = store
        self.namespace = namespace
        self.packed: dict[str, bytes] = {}

    def load(self, ids: Sequence[str]) -> list[Memory | None]:
        """The current records of ``ids`` (None: gone), vectors left out."""
        out: list[Memory | None] = []
        for item in self.store.records.get_many_packed(self.namespace, ids):
            if item is not None:
                self.packed[item[0].id] = item[1]
            out.append(None if item is None else item[0])
        return out

    def vector(self, memory_id: str) -> np.ndarray | None:
        """The stored vector (float32) of a memory :meth:`load` returned."""
        return dequantize(self.packed[memory_id])[0]


def _read_view(store: MemoryStore, namespace: str, *, copy: bool = True) -> PassView:
    """``begin_pass`` (the pass token: writes are logged from now on), then the table
    from the process's cache, refreshed with what changed (``copy=False``: the cached
    table itself, for a caller that only reads it)."""
    view = store.snapshots.begin_pass(namespace, read=False)
    view.table = TABLES.table(store, namespace, view.version, copy=copy)
    return view


def _lock(store: MemoryStore, namespace: str, pass_id: str,
          ttl: float = PASS_LOCK_TTL) -> RenewedLock:
    return store.coordination.pass_lock(namespace, pass_id, ttl)


def _chunk_id(pass_id: str, chunk: int) -> str:
    return f"{pass_id}.c{chunk}"


def _stash(store: MemoryStore, namespace: str, pass_id: str, version: int, now: datetime,
           plan_: Plan, batch_size: int, changed: int = 0) -> None:
    """Stash the plan: a head, and the clusters in chunks of one batch each, so a batch
    task reads only its own clusters (a plan at 10^6 memories is megabytes of JSON)."""
    chunks = [plan_.clusters[i:i + batch_size]
              for i in range(0, len(plan_.clusters), batch_size)]
    for c, work in enumerate(chunks):
        store.coordination.stash_pass_plan(namespace, _chunk_id(pass_id, c),
                              json.dumps([asdict(w) for w in work]), PLAN_TTL)
    body = {"version": version, "now": now.isoformat(), "exact_groups": plan_.exact_groups,
            "chunks": len(chunks), "batch_size": batch_size, "clusters": len(plan_.clusters),
            "changed": changed}
    store.coordination.stash_pass_plan(namespace, pass_id, json.dumps(body), PLAN_TTL)


def _head(store: MemoryStore, namespace: str, pass_id: str) -> dict[str, Any]:
    raw = store.coordination.pass_plan(namespace, pass_id)
    if raw is None:
        raise LockLost(f"plan of pass {pass_id} is gone (expired or finished)")
    head: dict[str, Any] = json.loads(raw)
    return head


def _works(store: MemoryStore, namespace: str, pass_id: str, chunks: range) -> list[ClusterWork]:
    out: list[ClusterWork] = []
    for c in chunks:
        raw = store.coordination.pass_plan(namespace, _chunk_id(pass_id, c))
        if raw is None:
            raise LockLost(f"plan of pass {pass_id} is gone (expired or finished)")
        out += [ClusterWork(list(w["members"]), [(a, b) for a, b in w["pairs"]])
                for w in json.loads(raw)]
    return out


def _load(store: MemoryStore, namespace: str, pass_id: str
          ) -> tuple[int, datetime, Plan, int]:
    """The stashed plan: (snapshot version, now, plan, memories changed since the last pass)."""
    head = _head(store, namespace, pass_id)
    clusters = _works(store, namespace, pass_id, range(head["chunks"]))
    return (head["version"], datetime.fromisoformat(head["now"]),
            Plan(head["exact_groups"], clusters), int(head.get("changed", 0)))


def _load_batch(store: MemoryStore, namespace: str, pass_id: str, start: int, end: int
                ) -> tuple[datetime, list[ClusterWork]]:
    """Clusters ``start:end`` of the plan (whole chunks when the batches are aligned)."""
    head = _head(store, namespace, pass_id)
    size = int(head["batch_size"])
    first, last = start // size, (end - 1) // size
    works = _works(store, namespace, pass_id, range(first, last + 1))
    return datetime.fromisoformat(head["now"]), works[start - first * size:end - first * size]


def _drop(store: MemoryStore, namespace: str, pass_id: str) -> None:
    raw = store.coordination.pass_plan(namespace, pass_id)
    if raw is not None:
        for c in range(int(json.loads(raw).get("chunks", 0))):
            store.coordination.drop_pass_plan(namespace, _chunk_id(pass_id, c))
    store.coordination.drop_pass_plan(namespace, pass_id)


def count_changed(table: MemoryTable, changed: np.ndarray | None) -> int:
    """Live memories among ``changed`` (every live memory when ``changed`` is None)."""
    live = table.live()
    return int((live if changed is None else live & changed).sum())


class CountingMerger:
    """A merger that counts its calls (merge batches and summaries) for the pass report."""

    def __init__(self, inner: Merger) -> None:
        self.inner = inner
        self.calls = 0

    def merge(self, clusters: Sequence[ClusterRequest]) -> list[ClusterOutcome]:
        """The wrapped merge, counted."""
        self.calls += 1
        return self.inner.merge(clusters)

    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """The wrapped summaries, counted."""
        self.calls += 1
        return self.inner.summarize(groups)


def _count_pass(store: MemoryStore, report: PassReport) -> None:
    """Add the pass's cost to the namespace's counters (``merge_calls`` per ``passes``)."""
    store.coordination.incr_counters(report.namespace, {"passes": 1,
                                                        "merge_calls": report.merge_calls,
                                           "pass_changed": report.changed})


def changed_since_last_pass(store: MemoryStore, namespace: str,
                            table: MemoryTable) -> np.ndarray | None:
    """Mask of the rows written or changed since the last pass (None: no pass yet,
    search everything)."""
    last = store.coordination.last_pass_at(namespace)
    if last is None:
        return None
    at = to_micros(last)
    return np.asarray((table.updated_at >= at) | (table.created_at >= at))


def _cells(store: MemoryStore, namespace: str, version: int) -> CellIndex | None:
    """The cell index the last pass kept with ``version`` (None: none or unreadable)."""
    blob = store.snapshots.load_index_blob(namespace, version)
    if blob is None:
        return None
    try:
        return CellIndex.from_bytes(blob)
    except ValueError:
        return None


def _keep_cells(store: MemoryStore, namespace: str, old: int, new: int | None) -> None:
    """Move the cell index the pass built from ``old`` to ``new`` (the next pass's)."""
    if new is not None:
        store.snapshots.move_index_blob(namespace, old, new)


_EVENT_METRIC: tuple[tuple[str, metrics.MemoryOp], ...] = (
    ("MERGE", "merged"), ("TOMBSTONE", "tombstoned"), ("SUPERSEDE", "superseded"),
    ("SUMMARIZE", "added"))


def _commit(store: MemoryStore, namespace: str, view: PassView,
            result: ConsolidationResult | PassChanges, now: datetime,
            report: PassReport) -> None:
    """Write the pass's result as the next snapshot (only the records it changed) and
    count its events in ``report``."""
    if isinstance(result, PassChanges):
        report.to_version = store.snapshots.commit_changes(namespace, view, result.changed,
                                                           result.events,
                                                 now=now, read_versions=result.read_versions)
        report.written = len(result.changed)
    else:
        report.to_version = store.snapshots.commit_pass(namespace, view, result.memories,
                                                        result.events,
                                              now=now)
    for e in result.events:
        report.events[e.action.value] = report.events.get(e.action.value, 0) + 1


def _export(report: PassReport) -> None:
    """Mirror a finished pass into the process's Prometheus metrics."""
    metrics.observe_consolidation_pass(report.seconds)
    for action, op in _EVENT_METRIC:
        if report.events.get(action):
            metrics.record_memory_change(op, report.events[action], report.namespace)


def _audit_model_errors(store: MemoryStore, namespace: str, merger: InstrumentedMerger,
                        at: datetime, refs: Sequence[str] = ()) -> None:
    """Write the merger's errors from this thread's last calls as MODEL_ERROR entries,
    citing the memories the calls read (``refs``: erasing one redacts them)."""
    events = merger.instruments.audit_events(namespace, Actor.CONSOLIDATION, at, refs)
    if events:
        store.audit.append(events)


def pass_finished(store: MemoryStore, namespace: str, pass_id: str) -> bool:
    """True if pass ``pass_id`` already finished (remembered for the visibility timeout)."""
    return store.coordination.pass_done(namespace, pass_id)


def start_pass(store: MemoryStore, namespace: str, pass_id: str, now: datetime,
               config: ConsolidationConfig, batch_size: int = BATCH_SIZE,
               full: bool = False, rules: TextRules = ENGLISH) -> StartedPass | None:
    """Take the namespace's pass lock, read snapshot v and stash the plan.

    Unless ``full``, only memories written or changed since the last pass are searched
    against the rest, so a pass costs what changed, not the namespace's size.
    Returns None if another pass holds the lock (one pass per namespace at a time) or
    if ``pass_id`` already finished (a re-sent start task must not start it again).
    """
    lock = _lock(store, namespace, pass_id, config.pass_lock_ttl_seconds)
    if not lock.acquire() and store.coordination.pass_lock_holder(namespace) != pass_id:
        return None  # held by another pass (a redelivered start of our own may proceed)
    if pass_finished(store, namespace, pass_id):
        # Checked under the lock: finish_pass marks the pass before it releases the lock.
        lock.release()
        return None
    lock.start_renewing()  # reading and planning 10^6 memories outlasts the lock's TTL
    try:
        view = _read_view(store, namespace, copy=False)  # planning only reads it
        assert view.table is not None
        changed = None if full else changed_since_last_pass(store, namespace, view.table)
        cells = None if changed is None else _cells(store, namespace, view.version)
        plan_ = plan_table(view.table, config, changed=changed, index=cells, rules=rules)
        n_changed = count_changed(view.table, changed)
        view.table = None  # free the columns before the plan is written
        _stash(store, namespace, pass_id, view.version, now, plan_, batch_size, n_changed)
        if plan_.index is not None and plan_.index is not cells:
            store.snapshots.store_index_blob(namespace, view.version, plan_.index.to_bytes())
    finally:
        lock.stop_renewing()
    report = PassReport(namespace, pass_id, view.version, clusters=len(plan_.clusters),
                        changed=n_changed)
    batches = [(i, min(i + batch_size, len(plan_.clusters)))
               for i in range(0, len(plan_.clusters), batch_size)]
    report.batches = len(batches)
    return StartedPass(report, batches)


def outcome_to_json(outcome: ClusterOutcome | None) -> dict[str, object] | None:
    """JSON form of an outcome (Celery results are JSON only)."""
    if outcome is None:
        return None
    return {"merged_text": outcome.merged_text, "verdicts": [v.value for v in outcome.verdicts],
            "reason": outcome.reason}


def outcome_from_json(data: dict[str, object] | None) -> ClusterOutcome | None:
    """Inverse of :func:`outcome_to_json`."""
    if data is None:
        return None
    raw = data.get("verdicts")
    verdicts = [Verdict(v) for v in raw] if isinstance(raw, list) else []
    text = data.get("merged_text")
    return ClusterOutcome(text if isinstance(text, str) else None, verdicts,
                          str(data.get("reason", "")))


def merge_batch(store: MemoryStore, namespace: str, pass_id: str, start: int, end: int,
                merger: Merger, lock_ttl: float = PASS_LOCK_TTL
                ) -> list[dict[str, object] | None]:
    """One model call for clusters ``start:end`` of the plan; failures give ``None``s."""
    _lock(store, namespace, pass_id, lock_ttl).renew()
    now, work = _load_batch(store, namespace, pass_id, start, end)
    ids = sorted({mid for w in work for mid in w.members} | {m for w in work for p in w.pairs
                                                            for m in p})
    by_id = {m.id: m for m in store.records.get_many(namespace, ids) if m is not None}
    if any(mid not in by_id for mid in ids):
        return [None] * len(work)  # a memory vanished (erased): retry next pass
    instrumented = instrument_merger(merger)
    try:
        with collect_usage() as usage:
            answers = instrumented.merge([w.request(by_id) for w in work])
    except Exception as exc:  # a failing cluster batch must never fail the pass
        log.warning("merge batch %s:%s of %s failed: %s", start, end, pass_id, exc)
        return [None] * len(work)
    finally:
        _audit_model_errors(store, namespace, instrumented, now, ids)
    store.usage.record(namespace, "consolidate", usage)
    if len(answers) != len(work):
        return [None] * len(work)
    return [outcome_to_json(a) for a in answers]


def finish_pass(store: MemoryStore, namespace: str, pass_id: str,
                batch_results: Sequence[Sequence[dict[str, object] | None] | None],
                config: ConsolidationConfig, merger: Merger,
                done_ttl: int = PLAN_TTL, rules: TextRules = ENGLISH) -> PassReport:
    """Reduce, write v+1, replay writes made meanwhile, swap, release the lock.

    The pass id is remembered as finished for ``done_ttl`` seconds (the workers pass
    their visibility timeout: the longest a redelivered start task can come late).
    """
    t0 = time.perf_counter()
    version, now, plan_, n_changed = _load(store, namespace, pass_id)
    outcomes: list[ClusterOutcome | None] = []
    failed = 0
    for result in batch_results:
        if result is None:
            failed += 1
            continue
        outcomes.extend(outcome_from_json(o) for o in result)
    if len(outcomes) != len(plan_.clusters):  # a lost batch: leave every cluster unmerged
        outcomes = [None] * len(plan_.clusters)
    report = PassReport(namespace, pass_id, version, clusters=len(plan_.clusters),
                        batches=len(batch_results), failed_batches=failed,
                        changed=n_changed,
                        merge_calls=len(batch_results))
    lock = _lock(store, namespace, pass_id, config.pass_lock_ttl_seconds)
    lock.start_renewing()
    try:
        view = _read_view(store, namespace)
        if view.version != version:
            report.skipped = f"snapshot moved from {version} to {view.version}"
            _count_pass(store, report)
            return report
        instrumented = instrument_merger(merger)
        counted = CountingMerger(instrumented)
        try:
            assert view.table is not None
            loader = PackedLoader(store, namespace)
            with collect_usage() as usage:
                reduced = reduce_table(view.table, loader.load, plan_, outcomes, now, config,
                                       summarize=counted.summarize, vector_of=loader.vector,
                                       rules=rules)
        finally:
            _audit_model_errors(store, namespace, instrumented, now)
        store.usage.record(namespace, "consolidate", usage)
        report.merge_calls += counted.calls
        _commit(store, namespace, view, reduced, now, report)
        if report.to_version is not None:
            # A large pass commits several versions: the first one's undo hash and the
            # later ones list everything that changed since the read.
            made = list(store.snapshots.last_versions) or [report.to_version]
            TABLES.advance(store, namespace, version, made[0], set(store.snapshots.last_delta_ids))
        _keep_cells(store, namespace, version, report.to_version)
        _count_pass(store, report)  # before the lock goes: a waiting client reads it next
    finally:
        store.coordination.mark_pass_done(namespace, pass_id, done_ttl)
        lock.release()
        _drop(store, namespace, pass_id)
    report.seconds = time.perf_counter() - t0
    _export(report)
    return report


def run_pass(store: MemoryStore, namespace: str, config: ConsolidationConfig, merger: Merger,
             now: datetime | None = None, pass_id: str | None = None, *,
             rules: TextRules = ENGLISH) -> PassReport:
    """A complete pass in this process (merge rounds until stable), under the lock."""
    t0 = time.perf_counter()
    now = now or utcnow()
    lock = _lock(store, namespace, pass_id or f"local-{time.time_ns()}",
                 config.pass_lock_ttl_seconds)
    if not lock.acquire():
        return PassReport(namespace, lock.token, store.current_version(namespace),
                          skipped="another pass holds the lock")
    lock.start_renewing()
    try:
        view = store.snapshots.begin_pass(namespace)
        instrumented = instrument_merger(merger)
        counted = CountingMerger(instrumented)
        try:
            with collect_usage() as usage:
                result = consolidate(view.memories, now, config, counted, rules=rules)
        finally:
            _audit_model_errors(store, namespace, instrumented, now)
        store.usage.record(namespace, "consolidate", usage)
        report = PassReport(namespace, lock.token, view.version,
                            changed=sum(1 for m in view.memories if m.live),
                            merge_calls=counted.calls)
        _commit(store, namespace, view, result, now, report)
        _count_pass(store, report)
    finally:
        lock.release()
    report.seconds = time.perf_counter() - t0
    _export(report)
    return report
