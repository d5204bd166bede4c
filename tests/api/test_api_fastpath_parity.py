"""Security parity of the search's fast path: every auth and error case sent to a server
with ``api.fast_path`` on (through :class:`~memcore.api.fastpath.SearchFastPath` with a
key not yet cached, and through :class:`~memcore.api.fastpath.SearchShortcut` with a
cached one) and to a server with it off (FastAPI's route only) gets the same status,
JSON body and headers.

"Role too low" has no search case: the search needs the lowest role (read)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import redis

from memcore.api.fastpath import SearchFastPath
from memcore.store.api_keys import ApiKeyRepository
from tests.support.api_helpers import Api, serve
from tests.support.cli_helpers import memory, put

NS = "parity-1"
SEARCH = f"/v1/namespaces/{NS}/search"
JSON = {"content-type": "application/json"}
# Long enough that no recall bookkeeping is written during the test: the answers
# carry last_used and strength, which a write between two requests would change.
QUIET = {"touch_batch_seconds": 60.0}


@dataclass
class Case:
    """One request (``key`` stands for the case's own fresh key) and what it must get."""

    name: str
    status: int
    path: str = SEARCH
    body: bytes | Iterator[bytes] | Callable[[], Iterator[bytes]] = b'{"query": "tea"}'
    headers: list[tuple[str, str]] = field(default_factory=lambda: list(JSON.items()))
    auth: str | None = "key"  # "key", a literal Authorization value, or None
    query: str = ""
    revoke: bool = False  # the key is cached by both servers, then revoked


def _chunks(data: bytes) -> Callable[[], Iterator[bytes]]:
    def gen() -> Iterator[bytes]:  # no Content-Length: the body limit is found by reading
        for i in range(0, len(data), 65536):
            yield data[i:i + 65536]
    return gen


BIG = json.dumps({"query": "tea " * 300_000}).encode()  # > 1 MiB
CASES = [
    Case("success", 200),
    Case("success, no data: warning", 200, path="/v1/namespaces/parity-empty/search"),
    Case("no key", 401, auth=None),
    Case("not bearer", 401, auth="Basic dXNlcjpwYXNz"),
    Case("unknown key", 401, auth="Bearer mk_not-a-real-key"),
    Case("revoked key", 401, revoke=True),
    Case("two Authorization headers", 400, headers=[*JSON.items(), ("Authorization", "x")]),
    Case("namespace outside the scopes", 403, path="/v1/namespaces/other/search"),
    Case("invalid namespace", 422, path="/v1/namespaces/parity-%2A/search"),
    Case("encoded slash", 422, path="/v1/namespaces/parity%2F1/search"),
    Case("unknown query parameter", 400, query="k=3"),
    Case("bad JSON", 422, body=b'{"query": '),
    Case("not an object", 422, body=b'["tea"]'),
    Case("unknown field", 422, body=b'{"query": "tea", "bogus": 1}'),
    Case("wrong type", 422, body=b'{"query": "tea", "k": "5"}'),
    Case("out of range", 422, body=b'{"query": "tea", "k": 0}'),
    Case("missing field", 422, body=b'{"k": 2}'),
    Case("blank query", 422, body=b'{"query": "   "}'),
    Case("other content type", 200, headers=[("content-type", "application/json; charset=utf-8")]),
    Case("oversized body", 413, body=BIG),
    Case("oversized chunked body", 413, body=_chunks(BIG)),
    Case("GET", 405),
]


def _send(api: Api, case: Case, key: str) -> httpx.Response:
    headers = list(case.headers)
    if case.auth == "key":
        headers.append(("Authorization", f"Bearer {key}"))
    elif case.auth is not None:
        headers.append(("Authorization", case.auth))
    body = case.body() if callable(case.body) else case.body
    url = case.path + (f"?{case.query}" if case.query else "")
    if case.name == "GET":
        return api.http.request("GET", url, headers=headers)
    return api.http.request("POST", url, headers=headers, content=body)


def _answer(reply: httpx.Response) -> tuple[int, Any, dict[str, str]]:
    """Status, JSON body and every header but the date. A hit's score holds a recency
    term that moves with the clock between two requests: it is replaced by an
    approximation (relative 1e-6), and the Content-Length, which moves with its digits,
    is checked against the body instead."""
    assert int(reply.headers["content-length"]) == len(reply.content)
    headers = {k: v for k, v in reply.headers.items() if k not in ("date", "content-length")}
    body = reply.json()
    for hit in body.get("results", []) if isinstance(body, dict) else []:
        hit["score"] = pytest.approx(hit["score"], rel=1e-6)
    return reply.status_code, body, headers


def _diff(a: Any, b: Any, at: str = "") -> list[str]:
    """Where two JSON values differ (for a readable failure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(a.keys() | b.keys(), key=str)
                for d in _diff(a.get(k), b.get(k), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in _diff(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {a!r} != {b!r}"]


def _key(api: Api) -> str:
    return api.key("parity-*", role="read")


def _revoke(api: Api, key: str) -> None:
    client = redis.Redis.from_url(api.redis_url)
    try:
        repo = ApiKeyRepository(client)
        record = repo.verify(key)
        assert record is not None
        repo.revoke(record.id)
    finally:
        client.close()


@pytest.fixture()
def servers(redis_url: str) -> Iterator[tuple[Api, Api]]:
    fast_gen = serve(redis_url, api=QUIET)
    route_gen = serve(redis_url, api={**QUIET, "fast_path": False})
    fast, route = next(fast_gen), next(route_gen)
    try:
        yield fast, route
    finally:
        for gen in (fast_gen, route_gen):
            gen.close()


def _middlewares(api: Api) -> list[type]:
    return [m.cls for m in api.server.server.config.app.user_middleware]  # type: ignore[misc]


def test_the_setting_turns_the_fast_path_off(servers: tuple[Api, Api]) -> None:
    fast, route = servers
    assert SearchFastPath in _middlewares(fast)
    assert fast.server.server.config.app.memcore_shortcut is not None
    assert SearchFastPath not in _middlewares(route)
    assert route.server.server.config.app.memcore_shortcut is None


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fast_path_and_route_answer_every_case_alike(servers: tuple[Api, Api],
                                                     case: Case) -> None:
    fast, route = servers
    put(fast.redis_url, *(memory(t, ns=NS) for t in (
        "user likes green tea", "user lives in Berlin", "user drinks tea at noon")))
    key = _key(fast)
    if case.revoke:
        for api in (fast, route):
            assert api.call("POST", SEARCH, key, json={"query": "tea"}).status_code == 200
        _revoke(fast, key)
    # The fast server: the key not yet cached (the stack, then SearchFastPath) ...
    uncached = _send(fast, case, key)
    # ... and cached (SearchShortcut, before the stack), unless the key is gone.
    if not case.revoke:
        assert fast.call("POST", SEARCH, key, json={"query": "tea"}).status_code == 200
    cached = _send(fast, case, key)
    routed = _send(route, case, key)
    assert routed.status_code == case.status, routed.text
    for reply in (uncached, cached):
        status, body, headers = _answer(reply)
        assert status == routed.status_code, (case.name, reply.text)
        assert body == _answer(routed)[1], (case.name, _diff(body, _answer(routed)[1]))
        assert headers == _answer(routed)[2], case.name
    # Nothing left half-read on the connections: both still answer.
    for api in (fast, route):
        assert api.call("POST", SEARCH, _key(api), json={"query": "tea"}).status_code == 200


def test_rate_limited_alike(redis_url: str) -> None:
    """Past the key's requests per second: the same 429 and ``Retry-After`` (a server
    pair of its own: the limit is shared by every server on the Redis)."""
    limited = {**QUIET, "key_requests_per_second": 0.5}
    answers = []
    for fast_path in (True, False):
        gen = serve(redis_url, api={**limited, "fast_path": fast_path})
        api = next(gen)
        try:
            key = _key(api)
            assert api.call("POST", SEARCH, key, json={"query": "tea"}).status_code == 200
            status, body, headers = _answer(api.call("POST", SEARCH, key, json={"query": "tea"}))
            # The wait left, to the hundredth of a second, moves between the two servers.
            body["error"]["message"] = re.sub(r"retry in [0-9.]+ s", "retry in ... s",
                                              body["error"]["message"])
            answers.append((status, body, headers))
        finally:
            gen.close()
    assert answers[0][0] == 429 and "retry-after" in answers[0][2], answers[0]
    assert answers[0] == answers[1]
