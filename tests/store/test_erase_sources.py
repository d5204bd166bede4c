"""Erasing a memory erases the turns it came from: afterwards no key or value of the
namespace holds its text or vector, with or without a pass in flight, and the AOF is
rewritten without them. Real Redis, the real write path (provided facts)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
import redis

from memcore.adapters import build_models
from memcore.client.client import Client, to_episodes
from memcore.core.config import Settings
from memcore.core.models import Memory, utcnow
from memcore.ingest.write_path import IngestPipeline
from memcore.local.redis_server import running_redis
from memcore.store import MemoryStore
from memcore.store.codec import quantize
from tests.store.test_security_erase_aof import _aof_bytes, _wait_rewrite
from tests.support.cli_helpers import run
from tests.support.test_reliability_common import T0

NS = "forget"
SECRET = "4921-ZEBRA"
PIN = f"My bank PIN is {SECRET}"
TURNS = [
    {"role": "user", "id": "t1", "content": f"{PIN}. I live in Oslo and own a cat called Biscuit.",
     "metadata": {"facts": [PIN, "I live in Oslo", "I own a cat called Biscuit"]}},
    {"role": "user", "id": "t2", "content": f"Remember: {PIN}.", "metadata": {"facts": [PIN]}},
    {"role": "user", "id": "t3", "content": "I like tea. I live in Oslo.",
     "metadata": {"facts": ["I like tea", "I live in Oslo"]}},
]


def ingest(url: str) -> MemoryStore:
    settings = Settings(redis_url=url, extractor="provided")
    store = MemoryStore.from_url(url)
    IngestPipeline(store, build_models(settings), settings).ingest(
        NS, to_episodes(NS, TURNS, T0, None))
    view = store.snapshots.begin_pass(NS)  # v1: erase must reach every version
    store.snapshots.commit_pass(NS, view, view.memories, [], now=T0)
    return store


def by_text(store: MemoryStore) -> dict[str, Memory]:
    return {m.text: m for m in store.records.iter_memories(NS)}


def needles(memory: Memory) -> list[bytes]:
    assert memory.vector is not None
    vec = np.asarray(memory.vector, dtype=np.float32)
    return [SECRET.encode(), quantize(vec)[6:]]


def scan(client: redis.Redis, wanted: list[bytes]) -> set[tuple[bytes, bytes]]:
    """(key, needle) for every needle found in any key's DUMP or string value."""
    found = set()
    for key in client.scan_iter(count=1000):
        blobs = [client.dump(key) or b""]
        if client.type(key) == b"string":
            blobs.append(client.get(key) or b"")
        found |= {(key, n) for n in wanted for blob in blobs if n in blob}
    return found


@pytest.fixture()
def url(redis_url: str, redis_client: redis.Redis) -> Iterator[str]:
    redis_client.config_set("rdbcompression", "no")  # DUMP shows raw bytes
    yield redis_url


@pytest.mark.parametrize("pass_in_flight", [False, True])
def test_erase_memory_erases_its_turns_everywhere(url: str, pass_in_flight: bool) -> None:
    store = ingest(url)
    memories = by_text(store)
    pin, cat = memories[PIN], memories["I own a cat called Biscuit"]
    assert sorted(pin.sources) == ["t1", "t2"]
    wanted = needles(pin)
    before = scan(store.client, wanted)
    assert {n for _, n in before} == set(wanted)
    assert {k for k, _ in before} >= {f"mc:{{{NS}}}:ep:t1".encode(),
                                       f"mc:{{{NS}}}:ep:t2".encode()}
    view = store.snapshots.begin_pass(NS) if pass_in_flight else None
    client = Client(url)
    try:
        report = client.erase_memory(NS, pin.id)
    finally:
        client.close()
    if view is not None:  # the pass read the memory before the erase and commits after it
        store.snapshots.commit_pass(NS, view, view.memories, [], now=utcnow())
    assert report.removed == [pin.id]
    assert report.episodes == ["t1", "t2"]
    assert report.orphaned == [cat.id]  # only t1 held it: kept, and reported
    left = scan(store.client, wanted)
    assert left == set(), f"erased text or vector survives in {sorted({k for k, _ in left})}"
    after = by_text(store)
    assert PIN not in after
    assert {"I live in Oslo", "I like tea", "I own a cat called Biscuit"} <= set(after)
    assert [e.id for e in store.episodes.iter_episodes(NS)] == ["t3"]
    erase = store.audit.tail(NS, 1)[0]
    assert erase.before == [pin.id] and "t1, t2" in erase.reason and cat.id in erase.reason


def test_keep_sources_leaves_the_turns(url: str) -> None:
    store = ingest(url)
    pin = by_text(store)[PIN]
    client = Client(url)
    try:
        assert client.erase(NS, memory_id=pin.id, keep_sources=True) == 1
    finally:
        client.close()
    assert store.records.get(NS, pin.id) is None
    left = {k for k, _ in scan(store.client, needles(pin))}
    assert left == {f"mc:{{{NS}}}:ep:t1".encode(), f"mc:{{{NS}}}:ep:t2".encode()}


def test_client_erase_counts_memories_and_turns(url: str) -> None:
    store = ingest(url)
    pin = by_text(store)[PIN]
    client = Client(url)
    try:
        assert client.erase(NS, memory_id=pin.id) == 3  # the memory and two turns
    finally:
        client.close()
    assert store.episodes.get_episode(NS, "t1") is None and store.episodes.get_episode(NS,
                                                                                       "t2") is None


def test_cli_erase_reports_turns_and_orphans(url: str) -> None:
    store = ingest(url)
    memories = by_text(store)
    pin, cat = memories[PIN], memories["I own a cat called Biscuit"]
    out = run(url, "erase", NS, "--memory", pin.id, "--yes", "--json")
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert body["removed"] == 3 and body["turns_erased"] == ["t1", "t2"]
    assert body["orphaned"] == [cat.id]
    kept = run(url, "erase", NS, "--memory", by_text(store)["I like tea"].id, "--yes",
               "--keep-sources")
    assert kept.exit_code == 0 and "1 removed" in kept.output
    assert store.episodes.get_episode(NS, "t3") is not None


def test_erase_with_sources_rewrites_the_aof() -> None:
    with running_redis(appendfsync="always") as server:
        store = ingest(server.url)
        pin = by_text(store)[PIN]
        assert SECRET.encode() in _aof_bytes(server.directory)
        client = Client(server.url)
        try:
            client.erase(NS, memory_id=pin.id)  # no separate erase of the turns
        finally:
            client.close()
        _wait_rewrite(store)
        assert SECRET.encode() not in _aof_bytes(server.directory)
        store.close()
