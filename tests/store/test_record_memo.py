"""RecordMemo: records read again and again by searches are decoded once per change,
and a touch (which rewrites only the recall header) is applied without a full decode,
with the same result as decoding the record afresh."""

from __future__ import annotations

import redis

from memcore.core.models import Actor
from memcore.store import MemoryStore, RecordMemo
from tests.store.test_store_support import later, mem


def test_memo_follows_touches_and_edits(redis_client: redis.Redis) -> None:
    store = MemoryStore(redis_client)
    a = mem("u", "Alice works at Acme", seed=1, metadata={"team": "ops"}, user_id="alice")
    b = mem("u", "Bob keeps bees", seed=2)
    store.writes.add("u", a, actor=Actor.INGEST, reason="t")
    store.writes.add("u", b, actor=Actor.INGEST, reason="t")
    memo = RecordMemo()

    def check() -> list[object]:
        got = store.records.get_many("u", [a.id, b.id], memo=memo)
        fresh = store.records.get_many("u", [a.id, b.id], vectors=False)
        assert [m.model_dump() if m else None for m in got] == \
            [m.model_dump() if m else None for m in fresh]
        return list(got)

    first = check()
    assert check() == first and all(x is y for x, y in zip(check(), first, strict=True))
    store.writes.touch("u", [a.id], later(5))
    touched = check()
    assert touched[0] is not first[0] and touched[1] is first[1]
    assert touched[0].recall_count == 1 and touched[0].last_used == later(5)  # type: ignore[attr-defined]
    assert first[0].recall_count == 0  # type: ignore[attr-defined]  # shared object untouched
    store.writes.edit("u", a.id, now=later(6), metadata={"team": "dev"})  # the body changes
    edited = check()
    assert edited[0].metadata == {"team": "dev"}  # type: ignore[attr-defined]
    store.writes.touch("u", [a.id, b.id], later(7))
    again = check()
    assert again[0].metadata == {"team": "dev"} and again[1].recall_count == 1  # type: ignore[attr-defined]
    assert len(memo) == 2
