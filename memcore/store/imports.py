"""Imports of export files: records with their ids, audit events, and a resume marker.

One chunk of an export file commits in one compare-and-write (:meth:`Gateway.commit`):
its new records (with hash keys, status counts, order log: :func:`queue_changes`, the
code every write uses, so search indexes and stats see them), its audit events and the
marker ``mc:{ns}:import:<export id> = last line``. A kill between chunks leaves a
chunk either wholly written or not at all; a resumed import starts after the marker.
Records whose id is already stored are skipped after a check that they are the same
memory (text and content hash), so importing twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memcore.core.models import AuditEvent, Episode, Memory, validate_namespace
from memcore.store import keys
from memcore.store.audit import AuditLog
from memcore.store.base import DeltaEntry, DeltaOp
from memcore.store.changes import Change, queue_changes
from memcore.store.codec import unpack_memory
from memcore.store.episodes import Episodes
from memcore.store.gateway import Gateway


class ImportConflict(ValueError):
    """An imported record clashes with what the namespace holds."""


@dataclass
class ChunkResult:
    """What one committed chunk wrote."""

    added: int = 0
    existing: int = 0
    episodes: int = 0
    audit: int = 0


class Importer:
    """Write chunks of an export file into a namespace, resumably and idempotently."""

    def __init__(self, gateway: Gateway, audit: AuditLog, episodes: Episodes) -> None:
        self._gw = gateway
        self._audit = audit
        self._episodes = episodes

    def progress(self, namespace: str, export_id: str) -> int:
        """The last line of export ``export_id`` committed into ``namespace`` (0: none)."""
        raw = self._gw.client.get(keys.import_marker(validate_namespace(namespace), export_id))
        return int(raw) if raw is not None else 0

    def write(self, namespace: str, export_id: str, last_line: int, memories: Sequence[Memory],
              episodes: Sequence[Episode], events: Sequence[AuditEvent], now: datetime
              ) -> ChunkResult:
        """Commit one chunk ending at line ``last_line``. Episodes are stored first
        (idempotent by id); records, events and the marker commit together, only if the
        marker still is below ``last_line`` (a second importer of the same file loses)."""
        validate_namespace(namespace)
        _check_namespaces(namespace, memories, episodes, events)
        gw = self._gw
        gw.register(namespace)
        out = ChunkResult(episodes=sum(self._episodes.add_episodes(episodes)) if episodes else 0)
        marker = keys.import_marker(namespace, export_id)
        while True:
            before = gw.client.get(marker)
            if before is not None and int(before) >= last_line:
                return out  # committed already (by us before a retry, or a twin import)
            version = gw.current_version(namespace)
            token = gw.client.get(keys.pass_token(namespace))
            raws = gw.client.mget([keys.memory(namespace, m.id) for m in memories]) \
                if memories else []
            news, existing = _new_ones(namespace, memories, raws)
            live = [m for m in news if m.live]
            owners = gw.client.mget([keys.by_hash(namespace, m.content_hash) for m in live]) \
                if live else []
            _check_unowned(namespace, live, owners)
            batch = gw.batch(namespace)
            changes = [Change(None, m, [DeltaEntry(m.id, DeltaOp.ADD, m.version, record=m)])
                       for m in news]
            queue_changes(batch, namespace, version, changes, {}, token is not None)
            self._audit.queue(batch, events)
            batch.set(marker, str(last_line))
            if version == 0 and (news or events):
                batch.zadd(keys.versions(namespace), {"0": now.timestamp()}, nx=True)
            batch.check(marker, before)
            for memory in news:
                batch.check(keys.memory(namespace, memory.id), None)
            for memory in live:
                batch.check(keys.by_hash(namespace, memory.content_hash), None)
            if gw.commit(namespace, batch, version=version, token=token):
                out.added, out.existing, out.audit = len(news), existing, len(events)
                return out


def _check_namespaces(namespace: str, memories: Sequence[Memory], episodes: Sequence[Episode],
                      events: Sequence[AuditEvent]) -> None:
    """Every record of a chunk belongs to ``namespace``."""
    for other_ns in {*(m.namespace for m in memories), *(e.namespace for e in episodes),
                     *(e.namespace for e in events)} - {namespace}:
        raise ValueError(f"namespace: a record belongs to {other_ns!r}, not {namespace!r}")


def _new_ones(namespace: str, memories: Sequence[Memory], raws: Sequence[bytes | None]
              ) -> tuple[list[Memory], int]:
    """The memories not stored yet, and how many are (each the same memory as stored)."""
    news = []
    existing = 0
    for memory, raw in zip(memories, raws, strict=True):
        if raw is None:
            news.append(memory)
            continue
        _same(unpack_memory(raw, namespace, memory.id, vector=False), memory)
        existing += 1
    return news, existing


def _check_unowned(namespace: str, live: Sequence[Memory], owners: Sequence[bytes | None]
                   ) -> None:
    """No live memory of the chunk repeats the text and scope of another live one, stored
    (``owners``: its hash keys as read) or earlier in the chunk."""
    seen: dict[str, str] = {}
    for memory, owner in zip(live, owners, strict=True):
        other = owner.decode() if owner is not None else seen.get(memory.content_hash)
        if other is not None and other != memory.id:
            raise ImportConflict(
                f"memory {memory.id}: live memory {other} of namespace {namespace!r} "
                "has the same text and scope (import into an empty namespace)")
        seen[memory.content_hash] = memory.id


def _same(stored: Memory, incoming: Memory) -> None:
    """An id already stored must be the same memory (its recall bookkeeping may differ)."""
    for name in ("text", "content_hash", "created_at"):
        if getattr(stored, name) != getattr(incoming, name):
            raise ImportConflict(
                f"memory {incoming.id}: already stored with another {name} (the namespace "
                "holds a different memory under this id)")
