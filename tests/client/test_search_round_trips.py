"""An unfiltered search whose cached index is current costs one Redis round trip: it
ranks on the index, then reads the namespace's state, the guard's key and its first
records together (memcore.client.search, ``Searcher._search_cached``). Whatever another
process changed in between (a new memory, an erase) is still seen by that search."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from memcore.client.client import Client
from memcore.client.search import ReadGuard
from tests.support.cli_helpers import T0, memory, put

NS = "trips-1"


@pytest.fixture()
def clients(redis_url: str) -> Iterator[tuple[Client, Client]]:
    put(redis_url, *(memory(f"user likes green tea number {i}", ns=NS, days_ago=i)
                     for i in range(30)))
    searcher, writer = Client(redis_url), Client(redis_url)
    try:
        yield searcher, writer
    finally:
        searcher.close()
        writer.close()


def _counter(client: Client) -> list[int]:
    """Count the commands ``client``'s store sends to Redis."""
    count = [0]
    redis_client = client.store.gateway.client
    real = redis_client.execute_command

    def counted(*args: object, **kw: object) -> object:
        count[0] += 1
        return real(*args, **kw)

    redis_client.execute_command = counted  # type: ignore[method-assign]
    return count


def _ids(client: Client, query: str = "green tea", **kw: object) -> list[str]:
    hits = client.search(NS, query, 5, touch=False, now=T0 + timedelta(days=1), **kw)  # type: ignore[arg-type]
    return [h.memory.id for h in hits]


def test_a_search_on_a_current_index_is_one_round_trip(clients: tuple[Client, Client]) -> None:
    searcher, _ = clients
    first = _ids(searcher)  # builds the index: state, vectors, records
    assert _ids(searcher) == first  # the first use of the script may send it whole
    sent = _counter(searcher)
    assert _ids(searcher) == first
    assert sent[0] == 1
    # The same answers as a search that reads the state first (a filter takes that path).
    assert _ids(searcher, filters={"kind": "knowledge"}) == first
    assert sent[0] >= 3


def test_a_memory_added_by_another_process_is_found(clients: tuple[Client, Client],
                                                     redis_url: str) -> None:
    searcher, _ = clients
    _ids(searcher, "oolong")
    (new,) = put(redis_url, memory("user drinks oolong every morning", ns=NS))
    sent = _counter(searcher)
    assert _ids(searcher, "oolong")[0] == new.id
    assert sent[0] > 1  # the state showed the index stale: brought up to date


def test_an_erase_by_another_process_is_seen(clients: tuple[Client, Client]) -> None:
    searcher, writer = clients
    top = _ids(searcher)[0]
    writer.erase(NS, memory_id=top, keep_sources=True)
    assert top not in _ids(searcher)
    writer.erase(NS, everything=True)
    assert _ids(searcher) == []


def test_the_guard_is_checked_before_any_record_is_used(
        clients: tuple[Client, Client], redis_url: str) -> None:
    searcher, _ = clients
    _ids(searcher)
    _ids(searcher)
    searcher.store.gateway.client.set("guard-key", b"rev-2")
    seen: list[bytes | None] = []

    class Revoked(Exception):
        pass

    def check(value: bytes | None) -> None:
        seen.append(value)
        raise Revoked

    sent = _counter(searcher)
    with pytest.raises(Revoked):
        searcher.search(NS, "green tea", 5, touch=False, guard=ReadGuard("guard-key", check))
    assert seen == [b"rev-2"]
    assert sent[0] == 1
