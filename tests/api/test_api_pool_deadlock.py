"""No broker pool deadlock (issue 29, item 1).

Found: with a backlog queued, ~24 concurrent ``"wait": true`` requests on one server
process made the waits' no-worker check (a Celery broadcast) hold all 10 pooled broker
connections while each waited for a producer, which needs a connection of the same pool:
the waits never answered, and every add and consolidate of the process hung from then on
while ``/readyz`` said 200.

Real parts only: the session's redis-server, a real Celery worker subprocess, the API
under uvicorn on a free port, and kombu's own producer pool held by the test.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from memcore.api.server import ServerThread
from memcore.client import client as client_module
from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.local.stack import LocalStack, worker_command
from tests.support.api_helpers import Api, serve
from tests.support.cli_helpers import memory, put

NS = "pool-1"
BASE = f"/v1/namespaces/{NS}"
WAITS = 200
ADD = {"messages": [{"content": "I moved to Porto."}]}


@pytest.fixture()
def passes_worker(redis_url: str) -> Iterator[None]:
    """A real worker that consumes only ``consolidate``: it answers the workers' check,
    and every ingest task stays queued (the backlog)."""
    stack = LocalStack(redis_url)
    stack.spawn("passes", worker_command("consolidate", 1, "passes"))
    local = Client(redis_url)
    try:
        for _ in range(100):  # the worker answers once it has started
            if local.celery.control.ping(timeout=0.5):
                break
        else:
            pytest.fail("the consolidate worker did not start")
        yield
    finally:
        local.close()
        stack.stop()


def _server_client(api: Api) -> Client:
    client: Client = api.server.server.config.app.state.memcore.client
    return client


def _timed(http: httpx.Client, method: str, path: str, key: str,
           **kw: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    reply = http.request(method, path, headers={"Authorization": f"Bearer {key}"}, **kw)
    return reply, time.monotonic() - started


@pytest.mark.timeout(300)
def test_200_concurrent_waits_under_a_backlog_leave_adds_and_readyz_working(
        redis_url: str, passes_worker: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """200 concurrent waits (100 adds with ``wait``, 100 ``tasks/wait``) on tasks queued
    where no worker takes them: every one answers, then plain adds and a consolidate
    answer at once and ``/readyz`` is 200 because the process can publish."""
    monkeypatch.setattr(client_module, "NO_WORKER_CHECK_SECONDS", 0.5)
    gen = serve(redis_url)  # the default wait timeout: 120 s
    live = next(gen)
    try:
        key = live.key(NS, role="write")
        limits = httpx.Limits(max_connections=WAITS + 10, max_keepalive_connections=WAITS + 10)
        with httpx.Client(base_url=live.url, timeout=90, limits=limits) as http, \
                ThreadPoolExecutor(WAITS) as threads:
            backlog = [tid for _ in range(WAITS // 2)
                       for tid in _timed(http, "POST", f"{BASE}/messages", key,
                                         json=ADD)[0].json()["task_ids"]]
            assert len(backlog) == WAITS // 2

            def wait_one(i: int) -> tuple[httpx.Response, float]:
                if i % 2:
                    return _timed(http, "POST", f"{BASE}/tasks/wait", key,
                                  json={"task_ids": [backlog[i // 2]], "timeout": 5})
                return _timed(http, "POST", f"{BASE}/messages", key, json={**ADD, "wait": True})

            started = time.monotonic()
            answers = list(threads.map(wait_one, range(WAITS)))
            storm = time.monotonic() - started
            for i, (reply, _) in enumerate(answers):
                if i % 2:  # a worker is up (not for ingest): the wait ran out, still queued
                    assert reply.status_code == 200, reply.text
                    assert reply.json()["pending"] == [backlog[i // 2]]
                else:  # nothing consumes the ingest queue: said within seconds
                    assert reply.status_code == 503, reply.text
                    error = reply.json()["error"]
                    assert error["code"] == "no_worker"
                    assert "no Celery worker consumes the 'ingest' queue" in error["message"]
            slowest = max(seconds for _, seconds in answers)
        # A new connection each (the storm's idle keep-alive ones may be closing).
        with httpx.Client(base_url=live.url, timeout=30,
                          limits=httpx.Limits(max_keepalive_connections=0)) as http:
            adds = [_timed(http, "POST", f"{BASE}/messages", key, json=ADD) for _ in range(20)]
            for reply, _ in adds:
                assert reply.status_code == 202, reply.text
            worst_add = max(seconds for _, seconds in adds)
            assert worst_add < 5.0, f"a plain add took {worst_add:.2f} s after the waits"
            put(redis_url, memory("user likes green tea", ns=NS))  # a pass needs data
            passed, _ = _timed(http, "POST", f"{BASE}/consolidate", key, json={})
            assert passed.status_code == 202, passed.text
            ready = http.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"] == {"redis": "ok", "broker": "ok", "publish": "ok"}
        # One broadcast answers every waiter asking at about the same time.
        asked = _server_client(live).worker_check.asked
        print(f"\n{WAITS} waits answered in {storm:.1f} s (slowest {slowest:.1f} s); "
              f"{asked} worker broadcasts; 20 plain adds after them, slowest {worst_add:.3f} s")
        assert asked <= WAITS // 10
    finally:
        gen.close()


@pytest.mark.timeout(120)
def test_an_exhausted_broker_pool_is_a_503_naming_it_and_readyz_fails(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every producer of the process taken (kombu's real pool, held here): an add answers
    503 ``broker_busy`` after the acquire timeout instead of hanging, and ``/readyz``
    fails because the process cannot publish; both recover once the pool is free."""
    monkeypatch.setattr(client_module, "BROKER_POOL_TIMEOUT_SECONDS", 1.0, raising=False)
    client = Client(redis_url)
    server = ServerThread(Settings(redis_url=redis_url), client=client).start()
    api = Api(server.url, redis_url, server)
    try:
        key = api.key(NS, role="write")
        assert api.call("POST", f"{BASE}/messages", key, json=ADD).status_code == 202
        pool = client.celery.producer_pool
        held = [pool.acquire(block=True, timeout=5) for _ in range(pool.limit)]
        try:
            with httpx.Client(base_url=api.url, timeout=30) as http:
                reply, seconds = _timed(http, "POST", f"{BASE}/messages", key, json=ADD)
                assert reply.status_code == 503, reply.text
                error = reply.json()["error"]
                assert error["code"] == "broker_busy"
                assert "broker" in error["message"] and "in use" in error["message"]
                assert seconds < 10
                ready = http.get("/readyz")
                assert ready.status_code == 503, ready.text
                assert "in use" in ready.json()["checks"]["publish"]
        finally:
            for producer in held:
                producer.release()
        assert api.call("POST", f"{BASE}/messages", key, json=ADD).status_code == 202
        assert api.http.get("/readyz").status_code == 200
    finally:
        api.http.close()
        server.stop()
        client.close()
