"""Every read and management endpoint over real HTTP, on memories written to a real store."""

from __future__ import annotations

import re
from typing import Any

import pytest
import redis

from memcore.core.models import Status
from memcore.store import keys
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture
from tests.support.cli_helpers import memory, put

NS = "acme-1"
BASE = f"/v1/namespaces/{NS}"


def _seed(api: Api, n: int = 5) -> list[str]:  # noqa: F811
    texts = ["user likes green tea", "user lives in Berlin", "user works at Acme",
             "user has a cat named Tom", "user plays chess on Sundays"][:n]
    return [m.id for m in put(api.redis_url, *(memory(t, ns=NS) for t in texts))]


def test_get_search_profile_stats(api: Api) -> None:  # noqa: F811
    ids = _seed(api)
    key = api.key("acme-*", role="read")
    got = api.call("GET", f"{BASE}/memories/{ids[1]}", key).json()
    assert got["text"] == "user lives in Berlin" and got["vector"] is None
    hits = api.call("POST", f"{BASE}/search", key, json={"query": "Berlin", "k": 2}).json()
    assert [h["memory"]["id"] for h in hits["results"]] == [ids[1]]  # the rest share nothing
    hits = api.call("POST", f"{BASE}/search", key, json={"query": "user lives", "k": 2}).json()
    assert hits["results"][0]["memory"]["id"] == ids[1]
    assert len(hits["results"]) == 2 and hits["results"][0]["score"] >= hits["results"][1]["score"]
    profile = api.call("GET", f"{BASE}/profile", key).json()["memories"]
    assert {m["id"] for m in profile} == set(ids)
    stats = api.call("GET", f"{BASE}/stats", key).json()
    assert stats["status"]["active"] == 5 and stats["namespace"] == NS
    versions = api.call("GET", f"{BASE}/versions", key).json()
    assert versions["current"] == 0
    assert [(v["version"], v["memories"]) for v in versions["versions"]] == [(0, 5)]
    missing = api.call("GET", f"{BASE}/memories/nope", key)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    # A body without its "query" names that field (not "body": the field shares its name
    # with the query-string location FastAPI reports).
    no_query = api.call("POST", f"{BASE}/search", key, json={"k": 2})
    assert no_query.status_code == 422, no_query.text
    assert no_query.json()["error"]["field"] == "query", no_query.text
    assert "query" in no_query.json()["error"]["message"]


def test_list_pages_with_a_stable_cursor(api: Api) -> None:  # noqa: F811
    ids = _seed(api)
    key = api.key(NS, role="read")
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = api.call("GET", f"{BASE}/memories", key, params=params).json()
        seen += [m["id"] for m in page["memories"]]
        if cursor is None:  # a memory written while paging does not shift the pages
            put(api.redis_url, memory("user writes Rust", ns=NS))
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) and set(ids) <= set(seen)
    only = api.call("GET", f"{BASE}/memories", key, params={"status": "superseded"}).json()
    assert only == {"memories": [], "next_cursor": None}
    bad = api.call("GET", f"{BASE}/memories", key, params={"limit": 0})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "limit"


def test_update_delete_restore(api: Api) -> None:  # noqa: F811
    ids = _seed(api, 2)
    key = api.key(NS, role="write")
    edited = api.call("PATCH", f"{BASE}/memories/{ids[0]}", key,
                      json={"text": "user likes black tea", "metadata": {"source": "ui"}})
    assert edited.status_code == 200, edited.text
    assert edited.json()["text"] == "user likes black tea"
    assert edited.json()["metadata"] == {"source": "ui"}
    hits = api.call("POST", f"{BASE}/search", key, json={"query": "black tea", "k": 1}).json()
    assert hits["results"][0]["memory"]["id"] == ids[0]  # re-embedded
    assert api.call("PATCH", f"{BASE}/memories/{ids[0]}", key, json={}).status_code == 422
    gone = api.call("DELETE", f"{BASE}/memories/{ids[0]}", key)
    assert gone.status_code == 200 and gone.json()["status"] == "tombstoned"
    again = api.call("DELETE", f"{BASE}/memories/{ids[0]}", key)
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    live = api.call("GET", f"{BASE}/memories", key).json()["memories"]
    assert [m["id"] for m in live] == [ids[1]]
    every = api.call("GET", f"{BASE}/memories", key, params={"include_inactive": True}).json()
    assert {m["id"] for m in every["memories"]} == set(ids)
    back = api.call("POST", f"{BASE}/memories/{ids[0]}/restore", key)
    assert back.status_code == 200 and back.json()["status"] == "active"
    actions = [e["action"] for e in
               api.call("GET", f"{BASE}/memories/{ids[0]}/history", key).json()["events"]]
    assert actions[-3:] == ["UPDATE", "TOMBSTONE", "RESTORE"]


