"""Time in queries: ``as_of`` over validity intervals, ``include_history``, and time
filters chosen before ranking (pure parts, then memcore.Client on a real Redis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memcore.client.client import Client
from memcore.core.filters import FilterError, compile_filter
from memcore.core.models import Actor, AuditAction, Memory, Status
from memcore.core.timeline import valid_at
from memcore.store.codec import pack_memory, unpack_filter_fields, unpack_memory


def at(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def memory(text: str, created: datetime, **fields: Any) -> Memory:
    return Memory(namespace="ns", text=text, last_used=created, created_at=created,
                  updated_at=created, **fields)


# -- pure ----------------------------------------------------------------------------------

def test_valid_at_reads_the_interval_the_status_and_the_creation_time() -> None:
    paris = memory("Sam lives in Paris", at(2019), valid_from=at(2019), valid_until=at(2024),
                   status=Status.SUPERSEDED, superseded_by="berlin")
    berlin = memory("Sam lives in Berlin", at(2024), valid_from=at(2024),
                    status=Status.ACTIVE)
    assert [valid_at(paris, t) for t in (at(2018), at(2019), at(2023), at(2024))] == [
        False, True, True, False]
    assert [valid_at(berlin, t) for t in (at(2023), at(2024), at(2030))] == [False, True, True]
    # Stored later than the instant: not shown, even though it says it held then.
    late = memory("Sam lived in Rome", at(2025), valid_from=at(2010), status=Status.ACTIVE)
    assert not valid_at(late, at(2020)) and valid_at(late, at(2025))
    # Tombstoned (deleted, merged away, forgotten): never part of an as_of answer.
    gone = paris.model_copy(update={"status": Status.TOMBSTONED})
    assert not valid_at(gone, at(2020))
    # An expiry ends validity like valid_until.
    mood = memory("Sam is tired", at(2020), expires_at=at(2020, 1, 3), status=Status.ACTIVE)
    assert valid_at(mood, at(2020, 1, 2)) and not valid_at(mood, at(2020, 1, 3))


@pytest.mark.parametrize(("spec", "expected"), [
    ({"valid_from": {"lt": "2020-01-01T00:00:00Z"}}, {"paris"}),
    ({"valid_until": {"lte": "2024-01-01T00:00:00+00:00"}}, {"paris"}),
    ({"valid_to": {"gt": "2020-01-01"}}, {"paris"}),  # alias
    ({"valid_until": None}, {"berlin", "note"}),  # open-ended
    ({"event_at": {"gte": "2024-01-01"}}, {"berlin", "note"}),  # valid_from, else created_at
    ({"event_at": {"lt": "2021-01-01"}}, {"paris"}),
    ({"created_at": {"gte": "2024-06-01"}}, {"note"}),
])
def test_time_filters(spec: dict[str, Any], expected: set[str]) -> None:
    paris = memory("Sam lives in Paris", at(2019), id="paris", valid_from=at(2019),
                   valid_until=at(2024), status=Status.SUPERSEDED)
    berlin = memory("Sam lives in Berlin", at(2024), id="berlin", valid_from=at(2024))
    note = memory("a note", at(2025), id="note")
    keep = compile_filter(spec)
    assert {m.id for m in (paris, berlin, note) if keep(m)} == expected
    # The scan's cheap filter fields answer the same as the whole memory.
    fields = [unpack_filter_fields(pack_memory(m), m.id) for m in (paris, berlin, note)]
    assert {f.id for f in fields if keep(f)} == expected


@pytest.mark.parametrize(("spec", "named"), [
    ({"valid_from": {"lt": "last tuesday"}}, "filters.valid_from.lt: expected an ISO 8601"),
    ({"event_at": {"contains": "2020"}}, "contains does not apply to event_at"),
    ({"valid_to": {"gt": True}}, "filters.valid_to.gt"),
])
def test_bad_time_filters_name_the_field(spec: dict[str, Any], named: str) -> None:
    with pytest.raises(FilterError, match=named):
        compile_filter(spec)


# A record written by the code before this change (d01aeea): a superseded "Paris" with
# its interval, scope and metadata. It must still load, and its interval be filterable.
OLD_RECORD = bytes.fromhex(
    "01000000000060e6355a7e0500000000000000f03f00000000000000000000e03f000000000000e03f00"
    "60e6355a7e05000060e6355a7e050000202110d70d06000060e6355a7e050000202110d70d0600000000"
    "0000000080010000000102000002000402013c7f0001104ffaa90baa27b371ffc19997485864f2060000"
    "006265726c696e1200000053616d206c6976657320696e2050617269730000000000000000200000007b"
    "2275223a2273616d222c226d223a7b22746f706963223a22686f6d65227d7d")


def test_records_written_before_still_load_with_their_interval() -> None:
    old = unpack_memory(OLD_RECORD, "ns", "paris")
    assert (old.text, old.status, old.superseded_by) == ("Sam lives in Paris",
                                                         Status.SUPERSEDED, "berlin")
    assert (old.valid_from, old.valid_until) == (at(2019), at(2024))
    fields = unpack_filter_fields(OLD_RECORD, "paris")
    assert (fields.valid_from, fields.valid_until, fields.expires_at) == (at(2019), at(2024),
                                                                          None)
    assert fields.user_id == "sam" and fields.metadata == {"topic": "home"}
    assert valid_at(fields, at(2020)) and not valid_at(fields, at(2024, 6))
    assert pack_memory(old) == OLD_RECORD  # and it is written back byte for byte


# -- memcore.Client on a real Redis ----------------------------------------------------------

def put(client: Client, ns: str, text: str, when: datetime, **fields: Any) -> Memory:
    """Store one memory as the write path would have (created at its turn's time)."""
    vec = [float(x) for x in client.models.embedder.embed([text])[0]]
    fields.setdefault("valid_from", when)
    m = Memory(namespace=ns, text=text, vector=vec, last_used=when, created_at=when,
               updated_at=when, status=fields.pop("status", Status.ACTIVE),
               explicit=True, confidence=0.9, sources=[f"ep-{text}"], **fields)
    return client.store.writes.add(ns, m, actor=Actor.INGEST, reason="test")


def moved(client: Client, ns: str) -> tuple[Memory, Memory]:
    """Paris (2019) superseded by Berlin (2024), as the write path supersedes."""
    paris = put(client, ns, "Sam lives in Paris", at(2019))
    vec = [float(x) for x in client.models.embedder.embed(["Sam lives in Berlin"])[0]]
    berlin = Memory(namespace=ns, text="Sam lives in Berlin", vector=vec, last_used=at(2024),
                    created_at=at(2024), updated_at=at(2024), valid_from=at(2024),
                    status=Status.ACTIVE, explicit=True, confidence=0.9, sources=["ep-b"])
    client.store.writes.supersede(ns, paris.id, berlin, now=at(2024), actor=Actor.INGEST,
                           reason="moved")
    return paris, berlin


def test_as_of_search_finds_the_value_valid_then_with_its_history(client: Client) -> None:
    paris, berlin = moved(client, "acme")
    put(client, "acme", "Sam adopted a cat named Tom", at(2025))  # stored later
    now = client.search("acme", "where does Sam live", k=1, touch=False)
    assert [h.memory.text for h in now] == ["Sam lives in Berlin"]
    then = client.search("acme", "where does Sam live", k=5, as_of="2021-06-01T00:00:00Z")
    assert [h.memory.id for h in then] == [paris.id]
    assert then[0].memory.status is Status.SUPERSEDED
    cat = client.search("acme", "cat", k=5, as_of=at(2024, 6))
    assert cat == []  # no cat: not stored yet (and Berlin shares nothing with "cat")
    assert "cat" in client.search("acme", "cat", k=1, as_of=at(2025, 6))[0].memory.text
    (hit,) = client.search("acme", "where does Sam live", k=1, include_history=True,
                           touch=False)
    assert hit.memory.id == berlin.id
    assert [(m.text, m.valid_from, m.valid_until) for m in hit.earlier] == [
        ("Sam lives in Paris", at(2019), at(2024))]
    # A question about the past recalls nothing now.
    assert client.get("acme", paris.id).recall_count == 0  # type: ignore[union-attr]


def test_as_of_get_list_profile_and_history(client: Client) -> None:
    paris, berlin = moved(client, "acme")
    gone = put(client, "acme", "Sam likes jazz", at(2020))
    client.delete("acme", gone.id)
    assert client.get("acme", berlin.id, as_of=at(2020)).id == paris.id  # type: ignore[union-attr]
    assert client.get("acme", paris.id, as_of=at(2025)).id == berlin.id  # type: ignore[union-attr]
    assert client.get("acme", paris.id, as_of=at(2010)) is None
    assert [m.id for m in client.earlier("acme", berlin.id)] == [paris.id]
    assert client.earlier("acme", paris.id) == []
    assert [m.text for m in client.list("acme", as_of=at(2021)).memories] == [
        "Sam lives in Paris"]  # the deleted one is not brought back
    assert [m.text for m in client.list("acme", as_of=at(2025)).memories] == [
        "Sam lives in Berlin"]
    assert [m.text for m in client.profile("acme", as_of="2019-06-01")] == [
        "Sam lives in Paris"]
    assert [m.text for m in client.profile("acme", now=at(2024, 6))] == ["Sam lives in Berlin"]
    actions = [e.action for e in client.history("acme", berlin.id)]
    assert AuditAction.SUPERSEDE in actions
    assert [e.action for e in client.history("acme", berlin.id, as_of=at(2020))] == [
        AuditAction.ADD]


@pytest.mark.parametrize("call", ["search", "list", "profile", "get", "history"])
def test_a_bad_as_of_is_an_error_naming_it(client: Client, call: str) -> None:
    moved(client, "acme")
    with pytest.raises(ValueError, match="as_of: 'March' is not an ISO 8601"):
        if call == "search":
            client.search("acme", "Sam", as_of="March")
        elif call == "list":
            client.list("acme", as_of="March")
        elif call == "profile":
            client.profile("acme", as_of="March")
        elif call == "get":
            client.get("acme", "x", as_of="March")
        else:
            client.history("acme", "x", as_of="March")


def test_a_time_filter_finds_what_a_post_filter_of_the_top_k_misses(client: Client) -> None:
    ns = "trips"
    old = put(client, ns, "Sam would like to see Lisbon one day", at(2023, 3, 10))
    for i in range(60):  # newer, closer matches of the question
        put(client, ns, f"Sam planned a trip to Lisbon number {i} with friends",
            at(2025, 1, 1) + timedelta(days=i))
    query, spec = "Sam planned a trip to Lisbon", {"event_at": {"lt": "2024-01-01T00:00:00Z"}}
    top = client.search(ns, query, k=10, touch=False)
    keep = compile_filter(spec)
    assert old.id not in {h.memory.id for h in top}
    assert [h for h in top if keep(h.memory)] == []  # a post-filter of the top 10: nothing
    found = client.search(ns, query, k=10, touch=False, filters=spec)
    assert [h.memory.id for h in found] == [old.id]
    window = {"and": [{"created_at": {"gte": "2025-01-10"}},
                      {"created_at": {"lt": "2025-01-13"}}]}
    hits = client.search(ns, query, k=10, touch=False, filters=window)
    assert sorted(h.memory.created_at.day for h in hits) == [10, 11, 12]
