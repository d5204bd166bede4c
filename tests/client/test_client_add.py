"""Client.add with metadata, scopes and infer=False, through real Celery workers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.client.client import Client
from memcore.core.models import Actor, AuditAction, Status
from tests.support.celery_stack import fresh_ns

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


@pytest.fixture()
def client(stack_client: Client) -> Client:
    return stack_client


def test_memories_inherit_call_and_message_metadata_and_scopes(client: Client) -> None:
    ns = fresh_ns()
    client.wait(client.add(ns, [
        {"role": "user", "id": "m1", "content": "I live in Paris.",
         "metadata": {"channel": "email"}},
        {"role": "user", "id": "m2", "content": "I prefer tea over coffee.",
         "metadata": {"facts": ["Sam prefers tea over coffee."]}},
    ], timestamp=T0, metadata={"source": "crm", "channel": "chat", "priority": 2},
        user_id="alice", agent_id="concierge", run_id="r-1"), timeout=60)
    memories = {m.sources[0]: m for m in client.store.records.iter_memories(ns)}
    paris, tea = memories["m1"], memories["m2"]
    assert paris.metadata == {"source": "crm", "channel": "email", "priority": 2}
    assert tea.metadata == {"source": "crm", "channel": "chat", "priority": 2}, \
        "the producer's facts are input, not metadata"
    assert {(m.user_id, m.agent_id, m.run_id) for m in memories.values()} == {
        ("alice", "concierge", "r-1")}
    episode = client.store.episodes.get_episode(ns, "m1")
    assert episode is not None and episode.user_id == "alice"
    hits = client.search(ns, "Where does Sam live?", k=3, now=T0,
                         filters={"metadata.channel": "email", "user_id": "alice"})
    assert [h.memory.id for h in hits] == [paris.id]


def test_the_same_sentence_of_two_users_is_two_memories(client: Client) -> None:
    ns = fresh_ns()
    for who in ("alice", "bob"):
        client.wait(client.add(ns, [{"role": "user", "id": f"{who}-1",
                                     "content": "I live in Paris."}],
                               timestamp=T0, user_id=who), timeout=60)
    owners = sorted(m.user_id or "" for m in client.store.records.iter_memories(ns))
    assert owners == ["alice", "bob"]
    (alice,) = client.search(ns, "Paris", k=5, now=T0, filters={"user_id": "alice"})
    assert alice.memory.sources == ["alice-1"], "bob's turn never reinforced alice's memory"


def test_a_repeat_joins_its_metadata_to_the_memory_it_reinforces(client: Client) -> None:
    ns = fresh_ns()
    for i, meta in enumerate([{"channel": "email", "priority": 2},
                              {"channel": "chat", "priority": 1, "lang": "en"}]):
        client.wait(client.add(ns, [{"role": "user", "id": f"r{i}",
                                     "content": "I live in Paris."}],
                               timestamp=T0 + timedelta(days=i), metadata=meta), timeout=60)
    (paris,) = client.store.records.iter_memories(ns)
    assert paris.sources == ["r0", "r1"]
    assert paris.metadata == {"channel": ["email", "chat"], "priority": 2, "lang": "en"}
    (hit,) = client.search(ns, "Paris", k=3, now=T0, filters={"metadata.channel": "chat"})
    assert hit.memory.id == paris.id
    # The same turn again (redelivered, or re-sent with other metadata): a source counts once.
    client.wait(client.add(ns, [{"role": "user", "id": "r1", "content": "I live in Paris."}],
                           timestamp=T0 + timedelta(days=1), metadata={"channel": "sms"}),
                timeout=60)
    assert client.get(ns, paris.id).metadata == paris.metadata  # type: ignore[union-attr]


def test_infer_false_stores_user_turns_verbatim_deduplicated_and_audited(client: Client) -> None:
    ns = fresh_ns()
    text = "Remember: the wifi password at the cabin is on the fridge, not in the drawer!"
    ids = client.add(ns, [{"role": "user", "id": "v1", "content": text},
                          {"role": "assistant", "id": "v2", "content": "Noted, Sam loves opera."},
                          {"role": "user", "id": "v3", "content": "ok"}],
                     timestamp=T0, metadata={"topic": "cabin"}, user_id="sam", infer=False)
    (report,) = client.wait(ids, timeout=60)
    assert report["model_calls"] == 0 and report["decisions"] == {"ADD": 2}
    texts = sorted(m.text for m in client.store.records.iter_memories(ns))
    assert texts == sorted([text, "ok"]), "verbatim, user turns only"
    first = next(m for m in client.store.records.iter_memories(ns) if m.text == text)
    assert first.status is Status.ACTIVE and first.explicit
    assert first.metadata == {"topic": "cabin"} and first.user_id == "sam"
    # The same words again (other case and punctuation): reinforced, not duplicated.
    client.wait(client.add(ns, [{"role": "user", "id": "v4", "content": text.upper()}],
                           timestamp=T0 + timedelta(days=1), user_id="sam", infer=False),
                timeout=60)
    again = client.get(ns, first.id)
    assert again is not None and again.sources == ["v1", "v4"]
    assert len(list(client.store.records.iter_memories(ns))) == 2
    actions = [(e.action, e.actor, e.reason) for e in client.history(ns, first.id)]
    assert actions[0] == (AuditAction.ADD, Actor.INGEST, "stored verbatim")
    assert actions[1][0] is AuditAction.NOOP


def test_bad_add_arguments_are_named(client: Client) -> None:
    ns = fresh_ns()
    msg = [{"role": "user", "content": "hi"}]
    with pytest.raises(ValueError, match=r"^metadata.tags\[0\]: lists may hold only strings"):
        client.add(ns, msg, metadata={"tags": [1]})
    with pytest.raises(ValueError, match=r"metadata\.user_id: reserved"):
        client.add(ns, msg, metadata={"user_id": "mallory"})
    with pytest.raises(ValueError, match=r"^user_id: invalid id 'not ok!'"):
        client.add(ns, msg, user_id="not ok!")
    with pytest.raises(ValueError, match="infer: expected a boolean"):
        client.add(ns, msg, infer="no")  # type: ignore[arg-type]


def test_a_time_may_be_an_iso_string_and_a_bad_one_is_named(client: Client) -> None:
    # A newcomer's first script passed timestamp="2026-02-01T10:00:00Z": it raised an
    # AttributeError from deep inside; consolidate(now=...) already took strings.
    ns = fresh_ns()
    ids = client.add(ns, [{"role": "user", "content": "I live in Porto."}],
                     timestamp="2026-02-01T10:00:00Z")
    client.wait(ids, timeout=60)
    [memory] = client.list(ns).memories
    assert memory.created_at == datetime(2026, 2, 1, 10, tzinfo=UTC)
    assert [m.text for m in client.profile(ns, now="2026-02-02T00:00:00Z")] == [
        "User lives in Porto."]
    assert client.search(ns, "Porto", now="2026-02-02T00:00:00+00:00", touch=False)
    msg = [{"role": "user", "content": "hi"}]
    with pytest.raises(ValueError, match=r"^timestamp: 'yesterday' is not an ISO 8601"):
        client.add(ns, msg, timestamp="yesterday")
    with pytest.raises(ValueError, match=r"^timestamp: expected a datetime or an ISO 8601"):
        client.add(ns, msg, timestamp=1700000000)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^now: 'soon' is not an ISO 8601"):
        client.profile(ns, now="soon")
