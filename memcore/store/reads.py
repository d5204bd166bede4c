"""Reads of records: the current version, content-hash lookups, the order log."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence

import numpy as np

from memcore.core.filters import FilterFields
from memcore.core.models import Memory, Status, validate_namespace
from memcore.store import keys
from memcore.store.base import BATCH, NamespaceState
from memcore.store.codec import (
    RecordMemo,
    packed_vector,
    record_vector,
    unpack_filter_fields,
    unpack_memory,
)
from memcore.store.gateway import Gateway


class Records:
    """Consistent reads of memories (one version per call)."""

    def __init__(self, gateway: Gateway) -> None:
        self._gw = gateway

    def namespaces(self) -> list[str]:
        """Every namespace that has data, sorted."""
        return sorted(m.decode() for m in self._gw.client.smembers(keys.REGISTRY))

    def has_namespace(self, namespace: str) -> bool:
        """True if ``namespace`` has data (is in the registry): one SISMEMBER."""
        return bool(self._gw.client.sismember(keys.REGISTRY, namespace))

    def get(self, namespace: str, memory_id: str) -> Memory | None:
        """A memory of the current version, or None."""
        return self._gw.read_current(namespace, [memory_id])[1][0]

    def get_many(self, namespace: str, ids: Sequence[str], *, vectors: bool = True,
                 memo: RecordMemo | None = None) -> list[Memory | None]:
        """Memories of the current version (one atomic round trip: never a mix of versions).

        ``vectors=False`` leaves ``vector`` None (cheaper when only texts are needed);
        ``memo`` (implies ``vectors=False``) reuses the records decoded before whose bytes
        did not change."""
        if not ids:
            return []
        if memo is None:
            return self._gw.read_current(namespace, list(ids), vectors=vectors)[1]
        _, raws = self._gw.read_current_raw(namespace, ids)
        return [None if raw is None else memo.decode(raw, namespace, i)
                for i, raw in zip(ids, raws, strict=True)]

    def search_read(self, namespace: str, ids: Sequence[str], memo: RecordMemo,
                    extra: str | None = None,
                    check: Callable[[bytes | None], None] | None = None,
                    ) -> tuple[NamespaceState, list[Memory | None]]:
        """The namespace's state and the records of ``ids`` (without vectors, through
        ``memo``) in one round trip; ``check(value of extra)`` runs first and may raise:
        then no record is decoded or returned."""
        state, guarded, raws = self._gw.search_read(namespace, ids, extra)
        if check is not None:
            check(guarded)
        return state, [None if raw is None else memo.decode(raw, namespace, i)
                       for i, raw in zip(ids, raws, strict=True)]

    def get_many_packed(self, namespace: str, ids: Sequence[str]
                        ) -> list[tuple[Memory, bytes] | None]:
        """:meth:`get_many` with each memory's vector left packed: the memory without
        it, and the bytes :func:`~memcore.store.codec.unpack_vector` decodes it from."""
        if not ids:
            return []
        _, raws = self._gw.read_current_raw(namespace, ids)
        return [None if raw is None else
                (unpack_memory(raw, namespace, i, vector=False), packed_vector(raw))
                for i, raw in zip(ids, raws, strict=True)]

    def find_by_hash(self, namespace: str, content_hash: str) -> str | None:
        """Id of a live memory whose normalized text has ``content_hash``."""
        return self.find_by_hashes(namespace, [content_hash])[0]

    def find_by_hashes(self, namespace: str, hashes: Sequence[str]) -> list[str | None]:
        """For each content hash, the id of a live memory with that normalized text (or
        None); one atomic round trip, all from the current version."""
        return self.find_by_hashes_at(namespace, hashes)[1]

    def find_by_hashes_at(self, namespace: str, hashes: Sequence[str]
                          ) -> tuple[int, list[str | None]]:
        """:meth:`find_by_hashes` and the current version it read them from."""
        validate_namespace(namespace)
        for content_hash in hashes:
            keys.check_hash(content_hash)
        # The write path's read script with no ids: version, token, then owner/record pairs.
        res = self._gw.read_for_write(keys=[keys.current(namespace), keys.pass_token(namespace)],
                                   args=[keys.prefix(namespace), 0, *hashes])
        out: list[str | None] = []
        for pos, content_hash in enumerate(hashes):
            owner, raw = res[2 + 2 * pos], res[3 + 2 * pos]
            memory = (None if owner is None or raw is None
                      else unpack_memory(raw, namespace, owner.decode(), vector=False))
            ok = memory is not None and memory.live and memory.content_hash == content_hash
            out.append(memory.id if ok and memory is not None else None)
        return int(res[0]), out

    def _consistent(self, namespace: str) -> tuple[list[str], list[bytes | None]]:
        """Every record of ``namespace`` from one version: read again if a pass committed (or a
        rollback moved the pointer) while the batches were read (rare)."""
        ids, raws = self._gw.live_ids(namespace), []
        for _ in range(8):
            version = self._gw.current_version(namespace)
            raws = self._gw.load_raw(namespace, ids)
            if self._gw.current_version(namespace) == version:
                break
            ids = self._gw.live_ids(namespace)
        return ids, raws

    def iter_memories(self, namespace: str, statuses: Collection[Status] | None = None, *,
                      vectors: bool = True) -> Iterator[Memory]:
        """Memories of the current version (one version throughout), optionally by status;
        ``vectors=False`` skips decoding the vectors (listing and filtering need none)."""
        validate_namespace(namespace)
        wanted = {Status(s) for s in statuses} if statuses is not None else None
        ids, raws = self._consistent(namespace)
        for memory_id, raw in zip(ids, raws, strict=True):
            if raw is None:
                continue
            memory = unpack_memory(raw, namespace, memory_id, vector=vectors)
            if wanted is None or memory.status in wanted:
                yield memory

    def filter_fields_many(self, namespace: str, ids: Sequence[str]) -> list[FilterFields | None]:
        """:meth:`get_many` reduced to what filters read (much cheaper to decode)."""
        if not ids:
            return []
        _, raws = self._gw.read_current_raw(namespace, ids)
        return [None if raw is None else unpack_filter_fields(raw, i)
                for i, raw in zip(ids, raws, strict=True)]

    def iter_filter_fields(self, namespace: str) -> Iterator[FilterFields]:
        """What filters read of every memory of the current version (one version
        throughout): a scan much cheaper than :meth:`iter_memories`."""
        validate_namespace(namespace)
        ids, raws = self._consistent(namespace)
        for memory_id, raw in zip(ids, raws, strict=True):
            if raw is not None:
                yield unpack_filter_fields(raw, memory_id)

    def count_by_status(self, namespace: str) -> dict[str, int]:
        """Status -> number of memories in the current version (every status present)."""
        validate_namespace(namespace)
        raw = self._gw.client.hgetall(keys.stats(namespace))
        out = {s.value: 0 for s in Status}
        out.update({k.decode(): int(v) for k, v in raw.items()})
        return out

    def vectors_since(self, namespace: str, version: int, offset: int, limit: int | None = None
                      ) -> tuple[list[str], np.ndarray, int]:
        """Ids and float32 vectors appended to the insertion-order log from ``offset``
        (memories without a vector are skipped); returns the new offset. The log is shared
        by every version (``version`` names the caller's cache, not a keyspace).

        An id appears again when UPDATE changed its vector: the later entry wins."""
        validate_namespace(namespace)
        out_ids: list[str] = []
        vectors: list[np.ndarray] = []
        pos, end = offset, None if limit is None else offset + limit
        while end is None or pos < end:  # one script per BATCH ids: no long-blocking reply
            step = BATCH if end is None else min(BATCH, end - pos)
            res = self._gw.order_since(keys=[keys.order_len(namespace)],
                                       args=[keys.prefix(namespace), keys.ORDER_CHUNK, pos, step])
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
