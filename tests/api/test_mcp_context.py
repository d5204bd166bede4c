"""The MCP tool ``get_context`` over stdio against the official MCP client library: a
real ``memcore mcp`` subprocess on a real Redis (as tests/api/test_mcp.py does)."""

from __future__ import annotations

import anyio

from memcore.client.client import Client
from memcore.client.tokens import count_tokens
from tests.api.test_mcp import payload, stdio_session
from tests.client.test_context import NOW, moved, put


def test_stdio_get_context_is_the_clients_block(redis_url: str) -> None:
    client = Client(redis_url)
    try:
        paris, berlin = moved(client, "alice")
        put(client, "alice", "I love green tea.", NOW, user_id="alice")
        put(client, "alice", "I love black coffee.", NOW, user_id="bob")
        expected = client.context("alice", "Where do I live?", 200, now=NOW)
        _, key = client.store.api_keys.create(["alice", "nobody"], "read", "mcp-context")
    finally:
        client.close()

    async def run() -> None:
        async with stdio_session(redis_url, "--api-key", key, "--namespace", "alice") as session:
            names = {t.name for t in (await session.list_tools()).tools}
            assert "get_context" in names
            block = payload(await session.call_tool(
                "get_context", {"query": "Where do I live?", "max_tokens": 200,
                                "now": NOW.isoformat()}))
            assert block["text"] == expected.text and block["namespace"] == "alice"
            assert count_tokens(block["text"]) == block["tokens"] <= 200
            assert (paris.id, "previous", berlin.id) in \
                [(p["memory_id"], p["section"], p["replaced_by"]) for p in block["parts"]]
            bob = payload(await session.call_tool(
                "get_context", {"query": "What do I drink?", "user_id": "bob"}))
            assert "coffee" in bob["text"] and "tea" not in bob["text"]
            empty = payload(await session.call_tool(
                "get_context", {"query": "tea", "namespace": "nobody"}))
            assert (empty["text"], empty["parts"]) == ("", [])
            bad = await session.call_tool("get_context", {"query": "tea", "max_tokens": 5})
            assert bad.is_error and "max_tokens" in bad.content[0].text
            other = await session.call_tool("get_context", {"query": "tea",
                                                            "namespace": "bob"})
            assert other.is_error and "do not include 'bob'" in other.content[0].text

    anyio.run(run)
