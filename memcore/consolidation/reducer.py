"""The reducer: applies merges, contradictions, expiry, support promotion,
summarize-before-forget, the floor and the cap to a table of memories."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import cast

import numpy as np

from memcore.consolidation.forgetting import idle_rows, summary_groups, summary_of, weak_rows
from memcore.consolidation.outcome import ConsolidationResult, PassChanges
from memcore.consolidation.planning import (
    Loader,
    Plan,
    copies_loader,
    original_texts,
    unique_in_order,
)
from memcore.consolidation.resolution import merge_lists, survivor_key
from memcore.consolidation.retention import event_time, retention_scores
from memcore.core.bounds import text_fits
from memcore.core.config import ConsolidationConfig
from memcore.core.frames import FramedRow, conflict, overrules_text
from memcore.core.frames import supersessions as frame_supersessions
from memcore.core.interfaces import ClusterOutcome, Verdict
from memcore.core.models import (
    Actor,
    AuditAction,
    AuditEvent,
    Frame,
    Kind,
    Memory,
    Status,
    new_id,
)
from memcore.core.scoring import capped_strength, reinforced_confidence
from memcore.core.text import content_hash
from memcore.core.text_rules import PLAIN, TextRules
from memcore.index.table import NONE_TIME, STATUSES, MemoryTable, ids_array, to_micros

VectorOf = Callable[[str], np.ndarray | None]
"""The stored vector (float32) of a memory a loader returned without it."""


def compact_vector(vector: np.ndarray) -> list[float]:
    """A working copy's vector kept as the float32 array itself, not a float list.

    A full pass at 10^6 changes ~10^5 memories; as lists of 384 Python floats their
    vectors were ~12 KB each (1.7 GB), as float32 arrays 1.6 KB. Only working copies
    loaded through ``vector_of`` get one: they are never compared, validated or
    serialized as JSON; every reader (``Memory.array``, the record codec's
    ``quantize``, ``Vectors.set``) converts with ``np.asarray(v, dtype=np.float32)``,
    which gives the same values the list gave."""
    return cast(list[float], np.asarray(vector, dtype=np.float32))


class Records(Mapping[str, Memory]):
    """Working copies of a table's memories, materialized from the loader on first use
    (a pass at 10^6 materializes only what it changes).

    With ``vector_of`` the loader's memories come without their vectors (a 384-float
    list is ~12 KB: a full pass at 10^6 reads ~10^5 memories and changes fewer), and
    :meth:`full` puts the stored one in before a memory's vector is read or written."""

    def __init__(self, table: MemoryTable, load: Loader, vector_of: VectorOf | None = None
                 ) -> None:
        self.table = table
        self.load = load
        self.vector_of = vector_of
        self.cache: dict[str, Memory] = {}
        self.read_versions: dict[str, int] = {}
        self.gone: set[str] = set()
        self.bare: set[str] = set()  # loaded without their vector so far

    def fetch(self, ids: Iterable[str]) -> None:
        """Materialize ``ids`` (batched) that are not materialized yet."""
        todo = [i for i in unique_in_order(ids) if i not in self.cache and i not in self.gone
                and self.table.row(i) is not None]
        for start in range(0, len(todo), 1000):
            chunk = todo[start:start + 1000]
            for mid, memory in zip(chunk, self.load(chunk), strict=True):
                if memory is None:  # erased since the table was read
                    self.gone.add(mid)
                else:
                    self.cache[mid] = memory
                    self.read_versions[mid] = memory.version
                    if self.vector_of is not None:
                        self.bare.add(mid)

    def full(self, memory: Memory) -> Memory:
        """``memory`` with its stored vector (a no-op unless it was loaded without)."""
        if memory.id in self.bare:
            self.bare.discard(memory.id)
            assert self.vector_of is not None
            vector = self.vector_of(memory.id)
            memory.vector = None if vector is None else compact_vector(vector)
        return memory

    def vector_form(self, vector: np.ndarray) -> list[float]:
        """A new vector for a working copy: compact (see :func:`compact_vector`) when the
        copies came without vectors, else the float list their other vectors are."""
        if self.vector_of is not None:
            return compact_vector(vector)
        return [float(x) for x in vector]

    def __getitem__(self, memory_id: str) -> Memory:
        if memory_id not in self.cache:
            self.fetch([memory_id])
        return self.cache[memory_id]

    def __contains__(self, memory_id: object) -> bool:
        if not isinstance(memory_id, str):
            return False
        if memory_id not in self.cache:
            self.fetch([memory_id])
        return memory_id in self.cache

    def __iter__(self) -> Iterator[str]:
        return iter(self.table.ids)

    def __len__(self) -> int:
        return len(self.table)


