"""What a consolidation pass produces: the next memories, audit events, changes."""

from __future__ import annotations

from dataclasses import dataclass, field

from memcore.core.models import AuditEvent, Memory


@dataclass
class ConsolidationResult:
    """The next memory set (same ids plus new summaries) and one event per change."""

    memories: list[Memory]
    events: list[AuditEvent]

    def live(self) -> list[Memory]:
        """Candidate and active memories."""
        return [m for m in self.memories if m.live]


@dataclass
class PassChanges:
    """What a pass over a :class:`MemoryTable` changed: the changed and new memories (in
    row order, new summaries last), one event per change, and the record version each
    changed memory had when it was read (effects up to it are already inside)."""

    changed: list[Memory]
    events: list[AuditEvent]
    read_versions: dict[str, int] = field(default_factory=dict)
