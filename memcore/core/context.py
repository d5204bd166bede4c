"""The context block's assembly: which memories go in, in what order, within a token
budget (docs/design.md, context block).

Pure and language-free: the caller renders each memory's line and the section headers
(in its language) and gives the token counter; this module orders the lines by
usefulness, cuts them to the budget and joins them. The same inputs give the same
block, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

PROFILE = "profile"
RELEVANT = "relevant"
PREVIOUS = "previous"
SECTIONS = (PROFILE, RELEVANT)
"""Sections in the order the text shows them; a ``previous`` line sits under the line
of the memory that replaced it, in that memory's section."""

PROFILE_SHARE = 0.25
"""Share of the budget the profile's facts claim before the query's memories: the
standing facts stay in every block, and the rest goes to what the query asks about."""

MAX_PREVIOUS = 2
"""Most earlier values shown under one fact (the latest first)."""


@dataclass(frozen=True)
class Piece:
    """One line of the block: a memory rendered for it.

    ``section`` is :data:`PROFILE`, :data:`RELEVANT` or :data:`PREVIOUS`; a previous
    value names the memory that replaced it in ``of``.
    """

    memory_id: str
    section: str
    line: str
    of: str | None = None


def render(pieces: Sequence[Piece], headers: Mapping[str, str]) -> str:
    """The block's text: each non-empty section's header, then its lines in the order
    given (a previous value under the line it belongs to)."""
    home = {p.memory_id: p.section for p in pieces if p.section != PREVIOUS}
    out: list[str] = []
    for section in SECTIONS:
        lines = [p.line for p in pieces
                 if (home.get(p.of or "") if p.section == PREVIOUS else p.section) == section]
        if lines:
            out.append(headers[section])
            out.extend(lines)
    return "\n".join(out) + "\n" if out else ""


def admission_order(profile: Sequence[Piece], relevant: Sequence[Piece],
                    previous: Mapping[str, Sequence[Piece]], max_tokens: int,
                    count: Callable[[str], int],
                    profile_share: float = PROFILE_SHARE) -> list[Piece]:
    """Every candidate line, most useful first (the order the budget admits them in).

    1. the profile's facts in the profile's order (effective confidence), while their
       lines fit in ``profile_share`` of ``max_tokens``;
    2. the memories relevant to the query, in search rank order;
    3. the remaining profile facts, in the profile's order.

    Each memory comes once (where it comes first), each followed by its earlier values
    (``previous[memory_id]``, at most :data:`MAX_PREVIOUS`).
    """
    order: list[Piece] = []
    seen: set[str] = set()

    def push(piece: Piece) -> None:
        if piece.memory_id in seen:
            return
        seen.add(piece.memory_id)
        order.append(piece)
        for earlier in previous.get(piece.memory_id, ())[:MAX_PREVIOUS]:
            if earlier.memory_id not in seen:
                seen.add(earlier.memory_id)
                order.append(earlier)

    share = int(max_tokens * profile_share)
    used = 0
    rest: list[Piece] = []
    for piece in profile:
        cost = count(piece.line + "\n")
        if used + cost <= share:
            used += cost
            push(piece)
        else:
            rest.append(piece)
    for piece in relevant:
        push(piece)
    for piece in rest:
        push(piece)
    return order


def fit(order: Sequence[Piece], headers: Mapping[str, str], max_tokens: int,
        count: Callable[[str], int]) -> list[Piece]:
    """The pieces of ``order`` that fit in ``max_tokens``, in that order.

    Greedy: a line that does not fit is left out and the next one tried (a shorter one
    may still fit); a previous value goes in only with the line it belongs to. The
    estimate adds each line's tokens and each used section's header; the joined text is
    then counted exactly and, while it is over (a token merged across a line break),
    the last piece is dropped. So ``count(render(result)) <= max_tokens`` always.
    """
    chosen: list[Piece] = []
    used = 0
    opened: set[str] = set()
    section_of: dict[str, str] = {}
    for piece in order:
        if piece.section == PREVIOUS:
            if piece.of not in section_of:
                continue
            section = section_of[piece.of]
        else:
            section = piece.section
        cost = count(piece.line + "\n")
        if section not in opened:
            cost += count(headers[section] + "\n")
        if used + cost > max_tokens:
            continue
        used += cost
        opened.add(section)
        chosen.append(piece)
        if piece.section != PREVIOUS:
            section_of[piece.memory_id] = section
    while chosen and count(render(chosen, headers)) > max_tokens:
        dropped = chosen.pop()
        chosen = [p for p in chosen if p.of != dropped.memory_id]
    return chosen
