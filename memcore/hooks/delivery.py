"""Deliver one lane's events (one hook, one memory) in order, signed, at least once.

One task at a time holds a lane's lease and posts its events first to last; an event
leaves the lane only after a 2xx answer. A failure keeps the lease through the backoff
(the task is retried after :func:`memcore.core.hooks.backoff`), so a later event of the
same memory can never overtake it; after ``hooks.max_attempts`` failures the event goes
to the dead-letter list and the lane goes on (docs/design.md, Webhooks).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from memcore.core.config import HooksConfig
from memcore.core.hooks import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    backoff,
    signature_header,
)
from memcore.core.models import utcnow
from memcore.store import MemoryStore
from memcore.store.hooks import lane_hook

LEASE_MARGIN = 30.0
"""Seconds a lease outlives the work it covers (a dead task's lane frees itself then)."""
USER_AGENT = "memcore-webhooks/1"

Poster = Callable[[str, bytes, dict[str, str]], str | None]
"""Posts a body to a URL with headers; returns None on a 2xx answer, else the error."""


@dataclass
class DrainOutcome:
    """What one run over a lane did."""

    delivered: int = 0
    dead: int = 0
    dropped: int = 0
    """Events of a hook removed since they were queued."""
    retry_in: float | None = None
    """Seconds until the next attempt of the first event (None: nothing left to retry)."""
    busy: bool = False
    """Another task holds the lane: this one did nothing."""


def http_poster(timeout: float) -> tuple[Poster, Callable[[], None]]:
    """A poster on one HTTP client (no redirects followed: a redirect could point a
    signed delivery anywhere; no proxy from the environment) and its close function."""
    http = httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False,
                        headers={"User-Agent": USER_AGENT})

    def post(url: str, body: bytes, headers: dict[str, str]) -> str | None:
        try:
            reply = http.post(url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"[:300]
        return None if 200 <= reply.status_code < 300 else f"HTTP {reply.status_code}"

    return post, http.close


def event_text(store: MemoryStore, namespace: str, event: dict[str, Any]) -> str | None:
    """The text a created/updated event carries, read now: the audit entry's text, None
    once the entry was erased, purged or trimmed, or the memory is gone."""
    audit_id, memory_id = event.get("audit_id"), event.get("memory_id")
    if not audit_id or not memory_id:
        return None
    text = store.audit.text(namespace, audit_id)
    if text is None or store.records.get(namespace, memory_id) is None:
        return None
    return text


def body_of(store: MemoryStore, namespace: str, event: dict[str, Any], attempt: int,
            timestamp: int) -> bytes:
    """The JSON body posted for ``event`` (its text resolved now)."""
    out = {k: v for k, v in event.items() if k != "audit_id"}
    if event.get("audit_id"):
        out["data"] = {**event.get("data", {}), "text": event_text(store, namespace, event)}
    out["attempt"] = attempt
    out["timestamp"] = timestamp
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False).encode()


def drain(store: MemoryStore, config: HooksConfig, namespace: str, lane: str, token: str,
          post: Poster, *, clock: Callable[[], float] = time.time) -> DrainOutcome:
    """Deliver ``lane``'s events until it is empty or one fails (then ``retry_in``)."""
    hooks = store.hooks
    out = DrainOutcome()
    busy_for = config.timeout_seconds + LEASE_MARGIN
    if not hooks.lease(namespace, lane, token, busy_for):
        out.busy = True
        return out
    while True:
        raw = hooks.head(namespace, lane)
        if raw is None:
            hooks.release(namespace, lane, token)
            # An event queued just before the release: take the lane again, if still free.
            if hooks.head(namespace, lane) is None or not hooks.lease(namespace, lane, token,
                                                                      busy_for):
                return out
            continue
        found = hooks.get(lane_hook(lane))
        if found is None:
            hooks.pop(namespace, lane, raw)
            out.dropped += 1
            continue
        hook, secret = found
        event = json.loads(raw)
        attempt = hooks.attempts(namespace, lane) + 1
        timestamp = int(clock())
        body = body_of(store, namespace, event, attempt, timestamp)
        error = post(hook.url, body, {
            "Content-Type": "application/json", EVENT_ID_HEADER: str(event["id"]),
            TIMESTAMP_HEADER: str(timestamp),
            SIGNATURE_HEADER: signature_header(secret, timestamp, body)})
        if error is None:
            hooks.pop(namespace, lane, raw)
            out.delivered += 1
            hooks.lease(namespace, lane, token, busy_for)
            continue
        failures = hooks.failed(namespace, lane)
        if failures >= config.max_attempts:
            hooks.dead_letter(namespace, lane, raw, {
                "hook_id": hook.id, "url": hook.url, "attempts": failures,
                "last_error": error, "failed_at": utcnow().isoformat()},
                keep=config.dead_letter_max)
            out.dead += 1
            hooks.lease(namespace, lane, token, busy_for)
            continue
        out.retry_in = backoff(failures, config.backoff_seconds, config.backoff_max_seconds)
        hooks.lease(namespace, lane, token, out.retry_in + busy_for)
        return out
