"""Client.search with filters, list, update, delete on a real Redis (no workers needed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcore.client import search as search_module
from memcore.client.client import Client
from memcore.core.errors import EpisodeNotFound, MemoryNotFound, MemoryStateError
from memcore.core.filters import FilterError, compile_filter
from memcore.core.models import Actor, AuditAction, Memory, Status
from memcore.store import keys
from tests.core.test_filters import KEYS, filters, meta_value

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def put(client: Client, ns: str, text: str, at: int = 0, status: Status = Status.ACTIVE,
        **fields: Any) -> Memory:
    """Store one memory directly (what the write path or a pass would have written)."""
    when = T0 + timedelta(minutes=at)
    vec = [float(x) for x in client.models.embedder.embed([text])[0]]
    memory = Memory(namespace=ns, text=text, vector=vec, last_used=when, created_at=when,
                    updated_at=when, status=status, sources=[f"ep-{at}"], **fields)
    return client.store.writes.add(ns, memory, actor=Actor.USER, reason="test")


@pytest.mark.parametrize("scan_share", [1.0, 0.0], ids=["over-fetch", "exact-scan"])
def test_filtered_search_returns_k_when_k_match_even_if_rare(
        client: Client, monkeypatch: pytest.MonkeyPatch, scan_share: float) -> None:
    # 0.0: over-fetching gives up after one round and ranks the matching ids exactly.
    monkeypatch.setattr(search_module, "SCAN_SHARE", scan_share)
    ns = "acme"
    for i in range(400):  # many close, unmatching neighbours of the query
        put(client, ns, f"Sam likes green tea number {i}", at=i, user_id="bob")
    rare = [put(client, ns, f"The boiler in flat {i} was serviced", at=500 + i,
                user_id="alice", metadata={"topic": "house", "n": i}) for i in range(6)]
    # "flat" is the one word the rare ones share with the query: a filter chooses the
    # candidates, the query still has to match them
    hits = client.search(ns, "Sam likes green tea in the flat", k=5, touch=False,
                         filters={"user_id": "alice"})
    assert len(hits) == 5
    assert {h.memory.id for h in hits} <= {m.id for m in rare}
    hits = client.search(ns, "tea in the flat", k=3, touch=False,
                         filters={"and": [{"metadata.topic": "house"}, {"metadata.n": {"gte": 4}}]})
    assert sorted(h.memory.metadata["n"] for h in hits) == [4, 5]
    plain = client.search(ns, "Sam likes green tea", k=5, touch=False)
    assert len(plain) == 5 and all(h.memory.user_id == "bob" for h in plain)


def test_a_filter_never_widens_the_namespace(client: Client) -> None:
    put(client, "tenant-a", "Alice keeps bees", user_id="alice", metadata={"topic": "bees"})
    put(client, "tenant-b", "Alice keeps bees on the roof", user_id="alice",
        metadata={"topic": "bees"})
    for spec in ({"user_id": "alice"}, {"metadata.topic": "bees"},
                 {"or": [{"user_id": "alice"}, {"not": {"user_id": "alice"}}]}):
        hits = client.search("tenant-a", "bees", k=10, touch=False, filters=spec)
        assert [h.memory.namespace for h in hits] == ["tenant-a"]
        page = client.list("tenant-a", filters=spec)
        assert [m.namespace for m in page.memories] == ["tenant-a"]
    with pytest.raises(FilterError, match="unknown field 'namespace'"):
        client.search("tenant-a", "bees", filters={"namespace": "tenant-b"})


def test_bad_filter_fails_before_any_write(client: Client) -> None:
    m = put(client, "acme", "Sam likes tea")
    with pytest.raises(FilterError, match="unknown operator 'like'"):
        client.search("acme", "tea", filters={"metadata.x": {"like": "t"}})
    assert client.get("acme", m.id).recall_count == 0  # type: ignore[union-attr]


def test_list_pages_are_stable_under_writes(client: Client) -> None:
    ns = "acme"
    made = [put(client, ns, f"fact number {i} about cats", at=i, user_id="alice")
            for i in range(25)]
    put(client, ns, "a fact of bob", at=3, user_id="bob")
    first = client.list(ns, filters={"user_id": "alice"}, limit=10)
    assert [m.id for m in first.memories] == [m.id for m in made[:10]]
    assert first.next_cursor and all(m.vector is None for m in first.memories)
    # Deleting a listed memory and adding a new one must not shift the next page.
    client.delete(ns, made[2].id)
    late = put(client, ns, "a late fact about cats", at=100, user_id="alice")
    second = client.list(ns, filters={"user_id": "alice"}, limit=10, cursor=first.next_cursor)
    assert [m.id for m in second.memories] == [m.id for m in made[10:20]]
    third = client.list(ns, filters={"user_id": "alice"}, limit=10, cursor=second.next_cursor)
    assert [m.id for m in third.memories] == [m.id for m in made[20:]] + [late.id]
    assert third.next_cursor is None
    deleted = client.list(ns, status="tombstoned")
    assert [m.id for m in deleted.memories] == [made[2].id]
    assert len(client.list(ns, include_inactive=True, limit=1000).memories) == 27
    with pytest.raises(ValueError, match="cursor: not a cursor"):
        client.list(ns, cursor="garbage!")
    with pytest.raises(ValueError, match="status: unknown value 'gone'"):
        client.list(ns, status="gone")
    with pytest.raises(ValueError, match="limit: expected an integer from 1 to 1000"):
        client.list(ns, limit=0)


def test_update_edits_text_and_metadata_audited_as_user(client: Client) -> None:
    ns = "acme"
    m = put(client, ns, "Sam lives in Paris", user_id="alice", metadata={"city": "paris"})
    put(client, ns, "Sam owns a red bicycle", user_id="alice")
    edited = client.update(ns, m.id, text="Sam lives in Lyon")
    assert edited.text == "Sam lives in Lyon" and edited.metadata == {"city": "paris"}
    assert edited.user_id == "alice" and edited.support == m.support
    hits = client.search(ns, "Sam lives in Lyon", k=1, touch=False)
    assert hits[0].memory.id == m.id and hits[0].similarity > 0.99, "re-embedded"
    assert client.store.records.find_by_hash(ns, edited.content_hash) == m.id
    assert client.store.records.find_by_hash(ns, m.content_hash) is None
    again = client.update(ns, m.id, metadata={"city": "lyon", "moved": True})
    assert again.metadata == {"city": "lyon", "moved": True} and again.text == edited.text
    events = [e for e in client.history(ns, m.id) if e.action is AuditAction.UPDATE]
    assert len(events) == 2 and all(e.actor is Actor.USER for e in events)
    with pytest.raises(ValueError, match=r"metadata\.user_id: reserved"):
        client.update(ns, m.id, metadata={"user_id": "mallory"})
    assert client.get(ns, m.id).user_id == "alice"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="give text, metadata or an expiry"):
        client.update(ns, m.id)
    with pytest.raises(MemoryNotFound, match="'nope' not found in namespace 'acme'"):
        client.update(ns, "nope", text="x")


def test_profile_of_one_user(client: Client) -> None:
    put(client, "acme", "Alice keeps bees", user_id="alice")
    put(client, "acme", "Bob plays chess", user_id="bob")
    assert {m.text for m in client.profile("acme", T0)} == {"Alice keeps bees", "Bob plays chess"}
    assert [m.text for m in client.profile("acme", T0, filters={"user_id": "bob"})] == [
        "Bob plays chess"]


def test_delete_tombstones_restorably_and_refuses_twice(client: Client) -> None:
    ns = "acme"
    m = put(client, ns, "Sam keeps bees", user_id="alice")
    gone = client.delete(ns, m.id)
    assert gone.status is Status.TOMBSTONED
    assert client.search(ns, "Sam keeps bees", k=5, touch=False) == []
    assert client.list(ns).memories == []
    assert client.store.client.exists(keys.memory(ns, m.id)), "kept, not erased"
    with pytest.raises(MemoryStateError, match="already deleted"):
        client.delete(ns, m.id)
    with pytest.raises(MemoryStateError, match="cannot pin it; restore it first"):
        client.pin(ns, m.id)
    with pytest.raises(MemoryStateError, match="cannot edit it"):
        client.update(ns, m.id, text="Sam keeps wasps")
    with pytest.raises(MemoryNotFound):
        client.delete(ns, "unknown-id")
    with pytest.raises(KeyError):  # still a KeyError for older callers
        client.delete("other-ns", m.id)
    client.restore(ns, m.id)
    assert [h.memory.id for h in client.search(ns, "Sam keeps bees", k=5, touch=False)] == [m.id]
    assert client.pin(ns, m.id).pinned
    actions = [e.action for e in client.history(ns, m.id)]
    assert actions[:4] == [AuditAction.ADD, AuditAction.TOMBSTONE, AuditAction.RESTORE,
                           AuditAction.PIN]


SCOPES = [None, "alice", "bob"]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(SCOPES), st.sampled_from(list(Status)),
                          st.dictionaries(st.sampled_from(KEYS), meta_value, max_size=2)),
                min_size=1, max_size=12),
       filters, st.integers(1, 8))
def test_list_and_search_return_exactly_the_matches_of_their_namespace(
        client: Client, rows: list[tuple[str | None, Status, dict[str, Any]]],
        spec: dict[str, Any], k: int) -> None:
    client.store.client.flushdb()
    client.forget_indexes()
    made = {"mine": [], "theirs": []}  # type: dict[str, list[Memory]]
    for ns in made:
        for i, (who, status, meta) in enumerate(rows):
            made[ns].append(put(client, ns, f"note {i} about the garden shed", at=i,
                                status=status, user_id=who, metadata=meta))
    wanted = compile_filter(spec)
    expected = {m.id for m in made["mine"] if wanted(m)}
    page = client.list("mine", filters=spec, include_inactive=True, limit=1000)
    assert {m.id for m in page.memories} == expected
    hits = client.search("mine", "garden shed", k=k, touch=False, include_inactive=True,
                         filters=spec)
    assert {h.memory.id for h in hits} <= expected
    assert len(hits) == min(k, len(expected)), "k hits whenever k memories match"


def test_deferred_touches_are_written_in_one_batch(client: Client) -> None:
    a = put(client, "acme", "Sam likes green tea")
    b = put(client, "acme", "Sam plays chess on Fridays")
    client.defer_touches(3600)  # nothing is written until a flush
    for query in ("green tea", "tea", "chess on Fridays"):
        assert client.search("acme", query, k=1)
    assert client.get("acme", a.id).recall_count == 0  # type: ignore[union-attr]
    client.defer_touches(0)  # stopping the batcher writes what waits, then per search
    got = {m.id: m.recall_count for m in client.store.records.get_many("acme", [a.id, b.id]) if m}
    assert got == {a.id: 2, b.id: 1}
    client.search("acme", "chess", k=1)
    assert client.get("acme", b.id).recall_count == 2  # type: ignore[union-attr]


def test_waiting_on_a_task_no_worker_consumes_says_so(client: Client,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """No worker runs on this Redis: the wait warns while it waits, and its TimeoutError
    says that no worker answered instead of only that the time ran out."""
    ids = client.add("lonely", [{"role": "user", "content": "I moved to Berlin."}])
    with caplog.at_level("WARNING", logger="memcore.client.client"), \
            pytest.raises(TimeoutError, match="no Celery worker answered") as err:
        client.wait(ids, timeout=4)
    assert "memcore up" in str(err.value)
    assert any("no Celery worker answered" in r.getMessage() for r in caplog.records)


def test_a_fail_fast_wait_raises_no_worker_instead_of_waiting_out(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fail_fast``: once the workers were asked (twice) and none answered, the wait
    raises NoWorker (a ConnectionError, as the remote clients' Unavailable) long before its
    timeout; the task stays queued."""
    from memcore import NoWorker, Unavailable
    from memcore.client import client as client_module

    monkeypatch.setattr(client_module, "NO_WORKER_CHECK_SECONDS", 0.5)
    ids = client.add("lonely", [{"role": "user", "content": "I moved to Berlin."}])
    with pytest.raises(NoWorker, match="no Celery worker answered a ping") as err:
        client.wait(ids, timeout=600, queue="ingest", fail_fast=True)
    assert isinstance(err.value, Unavailable | ConnectionError)
    assert ids[0] in str(err.value) and "runs once a worker starts" in str(err.value)
    assert "none consumes the 'ingest' queue" in str(err.value)  # the README says it names it
    assert client.celery.backend.get_task_meta(ids[0])["status"] == "PENDING"


