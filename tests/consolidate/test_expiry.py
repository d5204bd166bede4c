"""A caller's expiry (``expires_at`` / ``ttl_seconds`` on add and update): out of search
and profile at that instant, tombstoned by maintenance (audited EXPIRE), restorable in
the grace period. On a real Redis; then through real Celery workers and the HTTP API."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memcore import Client, Invalid, RemoteClient
from memcore.consolidate.maintenance import run_maintenance
from memcore.consolidation import consolidate
from memcore.core.config import ConsolidationConfig
from memcore.core.models import Actor, AuditAction, Memory, Status, utcnow
from memcore.local.stack import LocalStack
from memcore.messaging import task_names
from memcore.store.base import PurgedError
from memcore.store.codec import pack_memory, unpack_filter_fields, unpack_memory
from tests.core.test_time_queries import OLD_RECORD
from tests.support.api_helpers import Api, serve
from tests.support.helpers import JoinMerger, hours, make_memory

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def put(client: Client, ns: str, text: str, **fields: Any) -> Memory:
    vec = [float(x) for x in client.models.embedder.embed([text])[0]]
    m = Memory(namespace=ns, text=text, vector=vec, last_used=T0, created_at=T0, updated_at=T0,
               status=Status.ACTIVE, explicit=True, confidence=0.9, sources=[f"ep-{text}"],
               **fields)
    return client.store.writes.add(ns, m, actor=Actor.INGEST, reason="test")


def texts(hits: list[Any]) -> list[str]:
    return [h.memory.text for h in hits]


def test_a_given_expiry_leaves_search_and_profile_then_maintenance_tombstones_it(
        client: Client) -> None:
    code = put(client, "acme", "The door code is 4711", expires_at=T0 + HOUR,
               expiry_given=True)
    guess = put(client, "acme", "Sam is tired today", expires_at=T0 + HOUR)  # extractor's
    assert texts(client.search("acme", "door code", k=1, now=T0, touch=False)) == [code.text]
    assert code.text in [m.text for m in client.profile("acme", now=T0)]
    later = T0 + 2 * HOUR
    assert code.text not in texts(client.search("acme", "door code", k=5, now=later,
                                                touch=False))
    assert [m.text for m in client.profile("acme", now=later)] == []
    # A guessed expiry is still the pass's to handle: searchable until then.
    assert guess.text in texts(client.search("acme", "tired", k=5, now=later, touch=False))

    reports = run_maintenance(client.store, client.settings, later)
    assert [r.expired for r in reports if r.namespace == "acme"] == [[code.id]]
    gone = client.get("acme", code.id)
    assert gone is not None and gone.status is Status.TOMBSTONED
    assert client.get("acme", guess.id).status is Status.ACTIVE  # type: ignore[union-attr]
    (event,) = [e for e in client.history("acme", code.id) if e.action is AuditAction.EXPIRE]
    assert "expired at 2026-03-01T10:00:00+00:00" in event.reason
    assert run_maintenance(client.store, client.settings, later)[0].expired == []  # idempotent
    # Before its expiry it was valid: a question about then still finds it.
    assert texts(client.search("acme", "door code", k=1, as_of=T0 + HOUR / 2)) == [code.text]

    back = client.restore("acme", code.id)  # within the grace period
    assert back.status is Status.ACTIVE and back.expires_at is None and not back.expiry_given
    assert code.text in texts(client.search("acme", "door code", k=1, touch=False))
    assert [e.action for e in client.history("acme", code.id)][-2:] == [
        AuditAction.EXPIRE, AuditAction.RESTORE]


def test_past_the_grace_period_an_expired_memory_is_purged(client: Client) -> None:
    code = put(client, "acme", "The door code is 4711", expires_at=T0 + HOUR,
               expiry_given=True)
    run_maintenance(client.store, client.settings, T0 + 2 * HOUR)
    grace = timedelta(days=client.settings.consolidation.tombstone_grace_days)
    run_maintenance(client.store, client.settings, utcnow() + grace + HOUR)
    assert client.get("acme", code.id) is None
    with pytest.raises(PurgedError):
        client.restore("acme", code.id)


def test_update_gives_an_expiry_and_bad_ones_are_named(client: Client) -> None:
    note = put(client, "acme", "Parking on level 3")
    assert note.expires_at is None and not note.expiry_given
    before = utcnow()
    changed = client.update("acme", note.id, ttl_seconds=3600)
    assert changed.expiry_given and changed.expires_at is not None
    assert before + HOUR <= changed.expires_at <= utcnow() + HOUR
    assert changed.text == note.text
    (event,) = [e for e in client.history("acme", note.id) if e.action is AuditAction.UPDATE]
    assert "expires at" in event.reason
    at = client.update("acme", note.id, expires_at="2030-01-01T00:00:00Z")
    assert at.expires_at == datetime(2030, 1, 1, tzinfo=UTC)
    for kw, named in [({"ttl_seconds": -5}, "ttl_seconds: expected a number of seconds"),
                      ({"ttl_seconds": True}, "ttl_seconds"),
                      ({"expires_at": "tomorrow"}, "expires_at: 'tomorrow' is not an ISO"),
                      ({"expires_at": T0, "ttl_seconds": 5}, "ttl_seconds: give expires_at or")]:
        with pytest.raises(ValueError, match=named):
            client.update("acme", note.id, **kw)
        with pytest.raises(ValueError, match=named):
            client.add("acme", [{"role": "user", "content": "x"}], **kw)


def test_the_pass_tombstones_a_given_expiry_and_closes_a_guessed_one() -> None:
    given = make_memory("door code 4711", [1, 0], explicit=True, expires_at=hours(1),
                        expiry_given=True, pinned=True)
    guessed = make_memory("is tired", [0, 1], explicit=True, expires_at=hours(1))
    result = consolidate([given, guessed], hours(2), ConsolidationConfig(),
                         JoinMerger())
    status = {m.text: m.status for m in result.memories}
    # Pinning exempts from a guessed expiry, not from the caller's.
    assert status == {given.text: Status.TOMBSTONED, guessed.text: Status.SUPERSEDED}
    assert [e.action for e in result.events].count(AuditAction.EXPIRE) == 2


def test_records_keep_the_flag_and_old_ones_load_without_it() -> None:
    m = make_memory("door code", [1, 0], expires_at=T0, expiry_given=True)
    assert unpack_memory(pack_memory(m), m.namespace, m.id).expiry_given
    assert unpack_filter_fields(pack_memory(m), m.id).expiry_given
    assert not unpack_memory(OLD_RECORD, "ns", "paris").expiry_given
    assert not unpack_filter_fields(OLD_RECORD, "paris").expiry_given


# -- through real workers and the HTTP API ---------------------------------------------------

@pytest.fixture()
def live(celery_stack: LocalStack) -> Iterator[Api]:
    yield from serve(celery_stack.redis_url)


def test_ttl_through_workers_http_and_the_maintenance_task(live: Api) -> None:
    ns = f"ttl-{uuid.uuid4().hex[:8]}"
    local = Client(live.redis_url)
    try:
        with RemoteClient(live.url, live.key(ns, role="write")) as remote:
            said = utcnow()
            remote.wait(remote.add(ns, [{"role": "user", "content": "The spare key is under "
                                         "the blue pot."}], timestamp=said, ttl_seconds=2,
                                   infer=False), timeout=120)
            remote.wait(remote.add(ns, [{"role": "user", "content": "I like green tea."}],
                                   infer=False), timeout=120)
            (wifi,) = [h.memory for h in remote.search(ns, "spare key", k=1)]
            assert wifi.expiry_given and wifi.expires_at == said + timedelta(seconds=2)
            (tea,) = [h.memory for h in remote.search(ns, "green tea", k=1)]
            patched = remote.update(ns, tea.id, ttl_seconds=3600)
            assert patched.expiry_given and patched.expires_at is not None
            with pytest.raises(Invalid) as bad:
                remote.update(ns, tea.id, ttl_seconds=-1)
            assert bad.value.field == "ttl_seconds"
            got = live.call("POST", f"/v1/namespaces/{ns}/messages", live.key(ns),
                            json={"messages": [{"content": "x"}], "expires_at": "soon"})
            assert got.status_code == 422 and got.json()["error"]["field"] == "expires_at"
            time.sleep(max(0.0, (said + timedelta(seconds=2) - utcnow()).total_seconds()) + 0.2)
            # Out of search at once, before maintenance ran.
            assert "spare key" not in " ".join(texts(remote.search(ns, "spare key", k=5)))
            # The beat's maintenance task (at its own clock), run by a consolidate worker.
            result = local.celery.send_task(task_names.MAINTAIN, args=[],
                                            queue=task_names.CONSOLIDATE_QUEUE)
            reports = result.get(timeout=120)
            assert [r["expired"] for r in reports if r["namespace"] == ns] == [[wifi.id]]
            assert "spare key" not in " ".join(m.text for m in remote.list(ns).memories)
            assert remote.get(ns, wifi.id).status is Status.TOMBSTONED  # type: ignore[union-attr]
            restored = remote.restore(ns, wifi.id)
            assert restored.status is Status.ACTIVE and restored.expires_at is None
            assert "spare key" in remote.search(ns, "spare key", k=1)[0].memory.text
    finally:
        local.close()