def test_pin_unpin_restore_history_erase(api: Api) -> None:  # noqa: F811
    ids = _seed(api, 2)
    key = api.key(NS, role="write")
    assert api.call("POST", f"{BASE}/memories/{ids[0]}/pin", key).json()["pinned"] is True
    assert api.call("POST", f"{BASE}/memories/{ids[0]}/unpin", key).json()["pinned"] is False
    events = api.call("GET", f"{BASE}/memories/{ids[0]}/history", key).json()["events"]
    assert [e["action"] for e in events] == ["ADD", "PIN", "UNPIN"]
    assert api.call("POST", f"{BASE}/memories/nope/pin", key).status_code == 404
    assert api.call("GET", f"{BASE}/memories/nope/history", key).status_code == 404
    erased = api.call("POST", f"{BASE}/erase", key, json={"memory_id": ids[1]}).json()
    assert erased["erased"] >= 1
    assert api.call("GET", f"{BASE}/memories/{ids[1]}", key).status_code == 404


def test_erase_namespace_needs_admin_and_leaves_it_empty(api: Api) -> None:  # noqa: F811
    _seed(api)
    writer, admin = api.key(NS, role="write"), api.key(NS, role="admin")
    assert api.call("DELETE", BASE, writer).status_code == 403
    assert api.call("POST", f"{BASE}/search", admin, json={"query": "tea"}).json()["results"]
    assert api.call("DELETE", BASE, admin).json()["erased"] > 5
    assert api.call("GET", f"{BASE}/stats", admin).json()["status"][Status.ACTIVE.value] == 0
    # The server's index of the namespace went with it: a new memory is found, old ones not.
    put(api.redis_url, memory("user drinks coffee", ns=NS))
    hits = api.call("POST", f"{BASE}/search", admin, json={"query": "coffee tea"}).json()
    assert [h["memory"]["text"] for h in hits["results"]] == ["user drinks coffee"]


def test_erase_of_a_namespace_without_data_is_404_and_writes_nothing(
        api: Api) -> None:  # noqa: F811
    admin = api.key("acme-*", role="admin")
    answer = api.call("DELETE", "/v1/namespaces/acme-typo", admin)
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
    assert "acme-typo" in answer.json()["error"]["message"]
    client = redis.Redis.from_url(api.redis_url)
    assert list(client.scan_iter(match=keys.pattern("acme-typo"))) == []


def test_broker_down_is_503_not_500(redis_url: str) -> None:
    from memcore.local.redis_server import free_port
    from tests.support.api_helpers import serve

    dead = f"redis://127.0.0.1:{free_port()}/0"
    gen = serve(redis_url, broker_url=dead)
    down = next(gen)
    try:
        key = down.key(NS, role="write")
        r = down.call("POST", f"{BASE}/messages", key, json={"messages": [{"content": "hi"}]})
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "unavailable"
        ready = down.http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["broker"] != "ok"
    finally:
        gen.close()