class Reducer:
    """Applies one round of changes to working copies, recording an event per change."""

    def __init__(self, table: MemoryTable, load: Loader, now: datetime,
                 config: ConsolidationConfig, actor: Actor,
                 vector_of: VectorOf | None = None, rules: TextRules = PLAIN) -> None:
        self.table = table
        self.rules = rules  # the language's text rules (see _retire_changed)
        self.by_id = Records(table, load, vector_of)
        self.now = now
        self.config = config
        self.actor = actor
        self.events: list[AuditEvent] = []
        self.namespace = table.namespace
        self.dirty: dict[str, None] = {}  # changed ids, in order of first change
        self.unsynced: set[str] = set()
        self.added: list[Memory] = []

    def event(self, action: AuditAction, before: list[str], after: list[str], reason: str,
              decision: str | None = None, text: str | None = None) -> None:
        self.events.append(AuditEvent(action=action, namespace=self.namespace, before=before,
                                      after=after, reason=reason, actor=self.actor,
                                      decision=decision, text=text, at=self.now))

    def touched(self, m: Memory) -> None:
        self.by_id.full(m)  # a changed memory is written back whole, vector included
        m.updated_at = self.now
        self.dirty[m.id] = None
        self.unsynced.add(m.id)

    def sync(self) -> None:
        """Write the changed memories back into the table's columns."""
        for mid in self.unsynced:
            row = self.table.row(mid)
            if row is not None:
                self.table.set_row(row, self.by_id.cache[mid])
        self.unsynced.clear()

    def record(self, row: int) -> Memory | None:
        """The working copy of ``row`` (None if it vanished)."""
        mid = self.table.ids[row]
        return self.by_id.get(mid)

    def merge(self, ids: Sequence[str], text: str | None, reason: str) -> str | None:
        """Merge the live memories among ``ids`` into the survivor (the first by
        :func:`survivor_key`) and tombstone the rest; the survivor's id, or None when
        fewer than two are live."""
        members = [self.by_id[i] for i in ids if i in self.by_id and self.by_id[i].live]
        if len(members) < 2:
            return None
        for m in members:
            self.by_id.full(m)
        members.sort(key=survivor_key)
        head, rest = members[0], members[1:]
        cfg = self.config
        centroid = pooled_vector(members, cfg.strength_cap)
        if centroid is not None:
            head.vector = self.by_id.vector_form(centroid)
        confidence = pooled_confidence(members, cfg.support_step)
        lists = merge_lists(members)  # bounded (memcore.core.bounds)
        head.member_texts = lists.member_texts
        head.metadata = lists.metadata
        reason = merged_text(head, members, text, reason)
        pool_use(head, members, cfg.strength_cap)
        head.sources = lists.sources
        head.support = lists.support
        head.confidence = confidence
        pool_validity(head, members)
        self.touched(head)
        for m in rest:
            m.status = Status.TOMBSTONED
            m.superseded_by = head.id
            self.touched(m)
        note = lists.capped.note()
        self.event(AuditAction.MERGE, [m.id for m in members], [head.id],
                   f"{reason}; {note}" if note else reason, text=head.text)
        return head.id

    def contradict(self, a_id: str, b_id: str, reason: str) -> None:
        if a_id not in self.by_id or b_id not in self.by_id:
            return
        a, b = self.by_id[a_id], self.by_id[b_id]
        if not (a.live and b.live):
            return
        if event_time(a) == event_time(b):
            # Said at once ("founder and CEO"): neither replaces the other, and the
            # order the pair came in must not pick one.
            self.event(AuditAction.NOOP, [a.id, b.id], [],
                       f"stated at the same time, both kept ({reason})")
            return
        newer, older = (a, b) if event_time(a) > event_time(b) else (b, a)
        self.supersede(older, newer, reason)

    def supersede(self, older: Memory, newer: Memory, reason: str) -> None:
        """Close ``older``'s validity where ``newer`` starts; ``newer`` replaces it."""
        older.status = Status.SUPERSEDED
        older.valid_until = max(event_time(newer), older.valid_from or event_time(newer))
        older.superseded_by = newer.id
        self.touched(older)
        self.event(AuditAction.SUPERSEDE, [older.id], [newer.id], reason,
                   decision=Verdict.CONTRADICTS.value)

    def add(self, memories: Sequence[Memory]) -> None:
        """New memories (summaries): rows at the end of the table."""
        for memory in memories:
            self.by_id.cache[memory.id] = memory
            self.dirty[memory.id] = None
        self.added.extend(memories)
        self.table.append(memories)

    def changes(self) -> PassChanges:
        """The changed and new memories in row order, with the events."""
        rows = sorted((self.table.row(mid) or 0, mid) for mid in self.dirty)
        return PassChanges([self.by_id.cache[mid] for _, mid in rows], list(self.events),
                           {mid: self.by_id.read_versions[mid] for mid in self.dirty
                            if mid in self.by_id.read_versions})


