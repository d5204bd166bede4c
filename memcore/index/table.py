"""A namespace's memories as columns: what a consolidation pass holds at scale.

A pass over 10^6 memories cannot hold 10^6 pydantic objects (a 384-float vector as a
Python list alone is ~12 KB). :class:`MemoryTable` keeps one numpy array per field the
plan and the decay rules read, the vectors as the store keeps them (int8 codes and one
scale per row, or float32), the texts and content hashes as plain lists, and nothing
else; the few records a pass changes are materialized as :class:`Memory` on demand.
Times are epoch microseconds (``NONE_TIME`` for None).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memcore.core.models import LIVE_STATUSES, Kind, Memory, Status

NONE_TIME = -(2**63)
"""Epoch-microsecond stand-in for a missing time."""
STATUSES: list[Status] = list(Status)
KINDS: list[Kind] = list(Kind)
LIVE_CODES = np.array([STATUSES.index(s) for s in LIVE_STATUSES], dtype=np.uint8)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(value: datetime | None) -> int:
    """Epoch microseconds of an aware datetime (``NONE_TIME`` for None)."""
    if value is None:
        return NONE_TIME
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def micros_time(value: int) -> datetime:
    """Aware UTC datetime of epoch microseconds."""
    return datetime.fromtimestamp(value // 1_000_000, UTC).replace(microsecond=value % 1_000_000)


def from_micros(value: int) -> datetime | None:
    """Inverse of :func:`to_micros`."""
    if value == NONE_TIME:
        return None
    return micros_time(value)


class Vectors:
    """Row vectors: int8 codes with one float32 scale per row (the stored form, 4x
    smaller than float32) or dense float32; rows replaced or appended during a pass
    are kept apart as float32 so the base arrays are never copied."""

    def __init__(self, present: np.ndarray, *, dense: np.ndarray | None = None,
                 codes: np.ndarray | None = None, scales: np.ndarray | None = None) -> None:
        """``present[i]``: row ``i`` has a vector; ``dense`` or ``codes`` + ``scales``."""
        if (dense is None) == (codes is None):
            raise ValueError("vectors: give either dense or codes and scales")
        if codes is not None and (scales is None or scales.shape != (codes.shape[0],)):
            raise ValueError("scales: expected one float32 scale per row of codes")
        self.present = np.asarray(present, dtype=bool)
        self.dense = dense
        self.codes = codes
        self.scales = scales
        base = dense if dense is not None else codes
        assert base is not None
        self.base_rows = int(base.shape[0])
        self.dim = int(base.shape[1]) if base.ndim == 2 else 0
        self.override: dict[int, np.ndarray | None] = {}

    def __len__(self) -> int:
        return int(self.present.shape[0])

    def _base(self, rows: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            return np.asarray(self.dense[rows], dtype=np.float32)
        assert self.codes is not None and self.scales is not None
        out = self.codes[rows].astype(np.float32)
        out *= self.scales[rows, None]
        return out

    def take(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """Float32 matrix of ``rows`` (every one must have a vector)."""
        idx = np.asarray(rows, dtype=np.int64)
        if idx.size and not self.present[idx].all():
            raise ValueError("vectors: a requested row has no vector")
        out = np.empty((idx.size, self.dim), dtype=np.float32)
        plain = idx < self.base_rows
        if self.override:
            plain &= ~np.isin(idx, np.fromiter(self.override, dtype=np.int64))
        if plain.any():
            out[plain] = self._base(idx[plain])
        for pos in np.flatnonzero(~plain).tolist():
            vec = self.override[int(idx[pos])]
            assert vec is not None
            out[pos] = vec
        return out

    def take_all(self) -> np.ndarray:
        """Float32 matrix of every row (zeros for rows without a vector)."""
        out = np.zeros((len(self), self.dim), dtype=np.float32)
        for a in range(0, self.base_rows, 65_536):  # chunks: no second full-size temporary
            b = min(self.base_rows, a + 65_536)
            if self.dense is not None:
                out[a:b] = self.dense[a:b]
            else:
                assert self.codes is not None and self.scales is not None
                out[a:b] = self.codes[a:b]
                out[a:b] *= self.scales[a:b, None]
        for row, vec in self.override.items():
            out[row] = 0.0 if vec is None else vec
        return out

    def rows(self) -> StoredRows:
        """A read-only float32 view of every row, materialized per request (no full-size
        float32 copy: at 10^6 x 384 that copy alone is 1.5 GB)."""
        return StoredRows(self)

    def set(self, row: int, vector: Any) -> None:
        """Replace one row's vector (None = no vector)."""
        if not 0 <= row < len(self):
            raise IndexError(f"vectors: row {row} outside 0..{len(self) - 1}")
        vec = None if vector is None else np.asarray(vector, dtype=np.float32).reshape(-1)
        if vec is not None and self.dim and vec.size != self.dim:
            raise ValueError(f"vector: dimension {vec.size}, expected {self.dim}")
        if vec is not None and not self.dim:
            self.dim = int(vec.size)
        self.present[row] = vec is not None
        self.override[row] = vec

    def copy(self) -> Vectors:
        """A copy whose changes (:meth:`set`, :meth:`extend`: overrides and ``present``)
        leave this one alone. The base arrays are shared as read-only views, not copied
        (never written after construction but by :meth:`MemoryTable.patch` of the
        original, which a copy must not outlive)."""
        out = Vectors(self.present.copy(), dense=_read_only(self.dense),
                      codes=_read_only(self.codes), scales=_read_only(self.scales))
        out.dim = self.dim
        out.override = dict(self.override)
        return out

    def extend(self, vectors: Sequence[Any]) -> None:
        """Append rows (None = a row without a vector)."""
        start = len(self)
        self.present = np.concatenate([self.present, np.zeros(len(vectors), dtype=bool)])
        for i, vec in enumerate(vectors):
            self.set(start + i, vec)


