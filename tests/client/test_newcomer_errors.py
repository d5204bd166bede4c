"""Silent successes and unclear errors a newcomer met, each now said plainly (real Redis,
real HTTP server, the real MCP server over stdio, the real CLI):

- a search or profile of a namespace that has no data warns, the same sentence
  everywhere: a Python ``UnknownNamespaceWarning`` (Client and RemoteClient), the
  ``warning`` field of the HTTP and MCP answers (null/absent otherwise), the CLI's error;
  the suggestion only names namespaces in the key's scopes;
- ``consolidate`` of a namespace whose turns are all still queued says so;
- ``Client.wait`` on an unknown task id fails within seconds;
- a misspelt body field is reported as unknown, with the right name;
- an MCP tool's wrong argument is a sentence naming it, not pydantic's report; the docs
  (docs/usage.md, MCP) list every tool's arguments;
- ``memcore stats`` of a typo prints the error alone.
"""

from __future__ import annotations

import inspect
import json
import re
import time
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import anyio
import pytest

from memcore.adapters import build_models
from memcore.client.client import Client
from memcore.client.errors import UnknownTask
from memcore.client.remote import RemoteClient
from memcore.core.config import Settings
from memcore.core.errors import NamespaceNotFound, UnknownNamespaceWarning
from memcore.core.models import Episode
from memcore.ingest.write_path import IngestPipeline
from memcore.mcp.server import TOOLS, MemoryTools, argument_error
from memcore.store import MemoryStore
from tests.api.test_mcp import stdio_session
from tests.support.api_helpers import Api, serve
from tests.support.cli_helpers import run
from tests.support.docs_text import doc

NS = "acme-sam"
OTHER = "globex-sam"
USAGE = doc("usage.md")  # its MCP section has the tools table


def store_fact(redis_url: str, ns: str, text: str) -> None:
    settings = Settings(redis_url=redis_url)
    store = MemoryStore.from_url(redis_url)
    try:
        IngestPipeline(store, build_models(settings), settings).ingest(
            ns, [Episode(id=f"t-{ns}", namespace=ns, role="user", speaker="Sam", text=text,
                         timestamp=datetime(2026, 3, 1, tzinfo=UTC))], infer=False)
    finally:
        store.close()


@pytest.fixture()
def fed(redis_url: str) -> Iterator[Api]:
    store_fact(redis_url, NS, "I have a cat called Tom.")
    store_fact(redis_url, OTHER, "I live in Oslo.")
    gen = serve(redis_url)
    try:
        yield next(gen)
    finally:
        gen.close()


