"""Bounded records (issue 29, item 4): the bounds themselves, a record written before
them, and merges (the repeats end to end: tests/ingest/test_record_bounds_repeats.py)."""

from __future__ import annotations

import pytest

from memcore.adapters import build_models
from memcore.consolidation import consolidate
from memcore.consolidation.resolution import merge_lists
from memcore.core.bounds import (
    MAX_MEMBER_TEXT_BYTES,
    MAX_MEMBER_TEXTS,
    MAX_SOURCES,
    MAX_VALUES_PER_KEY,
    bound_member_texts,
    bound_metadata,
    bound_record,
)
from memcore.core.config import ConsolidationConfig, Settings
from memcore.core.models import (
    MAX_METADATA_BYTES,
    MAX_METADATA_KEYS,
    MAX_TEXT_BYTES,
    Actor,
    AuditAction,
    Episode,
    validate_metadata,
)
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from memcore.store.erase import plan_erase
from memcore.store.unlisted import unlisted_key, unlisted_sources
from tests.support.helpers import JoinMerger, hours, make_memory

TEXT = "I prefer window seats on long flights."


def test_a_record_written_unbounded_is_bounded_by_its_next_repeat(redis_url: str) -> None:
    """A record from before the bounds (3,000 values, 10,000 sources: more ids than one
    Lua unpack takes) shrinks on its next repeat, and the audit counts what went."""
    store = MemoryStore.from_url(redis_url)
    n = 10_000
    memory = make_memory(TEXT, [1.0, 0.0], namespace="old", status="active")
    memory = memory.model_copy(update={
        "sources": [f"s{i}" for i in range(n)], "support": n,
        "metadata": {"trip": [f"t{i}" for i in range(3000)], "n": 1}})
    store.writes.add("old", memory, actor=Actor.INGEST, reason="stored before the bounds")
    new = store.writes.reinforce("old", memory.id, source=f"s{n}", now=hours(1), reason="repeat",
                          metadata={"trip": "t3000"})
    assert new.support == n + 1
    assert new.sources == [f"s{i}" for i in range(n + 1 - MAX_SOURCES, n + 1)]
    assert new.metadata == {"trip": [f"t{i}" for i in range(3001 - MAX_VALUES_PER_KEY, 3001)],
                            "n": 1}
    validate_metadata(new.metadata)
    reason = store.audit.history("old", memory.id)[-1].reason
    assert f"{n + 1 - MAX_SOURCES} oldest source id(s) unlisted" in reason
    assert f"trip {3001 - MAX_VALUES_PER_KEY}" in reason
    assert unlisted_sources(store.client, "old", [memory.id]) == \
        {f"s{i}" for i in range(n + 1 - MAX_SOURCES)}
    # The ids it unlisted are still known: a redelivery of the oldest counts nothing,
    # an UPDATE redelivered from one of them counts no support either.
    again = store.writes.reinforce("old", memory.id, source="s0", now=hours(2),
                                   reason="redelivered")
    assert again.version == new.version and again.support == n + 1
    updated = store.writes.update("old", memory.id, text=TEXT + " Always.", vector=None,
                                  source="s1",
                           now=hours(3), reason="restated")
    assert updated.support == n + 1 and updated.text == TEXT + " Always."