def reduce(memories: Sequence[Memory], plan_: Plan, outcomes: Sequence[ClusterOutcome | None],
           now: datetime, config: ConsolidationConfig, *,
           summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None = None,
           actor: Actor = Actor.CONSOLIDATION, rules: TextRules = PLAIN) -> ConsolidationResult:
    """Apply a planned round and the merger's outcomes, then expiry, support, floor, cap."""
    changes = reduce_table(MemoryTable.from_memories(memories), copies_loader(memories), plan_,
                           outcomes, now, config, summarize=summarize, actor=actor,
                           rules=rules)
    return ConsolidationResult(overlay(memories, changes.changed), changes.events)


def reduce_table(table: MemoryTable, load: Loader, plan_: Plan,
                 outcomes: Sequence[ClusterOutcome | None], now: datetime,
                 config: ConsolidationConfig, *,
                 summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None = None,
                 actor: Actor = Actor.CONSOLIDATION, vector_of: VectorOf | None = None,
                 rules: TextRules = PLAIN) -> PassChanges:
    """:func:`reduce` over columns: only the memories it changes are materialized (with
    ``load``) and returned. ``table`` is updated in place. ``vector_of``: ``load`` leaves
    vectors out and this gives the stored one of a memory the pass reads or changes the
    vector of (see :class:`Records`)."""
    red = Reducer(table, load, now, config, actor, vector_of, rules)
    red.by_id.fetch(plan_.ids())
    apply_merges(red, plan_, outcomes)
    finish(red, summarize)
    return red.changes()


def overlay(memories: Sequence[Memory], changed: Sequence[Memory]) -> list[Memory]:
    """``memories`` with the changed ones replaced and new ones appended."""
    by_id = {m.id: m for m in changed}
    out = [by_id.pop(m.id, m) for m in memories]
    return out + list(by_id.values())


def fulfilment(members: Sequence[Memory]) -> Memory | None:
    """The member that fulfils the plans among ``members``: the newest one that is no
    plan (a goal), stated after every plan ("thinking about a bike" -> "bought the
    bike"); None when no member is a plan or none came after them."""
    plans = [m for m in members if m.kind is Kind.GOAL]
    if not plans:
        return None
    last_plan = max(m.created_at for m in plans)
    later = [m for m in members if m.kind is not Kind.GOAL and m.created_at > last_plan]
    return max(later, key=lambda m: (m.created_at, m.id)) if later else None