@pytest.mark.parametrize("status", [Status.ACTIVE, Status.CANDIDATE])
def test_restoring_a_live_memory_is_refused_not_audited(client: Client, status: Status) -> None:
    """Restore brings back a deleted memory; on a live one it used to "succeed": an
    audited no-op, or a candidate promoted to active past the support rule."""
    m = put(client, "acme", "Sam likes green tea", status=status)
    with pytest.raises(MemoryStateError, match=f"is {status.value}, not deleted"):
        client.restore("acme", m.id)
    after = client.get("acme", m.id)
    assert after is not None and after.status is status
    assert [e.action for e in client.history("acme", m.id)] == [AuditAction.ADD]
    client.delete("acme", m.id)
    assert client.restore("acme", m.id).status is Status.ACTIVE


def test_erasing_an_unknown_or_erased_memory_raises(client: Client) -> None:
    """Erase used to answer 0 removed (HTTP {"erased": 0}) for a typo'd or already
    erased id: a user who asked to be forgotten was told it was done."""
    m = put(client, "acme", "Sam's passport number is X123")
    for erase in (lambda i: client.erase("acme", memory_id=i),
                  lambda i: client.erase("acme", memory_id=i, keep_sources=True),
                  lambda i: client.erase_memory("acme", i)):
        with pytest.raises(MemoryNotFound, match="'no-such-id' not found"):
            erase("no-such-id")
    assert client.erase("acme", memory_id=m.id) >= 1
    with pytest.raises(MemoryNotFound, match="already erased"):
        client.erase_memory("acme", m.id)


