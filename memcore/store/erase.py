"""Erase (the right to be forgotten), separate from decay and tombstones.

Removes the text and vector of a memory, an episode or a whole namespace from
the live records, the undo hashes older versions roll back to, the records a pass in
progress staged, the delta log and stored index blobs, and redacts the text of audit
entries about it. The ERASE audit event itself stays.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import redis

from memcore.core.errors import NamespaceNotFound
from memcore.core.models import (
    Actor,
    AuditAction,
    AuditEvent,
    Memory,
    Status,
    as_utc,
    validate_identifier,
    validate_namespace,
)
from memcore.core.text import content_hash
from memcore.observability import metrics
from memcore.store import keys, ops
from memcore.store.audit import PURGED, AuditLog
from memcore.store.base import BATCH, DeltaEntry, DeltaOp
from memcore.store.changes import Change, check_reads, hash_owners, queue_changes
from memcore.store.codec import pack_memory, unpack_memory
from memcore.store.episodes import Episodes
from memcore.store.erased import Erased
from memcore.store.fences import Fences
from memcore.store.gateway import Gateway
from memcore.store.rewrites import PendingRewrites, RewriteState
from memcore.store.snapshots import Snapshots
from memcore.store.unfinished import EraseKind, UnfinishedErase, UnfinishedErases
from memcore.store.unlisted import unlisted_key, unlisted_sources

log = logging.getLogger(__name__)

@dataclass
class EraseReport:
    """What erasing a memory together with its source turns did."""

    removed: list[str] = field(default_factory=list)
    """Memory ids removed: the memory, records merged into it, records it alone supported."""
    episodes: list[str] = field(default_factory=list)
    """Source turns (episode ids) erased."""
    orphaned: list[str] = field(default_factory=list)
    """Other memories kept although every turn they came from is now erased."""


Planner = Callable[[dict[str, Memory]], tuple[set[str], dict[str, Memory]]]
"""Picks, within one version's records, which go (victims) and which change."""


def plan_erase(memories: dict[str, Memory], *, memory_id: str | None, source: str | None,
               now: datetime) -> tuple[set[str], dict[str, Memory]]:
    """Which records go (victims) and which lose a source (changed), within one version.

    A memory goes if it is the target, if it was merged into a victim (its text is one of
    the victim's member texts, or it is tombstoned pointing at the victim: a record keeps
    only its newest member texts), or if it loses its last source.
    """
    victims: set[str] = set()
    changed: dict[str, Memory] = {}
    todo: list[str] = []
    if memory_id is not None and memory_id in memories:
        todo.append(memory_id)
    if source:
        for m in memories.values():
            if source in m.sources:
                kept = ops.drop_source(m, source=source, now=now)
                if kept is None:
                    todo.append(m.id)
                else:
                    changed[m.id] = kept
    while todo:
        vid = todo.pop()
        if vid in victims:
            continue
        victims.add(vid)
        changed.pop(vid, None)
        victim = memories[vid]
        for m in memories.values():
            if m.id in victims:
                continue
            if m.superseded_by == vid and (m.text in victim.member_texts
                                           or m.status is Status.TOMBSTONED):
                todo.append(m.id)
            elif vid in m.sources:
                kept = ops.drop_source(changed.get(m.id, m), source=vid, now=now)
                if kept is None:
                    todo.append(m.id)
                else:
                    changed[m.id] = kept
    return victims, changed


