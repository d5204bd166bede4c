"""Two `memcore serve` processes over one Redis with real Celery workers: a namespace
erased through one of them is never answered from the other one's stale index, and a
write through one is found by the other's next search (caches are checked against the
namespace's version, epoch and log length in Redis, not invalidated per process)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
import redis

from memcore.local.redis_server import free_port
from memcore.local.stack import LocalStack
from memcore.store.api_keys import ApiKeyRepository


def _serve(redis_url: str) -> tuple[subprocess.Popen[bytes], httpx.Client]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "memcore.cli", "serve", "--host",
                             "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            env={**os.environ, "MEMCORE_REDIS_URL": redis_url},
                            start_new_session=True)
    http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "memcore serve exited"
        try:
            if http.get("/readyz").status_code == 200:
                return proc, http
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise TimeoutError("memcore serve did not become ready")


@pytest.fixture()
def two_servers(celery_stack: LocalStack) -> Iterator[tuple[httpx.Client, httpx.Client, str]]:
    assert celery_stack.redis_url
    r = redis.Redis.from_url(celery_stack.redis_url)
    key = ApiKeyRepository(r).create(["cache-*"], "admin", "two servers")[1]
    r.close()
    started = [_serve(celery_stack.redis_url) for _ in range(2)]
    try:
        for _, http in started:
            http.headers["Authorization"] = f"Bearer {key}"
        yield started[0][1], started[1][1], f"cache-{uuid.uuid4().hex[:8]}"
    finally:
        for proc, http in started:
            http.close()
            proc.terminate()
            proc.wait(timeout=20)


def _add(http: httpx.Client, ns: str, texts: list[str]) -> list[str]:
    reply = http.post(f"/v1/namespaces/{ns}/messages", json={
        "messages": [{"role": "user", "content": t} for t in texts], "infer": False,
        "wait": True})
    assert reply.status_code == 200, reply.text
    ids: list[str] = reply.json()["memory_ids"]
    assert len(ids) == len(texts)
    return ids


def _search(http: httpx.Client, ns: str, query: str) -> list[str]:
    reply = http.post(f"/v1/namespaces/{ns}/search", json={"query": query, "k": 5})
    assert reply.status_code == 200, reply.text
    return [hit["memory"]["text"] for hit in reply.json()["results"]]


def test_erase_through_one_process_is_seen_by_the_other(
        two_servers: tuple[httpx.Client, httpx.Client, str]) -> None:
    a, b, ns = two_servers
    before = ["Maria keeps a parrot named Kiwi.", "Maria works as a nurse in Porto.",
              "Maria plays the cello on Sundays."]
    _add(a, ns, before)
    # Both processes build and cache their indexes of the namespace.
    assert _search(a, ns, "parrot Kiwi")[0] == before[0]
    assert _search(b, ns, "parrot Kiwi")[0] == before[0]
    assert a.delete(f"/v1/namespaces/{ns}").status_code == 200
    assert _search(b, ns, "parrot Kiwi") == []  # b did not serve the erase
    # Refill to the same log length: b's cached index would already "cover" it.
    after = ["Tomas keeps a parrot named Zorro.", "Tomas works as a pilot in Lyon.",
             "Tomas plays the drums on Fridays."]
    _add(a, ns, after)
    found = _search(b, ns, "parrot")
    assert found and found[0] == after[0]
    assert not set(found) & set(before)
    # And a write through b is found by a's next search (a's index was cached).
    _add(b, ns, ["Tomas adopted a tortoise called Speedy."])
    assert _search(a, ns, "tortoise Speedy")[0] == "Tomas adopted a tortoise called Speedy."
