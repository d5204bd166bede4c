"""Webhooks, the pure part: event types, hook validation, the audit-to-event mapping,
signatures and the retry schedule (docs/design.md, Webhooks).

An event is derived from one audit entry, so what a receiver hears is what the audit
log records. An event queued for delivery never holds memory text: it names the audit
entry whose text it carries, and the delivery reads that text when it sends; an erase
redacts the entry first, so an erased memory's text is never sent.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from memcore.core.models import Actor, AuditAction, AuditEvent


class HookEventType(StrEnum):
    """What a hook can subscribe to."""

    CREATED = "memory.created"
    UPDATED = "memory.updated"
    SUPERSEDED = "memory.superseded"
    DELETED = "memory.deleted"
    ERASED = "memory.erased"
    PASS_FINISHED = "pass.finished"


SIGNATURE_HEADER = "Memcore-Signature"
"""``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`` with the hook's secret."""
EVENT_ID_HEADER = "Memcore-Event-Id"
"""The idempotency id: the same on every attempt of one event to one hook."""
TIMESTAMP_HEADER = "Memcore-Timestamp"
"""When this attempt was signed (unix seconds); also in the body and the signed string."""
MAX_URL = 2048
MAX_SCOPES = 64
NO_MEMORY = "~"
"""Lane name part of an event about no single memory (a pass, a namespace erase)."""
_SCOPE_RE = re.compile(r"^[A-Za-z0-9_.@*?-]{1,128}$")


def validate_url(url: str) -> str:
    """Return ``url`` if a hook may post to it, else raise ValueError naming ``url``.

    Only ``http`` and ``https`` (no ``file:``, ``gopher:`` or other schemes a fetcher
    could be tricked into), a host, no user:password part (the secret signs instead),
    and no literal link-local, multicast or unspecified address (cloud metadata
    endpoints live at 169.254.169.254). Names are not resolved: see docs/operations.md, Webhooks,
    on where the workers may reach."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise ValueError(f"url: give an http(s) URL of at most {MAX_URL} characters")
    if any(ord(c) <= 32 for c in url):
        raise ValueError("url: no spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise ValueError(f"url: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"url: scheme {parts.scheme!r} not allowed: use http or https")
    if not parts.hostname:
        raise ValueError("url: no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("url: no user or password in the URL (deliveries are signed)")
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        return url
    if address.is_link_local or address.is_multicast or address.is_unspecified:
        raise ValueError(f"url: address {address} not allowed (link-local, multicast or "
                         "unspecified)")
    return url


def validate_events(events: Iterable[str]) -> tuple[HookEventType, ...]:
    """The event types named (at least one), in a stable order; an unknown one is a
    ValueError naming it."""
    out: list[HookEventType] = []
    for name in events:
        try:
            kind = HookEventType(name.strip())
        except ValueError:
            known = ", ".join(e.value for e in HookEventType)
            raise ValueError(f"events: unknown event {name!r} (known: {known})") from None
        if kind not in out:
            out.append(kind)
    if not out:
        raise ValueError("events: name at least one event")
    return tuple(sorted(out, key=list(HookEventType).index))


def validate_scopes(scopes: Sequence[str]) -> tuple[str, ...]:
    """Namespace globs (``acme-*``), at least one; a bad one is a ValueError naming it."""
    if not scopes:
        raise ValueError("scope: at least one namespace pattern is required")
    if len(scopes) > MAX_SCOPES:
        raise ValueError(f"scope: at most {MAX_SCOPES} patterns")
    for pattern in scopes:
        if not isinstance(pattern, str) or not _SCOPE_RE.fullmatch(pattern):
            raise ValueError(f"scope {pattern!r}: use 1-128 letters, digits, '-', '_', '.', "
                             "'@' and the wildcards '*' and '?'")
    return tuple(dict.fromkeys(scopes))


def in_scope(namespace: str, scopes: Iterable[str]) -> bool:
    """True if ``namespace`` matches one of the globs."""
    return any(fnmatch.fnmatchcase(namespace, pattern) for pattern in scopes)


@dataclass(frozen=True)
class EventDraft:
    """One event an audit entry yields, before it gets its sequence number."""

    type: HookEventType
    memory_id: str | None
    data: dict[str, Any] = field(default_factory=dict)
    with_text: bool = False
    """The delivery reads the audit entry's text into ``data.text`` when it sends."""


_CHANGES = {AuditAction.RESTORE: "restored", AuditAction.PIN: "pinned",
            AuditAction.UNPIN: "unpinned", AuditAction.PROMOTE: "promoted"}


