"""The API's cache of verified keys: a search on a cached key reads no key record, and a
key revoked by another process is refused (401) from the very next request on, by every
server process (``memcore serve --workers 2``, real Redis, the CLI revoking)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
import redis

from memcore.api.auth import KeyCache
from memcore.local.redis_server import free_port
from memcore.store.api_keys import API_KEYS_REV, ApiKeyRepository
from tests.api.test_api_processes import _start as start_two_processes
from tests.api.test_api_processes import _wait_ready as wait_ready
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture

SEARCH = "/v1/namespaces/{}/search"


def _hgets(r: redis.Redis) -> int:
    """HGET calls Redis has answered so far (a key record read is one HGET)."""
    stats = r.info("commandstats")
    return int(stats.get("cmdstat_hget", {}).get("calls", 0))


def test_cached_key_reads_no_record_and_revocation_is_seen(
        api: Api, redis_client: redis.Redis) -> None:  # noqa: F811
    key = api.key("kc-*", role="read")
    other = api.key("other", role="read")
    body = {"query": "anything", "k": 3}
    assert api.call("POST", SEARCH.format("kc-a"), key, json=body).status_code == 200
    before = _hgets(redis_client)
    for _ in range(5):
        assert api.call("POST", SEARCH.format("kc-a"), key, json=body).status_code == 200
    assert _hgets(redis_client) == before  # answered from the cache, revision confirmed
    # Revoking another key changes the revision: the cached key is verified again, once.
    repo = ApiKeyRepository(redis_client)
    assert repo.revoke(other.split("_")[1])
    assert api.call("POST", SEARCH.format("kc-a"), key, json=body).status_code == 200
    assert _hgets(redis_client) == before + 1
    # A denial is never decided on the cached key: out of scope is a 403 while valid...
    assert api.call("POST", SEARCH.format("zz"), key, json=body).status_code == 403
    assert repo.revoke(key.split("_")[1])
    # ... and a 401 once revoked, in scope or not.
    for ns in ("kc-a", "zz"):
        reply = api.call("POST", SEARCH.format(ns), key, json=body)
        assert reply.status_code == 401, reply.text
        assert reply.json()["error"]["code"] == "unauthorized"
        assert reply.headers["www-authenticate"] == "Bearer"


def _calls(r: redis.Redis, command: str) -> int:
    return int(r.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


def test_search_reads_the_revision_with_the_namespace_state(
        api: Api, redis_client: redis.Redis) -> None:  # noqa: F811
    key = api.key("kg-*", role="read")
    body = {"query": "anything", "k": 3}
    assert api.call("POST", SEARCH.format("kg-a"), key, json=body).status_code == 200
    gets, mgets = _calls(redis_client, "get"), _calls(redis_client, "mget")
    for _ in range(5):
        assert api.call("POST", SEARCH.format("kg-a"), key, json=body).status_code == 200
    # The revision came with the namespace state (one MGET per search), not a GET.
    assert _calls(redis_client, "get") == gets
    assert _calls(redis_client, "mget") == mgets + 5
    # A search the searcher rejects (a blank query) still checks the key first: 422
    # while the key is valid, 401 once it is revoked.
    blank = {"query": "   ", "k": 3}
    assert api.call("POST", SEARCH.format("kg-a"), key, json=blank).status_code == 422
    assert ApiKeyRepository(redis_client).revoke(key.split("_")[1])
    reply = api.call("POST", SEARCH.format("kg-a"), key, json=blank)
    assert reply.status_code == 401, reply.text


def test_flushed_database_invalidates_cached_keys(redis_client: redis.Redis) -> None:
    repo = ApiKeyRepository(redis_client)
    plain = repo.create(["a"], "read")[1]
    cache = KeyCache(lambda: repo)
    assert cache.verify(plain) is not None
    hit = cache.cached(plain)
    assert hit is not None and hit[0].id == plain.split("_")[1]
    assert cache.confirm(hit[1]) is not None
    # Keys and revision gone together (FLUSHDB, a restore): the revision read creates a
    # new token, which no cached entry carries.
    redis_client.delete("mc:apikeys", API_KEYS_REV)
    assert cache.confirm(hit[1]) is None
    assert cache.cached(plain) is None


@pytest.fixture()
def two_workers(redis_url: str) -> Iterator[str]:
    """``memcore serve --workers 2`` on ``redis_url``; yields its base URL."""
    port = free_port()
    proc = start_two_processes(redis_url, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, proc)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_revoked_by_another_process_is_refused_by_every_worker(
        two_workers: str, redis_url: str, redis_client: redis.Redis) -> None:
    repo = ApiKeyRepository(redis_client)
    record, plain = repo.create(["kc-*"], "read", "revoke me")
    headers = {"Authorization": f"Bearer {plain}"}

    def search() -> int:
        # A new connection each time: uvicorn hands them to either worker process.
        return httpx.post(two_workers + SEARCH.format("kc-b"), headers=headers,
                          json={"query": "x"}, timeout=30).status_code

    assert [search() for _ in range(30)] == [200] * 30  # both processes cache the key
    revoked = subprocess.run([sys.executable, "-m", "memcore.cli", "keys", "revoke",
                              record.id, "--json"], capture_output=True, text=True,
                             env={**os.environ, "MEMCORE_REDIS_URL": redis_url}, timeout=120)
    assert revoked.returncode == 0, revoked.stderr
    assert json.loads(revoked.stdout)["revoked"] is True
    assert [search() for _ in range(30)] == [401] * 30
