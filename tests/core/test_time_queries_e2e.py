"""Time in queries end to end: turns through real Celery workers, then ``as_of``,
``include_history`` and time filters through the real HTTP API (RemoteClient, raw HTTP)
and the CLI."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memcore import AsyncRemoteClient, Client, Invalid, RemoteClient
from memcore.core.models import AuditAction, Status
from memcore.local.stack import LocalStack
from tests.support.api_helpers import Api, serve
from tests.support.cli_helpers import run

PARIS = datetime(2019, 3, 1, 9, 0, tzinfo=UTC)
BERLIN = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)


@pytest.fixture()
def live(celery_stack: LocalStack) -> Iterator[Api]:
    yield from serve(celery_stack.redis_url)


def moved(live: Api) -> tuple[str, str, str]:
    """Sam lived in Paris from 2019 and moved to Berlin in 2024 (two turns, through the
    workers); the namespace and the ids of the Paris and Berlin memories."""
    ns = f"time-{uuid.uuid4().hex[:8]}"
    with RemoteClient(live.url, live.key(ns, role="write")) as remote:
        remote.wait(remote.add(ns, [{"role": "user", "speaker": "Sam",
                                     "content": "I live in Paris."}], timestamp=PARIS),
                    timeout=120)
        remote.wait(remote.add(ns, [{"role": "user", "speaker": "Sam",
                                     "content": "I moved to Berlin."}], timestamp=BERLIN),
                    timeout=120)
    local = Client(live.redis_url)
    try:
        (paris,) = [m for m in local.store.records.iter_memories(ns) if "Paris" in m.text]
    finally:
        local.close()
    assert paris.status is Status.SUPERSEDED and paris.superseded_by
    # The write path closed Paris where Berlin began: the turn's own time.
    assert (paris.valid_from, paris.valid_until) == (PARIS, BERLIN)
    return ns, paris.id, paris.superseded_by


def test_as_of_and_history_over_http(live: Api) -> None:
    ns, paris, berlin = moved(live)
    with RemoteClient(live.url, live.key(ns, role="read")) as remote:
        assert "Berlin" in remote.search(ns, "where does Sam live", k=1)[0].memory.text
        then = remote.search(ns, "where does Sam live", k=1, as_of="2021-01-01T00:00:00Z")
        assert [h.memory.id for h in then] == [paris]
        (hit,) = remote.search(ns, "where does Sam live", k=1, include_history=True)
        assert hit.memory.id == berlin and [m.id for m in hit.earlier] == [paris]
        assert hit.earlier[0].valid_until == BERLIN and hit.earlier[0].vector is None
        assert remote.get(ns, berlin, as_of="2020-01-01").id == paris  # type: ignore[union-attr]
        assert remote.get(ns, berlin, as_of="2010-01-01") is None
        assert [m.id for m in remote.earlier(ns, berlin)] == [paris]
        assert [m.id for m in remote.list(ns, as_of="2021-01-01").memories] == [paris]
        assert [m.id for m in remote.list(ns).memories] == [berlin]
        assert [m.id for m in remote.profile(ns, as_of=PARIS.replace(month=4))] == [paris]
        assert [e.action for e in remote.history(ns, berlin, as_of="2020-01-01")] == [
            AuditAction.ADD]
        assert AuditAction.SUPERSEDE in [e.action for e in remote.history(ns, berlin)]
        # A time filter over HTTP, chosen before ranking.
        old = remote.search(ns, "Sam", k=5, include_inactive=True,
                            filters={"event_at": {"lt": "2020-01-01T00:00:00Z"}})
        assert [h.memory.id for h in old] == [paris]

    async def from_async() -> list[str]:
        async with AsyncRemoteClient(live.url, live.key(ns, role="read")) as remote:
            hits = await remote.search(ns, "where does Sam live", k=1, as_of=PARIS)
            return [h.memory.id for h in hits]

    assert asyncio.run(from_async()) == [paris]


def test_a_bad_as_of_is_422_naming_the_field(live: Api) -> None:
    ns, _, berlin = moved(live)
    key = live.key(ns, role="read")
    base = f"/v1/namespaces/{ns}"
    for method, path, kw in [
            ("POST", f"{base}/search", {"json": {"query": "Sam", "as_of": "last March"}}),
            ("GET", f"{base}/profile", {"params": {"as_of": "last March"}}),
            ("GET", f"{base}/memories", {"params": {"as_of": "last March"}}),
            ("GET", f"{base}/memories/{berlin}", {"params": {"as_of": "last March"}}),
            ("GET", f"{base}/memories/{berlin}/history", {"params": {"as_of": "March"}})]:
        got = live.call(method, path, key, **kw)
        assert got.status_code == 422, (path, got.text)
        assert got.json()["error"]["field"] == "as_of", (path, got.text)
    with RemoteClient(live.url, key) as remote, pytest.raises(ValueError, match="as_of"):
        remote.search(ns, "Sam", as_of="last March")  # named before it is sent
    got = live.call("POST", f"{base}/search", key,
                    json={"query": "Sam", "filters": {"valid_from": {"lt": "March"}}})
    assert got.status_code == 422 and "valid_from" in got.json()["error"]["message"]
    with RemoteClient(live.url, key) as remote, pytest.raises(Invalid, match="event_at"):
        remote.search(ns, "Sam", filters={"event_at": {"contains": "2020"}})


def test_cli_as_of(live: Api) -> None:
    ns, paris, berlin = moved(live)
    got = run(live.redis_url, "search", ns, "where does Sam live", "-k", "1",
              "--as-of", "2021-01-01", "--json")
    assert got.exit_code == 0, got.output
    assert [h["id"] for h in json.loads(got.stdout)] == [paris]
    got = run(live.redis_url, "search", ns, "where does Sam live", "-k", "1",
              "--include-history", "--json")
    (hit,) = json.loads(got.stdout)
    assert hit["id"] == berlin and [m["id"] for m in hit["earlier"]] == [paris]
    got = run(live.redis_url, "show", ns, berlin, "--as-of", "2020-01-01", "--json")
    assert json.loads(got.stdout)["id"] == paris
    got = run(live.redis_url, "profile", ns, "--as-of", "2019-04-01", "--json")
    assert [m["id"] for m in json.loads(got.stdout)] == [paris]
    bad = run(live.redis_url, "search", ns, "Sam", "--as-of", "last March")
    assert bad.exit_code != 0 and "--as-of" in bad.output