def pooled_vector(members: Sequence[Memory], strength_cap: float) -> np.ndarray | None:
    """The members' unit centroid weighted by (capped) strength; None when a member has
    no vector or the centroid is null."""
    if not all(m.vector is not None for m in members):
        return None
    weights = np.array([min(m.strength, strength_cap) for m in members], np.float32)
    centroid = (np.vstack([m.array for m in members]) * weights[:, None]).sum(axis=0)
    norm = float(np.linalg.norm(centroid))
    return centroid / norm if norm > 1e-9 else None


def pooled_confidence(members: Sequence[Memory], support_step: float) -> float:
    """The most confident member's confidence, reinforced by each source it lacked."""
    sources = unique_in_order(s for m in members for s in m.sources)
    best = max(members, key=lambda m: (m.confidence, len(m.sources)))
    extra = len(sources) - len(set(best.sources))
    return reinforced_confidence(best.confidence, extra, support_step)


def merged_text(head: Memory, members: Sequence[Memory], text: str | None, reason: str) -> str:
    """Give ``head`` the merge's text (and kind) and return the merge's reason.

    Without a written merge (exact duplicates, a pair judged the same, a merged text
    past a turn's size), keep the most informative of the texts rather than whichever
    record survives."""
    text = text if text and text_fits(text) else None
    done = fulfilment(members)
    if done is not None:  # a plan merged with its fulfilment keeps the fulfilment
        head.kind, text = done.kind, done.text
        reason = f"{reason}; plan fulfilled"
    head.text = text or max((m.text for m in members), key=lambda t: (len(t.split()), t))
    head.content_hash = content_hash(head.text, head.scope)
    return reason


def pool_use(head: Memory, members: Sequence[Memory], strength_cap: float) -> None:
    """``head`` takes the members' combined importance, use, strength and recalls."""
    head.importance = max(m.importance for m in members)
    head.last_used = max(m.last_used for m in members)
    head.last_supported = max((m.last_supported or m.last_used) for m in members)
    head.strength = capped_strength(sum(m.strength for m in members), strength_cap)
    head.explicit = any(m.explicit for m in members)
    head.recall_count = sum(m.recall_count for m in members)
    head.derived_level = max(m.derived_level for m in members)


def pool_validity(head: Memory, members: Sequence[Memory]) -> None:
    """``head`` is valid from the earliest start and while any member is: a merge with
    an open-ended fact stays open-ended (the same for expiry)."""
    froms = [m.valid_from for m in members if m.valid_from]
    head.valid_from = min(froms) if froms else None
    expiries = [m.expires_at for m in members]
    head.expires_at = max(e for e in expiries if e) if all(expiries) else None
    untils = [m.valid_until for m in members]
    head.valid_until = max(u for u in untils if u) if all(untils) else None


def apply_merges(red: Reducer, plan_: Plan, outcomes: Sequence[ClusterOutcome | None]) -> int:
    changes = 0
    # A verdict judged two texts. Once either side has merged into something else this
    # round, the verdict says nothing about the survivors: "Jon has been into dancing" is
    # the same as (subsumed by) each of twenty dance facts, which are not the same as one
    # another, and applying every such verdict to the survivors chained them into one
    # memory keeping one text. Such pairs wait for the next round, judged on their texts.
    judged = {mid: red.by_id[mid].text for work in plan_.clusters for pair in work.pairs
              for mid in pair if mid in red.by_id}
    for ids in plan_.exact_groups:
        if red.merge(ids, None, "exact duplicate (same normalized text)"):
            changes += 1
    for work, outcome in zip(plan_.clusters, outcomes, strict=True):
        if outcome is None:
            continue  # the model call failed: leave the cluster for the next pass
        if _merged_cluster(red, work.members, outcome):
            changes += 1
        for pair, verdict in zip(work.pairs, outcome.verdicts, strict=False):
            if _applied_verdict(red, pair, verdict, outcome.reason, judged):
                changes += 1
    red.sync()
    return changes


