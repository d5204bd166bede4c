"""A memory's lineage as SVG: what it came from and what replaced it, from the audit.

Merges, supersessions and summaries are audit events with ``before`` and ``after``
ids. A memory's predecessors are the ``before`` ids of events that produced it, its
successors the ``after`` ids of events that consumed it. The drawing has three
columns (came from, this memory, replaced by / part of), one box per memory, each a
link to that memory's page, and arrows labelled with the action.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from memcore.core.models import AuditAction, AuditEvent

LINEAGE_ACTIONS = frozenset({AuditAction.MERGE, AuditAction.SUPERSEDE, AuditAction.SUMMARIZE,
                             AuditAction.UPDATE})
BOX_W, BOX_H, GAP_Y, COL_GAP = 220, 44, 14, 90
MAX_PER_COLUMN = 12


@dataclass(frozen=True)
class Link:
    """One edge of the lineage: ``source`` became (part of) ``target`` by ``action``."""

    source: str
    target: str
    action: AuditAction
    reason: str


def lineage_links(memory_id: str, events: Sequence[AuditEvent]) -> tuple[list[Link], list[Link]]:
    """(incoming, outgoing) links of ``memory_id``, oldest first, without duplicates."""
    incoming: dict[str, Link] = {}
    outgoing: dict[str, Link] = {}
    for e in sorted(events, key=lambda e: e.at):
        if e.action not in LINEAGE_ACTIONS:
            continue
        if memory_id in e.after:
            for src in e.before:
                if src != memory_id:
                    incoming.setdefault(src, Link(src, memory_id, e.action, e.reason))
        if memory_id in e.before:
            for dst in e.after:
                if dst != memory_id:
                    outgoing.setdefault(dst, Link(memory_id, dst, e.action, e.reason))
    return list(incoming.values()), list(outgoing.values())


def _box(x: int, y: int, memory_id: str, label: str, href: str | None, current: bool) -> str:
    text = escape(label if len(label) <= 34 else label[:33] + "…")
    fill = "#1f6feb" if current else "#f6f8fa"
    ink = "#ffffff" if current else "#1f2328"
    rect = (f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="{fill}" '
            f'stroke="#8c959f"/>'
            f'<text x="{x + 8}" y="{y + 18}" font-size="12" fill="{ink}">{text}</text>'
            f'<text x="{x + 8}" y="{y + 35}" font-size="10" fill="{ink}" '
            f'font-family="monospace">{escape(memory_id[:28])}</text>')
    if href is None:
        return f'<g class="node" data-id="{escape(memory_id)}">{rect}</g>'
    return (f'<a href="{escape(href)}" class="node" data-id="{escape(memory_id)}">'
            f'<title>{escape(label)}</title>{rect}</a>')


def _arrow(x1: int, y1: int, x2: int, y2: int, action: AuditAction) -> str:
    mid_x, mid_y = (x1 + x2) // 2, (y1 + y2) // 2
    return (f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#57606a" '
            f'marker-end="url(#arrow)"/>'
            f'<text x="{mid_x}" y="{mid_y - 4}" font-size="10" text-anchor="middle" '
            f'class="edge" fill="#57606a">{escape(action.value.lower())}</text>')


def _column_y(count: int, height: int) -> list[int]:
    total = count * BOX_H + max(0, count - 1) * GAP_Y
    top = (height - total) // 2
    return [top + i * (BOX_H + GAP_Y) for i in range(count)]


def lineage_svg(memory_id: str, label_of: Callable[[str], str | None],
                href_of: Callable[[str], str], events: Sequence[AuditEvent]) -> str:
    """The SVG of ``memory_id``'s lineage. ``label_of`` gives a memory's text (None: no
    longer stored, e.g. erased: drawn without a link)."""
    incoming, outgoing = lineage_links(memory_id, events)
    incoming, outgoing = incoming[:MAX_PER_COLUMN], outgoing[:MAX_PER_COLUMN]
    rows = max(1, len(incoming), len(outgoing))
    height = rows * BOX_H + (rows - 1) * GAP_Y + 20
    width = 3 * BOX_W + 2 * COL_GAP
    cx = [0, BOX_W + COL_GAP, 2 * (BOX_W + COL_GAP)]
    centre_y = (height - BOX_H) // 2
    parts = ['<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="#57606a"/></marker></defs>']

    def node(column: int, y: int, mid: str, current: bool = False) -> str:
        label = label_of(mid)
        shown = label if label is not None else "(no longer stored)"
        return _box(cx[column], y, mid, shown, None if current or label is None
                    else href_of(mid), current)

    for link, y in zip(incoming, _column_y(len(incoming), height), strict=True):
        parts.append(node(0, y, link.source))
        parts.append(_arrow(cx[0] + BOX_W, y + BOX_H // 2, cx[1], centre_y + BOX_H // 2,
                            link.action))
    parts.append(node(1, centre_y, memory_id, current=True))
    for link, y in zip(outgoing, _column_y(len(outgoing), height), strict=True):
        parts.append(node(2, y, link.target))
        parts.append(_arrow(cx[1] + BOX_W, centre_y + BOX_H // 2, cx[2], y + BOX_H // 2,
                            link.action))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="lineage" '
            f'viewBox="0 0 {width} {height}" width="100%" '
            f'aria-label="lineage of {escape(memory_id)}">{"".join(parts)}</svg>')
