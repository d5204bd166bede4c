"""Records read by searches, kept while nothing in their namespace changed.

A search reads its namespace's state first (one round trip: version, erase epoch,
order-log length, record-change and recall counts; see
:class:`~memcore.store.NamespaceState`). Every change to a record moves one of those, so
records read after a state was read are still current for as long as a later search reads
the same state: it reads only the records it has not seen since, usually none. A
search then costs one round trip instead of two.
"""

from __future__ import annotations

from collections.abc import Sequence

from memcore.core.models import Memory
from memcore.core.vector_index import NamespaceLRU
from memcore.store import MemoryStore, NamespaceState, RecordMemo

_Counts = tuple[str, str]  # (record changes, recall writes)
_Records = dict[str, Memory | None]


class SearchRecordCache(NamespaceLRU[tuple[_Counts, _Records]]):
    """Per-process records (decoded without vectors, shared: never mutate them) of a few
    namespaces, each set valid for one namespace state. Thread-safe."""

    def __init__(self, max_namespaces: int = 16, max_records: int = 50_000) -> None:
        super().__init__(max_namespaces)
        if max_records < 1:
            raise ValueError(f"max_records must be >= 1, got {max_records}")
        self.max_records = max_records
        self.hits = 0
        self.misses = 0

    def get_many(self, store: MemoryStore, namespace: str, state: NamespaceState,
                 ids: Sequence[str], memo: RecordMemo) -> list[Memory | None]:
        """The records of ``ids`` as current as ``state`` (read by the caller before this
        call) or newer: the ones cached under the same state, the rest read now (one
        round trip)."""
        generation = (state.epoch, state.version)
        counts = (state.writes, state.recalls)
        with self._lock:
            entry = self._entries.get(namespace)
            if entry is None or entry[0] != generation or entry[1] != state.order_length \
                    or entry[2][0] != counts:
                records: _Records = {}
            else:
                records = entry[2][1]
            self._remember(namespace, generation, state.order_length, (counts, records))
            got = {mid: records[mid] for mid in ids if mid in records}
            missing = [mid for mid in dict.fromkeys(ids) if mid not in got]
            self.hits += len(got)
            self.misses += len(missing)
        if missing:
            # Read after ``state``: at least as new as it (a record changed since has
            # moved the state, and the next search reads another one).
            fresh = dict(zip(missing, store.get_many(namespace, missing, memo=memo),
                             strict=True))
            with self._lock:
                if len(records) + len(fresh) > self.max_records:
                    records.clear()
                records.update(fresh)
            got.update(fresh)
        return [got[mid] for mid in ids]
