"""MemoryStore: the Redis store of memcore, assembled from its parts.

Reads of the current version, counters and consolidation triggers live here;
writes, snapshots, episodes, audit and erase come from the mixins.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import redis

from memcore.core.models import Memory, Status, validate_identifier, validate_namespace
from memcore.store import keys
from memcore.store.base import BATCH
from memcore.store.erase import EraseMixin
from memcore.store.records import record_vector, unpack_memory


class MemoryStore(EraseMixin):
    """Namespaced, versioned, audited memory storage on Redis."""

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> MemoryStore:
        """A store on a new client for ``url``."""
        return cls(redis.Redis.from_url(url), **kw)

    def namespaces(self) -> list[str]:
        """Every namespace that has data, sorted."""
        return sorted(m.decode() for m in self._r.smembers(keys.REGISTRY))

    def get(self, ns: str, memory_id: str) -> Memory | None:
        """A memory of the current version, or None."""
        return self._read_current(ns, [memory_id])[1][0]

    def get_many(self, ns: str, ids: Sequence[str], *, vectors: bool = True
                 ) -> list[Memory | None]:
        """Memories of the current version (one atomic round trip: never a mix of versions).

        ``vectors=False`` leaves ``vector`` None (cheaper when only texts are needed)."""
        if not ids:
            return []
        return self._read_current(ns, list(ids), vectors=vectors)[1]

    def find_by_hash(self, ns: str, content_hash: str) -> str | None:
        """Id of a live memory whose normalized text has ``content_hash``."""
        return self.find_by_hashes(ns, [content_hash])[0]

    def find_by_hashes(self, ns: str, hashes: Sequence[str]) -> list[str | None]:
        """For each content hash, the id of a live memory with that normalized text (or
        None); one atomic round trip, all from the current version."""
        return self.find_by_hashes_at(ns, hashes)[1]

    def find_by_hashes_at(self, ns: str, hashes: Sequence[str]
                          ) -> tuple[int, list[str | None]]:
        """:meth:`find_by_hashes` and the current version it read them from."""
        validate_namespace(ns)
        for content_hash in hashes:
            keys.check_hash(content_hash)
        # The write path's read script with no ids: version, token, then owner/record pairs.
        res = self._read_for_write(keys=[keys.current(ns), keys.pass_token(ns)],
                                   args=[keys.prefix(ns), 0, *hashes])
        out: list[str | None] = []
        for pos, content_hash in enumerate(hashes):
            owner, raw = res[2 + 2 * pos], res[3 + 2 * pos]
            memory = (None if owner is None or raw is None
                      else unpack_memory(raw, ns, owner.decode(), vector=False))
            ok = memory is not None and memory.live and memory.content_hash == content_hash
            out.append(memory.id if ok and memory is not None else None)
        return int(res[0]), out

    def iter_memories(self, ns: str, statuses: Collection[Status] | None = None
                      ) -> Iterator[Memory]:
        """Memories of the current version (one version throughout), optionally by status."""
        validate_namespace(ns)
        version = self.current_version(ns)
        wanted = {Status(s) for s in statuses} if statuses is not None else None
        ids = self._version_ids(ns, version)
        for start in range(0, len(ids), BATCH):
            for memory in self._load(ns, version, ids[start : start + BATCH]):
                if memory is not None and (wanted is None or memory.status in wanted):
                    yield memory

    def count_by_status(self, ns: str) -> dict[str, int]:
        """Status -> number of memories in the current version (every status present)."""
        validate_namespace(ns)
        raw = self._r.hgetall(keys.stats(ns, self.current_version(ns)))
        out = {s.value: 0 for s in Status}
        out.update({k.decode(): int(v) for k, v in raw.items()})
        return out

    def vectors_since(self, ns: str, version: int, offset: int, limit: int | None = None
                      ) -> tuple[list[str], np.ndarray, int]:
        """Ids and float32 vectors appended to ``version``'s insertion-order log from
        ``offset`` (memories without a vector are skipped); returns the new offset.

        An id appears again when UPDATE changed its vector: the later entry wins."""
        validate_namespace(ns)
        out_ids: list[str] = []
        vectors: list[np.ndarray] = []
        pos, end = offset, None if limit is None else offset + limit
        while end is None or pos < end:  # one script per BATCH ids: no long-blocking reply
            step = BATCH if end is None else min(BATCH, end - pos)
            res = self._order_since(keys=[keys.order_len(ns, version)],
                                    args=[keys.vprefix(ns, version), keys.ORDER_CHUNK, pos, step])
            for memory_id, raw in zip(res[1::2], res[2::2], strict=True):
                vec = record_vector(raw) if raw is not None else None
                if vec is not None:
                    out_ids.append(memory_id.decode())
                    vectors.append(vec)
            moved, pos = int(res[0]) - pos, int(res[0])
            if moved < step:
                break
        matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), np.float32)
        return out_ids, matrix, pos

    # --- counters and triggers -------------------------------------------------------
    def incr_counters(self, ns: str, counts: Mapping[str, float]) -> None:
        """Add to usage counters (model calls, tokens, embeddings, decisions...)."""
        validate_namespace(ns)
        pipe = self._r.pipeline(transaction=False)
        for name, value in counts.items():
            pipe.hincrbyfloat(keys.counters(ns), name, float(value))
        pipe.execute()

    def counters(self, ns: str) -> dict[str, float]:
        """All usage counters of ``ns``."""
        validate_namespace(ns)
        return {k.decode(): float(v) for k, v in self._r.hgetall(keys.counters(ns)).items()}

    def pending_importance(self, ns: str) -> float:
        """Summed importance (1-10 scale) of memories written since the last pass."""
        validate_namespace(ns)
        return float(self._r.get(keys.pending(ns)) or 0.0)

    def stash_pass_plan(self, ns: str, pass_id: str, body: str, ttl_seconds: int) -> None:
        """Keep a running pass's plan (JSON) where every worker of the pass can read it."""
        self._r.set(keys.pass_plan(ns, pass_id), body, ex=ttl_seconds)

    def pass_plan(self, ns: str, pass_id: str) -> str | None:
        """The stashed plan of pass ``pass_id`` (None: expired or finished)."""
        raw = self._r.get(keys.pass_plan(ns, pass_id))
        return None if raw is None else raw.decode() if isinstance(raw, bytes) else str(raw)

    def last_pass_at(self, ns: str) -> datetime | None:
        """When the last pass committed, or None."""
        validate_namespace(ns)
        raw = self._r.get(keys.last_pass(ns))
        return None if raw is None else datetime.fromtimestamp(float(raw), UTC)


