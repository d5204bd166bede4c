"""Facts that named a value which just changed: "Ann is a nurse at St Mary's" when
Ann's employer changes from St Mary's. Its own attribute (the job) did not change, so
it is not retired; its words about the old value are stale, so it is cut down to its
own value by the language ("Ann is a nurse.") and the cut version supersedes it
(docs/design.md, Frames)."""

from __future__ import annotations

from collections.abc import Sequence

from memcore.core.interfaces import Neighbour
from memcore.core.models import Frame
from memcore.core.text_rules import TextRules


def cut_down(changed: Frame, near: Sequence[Neighbour], rules: TextRules,
             skip: str) -> list[tuple[Neighbour, str]]:
    """``(neighbour, rest)`` for each neighbour (other than ``skip``, the fact that was
    replaced) about ``changed``'s subject, of another attribute, whose words name the
    old value ``changed.value``, and that the language can cut down to its own value."""
    named = rules.canonical_terms(changed.value)
    out: list[tuple[Neighbour, str]] = []
    for n in near:
        frame = n.frame
        if (n.memory_id == skip or frame is None or frame.subject != changed.subject
                or frame.attribute == changed.attribute or frame.event or frame.polarity < 0
                or not named or not named <= rules.canonical_terms(n.text)):
            continue
        rest = rules.reduced(n.text, frame.value)
        if rest is not None:
            out.append((n, rest))
    return out
