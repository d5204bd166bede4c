"""``POST /v1/namespaces/{ns}/context`` through the real API app (uvicorn, real Redis),
and RemoteClient / AsyncRemoteClient.context against it: the same block as
memcore.Client.context, fields named on bad input, an unknown namespace as search."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from memcore import AsyncRemoteClient, Client, Invalid, RemoteClient
from tests.client.test_context import NOW, moved, put
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture

URL = "/v1/namespaces/{ns}/context"


def test_context_over_http_is_the_clients_block(api: Api) -> None:  # noqa: F811
    local = Client(api.redis_url)
    try:
        paris, berlin = moved(local, "alice")
        put(local, "alice", "I love green tea.", datetime(2026, 11, 20, tzinfo=UTC))
        expected = local.context("alice", "Where do I live?", 300, now=NOW)
    finally:
        local.close()
    key = api.key("alice", role="read")
    answer = api.call("POST", URL.format(ns="alice"), key,
                      json={"query": "Where do I live?", "max_tokens": 300,
                            "now": NOW.isoformat()})
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["text"] == expected.text and data["tokens"] == expected.tokens <= 300
    assert "- I live in Berlin. (since March 2026)" in data["text"]
    assert [(p["memory_id"], p["section"], p["replaced_by"]) for p in data["parts"]] == \
        [(p.memory_id, p.section, p.replaced_by) for p in expected.parts]
    assert (paris.id, "previous", berlin.id) in \
        [(p["memory_id"], p["section"], p["replaced_by"]) for p in data["parts"]]
    assert data["tokenizer"] == "cl100k_base" and data["max_tokens"] == 300

    remote = RemoteClient(api.url, key)
    try:
        assert remote.context("alice", "Where do I live?", 300, now=NOW) == expected
    finally:
        remote.close()

    async def run() -> None:
        async with AsyncRemoteClient(api.url, key) as aremote:
            assert await aremote.context("alice", "Where do I live?", 300,
                                         now=NOW.isoformat()) == expected

    asyncio.run(run())


def test_context_bad_input_names_the_field(api: Api) -> None:  # noqa: F811
    key = api.key("alice", role="read")
    for body, field in (({"query": "tea", "max_tokens": 10}, "max_tokens"),
                        ({"query": "tea", "max_tokens": 40_000}, "max_tokens"),
                        ({"query": "tea", "max_tokens": "1000"}, "max_tokens"),
                        ({"query": ""}, "query"),
                        ({"query": "tea", "now": "soon"}, "now"),
                        ({"query": "tea", "filters": {"colour": "red"}}, None)):
        answer = api.call("POST", URL.format(ns="alice"), key, json=body)
        assert answer.status_code == 422, (body, answer.text)
        error = answer.json()["error"]
        assert (error.get("field") == field) if field else "colour" in error["message"]
    remote = RemoteClient(api.url, key)
    try:
        try:
            remote.context("alice", "tea", max_tokens=10)
        except Invalid as exc:
            assert "max_tokens" in str(exc)
        else:
            raise AssertionError("max_tokens=10 was accepted")
    finally:
        remote.close()


def test_unknown_namespace_is_empty_as_search_and_scopes_hold(api: Api) -> None:  # noqa: F811
    key = api.key("alice", "nobody", role="read")
    search = api.call("POST", "/v1/namespaces/nobody/search", key, json={"query": "tea"})
    assert search.status_code == 200 and search.json()["results"] == []
    answer = api.call("POST", URL.format(ns="nobody"), key, json={"query": "tea"})
    assert answer.status_code == 200, answer.text
    assert (answer.json()["text"], answer.json()["parts"]) == ("", [])
    other = api.call("POST", URL.format(ns="bob"), key, json={"query": "tea"})
    assert other.status_code == 403
    assert api.call("POST", URL.format(ns="alice"), None,
                    json={"query": "tea"}).status_code == 401