def footprint(store: MemoryStore, ns: str, sample: int = 2000) -> dict[str, float]:
    """Redis bytes per memory of the current version, measured with MEMORY USAGE.

    Counts the record key, its content-hash key and its share of the order log.
    """
    validate_namespace(ns)
    client = store.client
    version = store.current_version(ns)
    ids = store._version_ids(ns, version)[:sample]
    if not ids:
        return {"memories": 0, "bytes_per_memory": 0.0, "text_bytes_per_memory": 0.0,
                "vector_bytes_per_memory": 0.0}
    memories = [m for m in store._load(ns, version, ids) if m is not None]
    pipe = client.pipeline(transaction=False)
    for m in memories:
        validate_identifier(m.id)
        pipe.memory_usage(keys.memory(ns, version, m.id), samples=0)
        pipe.memory_usage(keys.by_hash(ns, version, m.content_hash), samples=0)
    usage = [int(u or 0) for u in pipe.execute()]
    total_order = int(client.get(keys.order_len(ns, version)) or 0)
    order_bytes = sum(int(client.memory_usage(keys.order_chunk(ns, version, c), samples=0) or 0)
                      for c in range(-(-total_order // keys.ORDER_CHUNK)))
    n = len(memories)
    return {
        "memories": float(n),
        "bytes_per_memory": sum(usage) / n + order_bytes / max(1, total_order),
        "text_bytes_per_memory": sum(len(m.text.encode()) for m in memories) / n,
        "vector_bytes_per_memory": sum(len(m.vector) + 6 for m in memories if m.vector) / n,
    }
