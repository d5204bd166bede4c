"""The context block's English: section headers, and each memory's line with its dates
said relatively to ``now`` ("since March 2026", "until last week").

Formatting only; which lines go in, and in what order, is
:mod:`memcore.core.context`.
"""

from __future__ import annotations

from datetime import datetime

from memcore.core.context import PREVIOUS, PROFILE, RELEVANT
from memcore.core.models import Kind, Memory, as_utc

HEADERS = {PROFILE: "Known facts:", RELEVANT: "Relevant memories:"}
PREVIOUS_MARK = "  - previously:"
NEAR_DAYS = 45
"""Dates within this many days of ``now`` are said relatively ("3 weeks ago"); older
or later ones by month and year."""


def when(at: datetime, now: datetime) -> str:
    """``at`` said from ``now``: today, yesterday, 3 days ago, last week, 2 weeks ago,
    tomorrow, in 3 days, next week, in 2 weeks; beyond :data:`NEAR_DAYS`, "March 2026"."""
    days = (as_utc(now).date() - as_utc(at).date()).days
    ahead, n = days < 0, abs(days)
    if n > NEAR_DAYS:
        return f"{as_utc(at):%B %Y}"
    if n == 0:
        return "today"
    if n == 1:
        return "tomorrow" if ahead else "yesterday"
    if n < 7:
        return f"in {n} days" if ahead else f"{n} days ago"
    if n < 14:
        return "next week" if ahead else "last week"
    return f"in {n // 7} weeks" if ahead else f"{n // 7} weeks ago"


def dates(memory: Memory, now: datetime, *, past: bool = False) -> str:
    """When ``memory`` held: "since X", "from X until Y", "until Y"; an event by its
    time alone ("last week"). ``past``: a replaced value, whose end is when the newer
    one started if it has no end of its own. Empty when nothing is known."""
    start, end = memory.valid_from, memory.valid_until
    if memory.kind is Kind.EVENT and start is not None:
        return when(start, now)
    if start is not None and end is not None:
        return f"from {when(start, now)} until {when(end, now)}"
    if end is not None:
        return f"until {when(end, now)}"
    if start is not None:
        return f"{'from' if past else 'since'} {when(start, now)}"
    return ""


def line(memory: Memory, section: str, now: datetime, *,
         replaced_by: Memory | None = None) -> str:
    """The memory's line in the block: ``- text (dates)``; a previous value indented
    under the fact that replaced it, marked as past and ended when that one began."""
    text = " ".join(memory.text.split())
    if section == PREVIOUS:
        shown = memory
        if memory.valid_until is None and replaced_by is not None \
                and replaced_by.valid_from is not None:
            shown = memory.model_copy(update={"valid_until": replaced_by.valid_from})
        said = dates(shown, now, past=True)
        return f"{PREVIOUS_MARK} {text}" + (f" ({said})" if said else "")
    said = dates(memory, now)
    return f"- {text}" + (f" ({said})" if said else "")
