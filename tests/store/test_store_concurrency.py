"""Concurrent writers lose no update: final state equals the serial result."""

from __future__ import annotations

import threading
from collections import Counter

import redis

from memcore.core.models import Actor, AuditAction
from memcore.store import MemoryStore
from tests.store.test_store_support import later, mem

THREADS, OPS, TARGETS = 6, 30, 4


def test_concurrent_reinforce_update_touch(redis_url: str) -> None:
    setup = MemoryStore.from_url(redis_url)
    ids = [setup.writes.add("u", mem("u", f"fact {i}", seed=i, sources=[]), actor=Actor.INGEST,
                     reason="seed").id for i in range(TARGETS)]
    errors: list[BaseException] = []
    texts: dict[str, set[str]] = {i: {f"fact {n}"} for n, i in enumerate(ids)}
    plan: list[list[tuple[str, str, str]]] = []
    for t in range(THREADS):  # overlapping targets: every thread hits every memory
        ops = []
        for j in range(OPS):
            target = ids[(t + j) % TARGETS]
            kind = ("reinforce", "update", "touch")[j % 3]
            text = f"fact {target[:6]} v{t}.{j}"
            if kind == "update":
                texts[target].add(text)
            ops.append((kind, target, text))
        plan.append(ops)

    def worker(ops: list[tuple[str, str, str]], t: int) -> None:
        store = MemoryStore(redis.Redis.from_url(redis_url), strength_cap=1000.0)
        try:
            for j, (kind, target, text) in enumerate(ops):
                source = f"t{t}-{j}"
                if kind == "reinforce":
                    store.writes.reinforce("u", target, source=source, now=later(j), reason="seen")
                elif kind == "update":
                    store.writes.update("u", target, text=text, vector=None, source=source,
                                 now=later(j), reason="refined")
                else:
                    store.writes.touch("u", [target], later(j), strength_cap=1000.0)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(ops, t)) for t, ops in enumerate(plan)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors

    want_sources: dict[str, set[str]] = {i: set() for i in ids}
    want_updates: Counter[str] = Counter()
    want_touches: Counter[str] = Counter()
    for t, ops in enumerate(plan):
        for j, (kind, target, _) in enumerate(ops):
            if kind != "touch":
                want_sources[target].add(f"t{t}-{j}")
            if kind == "update":
                want_updates[target] += 1
            if kind == "touch":
                want_touches[target] += 1
    for memory_id in ids:
        m = setup.records.get("u", memory_id)
        assert m is not None
        assert set(m.sources) == want_sources[memory_id]
        assert m.support == 1 + len(want_sources[memory_id])
        assert m.recall_count == want_touches[memory_id]
        # caps out of reach, so strength is exactly the serial count
        assert m.strength == 1 + want_updates[memory_id] + want_touches[memory_id]
        assert m.text in texts[memory_id]
        assert m.version == 1 + sum(1 for ops in plan for k, tg, _ in ops if tg == memory_id)
    audit = Counter(e.action for e in setup.audit.tail("u", 10_000))
    n_ops = THREADS * OPS
    assert audit[AuditAction.UPDATE] == n_ops // 3
    assert audit[AuditAction.NOOP] == n_ops // 3
    assert audit[AuditAction.ADD] == TARGETS
