"""API keys and tenancy over real HTTP: 401/403/422/413 and the keys CLI."""

from __future__ import annotations

import json
import socket

import redis

from memcore.store.api_keys import API_KEYS
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture
from tests.support.cli_helpers import memory, put, run

STATS = "/v1/namespaces/{}/stats"


def test_missing_unknown_and_malformed_keys_are_401(api: Api) -> None:  # noqa: F811
    good = api.key("acme-*", role="read")
    for header in ({}, {"Authorization": "Bearer"}, {"Authorization": "Basic abc"},
                   {"Authorization": "Bearer mck_000000000000_" + "0" * 48},
                   {"Authorization": "Bearer " + good[:-1] + "x"}):
        r = api.http.get(STATS.format("acme-1"), headers=header)
        assert r.status_code == 401, (header, r.text)
        assert r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
    assert api.call("GET", STATS.format("acme-1"), good).status_code == 200


def test_scope_decides_and_403_does_not_reveal_existence(api: Api) -> None:  # noqa: F811
    put(api.redis_url, memory("user likes tea", ns="globex"))
    key = api.key("acme-*", "alice", role="admin")
    assert api.call("GET", STATS.format("acme-x"), key).status_code == 200
    assert api.call("GET", STATS.format("alice"), key).status_code == 200
    existing = api.call("GET", STATS.format("globex"), key)
    missing = api.call("GET", STATS.format("initech"), key)
    assert existing.status_code == missing.status_code == 403
    assert existing.json() == missing.json()
    assert api.call("GET", STATS.format("alice2"), key).status_code == 403


def test_roles(api: Api) -> None:  # noqa: F811
    reader, writer, admin = (api.key("t", role=r) for r in ("read", "write", "admin"))
    search = ("POST", "/v1/namespaces/t/search", {"json": {"query": "tea"}})
    erase_memory = ("POST", "/v1/namespaces/t/erase", {"json": {"memory_id": "nope"}})
    erase_all = ("DELETE", "/v1/namespaces/t", {})
    rollback = ("POST", "/v1/namespaces/t/rollback", {"json": {"version": 5}})
    put(api.redis_url, memory("user likes tea", ns="t"))  # erasing "t" has something to erase
    # Erasing the unknown memory "nope" is allowed to writers, and then a 404.
    expected = {reader: (200, 403, 403, 403), writer: (200, 404, 403, 403),
                admin: (200, 404, 200, 422)}
    for key, codes in expected.items():
        got = tuple(api.call(m, p, key, **kw).status_code  # type: ignore[arg-type]
                    for m, p, kw in (search, erase_memory, erase_all, rollback))
        assert got == codes, key


def test_path_tricks_and_globs_are_rejected(api: Api) -> None:  # noqa: F811
    key = api.key("*", role="admin")
    assert api.call("GET", STATS.format("acme-*"), key).json()["error"]["field"] == "ns"
    assert api.call("GET", STATS.format("a%3Fc"), key).json()["error"]["field"] == "ns"
    assert api.call("GET", STATS.format("a%5B0%5D"), key).json()["error"]["field"] == "ns"
    host, port = api.url.removeprefix("http://").split(":")
    for raw in ("/v1/namespaces/../stats", "/v1/namespaces/a%2Fb/stats",
                "/v1/namespaces/a%2fb/stats", "/v1/namespaces/%2e%2e/stats",
                "/v1/namespaces/a/../b/stats", "/v1/namespaces/a%5Cb/stats",
                "/v1/namespaces/./stats"):
        # Sent byte for byte: HTTP libraries would normalise the dots away.
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(f"GET {raw} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
                         "Connection: close\r\n\r\n".encode())
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        status = int(reply.split(b" ", 2)[1])
        assert status == 422, (raw, reply[-300:])
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]["field"] in ("path", "ns")


