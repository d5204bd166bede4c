"""The forget requests a namespace's audit records, for the inspector (docs/design.md,
Forget on request): when, on whose request (the turn id, or the API), what kind of thing
and how many memories and turns were erased -- read from the ERASE entries, which never
hold the erased text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from memcore.core.forget import FORGET_AUDIT_PREFIX
from memcore.core.models import AuditAction, AuditEvent

_COUNTS = re.compile(r"(\d+) memories and (\d+) turns erased")


@dataclass(frozen=True)
class ForgetRow:
    """One forget request handled."""

    at: datetime
    turn_id: str | None
    """The user turn that asked; None: the HTTP API or the MCP tool."""
    kind: str
    """attribute, entity, turn, everything (or a ``+`` of them)."""
    memories: int
    turns: int
    outcome: str
    """What the audit says after the kind ("nothing matched: nothing erased", ...)."""


def forget_rows(events: list[AuditEvent]) -> list[ForgetRow]:
    """The forget requests among ``events``, newest first."""
    rows = []
    for e in events:
        if e.action is not AuditAction.ERASE or not e.reason.startswith(FORGET_AUDIT_PREFIX):
            continue
        who, _, rest = e.reason[len(FORGET_AUDIT_PREFIX):].partition("; kind: ")
        kind, _, outcome = rest.partition("; ")
        counts = _COUNTS.search(outcome)
        rows.append(ForgetRow(
            at=e.at, turn_id=who[len("turn "):] if who.startswith("turn ") else None,
            kind=kind, memories=int(counts.group(1)) if counts else 0,
            turns=int(counts.group(2)) if counts else 0, outcome=outcome))
    return sorted(rows, key=lambda r: r.at, reverse=True)