def caught(call: object) -> tuple[object, list[str]]:
    """What ``call()`` returned and the UnknownNamespaceWarning texts it issued."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = call()  # type: ignore[operator]
    return result, [str(w.message) for w in seen if w.category is UnknownNamespaceWarning]


def test_client_warns_on_a_namespace_without_data(fed: Api) -> None:
    client = Client(fed.redis_url)
    try:
        hits, said = caught(lambda: client.search("acme-Sam", "cat"))
        assert hits == [] and said == ["namespace 'acme-Sam' has no data (did you mean "
                                       "'acme-sam'?)"]
        facts, said = caught(lambda: client.profile("acme-sma"))
        assert facts == [] and said == ["namespace 'acme-sma' has no data (did you mean "
                                        "'acme-sam'?)"]
        _, said = caught(lambda: client.search("nothing-like-it", "cat"))
        assert said == ["namespace 'nothing-like-it' has no data (check the name)"]
        # A namespace with data and no match: no warning.
        _, said = caught(lambda: client.search(NS, "cat", filters={"user_id": "nobody"}))
        assert said == []
        _, said = caught(lambda: client.search(NS, "cat", warn=False) and
                         client.search("acme-Sam", "cat", warn=False))
        assert said == []
    finally:
        client.close()


def test_http_and_remote_client_say_it_in_a_warning_field(fed: Api) -> None:
    key = fed.key("acme-*", "globex-sma", role="read")
    answer = fed.call("POST", "/v1/namespaces/acme-sma/search", key, json={"query": "cat"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"results": [], "warning": "namespace 'acme-sma' has no data "
                                                       "(did you mean 'acme-sam'?)"}
    profile = fed.call("GET", "/v1/namespaces/acme-sma/profile", key).json()
    assert profile["memories"] == [] and "did you mean 'acme-sam'" in profile["warning"]
    # Only names in the key's scopes are suggested: globex-sam is another tenant's.
    blind = fed.call("POST", "/v1/namespaces/globex-sma/search", key, json={"query": "x"})
    assert blind.json()["warning"] == "namespace 'globex-sma' has no data (check the name)"
    for _ in range(2):  # the second search takes the fast path
        found = fed.call("POST", f"/v1/namespaces/{NS}/search", key, json={"query": "cat"})
        assert found.json()["results"] and found.json()["warning"] is None
        empty = fed.call("POST", f"/v1/namespaces/{NS}/search", key,
                         json={"query": "cat", "filters": {"user_id": "nobody"}})
        assert empty.json() == {"results": [], "warning": None}
    with RemoteClient(fed.url, key) as remote:
        hits, said = caught(lambda: remote.search("acme-sma", "cat"))
        assert hits == [] and said == [answer.json()["warning"]]
        _, said = caught(lambda: remote.profile("acme-sma"))
        assert said == [answer.json()["warning"]]
        _, said = caught(lambda: remote.search(NS, "cat"))
        assert said == []
        # The warning points at the caller's line, as Client's does.
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            remote.profile("acme-sma")
        assert [w.filename for w in seen] == [__file__]


def test_consolidate_says_the_turns_are_still_queued(fed: Api) -> None:
    # No worker runs on this Redis: the turns stay queued.
    client = Client(fed.redis_url)
    try:
        client.add("acme-queued", [{"role": "user", "content": "I like tea."}])
        with pytest.raises(NamespaceNotFound, match=r"1 ingest task\(s\) of it are still queued"):
            client.consolidate("acme-queued", timeout=5)
        with pytest.raises(NamespaceNotFound, match=r"has no data \(did you mean 'acme-sam'"):
            client.consolidate("acme-sma", timeout=5)
    finally:
        client.close()
    answer = fed.call("POST", "/v1/namespaces/acme-queued/consolidate",
                      fed.key("acme-*", role="write"), json={})
    assert answer.status_code == 404 and "still queued" in answer.json()["error"]["message"]
    cli = run(fed.redis_url, "consolidate", "acme-queued")
    assert cli.exit_code == 1 and "still queued" in cli.output, cli.output
    _, said = caught(lambda: Client(fed.redis_url).search("acme-queued", "tea"))
    assert said and "still queued" in said[0]


def test_wait_on_an_unknown_task_fails_fast(fed: Api) -> None:
    client = Client(fed.redis_url)
    try:
        start = time.monotonic()
        with pytest.raises(UnknownTask, match="task 'no-such-task' is unknown"):
            client.wait(["no-such-task"], timeout=120)
        assert time.monotonic() - start < 10
        # One id as a string was waited on character by character ("task 'a' is unknown")
        with pytest.raises(TypeError, match=r"task_ids: expected a list .* pass \['abc123'\]"):
            client.wait("abc123", timeout=5)  # type: ignore[arg-type]
        # A real task, queued with no worker to run it, is not unknown: it times out.
        queued = client.add(NS, [{"role": "user", "content": "I like tea."}])
        with pytest.raises(TimeoutError):
            client.wait(queued, timeout=3)
    finally:
        client.close()


def test_a_misspelt_field_is_named_as_unknown(fed: Api) -> None:
    key = fed.key("acme-*", role="write")
    answer = fed.call("POST", f"/v1/namespaces/{NS}/messages", key,
                      json={"mesages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["field"] == "mesages", error
    assert error["message"].startswith("mesages: unknown field (did you mean 'messages'?)"), error
    nested = fed.call("POST", f"/v1/namespaces/{NS}/messages", key,
                      json={"messages": [{"rol": "user", "content": "hi"}]}).json()["error"]
    assert nested["field"] == "messages.0.rol", nested
    assert "unknown field (did you mean 'role'?)" in nested["message"], nested
    # Not close to anything: still named as unknown.
    far = fed.call("POST", f"/v1/namespaces/{NS}/search", key,
                   json={"query": "x", "zzz": 1}).json()["error"]
    assert far["message"] == "zzz: unknown field", far


def test_mcp_argument_errors_are_sentences(fed: Api) -> None:
    key = fed.key("acme-*", role="read")

    async def call() -> list[tuple[bool, str]]:
        async with stdio_session(fed.redis_url, "--api-key", key, "--namespace", NS) as session:
            out = []
            for name, args in (("search_memory", {"querry": "cat"}),
                               ("search_memory", {"query": "cat", "k": "many"}),
                               ("search_memory", {"k": 3}),
                               ("search_memory", {"query": "cat", "namespace": "acme-sma"}),
                               ("get_profile", {"namespace": "acme-sma"}),
                               ("search_memory", {"query": "cat"})):
                result = await session.call_tool(name, args)
                out.append((result.is_error, result.content[0].text))
            return out

    (e1, typo), (e2, wrong), (e3, missing), (e4, search), (e5, profile), (e6, hit) = \
        anyio.run(call)
    assert e1 and typo.startswith("querry: unknown argument (did you mean 'query'?); "
                                  "search_memory takes: query, namespace, k, filters"), typo
    assert e2 and wrong.startswith("k: Input should be a valid integer") and "'many'" in wrong
    assert e3 and missing.startswith("query: required"), missing
    for text in (typo, wrong, missing):
        assert "validation error" not in text and "pydantic" not in text, text
    assert not e4 and json.loads(search)["warning"] == (
        "namespace 'acme-sma' has no data (did you mean 'acme-sam'?)")
    assert not e5 and "did you mean 'acme-sam'" in json.loads(profile)["warning"]
    assert not e6 and "warning" not in json.loads(hit)


def test_the_docs_list_every_mcp_tool_with_its_arguments() -> None:
    for tool in TOOLS:
        row = re.search(rf"^\| `{tool}` \|(.*)$", USAGE, flags=re.M)
        assert row, f"docs/usage.md has no row for {tool}"
        params = inspect.signature(getattr(MemoryTools, tool)).parameters
        for name in list(params)[1:]:  # not self
            assert f"`{name}" in row.group(1), (tool, name)
    assert argument_error("t", {"a": 1}, ["a"]) is None


def test_stats_of_a_typo_prints_the_error_alone(fed: Api) -> None:
    for args in (("stats", "acme-sma"), ("stats", "acme-sma", "--json")):
        result = run(fed.redis_url, *args)
        assert result.exit_code == 1
        assert result.output.strip() == ("Error: namespace 'acme-sma' has no data (did you "
                                         "mean 'acme-sam'?)"), result.output
    ok = run(fed.redis_url, "stats", NS)
    assert ok.exit_code == 0 and "status:" in ok.output


def test_client_settings_may_be_a_mapping_and_a_wrong_one_is_named(redis_url: str) -> None:
    client = Client(settings={"redis_url": redis_url, "embedder": "hash"})
    try:
        assert client.settings.embedder == "hash"
    finally:
        client.close()
    with pytest.raises(ValueError, match=r"no such setting: embeder \(did you mean embedder"):
        Client(settings={"redis_url": redis_url, "embeder": "local"})
    with pytest.raises(TypeError, match="settings: expected a Settings or a mapping"):
        Client(settings=["embedder"])  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "hint"), [("/tmp/x/redis.sock", "unix:///tmp/x/redis.sock"),
                                             ("localhost:6379", "redis://localhost:6379")])
def test_a_redis_url_without_a_scheme_is_named_with_the_url_meant(
        monkeypatch: pytest.MonkeyPatch, value: str, hint: str) -> None:
    # A bare socket path in MEMCORE_REDIS_URL failed deep in redis-py, naming no variable.
    monkeypatch.setenv("MEMCORE_REDIS_URL", value)
    with pytest.raises(ValueError, match=f"MEMCORE_REDIS_URL must be .* {hint!r}"):
        Settings()