def test_unknown_fields_and_bad_values_name_the_field(api: Api) -> None:  # noqa: F811
    key = api.key("t", role="write")
    r = api.call("POST", "/v1/namespaces/t/search", key, json={"query": "x", "tenant": "b"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "tenant"
    r = api.call("POST", "/v1/namespaces/t/messages", key,
                 json={"messages": [{"role": "user", "content": "hi", "namespace": "b"}]})
    assert r.status_code == 422 and r.json()["error"]["field"] == "messages.0.namespace"
    r = api.call("POST", "/v1/namespaces/t/search", key, json={"query": "x", "k": 0})
    assert r.status_code == 422 and r.json()["error"]["field"] == "k"
    r = api.call("POST", "/v1/namespaces/t/erase", key, json={})
    assert r.status_code == 422 and r.json()["error"]["field"] == "memory_id"


def test_body_size_limit(redis_url: str) -> None:
    from tests.support.api_helpers import serve

    gen = serve(redis_url, api={"max_body_bytes": 4096})
    small = next(gen)
    try:
        key = small.key("t", role="write")
        big = {"query": "x" * 5000}
        r = small.call("POST", "/v1/namespaces/t/search", key, json=big)
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"

        def chunks() -> object:  # no Content-Length: counted while read
            yield b'{"query": "'
            for _ in range(10):
                yield b"x" * 1000
            yield b'"}'

        r = small.call("POST", "/v1/namespaces/t/search", key, content=chunks(),
                       headers={"content-type": "application/json"})
        assert r.status_code == 413
        assert small.call("POST", "/v1/namespaces/t/search", key,
                          json={"query": "x" * 100}).status_code == 200
    finally:
        gen.close()


def test_keys_cli_create_list_revoke(api: Api, redis_client: redis.Redis) -> None:  # noqa: F811
    created = run(api.redis_url, "keys", "create", "--scope", "acme-*", "--scope", "bob",
                  "--role", "read", "--name", "ci", "--json")
    assert created.exit_code == 0, created.output
    data = json.loads(created.stdout)
    assert data["scopes"] == ["acme-*", "bob"] and data["role"] == "read"
    plain = data["key"]
    # Only the hash is stored: the plain key appears nowhere in Redis.
    for key in redis_client.scan_iter(match="*"):
        assert plain.encode() not in (redis_client.dump(key) or b"")
    assert redis_client.hlen(API_KEYS) == 1
    assert api.call("GET", STATS.format("bob"), plain).status_code == 200
    listed = run(api.redis_url, "keys", "list", "--json")
    assert listed.exit_code == 0 and [k["id"] for k in json.loads(listed.stdout)] == [data["id"]]
    assert "key" not in json.loads(listed.stdout)[0]
    assert run(api.redis_url, "keys", "revoke", data["id"]).exit_code == 0
    assert api.call("GET", STATS.format("bob"), plain).status_code == 401
    assert run(api.redis_url, "keys", "revoke", data["id"]).exit_code == 1
    bad = run(api.redis_url, "keys", "create", "--scope", "a b", "--role", "read")
    assert bad.exit_code == 2 and "scope" in bad.output
    bad = run(api.redis_url, "keys", "create", "--scope", "a", "--role", "owner")
    assert bad.exit_code == 2 and "role" in bad.output


def test_probes_and_metrics_need_no_key(api: Api) -> None:  # noqa: F811
    assert api.http.get("/healthz").json()["status"] == "ok"
    ready = api.http.get("/readyz").json()
    assert ready["checks"] == {"redis": "ok", "broker": "ok", "publish": "ok"}
    api.call("GET", STATS.format("t"))
    text = api.http.get("/metrics").text
    assert 'route="/v1/namespaces/{ns}/stats",status="401"' in text
    schema = api.http.get("/openapi.json").json()
    assert "/v1/namespaces/{ns}/search" in schema["paths"]
    assert api.http.get("/docs").status_code == 200


def _sample(text: str, series: str) -> float:
    """The value of one exposition line ``series value`` in a /metrics page (0: absent)."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_each_request_under_its_route_and_status(api: Api) -> None:  # noqa: F811
    key = api.key("mt", role="read")
    route = 'method="POST",route="/v1/namespaces/{ns}/search"'
    ok = f"memcore_http_requests_total{{{route},status=\"200\"}}"
    denied = f"memcore_http_requests_total{{{route},status=\"401\"}}"
    timed = f"memcore_http_request_seconds_count{{{route}}}"
    before = api.http.get("/metrics").text
    for _ in range(3):
        assert api.call("POST", "/v1/namespaces/mt/search", key,
                        json={"query": "x"}).status_code == 200
    assert api.call("POST", "/v1/namespaces/mt/search", json={"query": "x"}).status_code == 401
    after = api.http.get("/metrics").text
    assert _sample(after, ok) - _sample(before, ok) == 3
    assert _sample(after, denied) - _sample(before, denied) == 1
    assert _sample(after, timed) - _sample(before, timed) == 4


def test_insecure_dev_is_explicit_and_loud(redis_url: str) -> None:
    import os
    import subprocess
    import sys
    import time

    import httpx

    from memcore.local.redis_server import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    proc = subprocess.Popen([sys.executable, "-m", "memcore.cli", "--redis-url", redis_url,
                             "serve", "--port", str(port), "--insecure-dev"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        status = 0
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/v1/namespaces/any/stats").status_code
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert status == 200  # no key needed: every caller is admin
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0].decode()
    assert "NO AUTHENTICATION" in out and "!!!!" in out
