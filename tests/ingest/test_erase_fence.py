"""An erase of a namespace wins over its turns still queued (issue 29, item 2).

Seen before: ``DELETE /v1/namespaces/{ns}`` answered 200 and the turns accepted before
it, still queued, came back as memories once a worker reached them; a namespace whose
turns were all queued was "no data" and got all of them afterwards. Here the turns are
queued while no worker consumes, the namespace is erased, then a real worker starts:
nothing accepted before the erase is stored (each dropped task audited, without its
text), and turns accepted after the erase are stored as usual.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Generator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memcore.client.client import Client
from memcore.client.messages import to_episodes
from memcore.core.errors import NamespaceNotFound
from memcore.core.models import Actor, AuditAction, utcnow
from memcore.messaging import task_names
from memcore.messaging.payloads import IngestPayload
from memcore.store import MemoryStore, keys
from tests.support.api_helpers import Api, serve
from tests.support.cli_helpers import run
from tests.support.test_reliability_common import T0, Cluster, all_values, cluster

TIMEOUT = 120


def turns(tag: str, count: int, start: int = 0) -> list[dict[str, Any]]:
    """``count`` user turns, each with one fact of its own naming ``tag``."""
    return [{"id": f"{tag}-{i}", "role": "user", "content": f"{tag} turn {i}",
             "timestamp": (T0 + timedelta(seconds=i)).isoformat(),
             "metadata": {"facts": [f"Sam's {tag} code {i} is {uuid.uuid4().hex[:12]}"]}}
            for i in range(start, start + count)]


def secrets(messages: list[dict[str, Any]]) -> list[bytes]:
    """The byte strings no key may hold once the turns are dropped."""
    return [m["metadata"]["facts"][0].encode() for m in messages] + \
        [m["content"].encode() for m in messages]


@contextlib.contextmanager
def ingest_worker(c: Cluster, name: str) -> Iterator[None]:
    """One ingest worker, stopped (warm shutdown) on leaving."""
    c.spawn(name, "ingest", 1)
    c.wait_ready({name}, timeout=90)
    try:
        yield
    finally:
        proc = c.stack.processes.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def stop(gen: Iterator[Api]) -> None:
    """Stop an API started with ``serve`` (its generator's cleanup)."""
    assert isinstance(gen, Generator)
    gen.close()


def texts(store: MemoryStore, ns: str) -> set[str]:
    return {m.text for m in store.records.iter_memories(ns)}


def leaks(store: MemoryStore, needles: list[bytes]) -> list[bytes]:
    """Keys of the whole server (data, broker, results) holding any needle."""
    return [key for key, raw in all_values(store.client) if any(n in raw for n in needles)]


def drops(store: MemoryStore, ns: str) -> list[str]:
    """Reasons of the namespace's DROP audit entries (all by the ingest worker)."""
    events = [e for e in store.audit.tail(ns, 1000) if e.action is AuditAction.DROP]
    assert all(e.actor is Actor.INGEST and e.text is None for e in events)
    return [e.reason for e in events]


def test_queued_turns_do_not_come_back_after_an_http_erase(tmp_path: Path) -> None:
    """A namespace with memories stored and 12 turns queued behind no worker: DELETE
    answers 200, and once a worker runs none of the 12 is stored; 3 turns added after
    the erase are."""
    ns = f"fence-{uuid.uuid4().hex[:8]}"
    base = f"/v1/namespaces/{ns}"
    with cluster(tmp_path / "logs") as c:
        gen = serve(c.url)
        api: Api = next(gen)
        client = Client(c.url)
        try:
            writer, admin = api.key(ns, role="write"), api.key(ns, role="admin")
            early = turns("early", 3)
            with ingest_worker(c, "first"):
                added = api.call("POST", f"{base}/messages", writer,
                                 json={"messages": early, "wait": True})
                assert added.status_code == 200, added.text
            assert len(texts(client.store, ns)) == 3
            queued = turns("queued", 12, start=100)
            before = [api.call("POST", f"{base}/messages", writer,
                               json={"messages": [m]}).json()["task_ids"][0] for m in queued]
            erased = api.call("DELETE", base, admin)
            assert erased.status_code == 200 and erased.json()["erased"] > 3, erased.text
            late = turns("late", 3, start=200)
            after = api.call("POST", f"{base}/messages", writer,
                             json={"messages": late}).json()["task_ids"]
            with ingest_worker(c, "second"):
                results = client.wait(before + after, timeout=TIMEOUT)
            dropped = [r.get("dropped_by_erase", 0) for r in results[:len(before)]]
            stored = texts(client.store, ns)
            print(f"\n[erase fence, HTTP] 12 turns queued before DELETE (200): dropped "
                  f"{sum(dropped)}; memories now {len(stored)} (the 3 turns added after)")
            assert stored == {m["metadata"]["facts"][0] for m in late}
            assert leaks(client.store, secrets(early) + secrets(queued)) == []
            assert dropped == [1] * len(before)
            assert results[-1]["memory_ids"] and "dropped_by_erase" not in results[-1]
            reasons = drops(client.store, ns)
            assert len(reasons) == len(before)
            assert all("accepted before the namespace was erased" in r for r in reasons)
        finally:
            client.close()
            stop(gen)


def test_queued_turns_of_a_namespace_with_nothing_stored_are_dropped(tmp_path: Path) -> None:
    """Every turn still queued (nothing stored): the erase says it found no data and
    that the fence is set; none of the 60 turns is stored later, turns after it are."""
    ns = f"fence-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        gen = serve(c.url)
        api: Api = next(gen)
        client = Client(c.url)
        try:
            queued = turns("queued", 60)
            before = [tid for i in range(0, 60, 10) for tid in client.add(ns, queued[i:i + 10])]
            answer = api.call("DELETE", f"/v1/namespaces/{ns}", api.key(ns, role="admin"))
            assert answer.status_code == 404, answer.text
            assert list(client.store.client.scan_iter(match=keys.pattern(ns))) == []
            late = turns("late", 2, start=100)
            after = client.add(ns, late)
            with ingest_worker(c, "only"):
                results = client.wait(before + after, timeout=TIMEOUT)
            dropped = sum(r.get("dropped_by_erase", 0) for r in results[:len(before)])
            stored = texts(client.store, ns)
            print(f"\n[erase fence, nothing stored] 60 queued turns: DELETE 404 (fence set), "
                  f"dropped {dropped}; memories now {len(stored)} (the 2 turns added after)")
            assert stored == {m["metadata"]["facts"][0] for m in late}
            assert leaks(client.store, secrets(queued)) == []
            message = answer.json()["error"]["message"]
            assert "has no data" in message and "erase fence is set" in message, message
            assert client.store.fences.current(ns) == 1
            assert dropped == 60
            assert len(drops(client.store, ns)) == len(before)
        finally:
            client.close()
            stop(gen)


def test_a_redelivered_task_accepted_before_the_erase_is_dropped_once(tmp_path: Path) -> None:
    """A task stored before the erase and delivered again after it (its worker died
    before the acknowledgement) must not bring its turn back; every redelivery is
    dropped, and audited once."""
    ns = f"fence-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        client = Client(c.url)
        try:
            messages = turns("redelivered", 1)
            payload = IngestPayload(namespace=ns, episodes=to_episodes(ns, messages, None, None),
                                    erase_fence=client.store.fences.current(ns)
                                    ).model_dump(mode="json")
            task_id = str(uuid.uuid4())

            def deliver() -> dict[str, Any]:
                result = client.celery.AsyncResult(task_id)
                result.forget()  # the same id again: wait for this delivery's result
                client.celery.send_task(task_names.INGEST, args=[payload], task_id=task_id,
                                        queue=task_names.INGEST_QUEUE)
                answer: dict[str, Any] = result.get(timeout=TIMEOUT)
                return answer

            with ingest_worker(c, "w"):
                first = deliver()
                assert first["memory_ids"] and texts(client.store, ns)
                client.erase(ns, everything=True)
                again = [deliver() for _ in range(3)]
            print(f"\n[erase fence, redelivery] stored first: {first['memory_ids']}; "
                  f"3 redeliveries after the erase: {[a.get('dropped_by_erase') for a in again]}")
            assert [a.get("dropped_by_erase") for a in again] == [1, 1, 1]
            assert texts(client.store, ns) == set()
            assert leaks(client.store, secrets(messages)) == []
            (reason,) = drops(client.store, ns)
            assert task_id in reason
        finally:
            client.close()


def test_the_fence_outlives_the_erase_and_a_drop_is_audited_once(redis_url: str) -> None:
    store = MemoryStore.from_url(redis_url)
    try:
        assert store.fences.current("u") == 0
        with pytest.raises(NamespaceNotFound, match="erase fence is set"):
            store.eraser.erase_namespace("u", utcnow())
        assert store.eraser.erase_namespace("u", utcnow(), missing_ok=True) == 0
        assert store.fences.current("u") == 2
        assert list(store.client.scan_iter(match=keys.pattern("u"))) == []
        assert store.fences.record_drop("u", turns=3, accepted=0, fence=2, task_id="t-1",
                                        now=utcnow(),
                                 keep_seconds=60)
        assert not store.fences.record_drop("u", turns=3, accepted=0, fence=2, task_id="t-1",
                                     now=utcnow(), keep_seconds=60)
        assert 0 < store.client.ttl(keys.dropped("u", "t-1")) <= 60
        assert store.eraser.erase_namespace("u", utcnow()) > 0  # the audit entry was data
        assert store.fences.current("u") == 3
        assert store.client.get(keys.erase_fence("u")) == b"3"
    finally:
        store.client.close()


def test_cli_erase_all_of_a_namespace_with_nothing_stored_sets_the_fence(redis_url: str) -> None:
    result = run(redis_url, "erase", "queued-only", "--all", "--yes")
    assert result.exit_code == 1
    assert "namespace 'queued-only' has no data" in result.output, result.output
    assert "erase fence is set" in result.output, result.output
    store = MemoryStore.from_url(redis_url)
    try:
        assert store.fences.current("queued-only") == 1
        assert list(store.client.scan_iter(match=keys.pattern("queued-only"))) == []
    finally:
        store.client.close()
