"""A capped record says so: the HTTP API's memory JSON (``capped``) and the inspector.

Bounded records (memcore.core.bounds) unlist the oldest sources and drop the oldest
metadata values of a repeated memory; that was only in the audit. Here 300 repeats of one
turn, each with its own metadata value, through the real write path: the memory's JSON
from get, list, search and the remote client names what reached its bound, an ordinary
memory's ``capped`` is null, and the inspector's memory page shows it with the audit's
words for what was dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from memcore.adapters import build_models
from memcore.client.remote import RemoteClient
from memcore.core.bounds import MAX_SOURCES, MAX_VALUES_PER_KEY
from memcore.core.config import Settings
from memcore.core.models import Episode
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from tests.support.api_helpers import Api, serve

T0 = datetime(2026, 3, 1, tzinfo=UTC)
NS = "capped"
REPEATS = 300


@pytest.fixture()
def fed(redis_url: str) -> Iterator[tuple[Api, str, str]]:
    """The API over a namespace with one capped memory and one plain one: (api, ids)."""
    settings = Settings(redis_url=redis_url)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    turns = [Episode(id=f"turn-{i:05d}", namespace=NS, role="user", speaker="Sam",
                     text="I prefer window seats.", timestamp=T0 + timedelta(seconds=i),
                     metadata={"trip": f"booking-{i:05d}"}) for i in range(REPEATS)]
    for start in range(0, REPEATS, 100):
        pipeline.ingest(NS, turns[start:start + 100], infer=False)
    pipeline.ingest(NS, [Episode(id="plain", namespace=NS, role="user", speaker="Sam",
                                 text="I have a cat called Tom.", timestamp=T0)], infer=False)
    ids = {store.records.get(NS, m).text: m for m in store.gateway.live_ids(NS)}  # type: ignore[union-attr]
    store.close()
    gen = serve(redis_url)
    api = next(gen)
    try:
        yield api, ids["I prefer window seats."], ids["I have a cat called Tom."]
    finally:
        gen.close()


def test_the_api_shows_which_bounds_a_record_reached(fed: tuple[Api, str, str]) -> None:
    api, capped_id, plain_id = fed
    key = api.key(NS, role="read")
    want = {"sources_unlisted": REPEATS - MAX_SOURCES, "metadata_keys_full": ["trip"]}
    got = api.call("GET", f"/v1/namespaces/{NS}/memories/{capped_id}", key).json()
    print(f"\n[capped record] support {got['support']}, sources listed {len(got['sources'])}, "
          f"trip values {len(got['metadata']['trip'])}; capped: {got['capped']}")
    assert got["capped"] == want
    assert len(got["metadata"]["trip"]) == MAX_VALUES_PER_KEY
    plain = api.call("GET", f"/v1/namespaces/{NS}/memories/{plain_id}", key).json()
    assert plain["capped"] is None
    page = api.call("GET", f"/v1/namespaces/{NS}/memories", key).json()
    assert {m["id"]: m["capped"] for m in page["memories"]} == {capped_id: want, plain_id: None}
    for _ in range(2):  # the second search takes the shortcut (key cached)
        hits = api.call("POST", f"/v1/namespaces/{NS}/search", key,
                        json={"query": "window seats", "k": 2}).json()["results"]
        assert {h["memory"]["id"]: h["memory"]["capped"] for h in hits} == \
            {capped_id: want, plain_id: None}
    with RemoteClient(api.url, key) as remote:
        memory = remote.get(NS, capped_id)
        assert memory is not None and memory.capped == want


def test_the_inspector_shows_a_capped_record(fed: tuple[Api, str, str]) -> None:
    from memcore.api.ui.session import COOKIE

    api, capped_id, plain_id = fed
    cookie = {"Cookie": f"{COOKIE}={api.key(NS, role='read')}"}
    page = api.http.get(f"/ui/ns/{NS}/m/{capped_id}", headers=cookie)
    assert page.status_code == 200, page.text
    assert 'id="capped"' in page.text
    assert f"{REPEATS - MAX_SOURCES} older source turn(s)" in page.text
    assert "metadata full for: trip" in page.text
    assert "record capped: " in page.text and "metadata values dropped" in page.text
    plain = api.http.get(f"/ui/ns/{NS}/m/{plain_id}", headers=cookie)
    assert plain.status_code == 200 and 'id="capped"' not in plain.text
