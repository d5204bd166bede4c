"""Searches keep the records they read while the namespace's state is unchanged
(memcore.client.record_cache): a repeated search reads no record from Redis, and every
change to a record (by this process or another: a touch, an edit, a pin, a delete, a
pass, an erase) is seen by the next search."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from memcore.client.client import Client
from memcore.core.models import Status
from tests.cli_helpers import T0, memory, put

NS = "cache-1"


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


def _reads(client: Client) -> list[int]:
    """Wrap the store's record read of ``client``'s searcher; returns the counter."""
    count = [0]
    real = client._searcher.store.get_many

    def counted(*args: object, **kw: object) -> object:
        count[0] += len(args[1])  # type: ignore[arg-type]
        return real(*args, **kw)  # type: ignore[arg-type]

    client._searcher.store.get_many = counted  # type: ignore[method-assign]
    return count


def _search(client: Client) -> dict[str, object]:
    hits = client.search(NS, "green tea", 5, touch=False, now=T0 + timedelta(days=1))
    return {h.memory.id: h.memory for h in hits}


def test_a_repeated_search_reads_no_record(clients: tuple[Client, Client]) -> None:
    searcher, _ = clients
    reads = _reads(searcher)
    first = _search(searcher)
    assert reads[0] > 0
    before = reads[0]
    assert _search(searcher) == first
    assert reads[0] == before  # the state read alone: one round trip


def test_changes_by_another_process_are_seen(clients: tuple[Client, Client]) -> None:
    searcher, writer = clients
    top = next(iter(_search(searcher)))
    # An edit.
    writer.update(NS, top, text="user likes green tea and oolong")
    assert _search(searcher)[top].text == "user likes green tea and oolong"
    # A pin.
    writer.pin(NS, top)
    assert _search(searcher)[top].pinned
    # A delete: gone from the answers.
    writer.delete(NS, top)
    assert top not in _search(searcher)
    writer.restore(NS, top)
    assert _search(searcher)[top].status is Status.ACTIVE


def test_a_touch_is_seen(clients: tuple[Client, Client]) -> None:
    searcher, writer = clients
    top = next(iter(_search(searcher)))
    strength = _search(searcher)[top].strength  # type: ignore[attr-defined]
    # Recall bookkeeping by another process (a search with touch): not a content change,
    # but it moves the namespace's recall count, so the cached record is dropped.
    writer.search(NS, "green tea", 5, now=T0 + timedelta(days=1))
    assert _search(searcher)[top].strength > strength  # type: ignore[attr-defined]


def test_erases_are_seen(clients: tuple[Client, Client]) -> None:
    searcher, writer = clients
    top = next(iter(_search(searcher)))
    writer.erase(NS, memory_id=top, keep_sources=True)
    assert top not in _search(searcher)
    writer.erase(NS, everything=True)  # by another process: this one's caches are stale
    assert _search(searcher) == {}
