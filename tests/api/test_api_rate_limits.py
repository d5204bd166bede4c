"""Per-key rate limits over HTTP (memcore.api.rate_limits), enforced in Redis across two
real ``memcore serve`` processes: requests per second and model calls per minute, 429
``rate_limited`` with ``Retry-After``, other keys unaffected."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest
import redis

from memcore import RateLimited, RemoteClient
from memcore.local.stack import LocalStack
from memcore.store.api_keys import ApiKeyRepository
from memcore.store.rate_limits import RateLimits
from tests.support.api_helpers import serve_process


def make_key(redis_url: str, scope: str) -> tuple[str, str]:
    """A new write key on ``scope``: (key id, plain key)."""
    client = redis.Redis.from_url(redis_url)
    try:
        record, plain = ApiKeyRepository(client).create([scope], "write")
        return record.id, plain
    finally:
        client.close()


@pytest.fixture()
def two_servers(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Two ``memcore serve`` processes on the Redis and settings the test names
    (``request.param``: (redis fixture name, extra environment))."""
    fixture, env = request.param
    url = request.getfixturevalue(fixture)
    url = url.redis_url if isinstance(url, LocalStack) else url
    with ExitStack() as stack:
        yield [stack.enter_context(serve_process(url, env)) for _ in range(2)]


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.parametrize("two_servers", [("redis_url", {
    "MEMCORE_API__KEY_REQUESTS_PER_SECOND": "2"})], indirect=True)
def test_requests_per_second_are_shared_by_the_processes(two_servers: list[str],
                                                         redis_url: str) -> None:
    _, key = make_key(redis_url, "rl")
    _, other = make_key(redis_url, "rl")
    statuses: list[int] = []
    refused: httpx.Response | None = None
    with httpx.Client(timeout=30) as http:
        start = time.monotonic()
        for i in range(16):  # alternating between the processes, list and search
            base = two_servers[i % 2]
            if i % 4 < 2:
                r = http.get(f"{base}/v1/namespaces/rl/memories", headers=auth(key))
            else:
                r = http.post(f"{base}/v1/namespaces/rl/search", headers=auth(key),
                              json={"query": "tea"})
            statuses.append(r.status_code)
            if r.status_code == 429 and refused is None:
                refused = r
        elapsed = time.monotonic() - start
        passed = sum(s != 429 for s in statuses)
        assert set(statuses) <= {200, 429}, statuses
        # GCRA: a burst of 2, then one every 0.5 s, whichever process counts. Two
        # processes each counting their own would let 2 * (2 + 2 * elapsed) through.
        assert 2 <= passed <= 2 + int(2 * elapsed) + 1, (statuses, elapsed)
        assert statuses[:2] == [200, 200]
        assert refused is not None
        assert refused.json()["error"]["code"] == "rate_limited"
        assert "requests per second" in refused.json()["error"]["message"]
        wait = int(refused.headers["Retry-After"])
        assert wait == 1, "at most one emission interval (0.5 s), in whole seconds"
        for base in two_servers:  # another key has its own budget, in both processes
            assert http.get(f"{base}/v1/namespaces/rl/memories",
                            headers=auth(other)).status_code == 200
        time.sleep(wait)
        assert http.get(f"{two_servers[1]}/v1/namespaces/rl/memories",
                        headers=auth(key)).status_code == 200
    with RemoteClient(two_servers[0], key) as remote, pytest.raises(RateLimited) as caught:
        for _ in range(10):
            remote.list("rl")
    assert caught.value.code == "rate_limited" and caught.value.retry_after >= 1


@pytest.mark.parametrize("two_servers", [("celery_stack", {
    "MEMCORE_API__KEY_MODEL_CALLS_PER_MINUTE": "3"})], indirect=True)
def test_model_calls_per_minute_are_charged_by_workers_and_shared(
        two_servers: list[str], celery_stack: LocalStack) -> None:
    ns = f"rl-{uuid.uuid4().hex[:8]}"
    key_id, key = make_key(celery_stack.redis_url, ns)
    _, other = make_key(celery_stack.redis_url, ns)
    limits = RateLimits(redis.Redis.from_url(celery_stack.redis_url))
    accepted_by: list[tuple[int, int]] = []  # (server, model calls its add made)
    refused: tuple[int, httpx.Response] | None = None
    with httpx.Client(timeout=120) as http:
        for i in range(8):
            server = i % 2
            used, _ = limits.model_call_wait(key_id, 3)
            r = http.post(f"{two_servers[server]}/v1/namespaces/{ns}/messages",
                          headers=auth(key), json={"wait": True, "messages": [
                              {"role": "user", "content": f"I adopted a cat named Tom{i}."}]})
            if used >= 3:
                assert r.status_code == 429, (i, used, r.text)
                refused = (server, r)
                break
            assert r.status_code == 200, (i, used, r.text)
            accepted_by.append((server, limits.model_call_wait(key_id, 3)[0] - used))
        assert refused is not None, accepted_by
        server, response = refused
        assert all(calls >= 1 for _, calls in accepted_by), "each add's calls were charged"
        assert sum(calls for s, calls in accepted_by if s != server) > 0, \
            "the refusing process counted calls made for adds the other one accepted"
        body = response.json()["error"]
        assert body["code"] == "rate_limited" and "model calls" in body["message"]
        assert 1 <= int(response.headers["Retry-After"]) <= 60
        for base in two_servers:  # another key of the same namespace still adds
            r = http.post(f"{base}/v1/namespaces/{ns}/messages", headers=auth(other),
                          json={"messages": [{"role": "user", "content": "I like tea."}]})
            assert r.status_code == 202, r.text
        searched = http.post(f"{two_servers[server]}/v1/namespaces/{ns}/search",
                             headers=auth(key), json={"query": "cat"})
        assert searched.status_code == 200, "only adds are refused for model calls"


def test_an_ingest_task_names_its_key_only_when_charged() -> None:
    """Workers of the release before it reject unknown keys: a task charged to no key
    is sent without ``charge_to`` (rolling upgrades)."""
    from memcore.core.models import Episode
    from memcore.messaging.payloads import IngestPayload

    episode = Episode(namespace="ns", role="user", text="hi", timestamp="2026-01-01T00:00:00Z")
    assert "charge_to" not in IngestPayload(namespace="ns", episodes=[episode]).wire()
    wired = IngestPayload(namespace="ns", episodes=[episode], charge_to="abc123").wire()
    assert wired["charge_to"] == "abc123"
    with pytest.raises(ValueError, match="charge_to"):
        IngestPayload(namespace="ns", episodes=[episode], charge_to="not an id")