def _read_only(array: np.ndarray | None) -> np.ndarray | None:
    if array is None:
        return None
    view = array.view()
    view.flags.writeable = False
    return view


class StoredRows:
    """Rows of :class:`Vectors` as float32, computed on indexing: ``rows[idx]`` equals
    ``vectors.take_all()[idx]`` bit for bit (zeros for rows without a vector) for an int
    array or a slice, so code written for a matrix reads only the rows it touches."""

    def __init__(self, vectors: Vectors) -> None:
        self.vectors = vectors
        self.shape = (len(vectors), vectors.dim)
        self._override = (np.fromiter(vectors.override, dtype=np.int64)
                          if vectors.override else None)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> np.ndarray:
        if isinstance(index, slice):
            index = np.arange(*index.indices(self.shape[0]))
        idx = np.asarray(index, dtype=np.int64).reshape(-1)
        v = self.vectors
        plain = idx < v.base_rows
        if self._override is None and idx.size and plain.all():
            return v._base(idx)  # the common case: stored rows only
        out = np.zeros((idx.size, v.dim), dtype=np.float32)
        if self._override is not None:
            plain &= ~np.isin(idx, self._override)
        if plain.any():
            out[plain] = v._base(idx[plain])
        if self._override is not None:
            for pos in np.flatnonzero(np.isin(idx, self._override)).tolist():
                vec = v.override[int(idx[pos])]
                if vec is not None:
                    out[pos] = vec
        return out


_FLOATS = ("importance", "strength", "confidence")
_TIMES = ("last_used", "last_supported", "created_at", "updated_at", "expires_at",
          "valid_until")
_SMALL = ("status", "kind", "derived_level")
_FLAGS = ("pinned", "explicit", "relation", "framed")