def test_waits_that_run_out_answer_202_not_5xx(redis_url: str) -> None:
    """No workers here: tasks stay queued, so every wait runs out."""
    from memcore import RemoteClient
    from tests.support.api_helpers import serve

    gen = serve(redis_url, api={"wait_timeout_seconds": 0.5})
    slow = next(gen)
    try:
        key = slow.key(NS, role="write")
        added = slow.call("POST", f"{BASE}/messages", key,
                          json={"messages": [{"content": "hi"}], "wait": True})
        assert added.status_code == 202 and added.json()["task_ids"]
        waited = slow.call("POST", f"{BASE}/tasks/wait", key,
                           json={"task_ids": added.json()["task_ids"], "timeout": 5})
        assert waited.status_code == 200
        assert waited.json() == {"results": [], "pending": added.json()["task_ids"]}
        put(redis_url, memory("user likes green tea", ns=NS))  # a pass needs data
        passed = slow.call("POST", f"{BASE}/consolidate", key, json={"wait": True})
        assert passed.status_code == 202 and passed.json()["task_id"]
        with RemoteClient(slow.url, key) as remote:
            ids = remote.add(NS, [{"content": "hello"}])
            with pytest.raises(TimeoutError):
                remote.wait(ids, timeout=1)
            with pytest.raises(TimeoutError):
                remote.consolidate(NS, wait=True, timeout=1)
    finally:
        gen.close()


def _no_worker_error(reply: Any) -> str:
    assert reply.status_code == 503, reply.text
    error = reply.json()["error"]
    assert error["code"] == "no_worker"
    return str(error["message"])


def test_a_wait_no_worker_will_run_answers_503_in_seconds(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No worker on this broker: a wait would sit out the whole timeout (2 minutes by
    default) and then answer 202 as if the turns were merely slow. It says what is wrong
    as soon as the workers were asked, and the turns stay queued."""
    from memcore import NoWorker, RemoteClient, Unavailable
    from memcore.client import client as client_module
    from tests.support.api_helpers import serve

    monkeypatch.setattr(client_module, "NO_WORKER_CHECK_SECONDS", 0.5)
    gen = serve(redis_url)  # the default wait timeout: 120 s
    live = next(gen)
    try:
        key = live.key(NS, role="write")
        added = live.call("POST", f"{BASE}/messages", key,
                          json={"messages": [{"content": "I relocated to Porto."}],
                                "wait": True})
        message = _no_worker_error(added)
        assert "no Celery worker answered a ping" in message and "memcore up" in message
        task_id = re.search(r"task ids: ([0-9a-f-]{36})", message).group(1)  # type: ignore[union-attr]
        queued = live.call("POST", f"{BASE}/tasks/wait", key,
                           json={"task_ids": [task_id], "timeout": 1})
        assert queued.json() == {"results": [], "pending": [task_id]}  # still queued
        waited = live.call("POST", f"{BASE}/tasks/wait", key,
                           json={"task_ids": [task_id], "timeout": 60})
        assert task_id in _no_worker_error(waited)
        put(redis_url, memory("user likes green tea", ns=NS))  # a pass needs data
        passed = live.call("POST", f"{BASE}/consolidate", key, json={"wait": True})
        assert "no Celery worker" in _no_worker_error(passed)
        with RemoteClient(live.url, key) as remote, pytest.raises(NoWorker) as err:
            remote.wait(remote.add(NS, [{"content": "I like plums."}]), timeout=60)
        assert isinstance(err.value, Unavailable) and err.value.status == 503
    finally:
        gen.close()


def test_a_wait_on_a_queue_only_other_workers_consume_names_it(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker is up but consumes only ``consolidate``: a ping alone would call the
    ingest tasks merely slow. The answer names the queue and what the workers consume."""
    from memcore.client import client as client_module
    from memcore.local.stack import LocalStack, worker_command
    from tests.support.api_helpers import serve

    monkeypatch.setattr(client_module, "NO_WORKER_CHECK_SECONDS", 0.5)
    stack = LocalStack(redis_url)
    stack.spawn("passes", worker_command("consolidate", 1, "passes"))
    gen = serve(redis_url)
    live = next(gen)
    try:
        key = live.key(NS, role="write")
        local = client_module.Client(redis_url)
        try:
            for _ in range(100):  # the worker answers once it has started
                if local.celery.control.ping(timeout=0.5):
                    break
            else:
                pytest.fail("the consolidate worker did not start")
        finally:
            local.close()
        added = live.call("POST", f"{BASE}/messages", key,
                          json={"messages": [{"content": "I like plums."}], "wait": True})
        message = _no_worker_error(added)
        assert "no Celery worker consumes the 'ingest' queue" in message
        assert "passes@" in message and "consumes consolidate" in message
    finally:
        gen.close()
        stack.stop()