def _merged_cluster(red: Reducer, members: Sequence[str], outcome: ClusterOutcome) -> bool:
    """Merge a cluster the model wrote one text for, unless frames keep its facts apart."""
    return (len(members) > 1 and bool(outcome.merged_text)
            and not _frames_conflict(red, members) and not _frames_differ(red, members)
            and bool(red.merge(members, outcome.merged_text,
                               outcome.reason or "near-duplicates")))


def _applied_verdict(red: Reducer, pair: tuple[str, str], verdict: Verdict, reason: str,
                     judged: Mapping[str, str]) -> bool:
    """Apply one pair's verdict to the pair's survivors; did it change anything?"""
    a0, b0 = pair
    a, b = _follow(red, a0), _follow(red, b0)
    if a == b:
        return False
    if verdict is Verdict.SAME and _frames_conflict(red, [a, b]):
        # Another value of one attribute is never the same fact: the newer wins.
        red.contradict(a, b, "judged the same, but their frames differ: newer kept")
        return True
    if verdict is Verdict.SAME:
        if (a, b) != (a0, b0) or any(red.by_id[m].text != judged.get(m) for m in (a, b)):
            return False
        if _frames_differ(red, [a, b]):
            return False  # "Ann is 74" and "Ann's wife is Helen": two facts
        return bool(red.merge([a, b], None, "judged the same fact"))
    if verdict is Verdict.CONTRADICTS:
        red.contradict(a, b, reason or "contradiction: newer fact kept")
        return True
    return False


def _frames_conflict(red: Reducer, ids: Sequence[str]) -> bool:
    """Do any two of ``ids`` say different things about one attribute of one subject
    (:func:`memcore.core.frames.conflict`)? Such facts are never merged."""
    frames = [m.frame for mid in ids if (m := red.by_id.get(mid)) is not None
              and m.frame is not None]
    return any(conflict(a, b) for i, a in enumerate(frames) for b in frames[i + 1:])


def _frames_differ(red: Reducer, ids: Sequence[str]) -> bool:
    """Do two of ``ids`` have frames about different subjects or attributes, or is one a
    lasting framed fact and another a passing event? One fact is one subject, attribute
    and value (docs/design.md, Frames): such facts are never the same fact, however alike
    their words."""
    members = [m for mid in ids if (m := red.by_id.get(mid)) is not None]
    frames = [m.frame for m in members if m.frame is not None and m.frame.event != "end"]
    if any((a.subject, a.attribute) != (b.subject, b.attribute)
           for i, a in enumerate(frames) for b in frames[i + 1:]):
        return True
    # A lasting framed fact ("Sam's sister is Anna") is not the passing event that names
    # it ("Sam's sister Anna is visiting next week"): merged, it would read as the event.
    lasting = any(m.frame is not None and m.valid_until is None and m.expires_at is None
                  for m in members)
    passing = any(m.frame is None and (m.valid_until is not None or m.expires_at is not None)
                  for m in members)
    # Nor is a relation ("Ann's daughter is Clare") a longer sentence no frame reads that
    # mentions the person ("Ann has decided to move to be nearer her daughter Clare"):
    # merged, the relation would be lost and would go when the sentence goes.
    sentence = any(m.frame is None for m in members)
    relation = any(f.attribute.startswith("relation:") for f in frames)
    return (lasting and passing) or (relation and sentence)


def _follow(red: Reducer, mid: str) -> str:
    """Follow merge pointers to the surviving memory."""
    seen = set()
    while mid in red.by_id and red.by_id[mid].status is Status.TOMBSTONED and mid not in seen:
        seen.add(mid)
        nxt = red.by_id[mid].superseded_by
        if nxt is None:
            break
        mid = nxt
    return mid


