"""The search's fast path (memcore.api.fastpath) answers what the FastAPI route answers:
the same results on success, and every request it does not serve (other content type,
bad JSON, rejected fields, errors in the search) reaches the route with its body intact."""

from __future__ import annotations

from typing import Any

from tests.api_helpers import Api, api  # noqa: F401 - fixture
from tests.cli_helpers import memory, put

NS = "fast-1"
SEARCH = f"/v1/namespaces/{NS}/search"


def _hits(reply: Any) -> list[tuple[str, str, float]]:
    assert reply.status_code == 200, reply.text
    return [(h["memory"]["id"], h["memory"]["text"], round(h["similarity"], 6))
            for h in reply.json()["results"]]


def test_fast_path_and_route_answer_alike(api: Api) -> None:  # noqa: F811
    put(api.redis_url, *(memory(t, ns=NS) for t in (
        "user likes green tea", "user lives in Berlin", "user works at Acme",
        "user has a cat named Tom", "user plays chess on Sundays")))
    key = api.key("fast-*", role="read")
    body = {"query": "where does the user live", "k": 3,
            "filters": {"kind": {"in": ["knowledge", "preference"]}}}
    fast = api.call("POST", SEARCH, key, json=body)
    assert fast.headers["content-type"] == "application/json"
    assert int(fast.headers["content-length"]) == len(fast.content)
    # A content type the fast path leaves to the route (FastAPI parses it as JSON too).
    routed = api.call("POST", SEARCH, key, content=fast.request.content,
                      headers={"content-type": "application/json; charset=utf-8"})
    assert _hits(fast) == _hits(routed) and len(_hits(fast)) == 3
    assert _hits(fast)[0][1] == "user lives in Berlin"


def test_requests_it_does_not_serve_get_the_routes_errors(api: Api) -> None:  # noqa: F811
    key = api.key("fast-*", role="read")
    cases: list[tuple[bytes, str]] = [
        (b'{"query": "tea", "bogus": 1}', "bogus: unknown field"),
        (b'{"query": "tea", "k": "5"}', "k: "),
        (b'{"query": "tea", "filters": {"metadata.x": {"like": "t"}}}', "like"),
        (b'["tea"]', "body: "),
        (b'{"query": ', "body: not valid JSON"),
        (b'{"k": 2}', "Field required"),
    ]
    for body, text in cases:
        # The fast path's content type, then one only the route handles: same answers.
        replies = [api.call("POST", SEARCH, key, content=body,
                            headers={"content-type": content_type})
                   for content_type in ("application/json", "application/json; charset=utf-8")]
        assert [r.status_code for r in replies] == [422, 422], (body, replies[0].text)
        assert replies[0].json() == replies[1].json()
        assert replies[0].json()["error"]["code"] == "invalid"
        assert text in replies[0].json()["error"]["message"], (body, replies[0].text)
    # Still answered normally afterwards (nothing left half-read on the connection).
    assert api.call("POST", SEARCH, key, json={"query": "tea"}).status_code == 200
