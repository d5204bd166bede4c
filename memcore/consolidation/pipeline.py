"""The whole pass in one process: plan, merge calls, reduce; and the profile view."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import numpy as np

from memcore.consolidation.outcome import ConsolidationResult
from memcore.consolidation.planning import ClusterWork, Plan, copies_loader, plan_table
from memcore.consolidation.reducer import Reducer, apply_merges, finish, overlay
from memcore.consolidation.resolution import resolve
from memcore.core.config import ConsolidationConfig
from memcore.core.interfaces import Merger
from memcore.core.models import Actor, Kind, Memory, Status
from memcore.core.scoring import profile_standing
from memcore.core.text_rules import PLAIN, TextRules
from memcore.core.timeline import valid_at
from memcore.index.table import MemoryTable


def consolidate(memories: Sequence[Memory], now: datetime, config: ConsolidationConfig,
                merger: Merger, *, max_rounds: int = 8,
                actor: Actor = Actor.CONSOLIDATION, rules: TextRules = PLAIN
                ) -> ConsolidationResult:
    """One complete pass in process: merge rounds until stable, then decay, floor and cap.

    Merging moves centroids, which can bring two survivors above the threshold; the
    rounds repeat (bounded) until nothing merges, so consolidating the result again
    at the same ``now`` changes nothing.
    """
    table = MemoryTable.from_memories(memories)
    red = Reducer(table, copies_loader(memories), now, config, actor, rules=rules)
    changed: np.ndarray | None = None
    judged: set[tuple[str, str]] = set()
    for _ in range(max_rounds):
        p = plan_table(table, config, changed=changed, rules=rules)
        red.by_id.fetch(p.ids())
        p = _unjudged(p, red.by_id, judged)
        outcomes = resolve(p, red.by_id, merger)
        start = len(red.events)
        if not apply_merges(red, p, outcomes):
            break
        # Only what this round merged moved: the next round searches just those, so no
        # pair is sent to the model twice.
        moved = {mid for e in red.events[start:] for mid in e.after}
        changed = np.fromiter((mid in moved for mid in table.ids), dtype=bool,
                              count=len(table))
    finish(red, merger.summarize)
    changes = red.changes()
    return ConsolidationResult(overlay(memories, changes.changed), changes.events)


def _unjudged(plan_: Plan, by_id: Mapping[str, Memory], judged: set[tuple[str, str]]) -> Plan:
    """``plan_`` without the pairs whose two texts an earlier round already judged (a
    verdict depends on the texts only); records the remaining pairs in ``judged``."""
    works = []
    for work in plan_.clusters:
        pairs = []
        for a, b in work.pairs:
            key = (by_id[a].text, by_id[b].text)
            if key not in judged and key[::-1] not in judged:
                judged.add(key)
                pairs.append((a, b))
        if len(work.members) > 1 or pairs:
            works.append(ClusterWork(work.members, pairs))
    return Plan(plan_.exact_groups, works, index=plan_.index)


def profile(memories: Iterable[Memory], now: datetime, config: ConsolidationConfig, *,
            as_of: bool = False) -> list[Memory]:
    """The profile: active facts still valid at ``now``, ranked by their standing
    (:func:`~memcore.core.scoring.profile_standing`), at most ``profile_size``. ``as_of``:
    the profile as it stood at ``now`` in the past, from the facts valid then
    (:func:`~memcore.core.timeline.valid_at`: values superseded since count, facts
    stored later do not)."""
    # Summaries digest many memories; they are found by search, not listed as facts. A
    # fact whose validity ended (a dated event kept as history) is not current either,
    # nor one whose expiry passed.
    def current(m: Memory) -> bool:
        if as_of:
            return m.status is not Status.CANDIDATE and valid_at(m, now)
        return m.status is Status.ACTIVE and (m.valid_until is None or m.valid_until > now) \
            and (m.expires_at is None or m.expires_at > now)

    ranked = [(profile_standing(m, now, config), m)
              for m in memories if m.kind is not Kind.SUMMARY and current(m)]
    ranked = [(s, m) for s, m in ranked if s >= config.min_confidence]
    ranked.sort(key=lambda sm: (-sm[0], sm[1].created_at, sm[1].id))
    return [m for _, m in ranked[: config.profile_size]]