def _retire_changed(red: Reducer) -> None:
    """Supersede facts a newer fact changed or ended, whatever their vector similarity.

    The write path only compares a new fact with its nearest neighbours; "moved to
    Porto" and "lives in Lisbon" are rarely near each other, so the pass checks the
    live facts against the newer ones: by their frames (:func:`frame_supersessions`:
    same subject and attribute only) and, unless ``config.text_rules`` is off (a model
    is configured), by the language's text rules (:func:`supersessions`). A newer fact
    that would retire more than ``config.max_retired_by_one`` facts at once retires
    none: it is audited as held (a pattern firing on the wrong span must not wipe a
    user's memory).
    """
    t = red.table
    rows = np.flatnonzero(t.live() & ~t.pinned & (t.derived_level == 0))
    if rows.size < 2:
        return
    row_list = rows.tolist()
    # A fact re-stated later is current as of its last support ("back in Barcelona").
    asserted = np.maximum(t.created_at[rows], t.last_supported[rows]).tolist()
    framed = _framed_rows(red, row_list, asserted)
    found, changing = _text_retirements(red, rows, asserted, _ends_read(framed))
    if not framed:
        _apply_retirements(red, found)
        red.sync()
        return
    by_frames, _ = frame_supersessions(framed, max_retired=len(row_list))
    # A plain statement's frame, not its words, says which facts it replaces (a text
    # with a word of change, "Chrome instead of Firefox", still may).
    frames = {row.id: row.frame for row in framed}
    overruled = [pair for pair in found if pair[1] not in changing
                 and overrules_text(frames.get(pair[1]), frames.get(pair[0]))]
    found = [pair for pair in found if pair not in overruled]
    known = {old for old, _, _ in found}
    _apply_retirements(red, found + [pair for pair in by_frames if pair[0] not in known])
    _keep_the_rest(red, overruled, frames)
    red.sync()


def _ends_read(framed: Sequence[FramedRow]) -> dict[str, tuple[str, str, str]]:
    """``{id: (subject, attribute, thing)}`` of the facts whose frame reports an end."""
    return {row.id: (row.frame.subject, row.frame.attribute, row.frame.value)
            for row in framed
            if row.frame.event == "end" and row.frame.value}


def _text_retirements(red: Reducer, rows: np.ndarray, asserted: list[float],
                      ends: Mapping[str, tuple[str, str, str]]
                      ) -> tuple[list[tuple[str, str, str]], set[str]]:
    """The language's text supersessions among ``rows`` (none when ``config.text_rules``
    is off), and the ids of the facts whose words say something changed. ``ends``: the
    ends the frames read, which the language matches in the other facts' words too."""
    if red.config.text_rules is False:
        return [], set()
    t = red.table
    row_list = rows.tolist()
    ids = [t.ids[r] for r in row_list]
    hints = t.text_flags(f"{red.rules.name}:may_change", red.rules.may_change)[rows]
    changing = {i for i, hint in zip(ids, hints.tolist(), strict=True) if hint} | set(ends)
    found = red.rules.supersessions(ids, [t.texts[r] for r in row_list], asserted,
                                    t.relation[rows].tolist(), hints=hints.tolist(),
                                    ended=[ends.get(i) for i in ids] if ends else None)
    return found, changing


def _framed_rows(red: Reducer, row_list: list[int], asserted: list[float]) -> list[FramedRow]:
    """The framed facts among the rows, with the time each was last asserted."""
    t = red.table
    when = dict(zip([t.ids[r] for r in row_list], asserted, strict=True))
    framed_ids = [t.ids[r] for r, f in zip(row_list, t.framed[row_list].tolist(), strict=True)
                  if f]
    red.by_id.fetch(framed_ids)
    return [FramedRow(mid, m.frame, when[mid], m.scope) for mid in framed_ids
            if (m := red.by_id.get(mid)) is not None and m.frame is not None]


def _keep_the_rest(red: Reducer, overruled: Sequence[tuple[str, str, str]],
                   frames: Mapping[str, Frame]) -> None:
    """A fact a changed value makes partly stale by its words (the job "a nurse at St
    Mary's" when the employer changes) is superseded by itself cut down to its own
    frame's value ("Ann is a nurse."), as the language cuts it: its own attribute did
    not change (docs/design.md, Frames). Without such a cut it stays as it is."""
    kept: list[Memory] = []
    for old_id, _, reason in overruled:
        old = red.by_id.get(old_id)
        if old is None or not old.live or old_id in red.dirty:
            continue
        rest = red.rules.reduced(old.text, frames[old_id].value)
        if rest is None or not text_fits(rest):
            continue
        memory = red.by_id.full(old).model_copy(update={
            "id": new_id(), "text": rest, "content_hash": content_hash(rest, old.scope),
            "created_at": red.now, "updated_at": red.now, "superseded_by": None,
            "valid_until": None, "member_texts": []})
        kept.append(memory)
        red.supersede(old, memory, f"{reason}; its {frames[old_id].attribute} kept")
    red.add(kept)