class MemoryTable:
    """Columns of a namespace's memories, in one fixed row order (the pass's order).

    ``ids``, ``texts`` and ``hashes`` are lists; every other field is a numpy array of
    one entry per row (see the module docstring for the units)."""

    def __init__(self, namespace: str, ids: list[str], texts: list[str], hashes: list[str],
                 vectors: Vectors, columns: dict[str, np.ndarray],
                 scopes: list[str] | None = None) -> None:
        """Wrap prepared columns; :meth:`from_memories` and the store's decoder build them.

        ``scopes``: each row's ``Memory.scope`` (None: every row unscoped)."""
        n = len(ids)
        scopes = [""] * n if scopes is None else scopes
        if not (len(texts) == len(hashes) == len(vectors) == len(scopes) == n):
            raise ValueError("table: ids, texts, hashes, scopes and vectors differ in length")
        self.namespace = namespace
        self.ids = ids
        self.texts = texts
        self.hashes = hashes
        self.scopes = scopes
        self.vectors = vectors
        for name in (*_FLOATS, *_TIMES, *_SMALL, *_FLAGS, "n_sources", "version"):
            col = columns[name]
            if col.shape != (n,):
                raise ValueError(f"table: column {name} has shape {col.shape}, expected ({n},)")
            setattr(self, name, col)
        self.importance: np.ndarray
        self.strength: np.ndarray
        self.confidence: np.ndarray
        self.last_used: np.ndarray
        self.last_supported: np.ndarray
        self.created_at: np.ndarray
        self.updated_at: np.ndarray
        self.expires_at: np.ndarray
        self.valid_until: np.ndarray
        self.status: np.ndarray
        self.kind: np.ndarray
        self.derived_level: np.ndarray
        self.pinned: np.ndarray
        self.explicit: np.ndarray
        self.relation: np.ndarray
        self.framed: np.ndarray  # the memory carries a frame (Memory.frame)
        self.n_sources: np.ndarray
        self.version: np.ndarray
        self._rows: dict[str, int] | None = None
        # Per-row results of text tests (see text_flags), and for a copy the table it
        # was copied from with the rows changed since (their texts may differ).
        self._flags: dict[str, tuple[Callable[[str], bool], np.ndarray]] = {}
        self._origin: MemoryTable | None = None
        self._changed_rows: set[int] = set()

    @staticmethod
    def empty_columns(n: int) -> dict[str, np.ndarray]:
        """Zeroed columns for ``n`` rows (for decoders that fill them row by row)."""
        cols = {name: np.zeros(n, dtype=np.float64) for name in _FLOATS}
        cols.update({name: np.full(n, NONE_TIME, dtype=np.int64) for name in _TIMES})
        cols.update({name: np.zeros(n, dtype=np.uint8) for name in _SMALL})
        cols.update({name: np.zeros(n, dtype=bool) for name in _FLAGS})
        cols["n_sources"] = np.zeros(n, dtype=np.int32)
        cols["version"] = np.zeros(n, dtype=np.int64)
        return cols

    @classmethod
    def from_memories(cls, memories: Sequence[Memory], namespace: str | None = None
                      ) -> MemoryTable:
        """Columns of ``memories`` (vectors kept as float32)."""
        n = len(memories)
        ns = namespace or (memories[0].namespace if memories else "default")
        cols = cls.empty_columns(n)
        dims = {len(m.vector) for m in memories if m.vector is not None}
        if len(dims) > 1:
            raise ValueError(f"vector: memories of one namespace differ in dimension {dims}")
        dim = dims.pop() if dims else 0
        dense = np.zeros((n, dim), dtype=np.float32)
        present = np.zeros(n, dtype=bool)
        for i, m in enumerate(memories):
            _fill_row(cols, i, m)
            if m.vector is not None:
                dense[i] = m.vector
                present[i] = True
        return cls(ns, [m.id for m in memories], [m.text for m in memories],
                   [m.content_hash for m in memories], Vectors(present, dense=dense), cols,
                   [m.scope for m in memories])

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def concat(cls, first: MemoryTable, second: MemoryTable) -> MemoryTable:
        """The rows of ``first`` then ``second`` (vectors become float32)."""
        a, b = first.vectors.take_all(), second.vectors.take_all()
        if a.shape[1] != b.shape[1] and len(first) and len(second):
            raise ValueError(f"vector: dimensions {a.shape[1]} and {b.shape[1]} differ")
        dense = np.concatenate([a, b]) if len(first) and len(second) else (a if len(b) == 0
                                                                            else b)
        vectors = Vectors(np.concatenate([first.vectors.present, second.vectors.present]),
                          dense=dense)
        cols = {name: np.concatenate([col, second._columns()[name]])
                for name, col in first._columns().items()}
        return cls(first.namespace, first.ids + second.ids, first.texts + second.texts,
                   first.hashes + second.hashes, vectors, cols)

    def row(self, memory_id: str) -> int | None:
        """Row of ``memory_id`` (None if absent)."""
        if self._rows is None:
            self._rows = {mid: i for i, mid in enumerate(self.ids)}
        return self._rows.get(memory_id)

    def live(self) -> np.ndarray:
        """Mask of candidate and active rows."""
        return np.isin(self.status, LIVE_CODES)

    def since_micros(self) -> np.ndarray:
        """Last support time per row (last use when never supported)."""
        return np.where(self.last_supported == NONE_TIME, self.last_used, self.last_supported)

    def text_flags(self, name: str, test: Callable[[str], bool]) -> np.ndarray:
        """``test(text)`` of every row (read-only), computed once per row and kept in step
        by :meth:`set_row`, :meth:`append` and :meth:`patch`, which test only the texts
        they write: a pass screens every live fact's text, and a cached table's texts
        change only where records did. ``name`` identifies ``test`` (one test per name).
        A copy asks the table it was copied from, so the cached table keeps the result."""
        known = self._flags.get(name)
        if known is None:
            if self._origin is not None and len(self._origin) <= len(self):
                base = self._origin.text_flags(name, test)
                flags = np.zeros(len(self), dtype=bool)
                flags[:base.size] = base
                redo = sorted(self._changed_rows | set(range(base.size, len(self))))
            else:
                flags, redo = np.zeros(len(self), dtype=bool), list(range(len(self)))
            for row in redo:
                flags[row] = test(self.texts[row])
            known = self._flags[name] = (test, flags)
        out = known[1].view()
        out.flags.writeable = False
        return out

    def _retest(self, rows: Sequence[int]) -> None:
        """Re-run the kept text tests on ``rows`` (their texts were just written)."""
        if self._origin is not None:
            self._changed_rows.update(rows)
        for test, flags in self._flags.values():
            for row in rows:
                flags[row] = test(self.texts[row])

    def set_row(self, row: int, memory: Memory) -> None:
        """Write a (changed) memory's fields into its existing ``row``."""
        if not 0 <= row < len(self):
            raise IndexError(f"table: row {row} outside 0..{len(self) - 1}")
        self.texts[row] = memory.text
        self._retest([row])
        self.hashes[row] = memory.content_hash
        self.scopes[row] = memory.scope
        if self.vectors.present[row] or memory.vector is not None:
            self.vectors.set(row, memory.vector)
        _fill_row(self._columns(), row, memory)

    def append(self, memories: Sequence[Memory]) -> None:
        """Add rows for new memories (one copy of each column for the whole batch)."""
        if not memories:
            return
        n = len(self)
        extra = self.empty_columns(len(memories))
        for i, m in enumerate(memories):
            _fill_row(extra, i, m)
        for name, col in self._columns().items():
            setattr(self, name, np.concatenate([col, extra[name]]))
        for i, m in enumerate(memories):
            self.ids.append(m.id)
            self.texts.append(m.text)
            self.hashes.append(m.content_hash)
            self.scopes.append(m.scope)
            if self._rows is not None:
                self._rows[m.id] = n + i
        self.vectors.extend([m.vector for m in memories])
        self._grow_flags(n)

    def _grow_flags(self, old_len: int) -> None:
        """Extend the kept text tests to the rows appended after ``old_len``."""
        for name, (test, flags) in list(self._flags.items()):
            extra = np.fromiter((test(t) for t in self.texts[old_len:]), dtype=bool,
                                count=len(self) - old_len)
            self._flags[name] = (test, np.concatenate([flags, extra]))
        if self._origin is not None:
            self._changed_rows.update(range(old_len, len(self)))

    def copy(self) -> MemoryTable:
        """A copy whose changes (:meth:`set_row`, :meth:`append`) leave this table alone
        (a pass reduces a copy of a cached table). Columns and lists are copied, the
        stored vector codes shared read-only (see :meth:`Vectors.copy`), the id -> row
        map copied rather than rebuilt."""
        out = MemoryTable(self.namespace, list(self.ids), list(self.texts), list(self.hashes),
                          self.vectors.copy(),
                          {name: col.copy() for name, col in self._columns().items()},
                          list(self.scopes))
        out._rows = None if self._rows is None else dict(self._rows)
        out._flags = {name: (test, flags.copy()) for name, (test, flags) in self._flags.items()}
        out._origin = self
        return out

    def patch(self, fresh: MemoryTable) -> None:
        """Overwrite the rows of ``fresh``'s ids with its rows and append its new ids, in
        place (refreshing a cached table with the records that changed). Both tables must
        hold int8 codes without overrides (as the store's decoder returns them)."""
        mine, theirs = self.vectors, fresh.vectors
        if mine.codes is None or mine.scales is None or mine.override:
            raise ValueError("table: patch needs a table of stored codes without overrides")
        if theirs.codes is None or theirs.scales is None or theirs.override:
            raise ValueError("table: patch needs fresh rows as stored codes")
        if len(fresh) and mine.dim and theirs.dim and mine.dim != theirs.dim:
            raise ValueError(f"vector: dimensions {mine.dim} and {theirs.dim} differ")
        rows = [self.row(mid) for mid in fresh.ids]
        old = np.array([j for j, r in enumerate(rows) if r is not None], dtype=np.int64)
        at = np.array([r for r in rows if r is not None], dtype=np.int64)
        new = np.array([j for j, r in enumerate(rows) if r is None], dtype=np.int64)
        self._overwrite_rows(fresh, old, at)
        if new.size:
            self._append_rows(fresh, new)

    def _overwrite_rows(self, fresh: MemoryTable, old: np.ndarray, at: np.ndarray) -> None:
        """Rows ``at`` take ``fresh``'s rows ``old`` (codes checked by :meth:`patch`)."""
        mine, theirs = self.vectors, fresh.vectors
        assert mine.scales is not None and theirs.codes is not None \
            and theirs.scales is not None  # checked by patch
        cols, other = self._columns(), fresh._columns()
        for name, col in cols.items():
            col[at] = other[name][old]
        for j, r in zip(old.tolist(), at.tolist(), strict=True):
            self.texts[r] = fresh.texts[j]
            self.hashes[r] = fresh.hashes[j]
            self.scopes[r] = fresh.scopes[j]
        self._retest(at.tolist())
        if theirs.dim and not mine.dim:  # a table of vector-less rows gains vectors
            mine.codes = np.zeros((len(self), theirs.dim), dtype=np.int8)
            mine.dim = theirs.dim
        if at.size and theirs.dim:
            assert mine.codes is not None  # checked by patch
            mine.codes[at] = theirs.codes[old]
        mine.scales[at] = theirs.scales[old]
        mine.present[at] = theirs.present[old]

    def _append_rows(self, fresh: MemoryTable, new: np.ndarray) -> None:
        """Append ``fresh``'s rows ``new`` (ids this table does not hold)."""
        mine, theirs = self.vectors, fresh.vectors
        assert mine.codes is not None and mine.scales is not None \
            and theirs.codes is not None and theirs.scales is not None  # checked by patch
        n = len(self)
        cols, other = self._columns(), fresh._columns()
        for name, col in cols.items():
            setattr(self, name, np.concatenate([col, other[name][new]]))
        extra = (theirs.codes[new] if theirs.dim
                 else np.zeros((new.size, mine.dim), dtype=np.int8))
        mine.codes = np.concatenate([mine.codes, extra])
        mine.scales = np.concatenate([mine.scales, theirs.scales[new]])
        mine.present = np.concatenate([mine.present, theirs.present[new]])
        mine.base_rows = int(mine.codes.shape[0])
        for k, j in enumerate(new.tolist()):
            self.ids.append(fresh.ids[j])
            self.texts.append(fresh.texts[j])
            self.hashes.append(fresh.hashes[j])
            self.scopes.append(fresh.scopes[j])
            if self._rows is not None:
                self._rows[fresh.ids[j]] = n + k
        self._grow_flags(n)

    def _columns(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in
                (*_FLOATS, *_TIMES, *_SMALL, *_FLAGS, "n_sources", "version")}


def _fill_row(cols: dict[str, np.ndarray], i: int, m: Memory) -> None:
    cols["importance"][i] = m.importance
    cols["strength"][i] = m.strength
    cols["confidence"][i] = m.confidence
    cols["last_used"][i] = to_micros(m.last_used)
    cols["last_supported"][i] = to_micros(m.last_supported)
    cols["created_at"][i] = to_micros(m.created_at)
    cols["updated_at"][i] = to_micros(m.updated_at)
    cols["expires_at"][i] = to_micros(m.expires_at)
    cols["valid_until"][i] = to_micros(m.valid_until)
    cols["status"][i] = STATUSES.index(Status(m.status))
    cols["kind"][i] = KINDS.index(Kind(m.kind))
    cols["derived_level"][i] = m.derived_level
    cols["pinned"][i] = m.pinned
    cols["explicit"][i] = m.explicit
    cols["relation"][i] = m.relation is not None
    cols["framed"][i] = m.frame is not None
    cols["n_sources"][i] = len(set(m.sources))
    cols["version"][i] = m.version


def ids_array(ids: Iterable[str]) -> np.ndarray:
    """Ids as a numpy unicode array (sortable with lexsort, same order as ``str``)."""
    return np.array(list(ids), dtype=str)
