"""Erase completeness: no byte of the erased text or vector survives anywhere in Redis."""

from __future__ import annotations

import numpy as np
import pytest
import redis

from memcore.core.errors import NamespaceNotFound
from memcore.core.models import Actor, AuditAction, Episode, Role
from memcore.store import MemoryStore, keys
from memcore.store.codec import quantize
from tests.store.test_store_support import later, mem, vec

SECRET = "SECRET-MEMORY my bank PIN is 4921 and my doctor is Dr Zed"
EP_SECRET = "EPISODE-SECRET I was diagnosed with something private today"
DERIVED = "DERIVED-SECRET user has a private diagnosis"


def _all_bytes(client: redis.Redis, ns: str) -> list[tuple[bytes, bytes]]:
    """(key, DUMP) of every key of ``ns`` and the registry, uncompressed."""
    out = []
    for key in [*client.scan_iter(match=keys.pattern(ns), count=1000), keys.REGISTRY.encode()]:
        dumped = client.dump(key)
        if dumped is not None:
            out.append((key, dumped))
            if client.type(key) == b"string":
                out.append((key, client.get(key) or b""))
    return out


def _needles(seed: int, *texts: str) -> list[bytes]:
    v = np.asarray(vec(seed), dtype=np.float32)
    return [t.encode() for t in texts] + [quantize(v)[6:], v.tobytes()]


def _found(client: redis.Redis, ns: str, needles: list[bytes]) -> set[bytes]:
    return {n for _, blob in _all_bytes(client, ns) for n in needles if n in blob}


def _assert_gone(client: redis.Redis, ns: str, needles: list[bytes]) -> None:
    for key, blob in _all_bytes(client, ns):
        for needle in needles:
            assert needle not in blob, f"{needle[:30]!r} survives in {key!r}"


@pytest.fixture()
def setup(redis_client: redis.Redis) -> tuple[MemoryStore, dict[str, str]]:
    redis_client.config_set("rdbcompression", "no")  # DUMP must show raw bytes
    store = MemoryStore(redis_client)
    store.episodes.add_episodes([Episode(id="e-secret", namespace="u", role=Role.USER,
                                         text=EP_SECRET,
                                timestamp=later(0)),
                        Episode(id="e-other", namespace="u", role=Role.USER, text="hello",
                                timestamp=later(1))])
    x = store.writes.add("u", mem("u", SECRET, seed=1, sources=["e-x"]), actor=Actor.INGEST,
                  reason=f"said: {SECRET}")
    y = store.writes.add("u", mem("u", DERIVED, seed=2, sources=["e-secret"]), actor=Actor.INGEST,
                  reason="extracted")
    z = store.writes.add("u", mem("u", "user likes tea", seed=3, sources=["e-secret", "e-other"]),
                  actor=Actor.INGEST, reason="")
    keep = store.writes.add("u", mem("u", "user lives in Oslo", seed=4, sources=["e-other"]),
                     actor=Actor.INGEST, reason="")
    view = store.snapshots.begin_pass("u")  # snapshot v1 holds copies of everything
    store.snapshots.commit_pass("u", view, view.memories, [], now=later(2))
    store.snapshots.store_index_blob("u", 1, np.asarray([vec(1), vec(2)], np.float32).tobytes())
    store.snapshots.store_index_blob("u", 0, np.asarray([vec(1)], np.float32).tobytes())
    store.writes.reinforce("u", x.id, source="e-x2", now=later(3), reason="")
    return store, {"x": x.id, "y": y.id, "z": z.id, "keep": keep.id}


def test_erase_memory_everywhere_including_running_pass(
        setup: tuple[MemoryStore, dict[str, str]]) -> None:
    store, ids = setup
    view = store.snapshots.begin_pass("u")  # a pass in progress holding the secret
    store.writes.update("u", ids["x"], text=SECRET + " (updated)", vector=vec(1), source="e-x3",
                 now=later(4), reason=SECRET)
    needles = _needles(1, SECRET)
    assert _found(store.client, "u", needles) == set(needles)  # the scan does see them
    assert store.eraser.erase_memory("u", ids["x"], later(5)) == 1
    assert store.records.get("u", ids["x"]) is None
    store.snapshots.commit_pass("u", view, view.memories, [], now=later(6))  # pass had the old copy
    assert store.records.get("u", ids["x"]) is None
    assert all(store.records.get("u", i) is not None for k, i in ids.items() if k != "x")
    _assert_gone(store.client, "u", needles)
    erase = [e for e in store.audit.tail("u", 100) if e.action is AuditAction.ERASE]
    assert len(erase) == 1 and erase[0].before == [ids["x"]]
    assert store.snapshots.load_index_blob("u", 1) is None
    assert {e.action for e in store.audit.history("u", ids["x"])} >= {AuditAction.ADD,
                                                                 AuditAction.ERASE}


def test_erase_episode_drops_only_what_it_alone_supports(
        setup: tuple[MemoryStore, dict[str, str]]) -> None:
    store, ids = setup
    needles = _needles(2, EP_SECRET, DERIVED)
    assert _found(store.client, "u", needles) == set(needles)
    assert store.eraser.erase_episode("u", "e-secret", later(5)) == 2  # the episode + y
    assert store.episodes.get_episode("u", "e-secret") is None
    assert [e.id for e in store.episodes.iter_episodes("u")] == ["e-other"]
    assert store.records.get("u", ids["y"]) is None
    z = store.records.get("u", ids["z"])
    assert z is not None and z.sources == ["e-other"]
    for version in (0, 1):
        old = store.gateway.load("u", version, [ids["z"]])[0]
        assert old is not None and old.sources == ["e-other"]
    _assert_gone(store.client, "u", needles)


def test_erase_of_a_namespace_without_keys_raises_and_writes_nothing(
        setup: tuple[MemoryStore, dict[str, str]]) -> None:
    store, _ = setup
    with pytest.raises(NamespaceNotFound, match="'u-typo'"):
        store.eraser.erase_namespace("u-typo", later(9))
    assert store.eraser.erase_namespace("u-typo", later(9), missing_ok=True) == 0
    assert list(store.client.scan_iter(match=keys.pattern("u-typo"))) == []


def test_erase_namespace(setup: tuple[MemoryStore, dict[str, str]]) -> None:
    store, _ = setup
    assert store.eraser.erase_namespace("u", later(9)) > 10
    assert "u" not in store.records.namespaces()
    _assert_gone(store.client, "u", _needles(1, SECRET, EP_SECRET, DERIVED))
    left = {k.decode() for k in store.client.scan_iter(match=keys.pattern("u"))}
    payloads = {k for k in left if k.startswith(keys.prefix("u") + "audit:p:")}
    # The audit entry of the erase, and a new generation token (random, no data).
    assert left <= {keys.audit("u"), keys.generation("u")} | payloads
    epoch = store.client.get(keys.generation("u"))
    assert epoch is not None and b"secret" not in epoch.lower()
    store.eraser.erase_namespace("u", later(10))
    assert store.client.get(keys.generation("u")) != epoch  # every erase, a new token
    assert [e.action for e in store.audit.tail("u")] == [AuditAction.ERASE]
