"""`memcore mcp` against the official MCP client library: a real server (stdio subprocess
and streamable HTTP), real Redis, real Celery workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from memcore.client.client import Client
from memcore.local.redis_server import free_port
from memcore.mcp.server import TOOLS
from tests.support.celery_stack import fresh_ns

TRANSCRIPT = os.environ.get("MEMCORE_MCP_TRANSCRIPT")
"""If set, the stdio test writes its exchange there (tool list, one add, one search)."""
FORGET_TRANSCRIPT = os.environ.get("MEMCORE_MCP_FORGET_TRANSCRIPT")
"""If set, the stdio forget test writes its exchange there (adds, forget, search, list)."""


@pytest.fixture()
def client(stack_client: Client) -> Client:
    return stack_client


def memcore_cmd(redis_url: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "memcore.cli", "--redis-url", redis_url, "mcp", *args]


def payload(result: Any) -> Any:
    """The JSON a tool answered (its text content)."""
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


@asynccontextmanager
async def stdio_session(redis_url: str, *args: str, env: dict[str, str] | None = None
                        ) -> AsyncIterator[ClientSession]:
    cmd = memcore_cmd(redis_url, *args)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={
        "PYTHONPATH": str(Path(__file__).parents[2]), **(env or {})})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_stdio_tools_add_search_list_profile_delete(client: Client) -> None:
    ns = fresh_ns("mcp")
    _, key = client.store.api_keys.create([ns], "write", "mcp-test")
    transcript: list[dict[str, Any]] = []

    async def run() -> None:
        async with stdio_session(client.settings.redis_url or "", "--api-key", key,
                                 "--namespace", ns) as session:
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            assert names == sorted(TOOLS)
            transcript.append({"request": "tools/list", "response": [
                {"name": t.name, "description": t.description,
                 "arguments": sorted(t.input_schema["properties"])} for t in tools.tools]})
            add_args = {"text": "I live in Lisbon and I keep two cats.",
                        "user_id": "alice", "metadata": {"channel": "mcp"}}
            added = payload(await session.call_tool("add_memory", add_args))
            transcript.append({"request": "tools/call add_memory", "arguments": add_args,
                               "response": added})
            assert added["done"] and added["memory_ids"]
            search_args = {"query": "Where does Alice live?", "k": 3,
                           "filters": {"user_id": "alice", "metadata.channel": "mcp"}}
            found = payload(await session.call_tool("search_memory", search_args))
            transcript.append({"request": "tools/call search_memory",
                               "arguments": search_args, "response": found})
            assert any("Lisbon" in r["text"] for r in found["results"])
            assert all(r["user_id"] == "alice" for r in found["results"])
            none = payload(await session.call_tool(
                "search_memory", {"query": "Lisbon", "filters": {"user_id": "bob"}}))
            assert none["results"] == []
            listed = payload(await session.call_tool("list_memories", {"limit": 10}))
            assert {m["id"] for m in listed["memories"]} == set(added["memory_ids"])
            profile = payload(await session.call_tool("get_profile", {"user_id": "alice"}))
            assert profile["namespace"] == ns
            assert {m["id"] for m in profile["profile"]} <= set(added["memory_ids"])
            nobody = payload(await session.call_tool("get_profile", {"user_id": "bob"}))
            assert nobody["profile"] == []
            victim = added["memory_ids"][0]
            gone = payload(await session.call_tool("delete_memory", {"memory_id": victim}))
            assert gone == {"namespace": ns, "deleted": victim, "status": "tombstoned"}
            again = await session.call_tool("delete_memory", {"memory_id": victim})
            assert again.is_error and "already deleted" in again.content[0].text
            bad = await session.call_tool("search_memory",
                                          {"query": "x", "filters": {"owner": "alice"}})
            assert bad.is_error and "unknown field 'owner'" in bad.content[0].text
            other = await session.call_tool("list_memories", {"namespace": "someone-else"})
            assert other.is_error and "do not include 'someone-else'" in other.content[0].text

    anyio.run(run)
    assert client.get(ns, transcript[1]["response"]["memory_ids"][0]) is not None
    if TRANSCRIPT:
        Path(TRANSCRIPT).write_text(json.dumps(transcript, indent=2) + "\n")


def test_stdio_forget_erases_what_it_names(client: Client) -> None:
    """The ``forget`` tool (issue 28, item 5) over stdio: the memory it names is gone from
    the list, from search and from every key of the namespace; the other one stays."""
    from memcore_bench.forget import scan_keys

    ns = fresh_ns("mcp")
    _, key = client.store.api_keys.create([ns], "write", "mcp-forget-test")
    transcript: list[dict[str, Any]] = []

    async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> Any:
        answer = payload(await session.call_tool(tool, args))
        transcript.append({"request": f"tools/call {tool}", "arguments": args,
                           "response": answer})
        return answer

    async def run() -> None:
        async with stdio_session(client.settings.redis_url or "", "--api-key", key,
                                 "--namespace", ns) as session:
            for text in ("I live in Lisbon.", "My home address is 14 Larkspur Lane, Bristol."):
                added = await call(session, "add_memory", {"text": text, "user_id": "alice"})
                assert added["done"] and added["memory_ids"]
            listed = await call(session, "list_memories", {"filters": {"user_id": "alice"}})
            assert any("Larkspur" in m["text"] for m in listed["memories"])
            forgot = await call(session, "forget", {"text": "my home address",
                                                    "user_id": "alice"})
            assert forgot["namespace"] == ns and forgot["kind"] == "attribute"
            assert forgot["erased"] >= 1 and forgot["turns_erased"]
            assert "Larkspur" not in json.dumps(forgot)  # ids and counts only
            found = await call(session, "search_memory", {"query": "Larkspur Lane address",
                                                          "filters": {"user_id": "alice"}})
            assert not any("Larkspur" in r["text"] for r in found["results"])
            left = await call(session, "list_memories", {"filters": {"user_id": "alice"}})
            texts = [m["text"] for m in left["memories"]]
            assert texts and not any("Larkspur" in t for t in texts)
            assert any("Lisbon" in t for t in texts)
            nothing = await call(session, "forget", {"text": "please forget my passport "
                                                     "number", "user_id": "alice"})
            assert nothing["erased"] == 0

    anyio.run(run)
    hits = scan_keys(client.store.client, f"mc:{{{ns}}}:*", ["Larkspur", "Lisbon"])
    transcript.append({"key scan": f"mc:{{{ns}}}:* (every key's values by type)",
                       "keys holding 'Larkspur'": hits["Larkspur"],
                       "keys holding 'Lisbon'": len(hits["Lisbon"])})
    assert hits["Larkspur"] == [] and hits["Lisbon"]
    if FORGET_TRANSCRIPT:
        Path(FORGET_TRANSCRIPT).write_text(json.dumps(transcript, indent=2) + "\n")


def test_stdio_refuses_a_missing_or_revoked_key(client: Client) -> None:
    url = client.settings.redis_url or ""
    ns = fresh_ns("mcp")
    record, key = client.store.api_keys.create([ns], "read")
    out = subprocess.run(memcore_cmd(url, "--api-key", "mck_000000000000_" + "0" * 48),
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and "unknown or revoked key" in out.stderr
    outside = subprocess.run(memcore_cmd(url, "--api-key", key, "--namespace", ns + "-other"),
                             capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    assert outside.returncode == 2, outside.stderr
    assert f"--namespace: '{ns}-other' is outside the key's scopes ({ns})" in outside.stderr

    async def run() -> None:
        async with stdio_session(url, "--api-key", key, "--namespace", ns) as session:
            denied = await session.call_tool("add_memory", {"text": "I like tea."})
            assert denied.is_error and "needs a write key" in denied.content[0].text
            assert not payload(await session.call_tool("list_memories", {}))["memories"]
            client.store.api_keys.revoke(record.id)
            revoked = await session.call_tool("list_memories", {})
            assert revoked.is_error and "missing, unknown or revoked" in revoked.content[0].text

    anyio.run(run)


@pytest.fixture()
def http_server(client: Client) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(memcore_cmd(client.settings.redis_url or "", "--transport", "http",
                                        "--port", str(port)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_http_needs_a_key_and_enforces_its_scopes(client: Client, http_server: str) -> None:
    ns = fresh_ns("mcp")
    _, key = client.store.api_keys.create([ns], "write")
    _, other_key = client.store.api_keys.create(["other-*"], "write")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(http_server, json=hello, headers=headers).status_code == 401
    forged = {**headers, "Authorization": "Bearer mck_000000000000_" + "0" * 48}
    assert httpx.post(http_server, json=hello, headers=forged).status_code == 401

    async def call(bearer: str, tool: str, args: dict[str, Any]) -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"},
                                      timeout=120) as http, \
                streamable_http_client(http_server, http_client=http) as streams, \
                ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            assert sorted(t.name for t in (await session.list_tools()).tools) == sorted(TOOLS)
            return await session.call_tool(tool, args)

    async def run() -> None:
        added = payload(await call(key, "add_memory",
                                   {"namespace": ns, "text": "I am allergic to peanuts.",
                                    "infer": False}))
        assert added["done"] and len(added["memory_ids"]) == 1
        found = payload(await call(key, "search_memory",
                                   {"namespace": ns, "query": "peanut allergy"}))
        assert [r["text"] for r in found["results"]] == ["I am allergic to peanuts."]
        stolen = await call(other_key, "search_memory", {"namespace": ns, "query": "peanuts"})
        assert stolen.is_error and "peanut" not in stolen.content[0].text.replace(
            "search_memory", "")
        assert "forbidden" in stolen.content[0].text

    anyio.run(run)


def test_stdio_add_says_when_no_worker_will_store_it(redis_url: str) -> None:
    """No worker on this Redis: add_memory used to wait its minute and answer done=false,
    as if storing were merely slow. It answers a tool error naming the cause instead."""
    from memcore.store import MemoryStore

    store = MemoryStore.from_url(redis_url)
    try:
        _, key = store.api_keys.create(["lonely"], "write")
    finally:
        store.close()

    async def run() -> None:
        async with stdio_session(redis_url, "--api-key", key, "--namespace", "lonely") as session:
            added = await session.call_tool("add_memory", {"text": "I moved to Porto."})
            assert added.is_error
            assert "no Celery worker answered a ping" in added.content[0].text
            assert "runs once a worker starts" in added.content[0].text

    anyio.run(run)


def test_stdio_calls_count_against_the_keys_rate_limits(client: Client) -> None:
    """The HTTP API's per-key limits hold for MCP tool calls: past the requests per
    second, and for add_memory past the model calls per minute (charged by the real
    workers), a call is a tool error naming the limit's setting and retry_after."""
    ns = fresh_ns("mcp-rl")
    url = client.settings.redis_url or ""
    record, key = client.store.api_keys.create([ns], "write", "mcp-limited")
    key_id = record.id

    def limited_session(setting: str, value: str) -> Any:
        return stdio_session(url, "--api-key", key, "--namespace", ns, env={setting: value})

    async def run() -> None:
        async with limited_session("MEMCORE_API__KEY_MODEL_CALLS_PER_MINUTE", "1") as session:
            added = payload(await session.call_tool("add_memory",
                                                    {"text": "I keep bees in my garden."}))
            assert added["done"] and added["memory_ids"]
            used, _ = client.store.rate_limits.model_call_wait(key_id, 1)
            assert used >= 1, "the worker charged the add's model calls to the key"
            refused = await session.call_tool("add_memory", {"text": "I also keep hens."})
            assert refused.is_error
            text = refused.content[0].text
            assert "rate_limited: this API key" in text and "model calls" in text
            assert "MEMCORE_API__KEY_MODEL_CALLS_PER_MINUTE" in text
            wait = int(text.rsplit("retry_after: ", 1)[1].split(" ")[0])
            assert 1 <= wait <= 60
            found = payload(await session.call_tool("search_memory", {"query": "bees"}))
            assert found["results"], "only adds are refused for model calls"
        async with limited_session("MEMCORE_API__KEY_REQUESTS_PER_SECOND", "2") as session:
            answers = [await session.call_tool("search_memory", {"query": "bees"})
                       for _ in range(6)]
            assert not answers[0].is_error
            refused = [a.content[0].text for a in answers if a.is_error]
            assert refused, "six calls at once exceed 2 a second"
            assert all("rate_limited: " in t and "2 requests per second" in t
                       and "MEMCORE_API__KEY_REQUESTS_PER_SECOND" in t
                       and t.endswith("(retry_after: 1 s)") for t in refused), refused
            await anyio.sleep(1.5)
            again = await session.call_tool("search_memory", {"query": "bees"})
            assert not again.is_error, again.content[0].text

    anyio.run(run)