def drafts_of(event: AuditEvent) -> list[EventDraft]:
    """The hook events of one audit entry, in the order a receiver should apply them.

    Never a text or a reason (a reason may quote the text): only ids, the kind of
    change and, for created/updated, a flag that the delivery may read the entry's text.
    Audit actions with no event: NOOP (reinforcement), PURGE (of memories already
    deleted), ROLLBACK, MODEL_ERROR, DROP, REDACT."""
    drafts = _DRAFTS.get(event.action)
    return drafts(event) if drafts is not None else []


def _added(event: AuditEvent) -> list[EventDraft]:
    return [EventDraft(HookEventType.CREATED, event.after[0], with_text=True)] \
        if event.after else []


def _superseded(event: AuditEvent) -> list[EventDraft]:
    out = []
    if event.actor is Actor.INGEST and event.after:  # the write path adds the newer one
        out.append(EventDraft(HookEventType.CREATED, event.after[0], with_text=True))
    out += [EventDraft(HookEventType.SUPERSEDED, b, {"superseded_by": list(event.after)})
            for b in event.before]
    return out


def _updated(event: AuditEvent) -> list[EventDraft]:
    return [EventDraft(HookEventType.UPDATED, a, {"change": "text"}, with_text=True)
            for a in event.after[:1]]


def _merged(event: AuditEvent) -> list[EventDraft]:
    head = event.after[0] if event.after else None
    out = [EventDraft(HookEventType.UPDATED, head, {"change": "merged"}, with_text=True)] \
        if head else []
    return out + [EventDraft(HookEventType.DELETED, b, {"merged_into": head})
                  for b in event.before if b != head]


def _summarized(event: AuditEvent) -> list[EventDraft]:
    summary = event.after[0] if event.after else None
    out = [EventDraft(HookEventType.CREATED, summary, {"kind": "summary"}, with_text=True)] \
        if summary else []
    return out + [EventDraft(HookEventType.DELETED, b, {"summarized_into": summary})
                  for b in event.before]


def _expired(event: AuditEvent) -> list[EventDraft]:
    return [EventDraft(HookEventType.SUPERSEDED, b, {"superseded_by": [], "expired": True})
            for b in event.before]


def _tombstoned(event: AuditEvent) -> list[EventDraft]:
    return [EventDraft(HookEventType.DELETED, b) for b in event.before]


def _changed(event: AuditEvent) -> list[EventDraft]:
    """Restored, pinned, unpinned or promoted (:data:`_CHANGES`)."""
    return [EventDraft(HookEventType.UPDATED, a, {"change": _CHANGES[event.action]})
            for a in event.after[:1]]


def _erased(event: AuditEvent) -> list[EventDraft]:
    if not event.before:
        return [EventDraft(HookEventType.ERASED, None, {"scope": "namespace"})]
    return [EventDraft(HookEventType.ERASED, b, {"scope": "memory"}) for b in event.before]


_DRAFTS: dict[AuditAction, Callable[[AuditEvent], list[EventDraft]]] = {
    AuditAction.ADD: _added,
    AuditAction.SUPERSEDE: _superseded,
    AuditAction.UPDATE: _updated,
    AuditAction.MERGE: _merged,
    AuditAction.SUMMARIZE: _summarized,
    AuditAction.EXPIRE: _expired,
    AuditAction.TOMBSTONE: _tombstoned,
    **dict.fromkeys(_CHANGES, _changed),
    AuditAction.ERASE: _erased,
}


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """Hex HMAC-SHA256 of ``b"<timestamp>." + body`` under ``secret``."""
    return hmac.new(secret.encode(), str(timestamp).encode() + b"." + body,
                    hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    """The value of :data:`SIGNATURE_HEADER`."""
    return f"t={timestamp},v1={signature(secret, timestamp, body)}"


def verify(secret: str, header: str, body: bytes, *, now: float,
           tolerance: float = 300.0) -> bool:
    """True if ``header`` signs ``body`` with ``secret`` and its time is within
    ``tolerance`` seconds of ``now`` (a receiver's check; docs/operations.md, Webhooks)."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs(now - timestamp) > tolerance:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body), fields.get("v1", ""))


def backoff(attempt: int, base: float, cap: float) -> float:
    """Seconds before retry number ``attempt`` (1 = the first retry): ``base * 2^(n-1)``,
    at most ``cap``."""
    return float(min(cap, base * 2 ** max(0, attempt - 1)))
