"""Issue 29, item 4, end to end: 2,000 identical ``infer=False`` turns, each with its own
metadata value, through the real write path on a real Redis stay one record of bounded
size; the last repeats cost what the first did; support counts every turn once, also
when turns are redelivered; a search ships the bounded record.

Its module-level imports exist before the bounds too, so this file runs against the old
code (``PYTHONPATH=<old checkout> pytest tests/ingest/test_record_bounds_repeats.py``) and fails
there on the record's size, not on an import.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from memcore.adapters import build_models
from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.core.models import AuditAction, Episode
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore, keys

T0 = datetime(2026, 3, 1, tzinfo=UTC)
TEXT = "I prefer window seats on long flights."
RECORD_LIMIT = 20_000
"""Bytes the repeated memory's record stays under: 64 source ids of ~45 bytes, 256
metadata values of ~50, the text, the vector (d + 6) and the header come to ~17 KB.
Unbounded, the same 2,000 repeats made a 200 KB record."""


def turn_id(i: int) -> str:
    return f"turn-{i:06d}-{i * 7919:032x}"  # as long as a client's UUID-based turn ids


def value(i: int) -> str:
    return f"booking-{i * 104729:040x}"


def turns(start: int, count: int) -> list[Episode]:
    """``count`` identical user turns, each with its own metadata value."""
    return [Episode(id=turn_id(i), namespace="big", role="user", speaker="Sam", text=TEXT,
                    timestamp=T0 + timedelta(seconds=i), metadata={"trip": value(i)})
            for i in range(start, start + count)]


def test_thousands_of_repeats_keep_one_bounded_record(redis_url: str) -> None:
    """The issue's 4 x 1,000 scaled to 4 x 500, in calls of 100 turns (a task's batch)."""
    settings = Settings(redis_url=redis_url)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    batches, per_batch, per_call = 4, 500, 100
    seconds = []
    for b in range(batches):
        started = time.perf_counter()
        for start in range(b * per_batch, (b + 1) * per_batch, per_call):
            pipeline.ingest("big", turns(start, per_call), infer=False)
        seconds.append(time.perf_counter() - started)
    total = batches * per_batch

    (memory_id,) = store.gateway.live_ids("big")
    memory = store.records.get("big", memory_id)
    assert memory is not None and memory.text == TEXT
    assert memory.support == total, "support counts every turn once"
    raw = store.client.get(keys.memory("big", memory_id))
    assert raw is not None and len(raw) < RECORD_LIMIT, f"a record of {len(raw or b'')} bytes"
    # A sanity bound only (the cost proper is a benchmark's): the last 500 repeats of a
    # capped record cost about what the first 500 did; unbounded they took ~5x as long.
    assert seconds[-1] < 3 * seconds[0], f"batch seconds {[round(s, 2) for s in seconds]}"

    # Imported here, after the checks that hold for any implementation, so that the old
    # code fails above on the size and not on the import.
    from memcore.core.bounds import MAX_SOURCES, MAX_VALUES_PER_KEY, unlisted_count
    from memcore.store.unlisted import unlisted_sources

    assert memory.sources == [turn_id(i) for i in range(total - MAX_SOURCES, total)], \
        "the newest sources are listed"
    assert unlisted_count(memory) == total - MAX_SOURCES
    assert memory.metadata["trip"] == [value(i) for i in range(total - MAX_VALUES_PER_KEY,
                                                               total)], "the newest values"
    # Never silently: the repeats' audit says what the bounds dropped.
    last = store.audit.history("big", memory_id)[-1]
    assert last.action is AuditAction.NOOP
    assert "1 oldest source id(s) unlisted" in last.reason
    assert "metadata values dropped, oldest first: trip 1" in last.reason

    # Redelivered turns count once, also those the record no longer lists.
    for start in (0, total - per_call):
        pipeline.ingest("big", turns(start, per_call), infer=False)
    again = store.records.get("big", memory_id)
    assert again is not None and again.support == total
    assert again.sources == memory.sources and again.version == memory.version
    assert unlisted_sources(store.client, "big", [memory_id]) == \
        {turn_id(i) for i in range(total - MAX_SOURCES)}, "every unlisted turn is kept apart"

    # A search ships the bounded record.
    client = Client(redis_url, settings=settings)
    (hit,) = client.search("big", "window seats", k=3)
    assert hit.memory.id == memory_id and hit.memory.support == total
    assert len(hit.memory.model_dump_json()) < 2 * RECORD_LIMIT