@pytest.mark.parametrize(("query", "k", "field"), [("tea", "5", "k"), ("tea", 0, "k"),
                                                    ("tea", 2.5, "k"), ("  ", 3, "query"),
                                                    (None, 3, "query")])
def test_bad_search_arguments_name_their_field(client: Client, query: Any, k: Any,
                                               field: str) -> None:
    put(client, "acme", "Sam likes green tea")
    with pytest.raises(ValueError, match=f"^{field}: "):
        client.search("acme", query, k=k)


def test_erasing_an_unknown_episode_raises(client: Client) -> None:
    m = put(client, "acme", "Sam's locker code is 4411")  # its source turn: "ep-0"
    with pytest.raises(EpisodeNotFound, match="'turn-17' not found"):
        client.erase("acme", episode_id="turn-17")
    assert client.erase("acme", episode_id=m.sources[0]) >= 1
    with pytest.raises(EpisodeNotFound, match="already erased"):
        client.erase("acme", episode_id=m.sources[0])


def test_rare_filter_matches_are_read_once_and_follow_every_change(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "SCAN_SHARE", 0.0)  # always the exact path
    scans: list[str] = []
    real_scan = client.store.records.iter_filter_fields

    def counted(namespace: str) -> Any:  # the real scan, counted
        scans.append(namespace)
        return real_scan(namespace)

    monkeypatch.setattr(client.store.records, "iter_filter_fields", counted)
    ns = "acme"
    for i in range(150):  # more than a search's depth: the exact path is taken
        put(client, ns, f"Sam likes green tea number {i}", at=i, user_id="bob")
    first = put(client, ns, "The boiler was serviced", at=200, user_id="alice")

    def alice() -> list[str]:
        return [h.memory.text for h in client.search(ns, "boiler", k=3, touch=False,
                                                      filters={"user_id": "alice"})]

    assert alice() == [first.text] and alice() == [first.text]
    assert len(scans) == 1  # the second search used the cached fields
    client.search(ns, "boiler", k=3)  # recall bookkeeping changes no filter field
    assert alice() == [first.text] and len(scans) == 1
    second = put(client, ns, "The boiler pressure is low", at=201, user_id="alice")
    assert sorted(alice()) == sorted([first.text, second.text]) and len(scans) == 2
    client.delete(ns, first.id)  # a status change is a committed change too
    assert alice() == [second.text]
    client.update(ns, second.id, metadata={"room": "kitchen"})
    hits = client.search(ns, "boiler", k=3, touch=False,
                         filters={"metadata.room": "kitchen"})
    assert [h.memory.id for h in hits] == [second.id]
    client.erase(ns, everything=True)
    assert alice() == []