def _apply_retirements(red: Reducer, found: Sequence[tuple[str, str, str]]) -> None:
    """Supersede each ``(old, newer, reason)``, except a newer fact's when it would
    retire more than ``config.max_retired_by_one`` facts: those are held and audited."""
    by_newer: dict[str, list[tuple[str, str]]] = {}
    for old_id, newer_id, reason in found:
        by_newer.setdefault(newer_id, []).append((old_id, reason))
    limit = red.config.max_retired_by_one
    red.by_id.fetch(mid for pair in found for mid in pair[:2])
    for newer_id, olds in by_newer.items():
        if len(olds) > limit:
            if newer_id in red.by_id and red.by_id[newer_id].live:
                red.event(AuditAction.NOOP, [newer_id, *(o for o, _ in olds)], [],
                          f"held: would retire {len(olds)} facts at once (limit {limit}); "
                          f"first rule: {olds[0][1]}")
            continue
        for old_id, reason in olds:
            if old_id not in red.by_id or newer_id not in red.by_id:
                continue
            old, new = red.by_id[old_id], red.by_id[newer_id]
            if old.live and new.live:
                red.supersede(old, new, reason)


def summarize_doomed(red: Reducer, doomed: list[int],
                     summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None) -> None:
    """Summarize before forget: each group of similar doomed memories
    (:func:`~memcore.consolidation.forgetting.summary_groups`) is replaced by one
    summary, its members tombstoned and superseded by it."""
    t = red.table
    if summarize is None:
        return
    groups = summary_groups(t, red.config, doomed)
    if not groups:
        return
    red.by_id.fetch(t.ids[r] for g in groups for r in g)
    members = [[m for m in (red.record(r) for r in g) if m is not None] for g in groups]
    try:
        texts = summarize([unique_in_order(x for m in ms for x in original_texts(m))
                           for ms in members])
    except Exception:  # no summary is better than a failed pass
        return
    summaries: list[Memory] = []
    for ms, text in zip(members, texts, strict=False):
        made = summary_of(ms, text, namespace=red.namespace, now=red.now, cfg=red.config,
                          vector_of=lambda m: red.by_id.full(m).array)
        if made is None:
            continue
        summary, reason = made
        summaries.append(summary)
        for m in ms:
            m.status = Status.TOMBSTONED
            m.superseded_by = summary.id
            red.touched(m)
        red.event(AuditAction.SUMMARIZE, [m.id for m in ms], [summary.id], reason, text=text)
    red.add(summaries)


def finish(red: Reducer, summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None,
            ) -> None:
    """Expiry, support promotion, summarize-before-forget, floor and cap, vectorized over
    the table; only the rows that change are materialized."""
    red.sync()
    _retire_changed(red)
    _expire(red)
    red.sync()
    _promote(red)
    red.sync()
    _drop_weak(red, summarize)
    red.sync()
    _cap(red)


def _expire(red: Reducer) -> None:
    """Live memories past their expiry: closed, kept as history or tombstoned."""
    t = red.table
    now_us = to_micros(red.now)
    expired = np.flatnonzero(t.live() & (t.expires_at != NONE_TIME)
                             & (t.expires_at <= now_us))
    red.by_id.fetch(t.ids[r] for r in expired.tolist())
    for r in expired.tolist():
        m = red.record(r)
        # Pinning exempts from a guessed expiry, not from the one the caller gave.
        if m is None or m.expires_at is None or (m.pinned and not m.expiry_given):
            continue
        why = _expired(m, m.expires_at)
        red.touched(m)
        red.event(AuditAction.EXPIRE, [m.id], [], why)


