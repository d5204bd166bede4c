"""Secrets are masked at the entry of the write path (memcore.core.secrets).

Before a batch's turns are stored or extracted, every secret in their text and in the
facts a producer attached is replaced by its marker (``[redacted: password]``), unless
``redact_secrets`` is off or the namespace is in ``redact_secrets_exempt_namespaces``.
``Client.add`` masks the same way before it enqueues, so the broker never holds the
value either; the worker then finds the markers and masks nothing more.

Each newly stored turn that had secrets gets one REDACT audit entry (actor ingest): the
turn id and the kinds, never the values. Markers a producer left count as well, so the
audit is the same whichever side masked; a redelivered turn is not audited again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memcore.core.config import Settings
from memcore.core.models import Actor, AuditAction, AuditEvent, Episode
from memcore.core.secrets import episode_marked, redact_episodes
from memcore.language import secret_cues
from memcore.store import MemoryStore


def mask_turns(settings: Settings, namespace: str, episodes: Sequence[Episode]
               ) -> tuple[list[Episode], list[list[str]]]:
    """The turns with their secrets masked (as ``settings`` says for ``namespace``), and
    per turn the kinds of secret it carried (masked now, or earlier by the producer)."""
    earlier = [episode_marked(ep) for ep in episodes]
    masked, now = redact_episodes(namespace, episodes, enabled=settings.redact_secrets,
                                  exempt=settings.redact_secrets_exempt_namespaces,
                                  max_bytes=settings.max_turn_bytes,
                                  cues=secret_cues(settings.language))
    return masked, [a + b for a, b in zip(earlier, now, strict=True)]


def redaction_events(namespace: str, episodes: Sequence[Episode], fresh: Sequence[bool],
                     kinds: Sequence[Sequence[str]]) -> list[AuditEvent]:
    """One REDACT entry per newly stored turn that carried secrets (no values)."""
    events: list[AuditEvent] = []
    for episode, new, found in zip(episodes, fresh, kinds, strict=True):
        if not new or not found:
            continue
        counted = ", ".join(f"{kind} x{n}" if n > 1 else kind
                            for kind, n in sorted(Counter(found).items()))
        events.append(AuditEvent(
            action=AuditAction.REDACT, namespace=namespace, actor=Actor.INGEST,
            reason=f"turn {episode.id}: {len(found)} secret(s) masked before the turn was "
                   f"stored or read for facts ({counted}); the values were not kept",
            at=episode.timestamp))
    return events


def audit_redactions(store: MemoryStore, namespace: str, episodes: Sequence[Episode],
                     fresh: Sequence[bool], kinds: Sequence[Sequence[str]]) -> None:
    """Write :func:`redaction_events` (nothing when no new turn carried a secret)."""
    events = redaction_events(namespace, episodes, fresh, kinds)
    if events:
        store.audit.append(events)