class Eraser:
    """erase_memory / erase_episode / erase_namespace."""

    def __init__(self, gateway: Gateway, snapshots: Snapshots, episodes: Episodes,
                 audit: AuditLog, fences: Fences | None = None,
                 erased: Erased | None = None) -> None:
        self._gw = gateway
        self._r = gateway.client
        self._snapshots = snapshots
        self._episodes = episodes
        self._audit = audit
        self._fences = fences or Fences(gateway)
        self._erased = erased or Erased(gateway)
        self._pending = PendingRewrites(gateway.client)
        self.unfinished = UnfinishedErases(gateway.client)

    def _note(self, namespace: str, memories: dict[str, Memory], victims: Collection[str],
              turns: Collection[str]) -> None:
        """Before a single erase removes anything: count it and note the removed texts'
        hashes and turn ids (memcore.store.erased), so a turn accepted before it and
        delivered after cannot store them again; a fenced write racing it is refused."""
        hashes = {content_hash(text, memories[v].scope) for v in victims
                  for text in (memories[v].text, *memories[v].member_texts)}
        for turn in turns:
            episode = self._episodes.get_episode(namespace, turn)
            if episode is not None:
                hashes.add(content_hash(episode.text, episode.scope))
        self._erased.record(namespace, turns=turns, hashes=hashes)

    def _erase_live(self, namespace: str, planner: Planner, source: str | None,
                    now: datetime, also: set[str]) -> set[str]:
        """Erase in the live records with the commit primitive: writers may run, so the
        commit checks the pointer, the pass token and every record and hash key read, and
        a conflict reads again. ``also``: ids found victims in an older version. No undo
        bytes are kept (rolling back never brings erased data back)."""
        while True:
            victims = self._try_erase_live(namespace, planner, source, now, also)
            if victims is not None:
                return victims

    def _try_erase_live(self, namespace: str, planner: Planner, source: str | None,
                        now: datetime, also: set[str]) -> set[str] | None:
        """One attempt at :meth:`_erase_live`: the victims, or None when a write came in
        between (the commit's checks refused it)."""
        gw = self._gw
        pointer = gw.client.get(keys.current(namespace))
        token = gw.client.get(keys.pass_token(namespace))
        current = int(pointer) if pointer is not None else 0
        ids = gw.live_ids(namespace)
        raws = gw.load_raw(namespace, ids)
        memories = {i: unpack_memory(raw, namespace, i) for i, raw in zip(ids, raws,
                                                                          strict=True)
                    if raw is not None}
        victims, changed = planner(memories)
        victims |= also & memories.keys()
        for v in victims:
            changed.pop(v, None)
        touched = [memories[i] for i in (*victims, *changed) if memories[i].live]
        hashes = sorted({m.content_hash for m in touched})
        owner_raws, owners = hash_owners(gw.client, namespace, hashes)
        changes = [Change(memories[v], None) for v in victims]
        changes += [Change(memories[i], m) for i, m in changed.items()]
        batch = gw.batch(namespace)
        queue_changes(batch, namespace, current, changes, owners, passing=False, undo=False)
        for v in victims:  # the source ids a victim counted but no longer listed
            batch.delete(unlisted_key(namespace, v))
        if token is not None:  # the running pass replays these onto what it staged
            for entry in _erase_entries(victims, source, now):
                batch.xadd(keys.delta(namespace), entry.fields())
        if not batch.writes:
            return victims
        check_reads(batch, namespace, ids, raws, hashes, owner_raws)
        return victims if gw.commit(namespace, batch, version=current, token=token) else None

    def _erase_history(self, namespace: str, planner: Planner, known: set[str]) -> set[str]:
        """Erase in the undo hashes (the bytes older versions would roll back to): walk the
        versions newest first, rebuilding each one's records, and blank every copy of a
        victim of any version; records that only lose a source keep the rest."""
        gw = self._gw
        versions = sorted((int(v) for v in self._r.zrange(keys.versions(namespace), 0, -1)),
                          reverse=True)
        ids = gw.live_ids(namespace)
        state = {i: unpack_memory(raw, namespace, i) for i, raw in
                 zip(ids, gw.load_raw(namespace, ids), strict=True) if raw is not None}
        victims = set(known)
        undos: dict[int, dict[str, bytes]] = {}
        rewrite: dict[int, dict[str, bytes]] = {}
        for u in versions:
            undo = {k.decode(): v for k, v in self._r.hgetall(keys.undo(namespace, u)).items()}
            if not undo:
                continue
            undos[u] = undo
            for i, raw in undo.items():  # state becomes version u-1
                if raw:
                    state[i] = unpack_memory(raw, namespace, i)
                else:
                    state.pop(i, None)
            lost, changed = planner(state)
            victims |= lost
            rewrite[u] = {i: pack_memory(m) for i, m in changed.items() if i in undo}
        pipe = self._r.pipeline(transaction=False)
        for u, undo in undos.items():
            for i, raw in undo.items():
                body = b"" if i in victims else rewrite[u].get(i, raw)
                if body != raw:
                    pipe.hset(keys.undo(namespace, u), i, body)
        pipe.execute()
        return victims

    def _erase_staged(self, namespace: str, victims: set[str], source: str | None,
                      now: datetime) -> None:
        """Blank the records a running pass staged for the victims (its replay of the
        erase ops does the same) and drop the erased source from the others."""
        for raw_version in self._r.zrange(keys.building(namespace), 0, -1):
            version = int(raw_version)
            ids = sorted(m.decode() for m in self._r.smembers(keys.staged_ids(namespace, version)))
            raws = self._r.mget([keys.staged(namespace, version, i) for i in ids]) if ids else []
            pipe = self._r.pipeline(transaction=False)
            for memory_id, raw in zip(ids, raws, strict=True):
                if not raw:
                    continue
                if memory_id in victims:
                    pipe.set(keys.staged(namespace, version, memory_id), b"")
                elif source:
                    m = unpack_memory(raw, namespace, memory_id)
                    if source in m.sources:
                        kept = ops.drop_source(m, source=source, now=now)
                        pipe.set(keys.staged(namespace, version, memory_id),
                                 b"" if kept is None else pack_memory(kept))
            pipe.execute()

    def _versions(self, namespace: str) -> tuple[int, ...]:
        committed = self._r.zrange(keys.versions(namespace), 0, -1)
        building = self._r.zrange(keys.building(namespace), 0, -1)
        return (self._gw.current_version(namespace), *(int(v) for v in (*committed, *building)))

    def _scrub_delta(self, namespace: str, victims: set[str], source: str | None) -> None:
        """Physically rewrite the delta stream without entries about the erased data."""
        drop = []
        for eid, f in self._r.xrange(keys.delta(namespace), "-", "+"):
            op = DeltaOp(f[b"op"].decode())
            if op in (DeltaOp.ERASE, DeltaOp.ERASE_SOURCE):
                continue
            mentions_source = source is not None and \
                json.loads(f.get(b"args", b"{}")).get("source") == source
            if f[b"id"].decode() in victims or mentions_source:
                drop.append(eid)
        if drop:
            self._gw.rewrite_stream(keys=[keys.delta(namespace),
                                          keys.prefix(namespace) + "delta:tmp"], args=drop)

    def _remove(self, namespace: str, planner: Planner, source: str | None,
                now: datetime) -> set[str]:
        """Remove what ``planner`` picks from the live records, the undo hashes older
        versions roll back to, the records a pass in flight staged, the delta log and the
        index blobs; returns the removed ids."""
        self._gw.new_generation(namespace)
        victims: set[str] = set()
        while True:  # a pass may commit (moving records into an undo hash): repeat then
            seen = self._versions(namespace)
            victims |= self._erase_live(namespace, planner, source, now, victims)
            victims |= self._erase_history(namespace, planner, victims)
            self._erase_staged(namespace, victims, source, now)
            victims |= self._erase_live(namespace, planner, source, now, victims)
            if self._versions(namespace) == seen:
                break
        for version in set(seen):
            self._snapshots.drop_index_blobs(namespace, version)
        self._scrub_delta(namespace, victims, source)
        self._gw.new_generation(namespace)
        return victims

    def _erase(self, namespace: str, memory_id: str | None, source: str | None, now: datetime,
               reason: str) -> set[str]:
        now = as_utc(now)

        def planner(memories: dict[str, Memory]) -> tuple[set[str], dict[str, Memory]]:
            return plan_erase(memories, memory_id=memory_id, source=source, now=now)

        victims = self._remove(namespace, planner, source, now)
        # An erased turn takes the entries quoting what a model made of it too (MODEL_ERROR
        # cites the turns its call read).
        self._audit.redact(namespace, victims | ({source} if source else set()),
                           uncited_model_errors=True)
        self._audit.append([AuditEvent(
            action=AuditAction.ERASE, namespace=namespace, before=sorted(victims), reason=reason,
            actor=Actor.USER, at=now)])
        self.rewrite_files()
        metrics.record_memory_change("erased", len(victims), namespace)
        return victims

    def purge(self, namespace: str, ids: Collection[str], now: datetime, reason: str) -> set[str]:
        """Hard-delete the records ``ids`` (tombstones past their grace period) from every
        version and a pass in flight. Nothing cascades: memories merged into them or
        citing them stay. The audit keeps that they existed and why (reasons stay, texts
        become ``[purged]``) plus one PURGE event; ``restore`` then says they were purged.
        The caller rewrites the AOF and dump.rdb (once for a whole maintenance run)."""
        validate_namespace(namespace)
        for memory_id in ids:
            validate_identifier(memory_id)
        now = as_utc(now)
        wanted = set(ids)
        if not wanted:
            return set()

        def planner(memories: dict[str, Memory]) -> tuple[set[str], dict[str, Memory]]:
            return wanted & memories.keys(), {}

        victims = self._remove(namespace, planner, None, now)
        if victims:
            self._r.hset(keys.purged(namespace), mapping=dict.fromkeys(victims, now.timestamp()))
            self._audit.redact(namespace, victims, keep_reason=True, marker=PURGED)
            self._audit.append([AuditEvent(
                action=AuditAction.PURGE, namespace=namespace, before=sorted(victims),
                reason=reason, actor=Actor.CONSOLIDATION, at=now)])
        return victims

    def purged_at(self, namespace: str, memory_id: str) -> datetime | None:
        """When maintenance purged ``memory_id`` (None: it was not purged)."""
        raw = self._r.hget(keys.purged(namespace), memory_id)
        return None if raw is None else datetime.fromtimestamp(float(raw), UTC)

    def rewrite_aof(self, wait: float = 30.0) -> bool:
        """Ask Redis to rewrite its append-only file, so erased bytes leave the disk too.

        Without a rewrite the AOF keeps every write ever made (the erased text and vector
        included) until Redis rewrites it on its own. A rewrite already running started
        from a snapshot that may predate the erase, so it is waited out (up to
        ``wait`` seconds) and a new one started. On a cluster every primary rewrites.
        Returns True if a rewrite was started or scheduled everywhere; False when AOF is
        off or the command is refused (managed Redis).
        """
        return all([self._rewrite_node(node, wait) for node in self._gw.nodes()])

    def rewrite_files(self, wait: float = 30.0) -> None:
        """After an erase: rewrite the AOF (:meth:`rewrite_aof`) and, where RDB snapshots
        are configured, write a new ``dump.rdb`` (:meth:`save_snapshot`), so erased bytes
        leave every file Redis keeps. A marker remembers them until Redis reports them
        done (:meth:`resume_rewrites`: a crash mid-rewrite does not leave them undone)."""
        self._pending.mark()
        self.rewrite_aof(wait)
        self.save_snapshot(wait)

    def resume_rewrites(self, wait: float = 0.0) -> RewriteState:
        """Check the rewrites an erase started (memcore.store.rewrites); start them again
        when Redis restarted before they finished or they failed. Run on each beat tick."""
        state = self._pending.status()
        if state is RewriteState.LOST:
            log.warning("erase: the AOF rewrite / BGSAVE an erase started did not finish "
                        "(Redis restarted or it failed): starting it again")
            self.rewrite_files(wait)
        return state

    def save_snapshot(self, wait: float = 30.0) -> bool:
        """Ask Redis for a new RDB snapshot (``BGSAVE``) where it keeps one: ``save``
        points are configured, or this server wrote a snapshot since it started. The old
        ``dump.rdb`` holds erased text and vectors until the next save point, which may be
        an hour away. A save already running may predate the erase: it is waited out (up
        to ``wait`` seconds) and a new one started; behind an AOF rewrite (just started
        by :meth:`rewrite_aof`) the save is scheduled to follow it. Returns True if a save
        was started or scheduled everywhere a snapshot is kept, False if none is kept or
        the command is refused (managed Redis)."""
        return all([self._save_node(node, wait) for node in self._gw.nodes()])

    @staticmethod
    def _save_node(node: redis.Redis, wait: float) -> bool:
        try:
            points = str(node.config_get("save").get("save", "")).strip()
            if not points and not int(node.info("persistence").get("rdb_saves", 0)):
                return False  # no dump.rdb is written: nothing to rewrite
            return _start_in_background(lambda: node.bgsave(schedule=True), wait)
        except redis.ResponseError as exc:
            log.warning("erase: BGSAVE refused (%s); dump.rdb keeps erased bytes until "
                        "Redis saves again", exc)
            return False

    @staticmethod
    def _rewrite_node(node: redis.Redis, wait: float) -> bool:
        try:
            if int(node.info("persistence").get("aof_enabled", 0)) != 1:
                return False
            return _start_in_background(node.bgrewriteaof, wait)
        except redis.ResponseError as exc:
            log.warning("erase: BGREWRITEAOF refused (%s); the AOF keeps erased bytes until "
                        "Redis rewrites it", exc)
            return False

    def erase_memory(self, namespace: str, memory_id: str, now: datetime,
                     reason: str = "erase requested") -> int:
        """Erase one memory everywhere; returns how many memory ids were removed
        (the memory plus records merged into it or supported only by it)."""
        validate_namespace(namespace)
        validate_identifier(memory_id)
        token = self.unfinished.begin(EraseKind.MEMORY, namespace, memory_id, reason)
        memories = self._latest_records(namespace, memory_id)
        victims, _ = plan_erase(memories, memory_id=memory_id, source=None, now=as_utc(now))
        self._note(namespace, memories, victims, ())
        removed = len(self._erase(namespace, memory_id, None, now, reason))
        self.unfinished.end(token)
        return removed

    def _latest_records(self, namespace: str, memory_id: str) -> dict[str, Memory]:
        """The records of the newest version that holds ``memory_id`` (empty: none does)."""
        committed = [int(v) for v in self._r.zrange(keys.versions(namespace), 0, -1)]
        for version in sorted({*committed, self._gw.current_version(namespace)}, reverse=True):
            if self._gw.load(namespace, version, [memory_id])[0] is not None:
                ids = self._gw.live_ids(namespace)
                return {m.id: m for m in self._gw.load(namespace, version, ids) if m is not None}
        return {}

    def erase_memory_and_sources(self, namespace: str, memory_id: str, now: datetime,
                                 reason: str = "erase requested") -> EraseReport:
        """Erase a memory everywhere (as :meth:`erase_memory`) and the turns it came from.

        The source turns of every removed record are erased whole (body and stream
        entry). A turn that also carried other facts is erased too: those memories stay,
        unchanged (their text is their own), and the ones whose every source turn is now
        gone are reported as ``orphaned`` (also named in the ERASE audit event), so the
        caller can erase them as well. The turns go before the AOF rewrite, so the
        rewritten file holds neither the memory nor its turns."""
        validate_namespace(namespace)
        validate_identifier(memory_id)
        now = as_utc(now)
        token = self.unfinished.begin(EraseKind.MEMORY_AND_SOURCES, namespace, memory_id,
                                      reason)
        memories = self._latest_records(namespace, memory_id)
        victims, _ = plan_erase(memories, memory_id=memory_id, source=None, now=now)
        # Every turn a removed record counted: the ids it lists and those it unlisted.
        candidates = sorted({s for v in victims for s in memories[v].sources}
                            | unlisted_sources(self._r, namespace, victims))
        self._note(namespace, memories, victims, candidates)
        episodes = [s for s in candidates if self._episodes.drop(namespace, s)]
        gone = set(episodes)
        orphaned = sorted(m.id for m in memories.values() if m.id not in victims
                          and m.sources and set(m.sources) <= gone)
        note = (f"; source turns erased: {', '.join(episodes) or 'none'}"
                f"; kept without a source turn: {', '.join(orphaned) or 'none'}")
        removed = self._erase(namespace, memory_id, None, now, reason + note)
        self.unfinished.end(token)
        return EraseReport(sorted(removed), episodes, orphaned)

    def erase_episode(self, namespace: str, episode_id: str, now: datetime,
                      reason: str = "erase requested") -> int:
        """Erase an episode and what it alone supports; memories with other sources lose
        this one. Returns the number of memory ids removed plus 1 if the episode existed."""
        validate_namespace(namespace)
        validate_identifier(episode_id)
        token = self.unfinished.begin(EraseKind.EPISODE, namespace, episode_id, reason)
        memories = {m.id: m for m in self._gw.live_memories(namespace)}
        victims, _ = plan_erase(memories, memory_id=None, source=episode_id, now=as_utc(now))
        self._note(namespace, memories, victims, [episode_id])
        existed = self._episodes.drop(namespace, episode_id)
        removed = len(self._erase(namespace, None, episode_id, now, reason)) + int(existed)
        self.unfinished.end(token)
        return removed

    def erase_namespace(self, namespace: str, now: datetime,
                        reason: str = "erase requested", *, missing_ok: bool = False) -> int:
        """Delete every key of ``namespace``; only an ERASE audit event remains, and a new
        generation token (:func:`keys.generation`). Returns the number of keys deleted.

        First the namespace's erase fence advances (memcore.store.fences), so turns of it
        accepted before this call and still queued are dropped by the workers, never
        stored; turns accepted afterwards are stored as usual. A namespace without any
        key gets the fence too (its turns may all still be queued) but no other key, and
        raises NamespaceNotFound saying so (a typo'd name must not read as erased);
        ``missing_ok`` returns 0 instead."""
        validate_namespace(namespace)
        fence = self._fences.advance(namespace)
        deleted = 0
        batch: list[bytes] = []
        memory_ids: set[bytes] = set()
        for key in self._r.scan_iter(match=keys.pattern(namespace), count=1000):
            batch.append(key)
            head, _, memory_id = key.rpartition(b":")
            if head.endswith(b":m"):  # mc:{ns}:m:<id>
                memory_ids.add(memory_id)
            if len(batch) >= BATCH:
                deleted += int(self._r.delete(*batch))
                batch = []
        if batch:
            deleted += int(self._r.delete(*batch))
        if not deleted:  # a typo'd name must not read as erased, nor leave keys behind
            if missing_ok:
                return 0
            raise NamespaceNotFound(
                f"namespace {namespace!r} has no data: nothing stored to erase (check the "
                f"name); its erase fence is set anyway (erase count {fence}), so turns of "
                "it accepted before now and still queued will be dropped, not stored")
        self._gw.forget(namespace)
        # A new generation token (random, no data) tells every process's caches (search
        # indexes, pass tables) that what they hold of the namespace is gone, even if it
        # fills again up to the same log position.
        self._gw.new_generation(namespace)
        self._audit.append([AuditEvent(action=AuditAction.ERASE, namespace=namespace,
                                            reason=f"namespace erased: {reason}",
                                            actor=Actor.USER, at=as_utc(now))])
        self.rewrite_files()
        metrics.record_memory_change("erased", len(memory_ids), namespace)
        return deleted

    def finish_unfinished(self, older_than: float, now: datetime | None = None) -> int:
        """Run again the erases begun more than ``older_than`` seconds ago and not ended
        (their process died mid-way: memcore.store.unfinished); returns how many
        finished. One that fails stays for the next call."""
        finished = 0
        for entry in self.unfinished.older_than(older_than):
            try:
                self._run_again(entry, as_utc(now or datetime.now(UTC)))
            except Exception as exc:  # Redis away or a bug: the next call tries again
                log.warning("unfinished %s erase in %s not finished yet: %s",
                            entry.kind.value, entry.namespace, exc)
                continue
            self.unfinished.end(entry.token)
            finished += 1
        return finished

    def _run_again(self, entry: UnfinishedErase, now: datetime) -> None:
        """One unfinished erase, run again (each kind is idempotent)."""
        reason = entry.reason + " (finished after an interruption)"
        log.warning("finishing a %s erase in %s that was cut short", entry.kind.value,
                    entry.namespace)
        if entry.kind is EraseKind.EPISODE:
            self.erase_episode(entry.namespace, entry.target, now, reason)
        elif entry.kind is EraseKind.MEMORY_AND_SOURCES:
            self.erase_memory_and_sources(entry.namespace, entry.target, now, reason)
        else:
            self.erase_memory(entry.namespace, entry.target, now, reason)


def _start_in_background(command: Callable[[], object], wait: float) -> bool:
    """Run a BGSAVE/BGREWRITEAOF ``command``; one already in progress may have started
    before the erase, so it is waited out (up to ``wait`` seconds) and ours started after.
    Raises the server's refusal."""
    deadline = time.monotonic() + wait
    while True:
        try:
            command()
            return True
        except redis.ResponseError as exc:
            if "in progress" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _erase_entries(victims: Iterable[str], source: str | None, now: datetime
                   ) -> list[DeltaEntry]:
    """The delta entries a running pass replays for an erase: each victim, and the
    erased source."""
    entries = [DeltaEntry(v, DeltaOp.ERASE, 0, {"now": now}) for v in victims]
    if source:
        entries.append(DeltaEntry(source, DeltaOp.ERASE_SOURCE, 0,
                                  {"source": source, "now": now}))
    return entries