def test_a_search_returns_and_recalls_only_what_it_matched(client: Client) -> None:
    """A memory sharing no word and no vector component with the query is no hit: it is
    neither returned (fewer than k come back; a newcomer read the zero-score padding as
    matches) nor recalled (a search must not strengthen what it did not find)."""
    tea = put(client, "acme", "Sam likes green tea")
    chess = put(client, "acme", "Sam plays chess on Fridays")
    hits = client.search("acme", "green tea", k=5)
    assert [h.memory.id for h in hits] == [tea.id]
    assert all(h.score > 0 for h in hits)
    assert client.search("acme", "xylophone", k=5) == []
    counts = {m.id: m.recall_count for m in client.store.records.get_many("acme", [tea.id,
                                                                                   chess.id])
              if m}
    assert counts == {tea.id: 1, chess.id: 0}


def test_versions_and_rollback(client: Client) -> None:
    ns = "versioned"
    m = put(client, ns, "Sam lives in Paris")
    view = client.store.snapshots.begin_pass(ns)
    v1 = client.store.snapshots.commit_pass(ns, view, view.memories, [], now=T0)
    view = client.store.snapshots.begin_pass(ns)
    v2 = client.store.snapshots.commit_pass(ns, view, [], [], now=T0)  # dropped everything
    listed = client.versions(ns)
    assert listed["current"] == v2
    assert [(v["version"], v["memories"]) for v in listed["versions"]][-2:] == [(v1, 1), (v2, 0)]
    assert client.get(ns, m.id) is None
    assert client.rollback(ns, v1, reason="test rollback") == {
        "namespace": ns, "from_version": v2, "to_version": v1}
    assert client.versions(ns)["current"] == v1
    back = client.get(ns, m.id)
    assert back is not None and back.text == "Sam lives in Paris"
