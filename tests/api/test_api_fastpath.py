"""The search's fast path (memcore.api.fastpath) answers what the FastAPI route answers:
the same results on success, and every request it does not serve (other content type,
bad JSON, rejected fields, errors in the search) reaches the route with its body intact."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from math import isfinite
from types import SimpleNamespace
from typing import Any

import pytest

from memcore.api.routes.common import bare
from memcore.api.routes.messages import search_json
from memcore.api.schemas import SearchRequest, SearchResponse, SearchResult
from memcore.client.search import SearchHit
from memcore.core.models import Kind, Memory, Relation, Status
from tests.api.test_api_auth import _sample
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture
from tests.support.cli_helpers import memory, put

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


def _varied_memory(rng: random.Random, i: int) -> Memory:
    """A memory with a bit of everything a response may carry (or leave out)."""
    words = ["tea", "Zürich", "naïve café", "日本語のテキスト",
             "emoji 🐈‍⬛", 'quote " and \\ slash',
             "tab\tnew\nline", "<b>&amp;</b>", "\u2028sep", "x" * rng.randint(1, 300)]
    at = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.random() * 3e8)
    at = at.replace(microsecond=rng.choice([0, rng.randint(0, 999_999)]))
    later = at + timedelta(days=rng.randint(0, 900), microseconds=rng.randint(0, 10))
    fields: dict[str, Any] = dict(
        namespace=rng.choice(["ns", "a.b@c-d_e"]), text=" ".join(rng.sample(words, 3)),
        importance=rng.random(), last_used=later, created_at=at, updated_at=later,
        strength=1.0 + rng.random() * rng.choice([1, 1e3, 1e-9]),
        confidence=rng.choice([0.0, 1.0, rng.random()]), kind=rng.choice(list(Kind)),
        status=rng.choice(list(Status)), sources=[f"ep-{j}" for j in range(rng.randint(0, 4))],
        support=rng.randint(0, 10**6), explicit=rng.random() < 0.5,
        pinned=rng.random() < 0.5, derived_level=rng.randint(0, 1),
        recall_count=rng.randint(0, 10**12), version=rng.randint(0, 99),
        member_texts=rng.sample(words, rng.randint(0, 3)))
    if rng.random() < 0.5:
        fields["metadata"] = {"topic": rng.choice(words), "n": rng.randint(-5, 5),
                              "w": rng.random() * 1e20, "ok": True, "tags": ["a", "ü"]}
    if rng.random() < 0.4:
        fields["relation"] = Relation(subject="Alice", predicate="works_at",
                                      object=rng.choice(words)[:200], weight=rng.random())
    if rng.random() < 0.4:
        fields.update(valid_from=at, valid_until=later, expires_at=later,
                      last_supported=at, superseded_by=f"m{i}")
    if rng.random() < 0.3:
        fields.update(user_id="u-1", agent_id=rng.choice([None, "agent.7"]), run_id="r@1")
    if rng.random() < 0.3:  # a vector the answer must leave out
        fields["vector"] = [rng.random() + 0.1 for _ in range(8)]
    return Memory.model_validate(fields)


def test_search_json_equals_the_models_serialization() -> None:
    """``search_json`` builds no models (``SEARCH_RESPONSE_JSON``): its bytes are those of
    ``SearchResponse(...).model_dump_json()``, over varied hits and scores."""
    rng = random.Random(14)
    floats = [0.0, -0.0, 1.0, 0.1, 1 / 3, 1e-7, 1e-300, 5e-324, 1e16, 1.5e300, -2.5,
              float("nan"), float("inf"), float("-inf"), 3, 0, True]
    for case in range(300):
        hits = [SearchHit(memory=_varied_memory(rng, j),
                          similarity=rng.choice([*floats, rng.uniform(-1, 1)]),
                          score=rng.choice([*floats, rng.random() * 10 ** rng.randint(-9, 9)]))
                for j in range(rng.choice([0, 1, 3, 10, 25]))]
        expected = SearchResponse(results=[
            SearchResult(memory=bare(h.memory), similarity=h.similarity, score=h.score)
            for h in hits]).model_dump_json().encode()

        state = SimpleNamespace(client=SimpleNamespace(search=lambda *a, _h=hits, **kw: _h,
                                                       no_data=lambda *a: None))
        got = search_json(state, {}, "ns", SearchRequest(query="q"))  # type: ignore[arg-type]
        assert got == expected, case
        if all(isfinite(h.similarity) and isfinite(h.score) for h in hits):
            assert SearchResponse.model_validate_json(got) == SearchResponse(results=[
                SearchResult(memory=bare(h.memory), similarity=h.similarity, score=h.score)
                for h in hits])


def _server_client(api: Api) -> Any:  # noqa: F811
    app = api.server.server.config.app
    return app.state.memcore.client


def test_shortcut_hands_what_it_cannot_answer_to_the_route_once(
        api: Api, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A search that fails in the shortcut (a cached key) is answered by the route from
    the same body: the search runs twice (shortcut, route), not a third time in the
    stack's own fast path; the metrics count it once, under its route and status."""
    put(api.redis_url, memory("user likes green tea", ns=NS))
    key = api.key("fast-*", role="read")
    assert api.call("POST", SEARCH, key, json={"query": "tea"}).status_code == 200  # cached
    client = _server_client(api)
    calls: list[str] = []
    real = client.search

    def counted(namespace: str, query: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(query)
        return real(namespace, query, *args, **kwargs)

    monkeypatch.setattr(client, "search", counted)
    assert _hits(api.call("POST", SEARCH, key, json={"query": "tea"}))[0][1] == \
        "user likes green tea"
    assert calls == ["tea"]  # one search for a successful request
    calls.clear()
    route = 'method="POST",route="/v1/namespaces/{ns}/search"'
    invalid = f"memcore_http_requests_total{{{route},status=\"422\"}}"
    before = api.http.get("/metrics").text
    reply = api.call("POST", SEARCH, key, json={"query": "   "})  # the searcher refuses it
    assert reply.status_code == 422, reply.text
    assert calls == ["   ", "   "]
    after = api.http.get("/metrics").text
    assert _sample(after, invalid) - _sample(before, invalid) == 1


def test_shortcut_keeps_the_body_limit_of_a_chunked_body(api: Api) -> None:  # noqa: F811
    key = api.key("fast-*", role="read")
    assert api.call("POST", SEARCH, key, json={"query": "tea"}).status_code == 200  # cached
    big = json.dumps({"query": "tea " * 300_000}).encode()  # > 1 MiB, no Content-Length

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 65536):
            yield big[i:i + 65536]

    reply = api.call("POST", SEARCH, key, content=chunks(),
                     headers={"content-type": "application/json"})
    assert reply.status_code == 413, reply.text
    assert reply.json()["error"]["code"] == "too_large"
    assert api.call("POST", SEARCH, key, json={"query": "tea"}).status_code == 200
