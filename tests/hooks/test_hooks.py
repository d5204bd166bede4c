"""Webhooks without Celery: validation, the audit-to-event mapping, signatures, and the
dispatch and delivery steps against a real Redis and a real HTTP receiver (the Celery
path end to end: tests/hooks/test_hooks_delivery.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memcore.core.config import HooksConfig
from memcore.core.hooks import (
    SIGNATURE_HEADER,
    HookEventType,
    backoff,
    drafts_of,
    signature_header,
    validate_events,
    validate_scopes,
    validate_url,
    verify,
)
from memcore.core.models import Actor, AuditAction, AuditEvent
from memcore.hooks.delivery import drain, http_poster
from memcore.hooks.dispatch import behind, dispatch
from memcore.store import MemoryStore
from memcore.store.hooks import lane_name
from tests.hooks.hook_receiver import Receiver
from tests.support.helpers import make_memory

NOW = datetime(2026, 3, 1, tzinfo=UTC)
ALL = [e.value for e in HookEventType]


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "javascript:x",
                                 "http://", "https://user:pw@example.com/hook",
                                 "http://169.254.169.254/latest/meta-data",
                                 "http://0.0.0.0:80/", "http://[ff02::1]/", "http://a b/",
                                 "http://example.com:99999/"])
def test_bad_urls_are_refused_naming_the_field(url: str) -> None:
    with pytest.raises(ValueError, match=r"^url: "):
        validate_url(url)


def test_http_and_https_urls_are_accepted() -> None:
    for url in ("http://127.0.0.1:8080/hook", "https://hooks.example.com/memcore?x=1"):
        assert validate_url(url) == url


def test_events_and_scopes_are_checked_by_name() -> None:
    assert validate_events(["pass.finished", "memory.created", "memory.created"]) == (
        HookEventType.CREATED, HookEventType.PASS_FINISHED)
    with pytest.raises(ValueError, match=r"memory\.exploded"):
        validate_events(["memory.exploded"])
    with pytest.raises(ValueError, match=r"^events: "):
        validate_events([])
    with pytest.raises(ValueError, match=r"acme/x"):
        validate_scopes(["acme/x"])
    with pytest.raises(ValueError, match=r"^scope: "):
        validate_scopes([])


def _audit(action: AuditAction, before: list[str], after: list[str],
           actor: Actor = Actor.CONSOLIDATION) -> AuditEvent:
    return AuditEvent(action=action, namespace="n", before=before, after=after, actor=actor,
                      reason="secret reason: my pin is 1234", text="the text", at=NOW)


def test_audit_entries_map_to_events_without_text_or_reason() -> None:
    def kinds(event: AuditEvent) -> list[tuple[str, str | None]]:
        return [(d.type.value, d.memory_id) for d in drafts_of(event)]

    assert kinds(_audit(AuditAction.ADD, [], ["a"])) == [("memory.created", "a")]
    assert kinds(_audit(AuditAction.SUPERSEDE, ["a"], ["b"], Actor.INGEST)) == [
        ("memory.created", "b"), ("memory.superseded", "a")]
    assert kinds(_audit(AuditAction.SUPERSEDE, ["a"], ["b"])) == [("memory.superseded", "a")]
    assert kinds(_audit(AuditAction.MERGE, ["a", "b", "c"], ["a"])) == [
        ("memory.updated", "a"), ("memory.deleted", "b"), ("memory.deleted", "c")]
    assert kinds(_audit(AuditAction.SUMMARIZE, ["a", "b"], ["s"])) == [
        ("memory.created", "s"), ("memory.deleted", "a"), ("memory.deleted", "b")]
    assert kinds(_audit(AuditAction.TOMBSTONE, ["a"], [])) == [("memory.deleted", "a")]
    assert kinds(_audit(AuditAction.ERASE, ["a", "b"], [])) == [
        ("memory.erased", "a"), ("memory.erased", "b")]
    assert kinds(_audit(AuditAction.ERASE, [], [])) == [("memory.erased", None)]
    for quiet in (AuditAction.NOOP, AuditAction.PURGE, AuditAction.ROLLBACK,
                  AuditAction.MODEL_ERROR, AuditAction.REDACT, AuditAction.DROP):
        assert drafts_of(_audit(quiet, ["a"], ["a"])) == []
    for action in AuditAction:
        for draft in drafts_of(_audit(action, ["a"], ["b"])):
            assert "1234" not in json.dumps(draft.data) and "text" not in draft.data


def test_signatures_verify_and_reject_tampering_and_old_timestamps() -> None:
    body = b'{"id":"n:1"}'
    header = signature_header("whsec_x", 1_700_000_000, body)
    assert verify("whsec_x", header, body, now=1_700_000_010)
    assert not verify("whsec_y", header, body, now=1_700_000_010)
    assert not verify("whsec_x", header, body + b" ", now=1_700_000_010)
    assert not verify("whsec_x", header, body, now=1_700_000_000 + 301)  # a replay
    assert not verify("whsec_x", "v1=abc", body, now=1_700_000_000)
    assert [backoff(n, 2, 300) for n in (1, 2, 3, 9, 20)] == [2, 4, 8, 300, 300]


@pytest.fixture()
def store(redis_url: str) -> Iterator[MemoryStore]:
    s = MemoryStore.from_url(redis_url)
    yield s
    s.close()


def _drain_all(store: MemoryStore, config: HooksConfig, namespace: str,
               token: str = "t") -> None:
    """Deliver every lane as task ``token``, retrying at once instead of after the
    backoff."""
    post, close = http_poster(config.timeout_seconds)
    try:
        for _ in range(50):
            lanes = store.hooks.lanes(namespace)
            if not lanes:
                return
            for lane in lanes:
                drain(store, config, namespace, lane, token, post)
        raise AssertionError("lanes never emptied")
    finally:
        close()


def test_hooks_are_stored_without_showing_the_secret(store: MemoryStore) -> None:
    hook, secret = store.hooks.add("http://127.0.0.1:9/h", ["memory.created"], ["acme-*"])
    assert secret.startswith("whsec_") and secret not in json.dumps(hook.public())
    assert [h.id for h in store.hooks.registered()] == [hook.id]
    assert store.hooks.get(hook.id) == (hook, secret)
    assert hook.wants("memory.created", "acme-1") and not hook.wants("memory.created", "bob")
    assert not hook.wants("memory.deleted", "acme-1")
    with pytest.raises(ValueError, match=r"^url: "):
        store.hooks.add("gopher://x", ALL, ["*"])
    assert store.hooks.remove(hook.id) and not store.hooks.remove(hook.id)


def test_dispatch_and_delivery_sign_order_and_never_send_erased_text(
        store: MemoryStore, receiver: Receiver) -> None:
    hook, secret = store.hooks.add(receiver.url, ALL, ["t"])
    other, _ = store.hooks.add(receiver.url, ["memory.erased"], ["elsewhere"])
    kept = store.writes.add("t", make_memory("Rory likes green tea.", None), actor=Actor.INGEST,
                            reason="r")
    gone = store.writes.add("t", make_memory("Rory's PIN is 4321.", None), actor=Actor.INGEST,
                            reason="r")
    store.writes.edit("t", kept.id, now=NOW, text="Rory likes jasmine tea.")
    store.writes.tombstone("t", kept.id, NOW)
    # Erased before anything was delivered: the queued created event must not carry it.
    assert dispatch(store, "t") == sorted({lane_name(hook.id, kept.id),
                                           lane_name(hook.id, gone.id)})
    store.eraser.erase_memory("t", gone.id, NOW)
    assert dispatch(store, "t") == [lane_name(hook.id, gone.id)]
    assert dispatch(store, "t") == []  # nothing new: nothing queued twice
    _drain_all(store, HooksConfig(), "t")

    got = receiver.accepted()
    assert all(verify(secret, r.headers[SIGNATURE_HEADER], r.body, now=time.time())
               for r in got)
    events = [r.event for r in got]
    assert all(r.headers["Memcore-Event-Id"] == r.event["id"] for r in got)
    by_memory = {m: [(e["type"], e["data"].get("text")) for e in events
                     if e["memory_id"] == m] for m in (kept.id, gone.id)}
    assert by_memory[kept.id] == [("memory.created", "Rory likes green tea."),
                                  ("memory.updated", "Rory likes jasmine tea."),
                                  ("memory.deleted", None)]
    assert by_memory[gone.id] == [("memory.created", None), ("memory.erased", None)]
    assert b"4321" not in b"".join(r.body for r in receiver.received)
    seqs = [e["seq"] for e in sorted(events, key=lambda e: e["seq"])]
    assert seqs == list(range(1, len(events) + 1))  # one hook wants all: no gaps
    assert not any(e["namespace"] != "t" or "audit_id" in e for e in events)
    assert other.id not in {lane.split("/")[0] for lane in store.hooks.lanes("t")}


def test_a_failing_receiver_gets_retries_then_a_dead_letter_and_the_lane_goes_on(
        store: MemoryStore, receiver: Receiver) -> None:
    hook, _ = store.hooks.add(receiver.url, ["memory.created", "memory.deleted"], ["t"])
    m = store.writes.add("t", make_memory("Rory owns a red bike.", None), actor=Actor.INGEST,
                         reason="r")
    store.writes.tombstone("t", m.id, NOW)
    (lane,) = dispatch(store, "t")
    config = HooksConfig(max_attempts=3, backoff_seconds=1, backoff_max_seconds=3)
    post, close = http_poster(config.timeout_seconds)
    receiver.status = 500
    waits = []
    for _ in range(2):
        outcome = drain(store, config, "t", lane, "tok", post)
        waits.append(outcome.retry_in)
        # The lease holds through the backoff: another task cannot overtake the retry.
        assert drain(store, config, "t", lane, "other", post).busy
    assert waits == [1.0, 2.0]
    receiver.status = 200
    receiver.down()  # the third failure: refused
    outcome = drain(store, config, "t", lane, "tok", post)
    receiver.up()
    # Dead-lettered, and the lane went on: its next event's first attempt failed too.
    assert outcome.dead == 1 and outcome.retry_in == 1.0
    close()
    dead = store.hooks.dead()
    assert len(dead) == 1 and dead[0]["event"]["type"] == "memory.created"
    assert dead[0]["attempts"] == 3 and "ConnectError" in dead[0]["last_error"]
    assert "text" not in json.dumps(dead[0]["event"]["data"])
    _drain_all(store, HooksConfig(), "t", token="tok")  # the retrying task holds the lane
    assert [r.event["type"] for r in receiver.accepted()] == ["memory.deleted"]
    assert store.hooks.requeue_dead(hook_id=hook.id) == [("t", lane)]
    _drain_all(store, HooksConfig(), "t")
    assert [r.event["type"] for r in receiver.accepted()] == ["memory.deleted",
                                                              "memory.created"]
    assert store.hooks.dead() == []


def test_a_new_hook_gets_no_history_and_the_sweep_finds_what_was_missed(
        store: MemoryStore, receiver: Receiver) -> None:
    store.writes.add("t", make_memory("An old fact.", None), actor=Actor.INGEST, reason="r")
    time.sleep(0.01)
    hook, _ = store.hooks.add(receiver.url, ["memory.created"], ["t"])
    assert dispatch(store, "t") == []
    m = store.writes.add("t", make_memory("A new fact.", None), actor=Actor.INGEST, reason="r")
    stale, lanes = behind(store)
    assert stale == ["t"] and lanes == []
    assert dispatch(store, "t") == [lane_name(hook.id, m.id)]
    assert behind(store) == ([], [("t", lane_name(hook.id, m.id))])
    store.hooks.remove(hook.id)  # its queued events are dropped, not posted
    _drain_all(store, HooksConfig(), "t")
    assert receiver.received == []


def test_a_pass_finished_event_follows_the_pass_events(store: MemoryStore,
                                                       receiver: Receiver) -> None:
    hook, _ = store.hooks.add(receiver.url, ["pass.finished"], ["*"])
    lanes = dispatch(store, "t", extra=[{"type": "pass.finished",
                                         "data": {"pass_id": "p1", "to_version": 2}}])
    assert lanes == [lane_name(hook.id, None)]
    _drain_all(store, HooksConfig(), "t")
    (got,) = receiver.accepted()
    assert got.event["type"] == "pass.finished" and got.event["memory_id"] is None
    assert got.event["data"] == {"pass_id": "p1", "to_version": 2}