def _expired(m: Memory, until: datetime) -> str:
    """End ``m`` at its expiry ``until``; the reason."""
    if m.expiry_given:
        # The caller's expiry: the memory goes (restorable), as maintenance does it.
        m.status = Status.TOMBSTONED
        return (f"expired at {until.isoformat()} (expiry given by the caller): "
                "tombstoned, restorable")
    if m.valid_until is not None:
        # A fact that said its own date ("the launch tomorrow (20 June 2023)", "learnt
        # it today (9 July 2023)") is history once the date passed, not a stale state:
        # it leaves the profile (valid_until is past) but stays a live memory that
        # search finds. A fact given only a default expiry (a mood, "busy at the
        # moment") is a state: it is closed.
        m.valid_until = min(m.valid_until, until)
        m.expires_at = None
        return f"date passed ({until.isoformat()}): kept as history, out of the profile"
    m.status = Status.SUPERSEDED
    m.valid_until = until
    return f"expired at {until.isoformat()}"


def _promote(red: Reducer) -> None:
    """Candidates with enough support (or stated explicitly, or pinned) become active."""
    t, cfg = red.table, red.config
    candidate = STATUSES.index(Status.CANDIDATE)
    supported = t.explicit | t.pinned | (t.n_sources >= cfg.min_support)
    promoted = np.flatnonzero((t.status == candidate) & supported)
    red.by_id.fetch(t.ids[r] for r in promoted.tolist())
    for r in promoted.tolist():
        m = red.record(r)
        if m is None:
            continue
        m.status = Status.ACTIVE
        red.touched(m)
        why = "stated explicitly" if m.explicit else f"{len(set(m.sources))} episodes"
        red.event(AuditAction.PROMOTE, [m.id], [m.id], f"support: {why}")


def _drop_weak(red: Reducer,
               summarize: Callable[[Sequence[Sequence[str]]], list[str]] | None) -> None:
    """Memories below the floor (summarized first) and idle unsupported candidates are
    tombstoned."""
    t, cfg, now = red.table, red.config, red.now
    doomed = weak_rows(t, now, cfg)
    summarize_doomed(red, [r for r, _ in doomed], summarize)
    doomed += [(r, f"unsupported candidate unused for {cfg.summary_idle_days:g} days")
               for r in idle_rows(t, now, cfg, doomed, red.rules)]
    red.by_id.fetch(t.ids[r] for r, _ in doomed)
    for r, why in doomed:
        m = red.record(r)
        if m is not None and m.live:
            m.status = Status.TOMBSTONED
            red.touched(m)
            red.event(AuditAction.TOMBSTONE, [m.id], [], why)


def _cap(red: Reducer) -> None:
    """The lowest-scoring unpinned live memories past the cap are tombstoned."""
    t, cfg, now = red.table, red.config, red.now
    live = t.live()
    room = max(0, cfg.cap - int((live & t.pinned).sum()))
    ranked = np.flatnonzero(live & ~t.pinned)
    if ranked.size <= room:
        return
    scores = retention_scores(t, ranked, now, cfg)
    # The rows past the cap in (score desc, oldest, id) order: only rows scoring at most
    # the cut can be among them, so only those are sorted (not every live memory).
    drop = ranked.size - room
    cand = np.flatnonzero(scores <= np.partition(scores, drop - 1)[drop - 1])
    order = cand[np.lexsort((ids_array(t.ids[r] for r in ranked[cand].tolist()),
                             t.created_at[ranked[cand]], -scores[cand]))]
    over = order[order.size - drop:]
    red.by_id.fetch(t.ids[int(ranked[p])] for p in over.tolist())
    for p in over.tolist():
        m = red.record(int(ranked[p]))
        if m is None:
            continue
        m.status = Status.TOMBSTONED
        red.touched(m)
        red.event(AuditAction.TOMBSTONE, [m.id], [],
                  f"over the cap of {cfg.cap} (score {scores[p]:.4f})")
    red.sync()
