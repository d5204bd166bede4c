"""Metadata and scopes: validation, storage, and what merges do with them (pure parts)."""

from __future__ import annotations

from typing import Any

import pytest

from memcore.consolidation import consolidate, merge_metadata
from memcore.core.config import ConsolidationConfig
from memcore.core.models import Episode, Kind, Relation, Status, validate_metadata
from memcore.store import ops
from memcore.store.codec import (
    pack_episode,
    pack_memory,
    unpack_episode,
    unpack_filter_fields,
    unpack_memory,
)
from tests.support.helpers import JoinMerger, hours, make_memory


@pytest.mark.parametrize(("metadata", "named"), [
    ({"topic": {"nested": 1}}, "metadata.topic: expected a string, number, boolean or list"),
    ({"tags": ["a", 2]}, "metadata.tags[1]: lists may hold only strings"),
    ({"score": float("nan")}, "metadata.score: number must be finite"),
    ({"x": None}, "metadata.x: expected a string"),
    ({"user_id": "mallory"}, "metadata.user_id: reserved; pass user_id as its own argument"),
    ({"bad key": 1}, "metadata: invalid key 'bad key'"),
    ({f"k{i}": i for i in range(65)}, "metadata: 65 keys; the limit is 64"),
    ({"s": "x" * 5000}, "metadata.s: 5000 characters"),
    ([1, 2], "metadata: expected a JSON object, got list"),
])
def test_bad_metadata_is_named(metadata: Any, named: str) -> None:
    with pytest.raises(ValueError) as err:
        validate_metadata(metadata)
    assert named in str(err.value)


def test_record_round_trip_keeps_metadata_and_scopes() -> None:
    m = make_memory("likes tea", [1.0, 0.0], metadata={"topic": "drinks", "n": 2, "ok": True,
                                                       "tags": ["a", "b"], "w": 0.5},
                    user_id="alice", agent_id="bot-1", run_id="r1")
    back = unpack_memory(pack_memory(m), m.namespace, m.id)
    assert back.metadata == m.metadata
    assert (back.user_id, back.agent_id, back.run_id) == ("alice", "bot-1", "r1")
    assert back.content_hash == m.content_hash


def test_records_without_metadata_keep_their_old_bytes() -> None:
    plain = make_memory("likes tea", [1.0, 0.0])
    blob = pack_memory(plain)
    scoped = pack_memory(plain.model_copy(update={"user_id": "alice"}))
    assert scoped.startswith(blob) and len(scoped) > len(blob)
    back = unpack_memory(blob, plain.namespace, plain.id)
    assert back.metadata == {} and back.user_id is None


def test_episode_round_trip_keeps_scopes() -> None:
    ep = Episode(namespace="t", role="user", text="hi", timestamp=hours(0), user_id="alice",
                 run_id="r1", metadata={"facts": [{"text": "an object fact"}], "session": 1})
    back = unpack_episode(pack_episode(ep), "t", ep.id)
    assert (back.user_id, back.agent_id, back.run_id) == ("alice", None, "r1")
    assert back.metadata == ep.metadata


def test_same_text_in_two_scopes_has_two_hashes() -> None:
    a = make_memory("likes tea", [1.0, 0.0], user_id="alice")
    b = make_memory("likes tea", [1.0, 0.0], user_id="bob")
    none = make_memory("likes tea", [1.0, 0.0])
    assert len({a.content_hash, b.content_hash, none.content_hash}) == 3


def test_merge_metadata_rule() -> None:
    strong = make_memory("x", [1.0, 0.0], metadata={"topic": "food", "n": 1, "flag": True,
                                                    "tags": ["a"], "same": "s"})
    weak = make_memory("y", [1.0, 0.0], metadata={"topic": "travel", "n": 2, "flag": False,
                                                  "tags": ["b", "a"], "same": "s", "only": 3})
    mixed = make_memory("z", [1.0, 0.0], metadata={"n": "two"})
    assert merge_metadata([strong, weak]) == {
        "topic": ["food", "travel"], "n": 1, "flag": True, "tags": ["a", "b"], "same": "s",
        "only": 3}
    assert merge_metadata([weak, strong])["n"] == 2, "the strongest member's number wins"
    assert merge_metadata([strong, mixed])["n"] == 1, "mixed types: the strongest's value"


CFG = ConsolidationConfig(tau_hours=72, merge_threshold=0.95, borderline_threshold=0.95,
                          floor=0.0, cap=50, min_confidence=0.0)


def test_consolidation_merges_within_a_scope_and_unions_metadata() -> None:
    a = make_memory("uses vim", [1.0, 0.0], 0.6, 0.0, strength=3.0, user_id="alice",
                    metadata={"topic": "editor"})
    b = make_memory("prefers vim keybindings", [0.99, 0.1], 0.5, 0.0, user_id="alice",
                    metadata={"topic": "tools", "source": "chat"})
    result = consolidate([a, b], hours(1), CFG, JoinMerger())
    (live,) = result.live()
    assert live.id == a.id and live.user_id == "alice"
    assert live.metadata == {"topic": ["editor", "tools"], "source": "chat"}
    assert live.content_hash == make_memory(live.text, [1.0, 0.0], user_id="alice").content_hash


def test_consolidation_never_merges_across_scopes() -> None:
    a = make_memory("uses vim", [1.0, 0.0], user_id="alice")
    b = make_memory("uses vim", [1.0, 0.0], user_id="bob")
    c = make_memory("prefers vim keybindings", [0.99, 0.1], agent_id="bot")
    merger = JoinMerger()
    result = consolidate([a, b, c], hours(1), CFG, merger)
    assert len(result.live()) == 3
    assert merger.seen == [], "no cluster or pair spans two scopes"


def test_reinforce_joins_metadata_once() -> None:
    m = make_memory("likes tea", [1.0, 0.0], metadata={"topic": "drinks", "n": 1})
    again = ops.reinforce(m, source="ep-2", now=hours(1), metadata={"topic": "food", "n": 2})
    assert again is not None and again.metadata == {"topic": ["drinks", "food"], "n": 1}
    assert ops.reinforce(again, source="ep-2", now=hours(1),
                         metadata={"topic": "food", "n": 2}) is None, "redelivery: no change"
    assert ops.reinforce(again, source="ep-2", now=hours(2), metadata={"new": True}) is None, \
        "a source counts once, its metadata too"


@pytest.mark.parametrize("fields", [
    {},
    {"user_id": "alice", "metadata": {"topic": "x", "tags": ["a", "b"]}},
    {"relation": Relation(subject="Sam", predicate="works_at", object="Acme"),
     "member_texts": ["one", "two"], "agent_id": "bot", "superseded_by": "m2",
     "status": Status.TOMBSTONED, "kind": Kind.RELATION},
])
def test_filter_fields_decode_what_the_whole_record_says(fields: dict[str, Any]) -> None:
    m = make_memory("Sam works at Acme", [0.6, 0.8], **fields)
    blob = pack_memory(m)
    light = unpack_filter_fields(blob, m.id)
    full = unpack_memory(blob, m.namespace, m.id)
    for name in ("kind", "status", "created_at", "updated_at", "user_id", "agent_id",
                 "run_id", "metadata"):
        assert getattr(light, name) == getattr(full, name), name
    assert light.id == m.id