def test_erasing_a_capped_memory_erases_every_turn_it_counted(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    n = MAX_SOURCES + 36
    episodes = [Episode(id=f"e{i}", namespace="gone", role="user", text=TEXT,
                        timestamp=hours(i)) for i in range(n)]
    pipeline.ingest("gone", episodes, infer=False)
    (memory_id,) = store.gateway.live_ids("gone")
    memory = store.records.get("gone", memory_id)
    assert memory is not None and memory.support == n and len(memory.sources) == MAX_SOURCES
    report = store.eraser.erase_memory_and_sources("gone", memory_id, hours(n))
    assert report.removed == [memory_id]
    assert sorted(report.episodes) == sorted(e.id for e in episodes), "listed or not"
    assert list(store.episodes.iter_episodes("gone")) == []
    assert not store.client.exists(unlisted_key("gone", memory_id))


def test_an_erase_reaches_members_merged_before_the_kept_member_texts() -> None:
    head = make_memory("Sam uses vim", [1.0, 0.0], status="active",
                       member_texts=[f"Sam uses vim {i}" for i in range(MAX_MEMBER_TEXTS)])
    old = make_memory("Sam likes vim", [1.0, 0.0], status="tombstoned",
                      superseded_by=head.id)
    closed = make_memory("Sam used emacs", [0.0, 1.0], status="superseded",
                         superseded_by=head.id)
    victims, _ = plan_erase({m.id: m for m in (head, old, closed)}, memory_id=head.id,
                            source=None, now=hours(1))
    assert victims == {head.id, old.id}, "merged into it: erased; superseded by it: kept"


def test_bounded_metadata_obeys_one_adds_limits() -> None:
    # Too many keys: the later ones go whole.
    many = {f"k{i}": [f"v{i}a", f"v{i}b"] for i in range(MAX_METADATA_KEYS + 6)}
    kept, dropped = bound_metadata(many)
    assert list(kept) == [f"k{i}" for i in range(MAX_METADATA_KEYS)]
    assert dropped == {f"k{i}": 2 for i in range(MAX_METADATA_KEYS, MAX_METADATA_KEYS + 6)}
    # Too many values: the newest stay.
    kept, dropped = bound_metadata({"tags": [str(i) for i in range(1000)], "n": 3})
    assert kept == {"tags": [str(i) for i in range(1000 - MAX_VALUES_PER_KEY, 1000)], "n": 3}
    assert dropped == {"tags": 1000 - MAX_VALUES_PER_KEY}
    # Too many bytes: the oldest values of the largest list go first.
    big = {"a": [f"{i:04d}" + "x" * 3000 for i in range(40)], "b": ["y" * 4000] * 1,
           "c": [f"{i}" + "z" * 1000 for i in range(20)]}
    kept, dropped = bound_metadata(big)
    validate_metadata(kept)
    assert kept["a"][-1] == big["a"][-1] and kept["b"] == big["b"]
    assert kept["a"] == big["a"][len(big["a"]) - len(kept["a"]):]
    assert sum(dropped.values()) == 60 - len(kept["a"]) - len(kept["c"])
    size = sum(len(k) + len(str(v)) for k, v in kept.items())
    assert MAX_METADATA_BYTES - 3100 < size <= MAX_METADATA_BYTES
    # Scalars only, over the bytes: the last keys go.
    scalars = {f"s{i}": "s" * 4000 for i in range(1, 21)}
    kept, dropped = bound_metadata(scalars)
    validate_metadata(kept)
    assert list(kept) == [f"s{i}" for i in range(1, 17)]
    assert dropped == {f"s{i}": 1 for i in range(17, 21)}
    # Within the limits: unchanged, nothing counted.
    assert bound_metadata({"a": ["x", "y"], "n": 1}) == ({"a": ["x", "y"], "n": 1}, {})


def test_member_texts_keep_the_survivors_own_and_the_newest_within_count_and_bytes() -> None:
    # The first text is the surviving record's own original (its text is overwritten by
    # the merge and it has no tombstone): it always stays; the others go oldest first.
    texts = [f"text {i}" for i in range(MAX_MEMBER_TEXTS + 10)]
    assert bound_member_texts(texts) == ([texts[0], *texts[11:]], 10)
    long = ["w" * 30_000 + str(i) for i in range(5)]
    kept, dropped = bound_member_texts(long)
    assert kept == [long[0], long[-1]] and dropped == 3
    assert sum(len(t) for t in kept) <= MAX_MEMBER_TEXT_BYTES


def test_a_merge_keeps_its_record_bounded_and_counts_all_support() -> None:
    strong = make_memory("Sam uses vim", [1.0, 0.0], strength=3.0, status="active",
                         metadata={"tags": [f"a{i}" for i in range(200)]})
    strong = strong.model_copy(update={"sources": [f"a{i}" for i in range(MAX_SOURCES)],
                                       "support": 1000,
                                       "member_texts": [f"Sam uses vim {i}" for i in
                                                        range(MAX_MEMBER_TEXTS)]})
    weak = make_memory("Sam uses vim daily", [0.99, 0.1], status="active",
                       metadata={"tags": [f"b{i}" for i in range(200)]})
    weak = weak.model_copy(update={"sources": ["b0", "b1"], "support": 2})
    lists = merge_lists([strong, weak])
    assert lists.support == 1002, "what each member counted, listed or not"
    assert lists.sources == [*(f"a{i}" for i in range(2, MAX_SOURCES)), "b0", "b1"]
    assert lists.capped.sources == ["a0", "a1"]
    assert len(lists.metadata["tags"]) == MAX_VALUES_PER_KEY
    assert lists.metadata["tags"][-1] == "b199" and lists.capped.values == {"tags": 144}
    assert len(lists.member_texts) == MAX_MEMBER_TEXTS
    assert lists.member_texts[-1] == "Sam uses vim daily" and lists.capped.member_texts == 1

    cfg = ConsolidationConfig(tau_hours=72, merge_threshold=0.95, borderline_threshold=0.95,
                              floor=0.0, cap=50, min_confidence=0.0)
    result = consolidate([strong, weak], hours(1), cfg, JoinMerger())
    (live,) = result.live()
    assert (live.id, live.support, live.sources) == (strong.id, 1002, lists.sources)
    assert live.metadata == lists.metadata and live.member_texts == lists.member_texts
    (merge,) = [e for e in result.events if e.action is AuditAction.MERGE]
    assert "record capped: 2 oldest source id(s) unlisted" in merge.reason
    assert "tags 144" in merge.reason


class LongMerger(JoinMerger):
    """Writes a merged text longer than any memory may hold."""

    def merge(self, clusters):  # type: ignore[no-untyped-def]
        out = super().merge(clusters)
        for outcome in out:
            if outcome.merged_text:
                outcome.merged_text = "y" * (MAX_TEXT_BYTES + 1)
        return out


def test_a_merged_text_past_a_turns_limit_is_not_taken() -> None:
    a = make_memory("Sam uses vim", [1.0, 0.0], strength=3.0, status="active")
    b = make_memory("Sam uses vim every day", [0.99, 0.1], status="active")
    cfg = ConsolidationConfig(tau_hours=72, merge_threshold=0.95, borderline_threshold=0.9,
                              floor=0.0, cap=50, min_confidence=0.0)
    result = consolidate([a, b], hours(1), cfg, LongMerger())
    (live,) = result.live()
    assert live.text == "Sam uses vim every day"


@pytest.mark.parametrize("n", [0, 1, MAX_SOURCES])
def test_records_within_their_bounds_are_untouched(n: int) -> None:
    m = make_memory("x", [1.0, 0.0], metadata={"a": ["1", "2"]})
    m = m.model_copy(update={"sources": [f"s{i}" for i in range(n)], "support": max(1, n)})
    same, capped = bound_record(m)
    assert same is m and not capped and capped.note() == ""
