"""RemoteClient / AsyncRemoteClient against a real server, real Redis and real Celery workers:
same answers as memcore.Client, typed errors, and an erase over HTTP that leaves nothing."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
import redis

from memcore import (
    AsyncRemoteClient,
    AuthError,
    Client,
    Invalid,
    NotFound,
    RemoteClient,
    Unavailable,
)
from memcore.local.redis_server import free_port
from memcore.local.stack import LocalStack
from tests.support.api_helpers import Api, serve


@pytest.fixture()
def live(celery_stack: LocalStack) -> Iterator[Api]:
    assert celery_stack.redis_url
    yield from serve(celery_stack.redis_url)


def _ns() -> str:
    return f"remote-{uuid.uuid4().hex[:8]}"


def _strip(memory: object) -> dict[str, object]:
    data = memory.model_dump(mode="json")  # type: ignore[attr-defined]
    # Recall bookkeeping moves on every search; vectors never travel.
    for name in ("vector", "last_used", "strength", "recall_count", "version"):
        data.pop(name, None)
    return data


def test_remote_client_matches_client(live: Api) -> None:
    ns = _ns()
    local = Client(live.redis_url)
    remote = RemoteClient(live.url, live.key(ns, role="admin"))
    try:
        ids = remote.add(ns, [{"role": "user", "content": "I moved to Berlin last year."},
                              {"role": "user", "content": "I love green tea."}])
        results = remote.wait(ids, timeout=120)
        written = [m for r in results for m in r["memory_ids"]]
        assert written
        hits = remote.search(ns, "moved to Berlin", k=3)
        assert hits and "Berlin" in hits[0].memory.text
        assert hits[0].memory.vector is None
        mid = hits[0].memory.id
        assert _strip(remote.get(ns, mid)) == _strip(local.get(ns, mid))
        assert remote.get(ns, "no-such-id") is None
        assert remote.pin(ns, mid).pinned and local.get(ns, mid).pinned  # type: ignore[union-attr]
        assert not remote.unpin(ns, mid).pinned
        assert [e.action for e in remote.history(ns, mid)] == \
            [e.action for e in local.history(ns, mid)]
        assert remote.stats(ns) == local.stats(ns)
        assert {m.id for m in remote.profile(ns)} == {m.id for m in local.profile(ns)}
        report = remote.consolidate(ns, wait=True, timeout=120)
        assert isinstance(report, dict) and report["namespace"] == ns
        assert remote.versions(ns)["current"] == local.store.current_version(ns)
        with pytest.raises(NotFound) as missing:
            remote.pin(ns, "no-such-id")
        assert "no-such-id" in str(missing.value) and isinstance(missing.value, KeyError)
        with pytest.raises(Invalid) as bad:
            remote.search(ns, "x", k=0)
        assert bad.value.field == "k" and isinstance(bad.value, ValueError)
        page = remote.list(ns, limit=1)
        assert page.memories and page.next_cursor is not None
        assert [m.id for m in remote.list(ns, limit=1, cursor=page.next_cursor).memories] \
            == [m.id for m in local.list(ns, limit=1, cursor=page.next_cursor).memories]
        edited = remote.update(ns, mid, metadata={"checked": True})
        assert edited.metadata == {"checked": True} == local.get(ns, mid).metadata  # type: ignore[union-attr]
        assert remote.delete(ns, mid).status.value == "tombstoned"
        assert remote.restore(ns, mid).status.value == "active"
        assert remote.erase(ns, memory_id=mid) >= 1
        assert remote.get(ns, mid) is None
    finally:
        remote.close()
        local.close()


def test_add_with_wait_returns_memory_ids(live: Api) -> None:
    ns = _ns()
    key = live.key(ns, role="write")
    r = live.call("POST", f"/v1/namespaces/{ns}/messages", key,
                  json={"messages": [{"content": "My sister is called Ada."}], "wait": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["memory_ids"] and len(body["task_ids"]) == 1
    got = live.call("GET", f"/v1/namespaces/{ns}/memories/{body['memory_ids'][0]}", key)
    assert "Ada" in got.json()["text"]
    r = live.call("POST", f"/v1/namespaces/{ns}/messages", key,
                  json={"messages": [{"content": "hello"}]})
    assert r.status_code == 202 and len(r.json()["task_ids"]) == 1
    # A key of another namespace cannot wait on (or learn about) these tasks.
    other = _ns()
    foreign = live.call("POST", f"/v1/namespaces/{other}/tasks/wait", live.key(other),
                        json={"task_ids": r.json()["task_ids"]})
    assert foreign.status_code == 404


def test_typed_errors(live: Api) -> None:
    ns = _ns()
    with RemoteClient(live.url, "mck_000000000000_" + "0" * 48) as nobody, \
            pytest.raises(AuthError) as unknown:
        nobody.stats(ns)
    assert unknown.value.status == 401 and "key" in unknown.value.message
    with RemoteClient(live.url, live.key("elsewhere", role="admin")) as outsider, \
            pytest.raises(AuthError) as outside:
        outsider.stats(ns)
    assert outside.value.status == 403
    with RemoteClient(live.url, live.key(ns, role="read")) as reader, \
            pytest.raises(AuthError) as low:
        reader.add(ns, [{"content": "hi", "tenant": "x"}])  # the role is checked first
    assert low.value.status == 403
    with RemoteClient(live.url, live.key(ns, role="write")) as writer, \
            pytest.raises(Invalid) as bad:
        writer.add(ns, [{"content": "hi", "tenant": "x"}])
    assert bad.value.field == "messages.0.tenant"
    with RemoteClient(f"http://127.0.0.1:{free_port()}", "k") as dead, \
            pytest.raises(Unavailable):
        dead.stats(ns)


def test_async_remote_client(live: Api) -> None:
    ns = _ns()
    key = live.key(ns, role="admin")

    async def flow() -> None:
        async with AsyncRemoteClient(live.url, key) as remote:
            ids = await remote.add(ns, [{"role": "user", "content": "I play the cello."}])
            await remote.wait(ids, timeout=120)
            hits = await asyncio.gather(*(remote.search(ns, "instrument cello", k=1)
                                          for _ in range(8)))
            assert all(h and "cello" in h[0].memory.text for h in hits)
            mid = hits[0][0].memory.id
            assert (await remote.get(ns, mid)) is not None
            with pytest.raises(NotFound):
                await remote.restore(ns, "nope")
            assert await remote.erase(ns, everything=True) > 0
            assert (await remote.stats(ns))["status"]["active"] == 0

    asyncio.run(flow())


def test_erase_over_http_leaves_nothing(live: Api) -> None:
    ns = _ns()
    # Not a credential: "code 7781" or "SECRET-<hex>" would be masked before storing.
    secret = f"PRIVATE-{uuid.uuid4().hex} my locker number is 7781"
    r = redis.Redis.from_url(live.redis_url)
    r.config_set("rdbcompression", "no")  # DUMP shows raw bytes
    try:
        with RemoteClient(live.url, live.key(ns, role="admin")) as remote:
            ids = remote.add(ns, [{"role": "user", "content": secret}])
            assert remote.wait(ids, timeout=120)[0]["memory_ids"]
            assert remote.search(ns, "locker number")
            needle = secret.encode()
            assert any(needle in (r.dump(k) or b"") for k in r.scan_iter(match=f"mc:{{{ns}}}:*"))
            assert remote.erase(ns, everything=True) > 0
        # Every key of the whole server (data, broker, results), not only the namespace's.
        leaks = [k for k in r.scan_iter(match="*", count=1000) if needle in (r.dump(k) or b"")]
        assert leaks == []
        left = {k.decode() for k in r.scan_iter(match=f"mc:{{{ns}}}:*")}
        assert all(k in (f"mc:{{{ns}}}:audit", f"mc:{{{ns}}}:gen")
                   or k.startswith(f"mc:{{{ns}}}:audit:p:")
                   for k in left), left
    finally:
        r.config_set("rdbcompression", "yes")
        r.close()


def test_filters_scopes_and_infer_false_over_http(live: Api) -> None:
    ns = _ns()
    with RemoteClient(live.url, live.key(ns, role="write")) as remote:
        ids = remote.add(ns, [{"role": "user", "content": "Pasta carbonara every Friday."}],
                         user_id="u1", metadata={"topic": "food"}, infer=False)
        ids += remote.add(ns, [{"role": "user", "content": "Pasta with pesto on Mondays."}],
                          user_id="u2", metadata={"topic": "food"}, infer=False)
        remote.wait(ids, timeout=120)
        mine = remote.search(ns, "pasta", k=5, filters={"user_id": "u1"})
        assert [h.memory.text for h in mine] == ["Pasta carbonara every Friday."]  # verbatim
        assert mine[0].memory.user_id == "u1" and mine[0].memory.metadata == {"topic": "food"}
        both = remote.search(ns, "pasta", k=5, filters={"metadata.topic": {"in": ["food"]}})
        assert len(both) == 2
        with pytest.raises(Invalid) as bad:
            remote.search(ns, "pasta", filters={"colour": "red"})
        assert "colour" in bad.value.message
        with pytest.raises(Invalid) as bad_op:
            remote.search(ns, "pasta", filters={"kind": {"like": "x"}})
        assert "like" in bad_op.value.message
    key = live.key(ns, role="read")
    page = live.call("GET", f"/v1/namespaces/{ns}/memories", key,
                     params={"filters": '{"user_id": "u2"}'}).json()
    assert [m["text"] for m in page["memories"]] == ["Pasta with pesto on Mondays."]
    bad_json = live.call("GET", f"/v1/namespaces/{ns}/memories", key, params={"filters": "{"})
    assert bad_json.status_code == 422 and bad_json.json()["error"]["field"] == "filters"
