"""memcore on a real Redis Cluster: 3 ``redis-server --cluster-enabled yes`` nodes joined
with ``redis-cli --cluster create``. The write path, passes, search, rollback, erase and
maintenance on 50 namespaces spread over the slots; Celery workers with their data on the
cluster and their broker on a standalone Redis; what a lost master means."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import pytest
import redis
from redis.cluster import RedisCluster

from memcore.adapters import build_models
from memcore.client.client import Client, to_episodes
from memcore.consolidate import passes
from memcore.core.config import Settings
from memcore.core.models import Actor, Memory, Status
from memcore.ingest.write_path import IngestPipeline
from memcore.local.redis_server import (
    RedisClusterServers,
    RedisServer,
    start_cluster,
    start_redis,
)
from memcore.local.stack import LocalStack
from memcore.messaging.celery_config import celery_urls
from memcore.store import MemoryStore, keys
from memcore.store.connect import cluster_nodes

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
SECRET = "7731-OTTER"
T = TypeVar("T")


def turns(i: int) -> list[dict[str, object]]:
    return [
        {"role": "user", "id": f"a{i}", "content": f"My locker number is {SECRET}-{i}.",
         "metadata": {"facts": [f"My locker number is {SECRET}-{i}"]}},
        {"role": "user", "id": f"b{i}", "content": "I live in Oslo. I like jazz.",
         "metadata": {"facts": ["I live in Oslo", "I like jazz"]}},
        {"role": "user", "id": f"c{i}", "content": "I live in Oslo, near the fjord.",
         "metadata": {"facts": ["I live in Oslo"]}},
    ]


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterServers]:
    servers = start_cluster(3)
    try:
        yield servers
    finally:
        servers.stop()


@pytest.fixture(scope="module")
def broker() -> Iterator[RedisServer]:
    server = start_redis()
    try:
        yield server
    finally:
        server.close()


def settings(cluster: RedisClusterServers, broker: RedisServer) -> Settings:
    return Settings(redis_url=cluster.url, broker_url=broker.url, result_backend=broker.url,
                    extractor="provided")


def ns_keys(client: redis.Redis, ns: str) -> list[bytes]:
    return list(client.scan_iter(match=keys.pattern(ns), count=1000))


def test_cluster_url_form() -> None:
    nodes, user, password, tls = cluster_nodes("rediss+cluster://u:p%40ss@h1:7000,h2:7001")
    assert [(n.host, n.port) for n in nodes] == [("h1", 7000), ("h2", 7001)]
    assert (user, password, tls) == ("u", "p@ss", True)
    with pytest.raises(ValueError, match="redis_url: cluster node 'h3'"):
        cluster_nodes("redis+cluster://h1:7000,h3")
    # Celery cannot use a cluster: a cluster data URL needs its own broker and backend.
    with pytest.raises(ValueError, match="broker_url: Celery needs a standalone Redis"):
        celery_urls(Settings(redis_url="redis+cluster://h1:7000"), "redis+cluster://h1:7000")
    ok = Settings(redis_url="redis+cluster://h1:7000", broker_url="redis://b:6379/0",
                  result_backend="redis://b:6379/1")
    assert celery_urls(ok, "redis+cluster://h1:7000") == ("redis://b:6379/0",
                                                          "redis://b:6379/1")


def test_fifty_namespaces_over_the_cluster(cluster: RedisClusterServers,
                                           broker: RedisServer) -> None:
    s = settings(cluster, broker)
    store = MemoryStore.from_url(cluster.url)
    assert isinstance(store.client, RedisCluster)
    models = build_models(s)
    pipeline = IngestPipeline(store, models, s)
    client = Client(settings=s)
    spread: set[str] = set()
    t0 = time.monotonic()
    try:
        for i in range(50):
            ns = f"cl-{i}"
            node = store.client.get_node_from_key(keys.current(ns))  # type: ignore[attr-defined]
            spread.add(node.name)
            pipeline.ingest(ns, to_episodes(ns, turns(i), T0, None))
            oslo = store.records.get(ns, store.records.find_by_hash(ns,
                                                                    _hash("I live in Oslo")) or "")
            assert oslo is not None and sorted(oslo.sources) == [f"b{i}", f"c{i}"]
            report = passes.run_pass(store, ns, s.consolidation, models.merger, now=T0)
            assert report.to_version == 1 and store.current_version(ns) == 1
            hits = client.search(ns, "Where do I live?", k=1, now=T0, touch=True)
            assert hits and hits[0].memory.text == "I live in Oslo"
            store.snapshots.rollback(ns, 0, T0, reason="cluster test")
            assert store.current_version(ns) == 0
            code = next(m for m in store.records.iter_memories(ns) if SECRET in m.text)
            erased = client.erase_memory(ns, code.id)
            assert erased.removed == [code.id] and erased.episodes == [f"a{i}"]
            for key in ns_keys(store.client, ns):
                dumped = store.client.dump(key) or b""
                assert SECRET.encode() not in dumped, key
            done = store.maintenance.run(ns, T0 + timedelta(days=40), snapshot_grace_days=7,
                                  tombstone_grace_days=30, audit_retention_days=0)
            assert done.versions_dropped == [1]
        seconds = time.monotonic() - t0
        print(f"\n[cluster] 50 namespaces on {len(spread)} masters: ingest, pass, search, "
              f"rollback, erase, maintenance in {seconds:.1f} s")
        assert len(spread) == 3  # namespaces spread over every master
        assert len(store.records.namespaces()) == 50
        for i in range(50):
            assert store.eraser.erase_namespace(f"cl-{i}", T0) > 0
        assert store.records.namespaces() == []
    finally:
        client.close()
        store.close()


def _hash(text: str) -> str:
    from memcore.core.text import content_hash

    return content_hash(text)


def test_workers_with_data_on_the_cluster(cluster: RedisClusterServers, broker: RedisServer,
                                          monkeypatch: pytest.MonkeyPatch,
                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    """Ingest and a chord pass through real Celery workers: data on the cluster, the
    broker and results on a standalone Redis."""
    env = {"MEMCORE_BROKER_URL": broker.url, "MEMCORE_RESULT_BACKEND": broker.url,
           "MEMCORE_EXTRACTOR": "provided"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    stack = LocalStack(cluster.url, ingest_concurrency=1, consolidate_concurrency=1,
                       log_dir=tmp_path_factory.mktemp("cluster-logs"), env=env)
    stack.start()
    client = Client(cluster.url)
    try:
        stack.wait_ready(timeout=120)
        namespaces = [f"wk-{i}" for i in range(6)]
        ids = [t for i, ns in enumerate(namespaces)
               for t in client.add(ns, turns(i), timestamp=T0)]
        client.wait(ids, timeout=120)
        for ns in namespaces:
            result = client.consolidate(ns, timeout=120, now=T0, full=True)
            assert isinstance(result, dict) and result.get("to_version") == 1, result
            hits = client.search(ns, "Where do I live?", k=1, now=T0)
            assert hits and hits[0].memory.text == "I live in Oslo"
    finally:
        client.close()
        stack.stop()


def test_a_lost_master_stops_only_its_namespaces(broker: RedisServer) -> None:
    """No replicas: a dead master's slots are unavailable (writes there fail loudly and
    nothing is written elsewhere instead); namespaces on the other masters go on."""
    # its own cluster: the shared one must keep all its masters
    servers = start_cluster(3)
    try:
        s = settings(servers, broker)
        store = MemoryStore.from_url(servers.url)
        pipeline = IngestPipeline(store, build_models(s), s)
        by_node: dict[str, str] = {}
        for i in range(30):
            ns = f"lost-{i}"
            name = store.client.get_node_from_key(keys.current(ns)).name  # type: ignore[attr-defined]
            by_node.setdefault(name, ns)
        assert len(by_node) == 3
        # The namespace registry (mc:namespaces) lives on one master: keep that one alive
        # here (losing it stops new namespaces and beat's listing; see notes/store.md).
        registry = store.client.get_node_from_key(keys.REGISTRY).name  # type: ignore[attr-defined]
        victim = next(n for n in servers.nodes if f"127.0.0.1:{n.port}" != registry)
        dead_ns = by_node[f"127.0.0.1:{victim.port}"]
        alive = [ns for name, ns in by_node.items() if ns != dead_ns]
        victim.kill()
        for i, ns in enumerate(alive):
            pipeline.ingest(ns, to_episodes(ns, turns(i), T0, None))
            assert store.records.count_by_status(ns)["candidate"] >= 3
        t0 = time.monotonic()
        with pytest.raises((redis.exceptions.ConnectionError,
                            redis.exceptions.ClusterDownError)) as lost:
            pipeline.ingest(dead_ns, to_episodes(dead_ns, turns(9), T0, None))
        print(f"\n[cluster, master SIGKILLed] {len(alive)} namespaces on live masters written; "
              f"one on the dead master: {type(lost.value).__name__} after "
              f"{time.monotonic() - t0:.1f} s")
        store.close()
    finally:
        servers.stop()


def _retry(what: str, fn: Callable[[], T], timeout: float = 60.0) -> tuple[T, float]:
    """``fn()`` once the cluster answers again; (its result, seconds it took)."""
    t0 = time.monotonic()
    while True:
        try:
            return fn(), time.monotonic() - t0
        except (redis.exceptions.ConnectionError, redis.exceptions.ClusterDownError,
                redis.exceptions.TimeoutError, redis.exceptions.ClusterError) as exc:
            if time.monotonic() - t0 > timeout:
                raise AssertionError(f"{what}: no answer {timeout} s after the failover") from exc
            time.sleep(0.2)


def _synced(master: RedisServer, replica: RedisServer, timeout: float = 20.0) -> None:
    """Wait until ``replica`` has everything ``master`` acknowledged (the test's way of
    excluding the asynchronous-replication window, which memcore does not close)."""
    deadline = time.monotonic() + timeout
    while True:
        offset = int(master.client().info("replication")["master_repl_offset"])
        if int(replica.client().info("replication")["slave_repl_offset"]) >= offset:
            return
        assert time.monotonic() < deadline, "replica never caught up"
        time.sleep(0.05)


def test_failover_to_a_replica_keeps_the_namespace(broker: RedisServer) -> None:
    """3 masters with one replica each: SIGKILL the master of a namespace that has a
    committed pass. Its replica is promoted (cluster-node-timeout 3 s); the same store
    object (no restart) then reads what the replica had, and the write path, a pass,
    search, rollback and erase work on that namespace again."""
    servers = start_cluster(3, replicas=1)
    store = MemoryStore.from_url(servers.url)
    try:
        s = settings(servers, broker)
        models = build_models(s)
        pipeline = IngestPipeline(store, models, s)
        client = Client(settings=s)
        ns = "failover-0"
        name = store.client.get_node_from_key(keys.current(ns)).name  # type: ignore[attr-defined]
        victim = next(n for n in servers.nodes if f"127.0.0.1:{n.port}" == name)
        replica = servers.replica_of(victim)
        assert replica is not None and len(servers.primaries()) == 3
        pipeline.ingest(ns, to_episodes(ns, turns(0), T0, None))
        assert passes.run_pass(store, ns, s.consolidation, models.merger, now=T0).to_version == 1
        before = {m.id: m.text for m in store.records.iter_memories(ns)}
        _synced(victim, replica)

        t0 = time.monotonic()
        victim.kill()
        version, waited = _retry("read", lambda: store.current_version(ns))
        assert version == 1 and replica in servers.primaries()
        assert {m.id: m.text for m in store.records.iter_memories(ns)} == before
        _retry("write", lambda: pipeline.ingest(ns, to_episodes(ns, [
            {"role": "user", "id": "d0", "content": "I play the cello.",
             "metadata": {"facts": ["I play the cello"]}}], T0 + timedelta(hours=1), None)))
        assert any(m.text == "I play the cello" for m in store.records.iter_memories(ns))
        as_of_v1 = {m.id: (m.text, m.status) for m in store.records.iter_memories(ns)}
        report = passes.run_pass(store, ns, s.consolidation, models.merger,
                                 now=T0 + timedelta(hours=2))
        assert report.to_version == 2
        hits = client.search(ns, "Where do I live?", k=1, now=T0 + timedelta(hours=2))
        assert hits and hits[0].memory.text == "I live in Oslo"
        store.snapshots.rollback(ns, 1, T0 + timedelta(hours=3), reason="failover test")
        assert store.current_version(ns) == 1
        assert {m.id: (m.text, m.status) for m in store.records.iter_memories(ns)} == as_of_v1
        code = next(m for m in store.records.iter_memories(ns) if SECRET in m.text)
        assert client.erase_memory(ns, code.id).removed == [code.id]
        for key in ns_keys(store.client, ns):
            assert SECRET.encode() not in (store.client.dump(key) or b""), key
        print(f"\n[cluster, master with a replica SIGKILLed] reads answered again after "
              f"{waited:.1f} s; version 1 and all {len(before)} records intact; ingest, "
              f"pass (v2), search, rollback, erase on the promoted replica "
              f"({time.monotonic() - t0:.1f} s in all)")
        client.close()
    finally:
        store.close()
        servers.stop()


def test_namespace_state_with_a_key_of_another_slot(cluster: RedisClusterServers) -> None:
    """A search reads the API key revision with the namespace state: on a cluster the
    two live in different slots (a second MGET), and both come back."""
    from memcore.store.api_keys import API_KEYS_REV

    store = MemoryStore.from_url(cluster.url)
    try:
        ns = "cl-state"
        store.client.set(API_KEYS_REV, "rev-1")
        assert store.client.keyslot(API_KEYS_REV) != store.client.keyslot(  # type: ignore[attr-defined]
            keys.current(ns))
        store.writes.add(ns, Memory(namespace=ns, text="I live in Oslo", vector=[1.0, 0.0, 0.0,
                                                                                 0.0],
                             importance=0.5, last_used=T0, created_at=T0, updated_at=T0,
                             status=Status.ACTIVE), actor=Actor.INGEST, reason="cluster test")
        state, extra = store.namespace_state_and(ns, [API_KEYS_REV, "mc:missing"])
        assert state == store.namespace_state(ns) and state.order_length == 1
        assert extra == [b"rev-1", None]
        assert store.eraser.erase_namespace(ns, T0) > 0
    finally:
        store.client.delete(API_KEYS_REV)
        store.close()
