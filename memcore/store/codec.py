"""Compact binary records for memories and episodes.

A memory record is one Redis string: a fixed header (the recall fields first, so
the ``touch`` Lua script can rewrite them in place), then the vector as int8 with
one float32 scale, then length-prefixed strings. At d = 384 the record is about
500 bytes plus the text, against ~4 KB for float32 JSON.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from memcore.core.filters import FilterFields
from memcore.core.models import Episode, Frame, Kind, Memory, Relation, Role, Status
from memcore.index.table import MemoryTable, Vectors, from_micros, micros_time, to_micros

FORMAT = 1
# Recall header, rewritten in place by the touch script: format, record version,
# last_used (epoch microseconds), strength, recall_count. Lua spells it '<BIldI'.
RECALL = struct.Struct("<BIqdI")
# importance, confidence, then five optional times (INT64_MIN = None), support,
# kind, status, flags (1 explicit, 2 pinned, 4 has relation, 8 has frame, 16 expiry given
# by the caller, 32 read by a language pack: records written before them have the bits
# clear), derived_level.
BODY = struct.Struct("<ddqqqqqqIBBBB")
_U32 = struct.Struct("<I")
_VEC = struct.Struct("<Hf")
_KINDS = list(Kind)
_STATUSES = list(Status)
_ROLES = list(Role)


def quantize(vector: Any) -> bytes:
    """int8 codes with a per-vector float32 scale (``<Hf`` dim, scale, then codes)."""
    arr = np.asarray(vector, dtype=np.float32)
    peak = float(np.max(np.abs(arr))) if arr.size else 0.0
    scale = peak / 127.0 if peak > 0 else 1.0
    codes = np.clip(np.rint(arr / scale), -127, 127).astype(np.int8)
    return _VEC.pack(arr.size, scale) + codes.tobytes()


def dequantize(blob: bytes | memoryview, offset: int = 0) -> tuple[np.ndarray | None, int]:
    """Decode a vector written by :func:`quantize`; returns (vector or None, next offset)."""
    dim, scale = _VEC.unpack_from(blob, offset)
    offset += _VEC.size
    if dim == 0:
        return None, offset
    codes = np.frombuffer(blob, dtype=np.int8, count=dim, offset=offset)
    return codes.astype(np.float32) * np.float32(scale), offset + dim


def _put_str(out: list[bytes], value: str) -> None:
    raw = value.encode("utf-8")
    out.append(_U32.pack(len(raw)))
    out.append(raw)


def _get_str(blob: bytes, offset: int) -> tuple[str, int]:
    (size,) = _U32.unpack_from(blob, offset)
    offset += 4
    return blob[offset : offset + size].decode("utf-8"), offset + size


def _put_hash(out: list[bytes], value: str) -> None:
    """Hex hashes as raw bytes (half the size); anything else as text."""
    try:
        raw, flag = (bytes.fromhex(value), 1) if len(value) % 2 == 0 else (b"", 0)
    except ValueError:
        raw, flag = b"", 0
    if not flag:
        raw = value.encode("utf-8")
    out.append(struct.pack("<BB", flag, len(raw)))
    out.append(raw)


def _get_hash(blob: bytes, offset: int) -> tuple[str, int]:
    flag, size = struct.unpack_from("<BB", blob, offset)
    raw = blob[offset + 2 : offset + 2 + size]
    return (raw.hex() if flag else raw.decode("utf-8")), offset + 2 + size


def _put_list(out: list[bytes], values: list[str]) -> None:
    out.append(_U32.pack(len(values)))
    for value in values:
        _put_str(out, value)


def _get_list(blob: bytes, offset: int) -> tuple[list[str], int]:
    (count,) = _U32.unpack_from(blob, offset)
    offset += 4
    values = []
    for _ in range(count):
        value, offset = _get_str(blob, offset)
        values.append(value)
    return values, offset


def pack_memory(memory: Memory) -> bytes:
    """Serialize a memory (without id and namespace: both are in the key)."""
    flags = (1 if memory.explicit else 0) | (2 if memory.pinned else 0)
    flags |= 4 if memory.relation is not None else 0
    flags |= 8 if memory.frame is not None else 0
    flags |= 16 if memory.expiry_given else 0
    flags |= 32 if memory.frame_read else 0
    out = [
        RECALL.pack(FORMAT, memory.version, to_micros(memory.last_used), float(memory.strength),
                    memory.recall_count),
        BODY.pack(float(memory.importance), float(memory.confidence),
                  to_micros(memory.last_supported), to_micros(memory.created_at),
                  to_micros(memory.updated_at), to_micros(memory.valid_from),
                  to_micros(memory.valid_until), to_micros(memory.expires_at), memory.support,
                  _KINDS.index(Kind(memory.kind)), _STATUSES.index(Status(memory.status)), flags,
                  memory.derived_level),
        quantize(memory.vector) if memory.vector is not None else _VEC.pack(0, 0.0),
    ]
    _put_hash(out, memory.content_hash)
    _put_str(out, memory.superseded_by or "")
    _put_str(out, memory.text)
    _put_list(out, list(memory.sources))
    _put_list(out, list(memory.member_texts))
    if memory.relation is not None:
        rel = memory.relation
        _put_list(out, [rel.subject, rel.predicate, rel.object])
        out.append(struct.pack("<d", rel.weight))
    extras = _extras(memory.metadata, memory.user_id, memory.agent_id, memory.run_id,
                     memory.frame)
    if extras:  # optional tail: records without metadata or scopes keep their old bytes
        _put_str(out, extras)
    return b"".join(out)


def _extras(metadata: dict[str, Any], user_id: str | None, agent_id: str | None,
            run_id: str | None, frame: Frame | None = None) -> str:
    """Metadata, scopes and the frame as compact JSON ("" when there are none)."""
    data: dict[str, Any] = {k: v for k, v in (("u", user_id), ("a", agent_id), ("r", run_id))
                            if v is not None}
    if metadata:
        data["m"] = metadata
    if frame is not None:
        data["f"] = frame.model_dump(exclude_defaults=True)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False) if data else ""


def _read_extras(blob: bytes, offset: int, *, frame: bool = True) -> dict[str, Any]:
    """The optional tail written by :func:`_extras` (empty when absent); ``frame=False``
    leaves the frame out (readers that only filter)."""
    if offset >= len(blob):
        return {"metadata": {}, "frame": None} if frame else {"metadata": {}}
    raw, _ = _get_str(blob, offset)
    data = json.loads(raw)
    out = {"metadata": data.get("m", {}), "user_id": data.get("u"),
           "agent_id": data.get("a"), "run_id": data.get("r")}
    if frame:
        out["frame"] = Frame.model_construct(**{**_FRAME_DEFAULTS, **data["f"]}) if "f" in data \
            else None
    return out


_FRAME_DEFAULTS: dict[str, Any] = {"value": "", "polarity": 1, "single": False, "event": ""}


def unpack_filter_fields(blob: bytes, memory_id: str) -> FilterFields:
    """Only what filters and listing read (status, kind, times, validity, scopes, metadata):
    several times cheaper than :func:`unpack_memory` when scanning a namespace."""
    offset = RECALL.size
    (_, _, _, created, updated, valid_from, valid_until, expires, _, kind, status, flags,
     _) = BODY.unpack_from(blob, offset)
    offset += BODY.size
    offset += _VEC.size + _VEC.unpack_from(blob, offset)[0]  # vector: skipped
    offset += 2 + blob[offset + 1]  # content hash: skipped
    for _ in range(2):  # superseded_by, text
        offset += 4 + _U32.unpack_from(blob, offset)[0]
    for _ in range(2 + (1 if flags & 4 else 0)):  # sources, member_texts, relation parts
        (count,) = _U32.unpack_from(blob, offset)
        offset += 4
        for _ in range(count):
            offset += 4 + _U32.unpack_from(blob, offset)[0]
    if flags & 4:
        offset += 8  # relation weight
    return FilterFields(memory_id, _KINDS[kind], _STATUSES[status], micros_time(created),
                        micros_time(updated), **_read_extras(blob, offset, frame=False),
                        valid_from=from_micros(valid_from),
                        valid_until=from_micros(valid_until), expires_at=from_micros(expires),
                        expiry_given=bool(flags & 16))


def recall_fields(blob: bytes, memory_id: str) -> dict[str, Any]:
    """The fields of the recall header (what a touch rewrites), as :func:`unpack_memory`
    decodes them."""
    fmt, version, last_used, strength, recall_count = RECALL.unpack_from(blob, 0)
    if fmt != FORMAT:
        raise ValueError(f"memory {memory_id}: unknown record format {fmt}")
    return {"version": version, "last_used": micros_time(last_used), "strength": strength,
            "recall_count": recall_count}


def unpack_memory(blob: bytes, namespace: str, memory_id: str, *, vector: bool = True) -> Memory:
    """Decode a record written by :func:`pack_memory` (no re-validation: it was valid).

    ``vector=False`` skips decoding the vector (``vector`` is None): cheaper for readers
    that only need texts and statuses."""
    fmt, version, last_used, strength, recall_count = RECALL.unpack_from(blob, 0)
    if fmt != FORMAT:
        raise ValueError(f"memory {memory_id}: unknown record format {fmt}")
    offset = RECALL.size
    (importance, confidence, last_supported, created, updated, valid_from, valid_until,
     expires, support, kind, status, flags, derived) = BODY.unpack_from(blob, offset)
    offset += BODY.size
    if vector:
        vec, offset = dequantize(blob, offset)
    else:
        vec, offset = None, offset + _VEC.size + _VEC.unpack_from(blob, offset)[0]
    content_hash, offset = _get_hash(blob, offset)
    superseded_by, offset = _get_str(blob, offset)
    text, offset = _get_str(blob, offset)
    sources, offset = _get_list(blob, offset)
    member_texts, offset = _get_list(blob, offset)
    relation = None
    if flags & 4:
        parts, offset = _get_list(blob, offset)
        (weight,) = struct.unpack_from("<d", blob, offset)
        relation = Relation.model_construct(subject=parts[0], predicate=parts[1], object=parts[2],
                                            weight=weight)
        offset += 8
    return Memory.model_construct(
        id=memory_id, namespace=namespace, text=text,
        vector=None if vec is None else vec.tolist(),
        importance=importance, last_used=micros_time(last_used), strength=strength,
        confidence=confidence, last_supported=from_micros(last_supported), kind=_KINDS[kind],
        sources=sources, support=support, explicit=bool(flags & 1), pinned=bool(flags & 2),
        valid_from=from_micros(valid_from), valid_until=from_micros(valid_until),
        expires_at=from_micros(expires), expiry_given=bool(flags & 16),
        frame_read=bool(flags & 32),
        status=_STATUSES[status],
        superseded_by=superseded_by or None, derived_level=derived, recall_count=recall_count,
        content_hash=content_hash, member_texts=member_texts, relation=relation,
        created_at=micros_time(created), updated_at=micros_time(updated), version=version,
        **_read_extras(blob, offset),
    )


def record_vector(blob: bytes) -> np.ndarray | None:
    """Only the vector of a packed record (cheap: no string decoding)."""
    vec, _ = dequantize(blob, RECALL.size + BODY.size)
    return vec


def packed_vector(blob: bytes) -> bytes:
    """The packed vector of a record (int8 codes and scale, ~1/30 of the size of the
    float list :func:`unpack_memory` makes of it); :func:`unpack_vector` decodes it."""
    start = RECALL.size + BODY.size
    return blob[start:start + _VEC.size + _VEC.unpack_from(blob, start)[0]]


def unpack_vector(packed: bytes) -> list[float] | None:
    """The ``vector`` :func:`unpack_memory` gives the record of ``packed``, exactly."""
    vec, _ = dequantize(packed)
    return None if vec is None else vec.tolist()


def record_version(blob: bytes) -> int:
    """Only the record version of a packed record."""
    return int(RECALL.unpack_from(blob, 0)[1])


def pack_episode(episode: Episode) -> bytes:
    """Serialize an episode (without id and namespace)."""
    out = [struct.pack("<Bq", _ROLES.index(Role(episode.role)), to_micros(episode.timestamp))]
    _put_str(out, episode.speaker)
    _put_str(out, json.dumps(episode.metadata, separators=(",", ":"), default=str))
    _put_str(out, episode.text)
    extras = _extras({}, episode.user_id, episode.agent_id, episode.run_id)
    if extras:
        _put_str(out, extras)
    return b"".join(out)


def unpack_episode(blob: bytes, namespace: str, episode_id: str) -> Episode:
    """Decode an episode written by :func:`pack_episode`."""
    role, stamp = struct.unpack_from("<Bq", blob, 0)
    offset = 9
    speaker, offset = _get_str(blob, offset)
    meta, offset = _get_str(blob, offset)
    text, offset = _get_str(blob, offset)
    scopes = _read_extras(blob, offset, frame=False)
    scopes.pop("metadata")
    return Episode.model_construct(id=episode_id, namespace=namespace, role=_ROLES[role],
                                   speaker=speaker,
                                   text=text, timestamp=micros_time(stamp),
                                   metadata=json.loads(meta), **scopes)


def unpack_table(namespace: str, ids: Sequence[str], raws: Sequence[bytes]) -> MemoryTable:
    """Packed records as a :class:`MemoryTable` (int8 vector codes kept as stored): what
    a consolidation pass reads, a few hundred bytes per memory instead of a Memory object
    with a list of floats."""
    n = len(ids)
    cols = MemoryTable.empty_columns(n)
    dims = {_VEC.unpack_from(raw, RECALL.size + BODY.size)[0] for raw in raws} - {0}
    if len(dims) > 1:
        raise ValueError(f"vector: records of {namespace!r} differ in dimension {sorted(dims)}")
    dim = dims.pop() if dims else 0
    codes = np.zeros((n, dim), dtype=np.int8)
    scales = np.zeros(n, dtype=np.float32)
    present = np.zeros(n, dtype=bool)
    texts: list[str] = []
    hashes: list[str] = []
    for i, raw in enumerate(raws):
        fmt, version, last_used, strength, _ = RECALL.unpack_from(raw, 0)
        if fmt != FORMAT:
            raise ValueError(f"memory {ids[i]}: unknown record format {fmt}")
        (importance, confidence, last_supported, created, updated, _, until, expires, _, kind,
         status, flags, derived) = BODY.unpack_from(raw, RECALL.size)
        offset = RECALL.size + BODY.size
        size, scale = _VEC.unpack_from(raw, offset)
        offset += _VEC.size
        if size:
            codes[i] = np.frombuffer(raw, dtype=np.int8, count=size, offset=offset)
            scales[i] = scale
            present[i] = True
        offset += size
        content_hash, offset = _get_hash(raw, offset)
        (skip,) = _U32.unpack_from(raw, offset)  # superseded_by
        text, offset = _get_str(raw, offset + 4 + skip)
        sources, _ = _get_list(raw, offset)
        cols["importance"][i] = importance
        cols["strength"][i] = strength
        cols["confidence"][i] = confidence
        cols["last_used"][i] = last_used
        cols["last_supported"][i] = last_supported
        cols["created_at"][i] = created
        cols["updated_at"][i] = updated
        cols["expires_at"][i] = expires
        cols["valid_until"][i] = until
        cols["status"][i] = status
        cols["kind"][i] = kind
        cols["derived_level"][i] = derived
        cols["explicit"][i] = bool(flags & 1)
        cols["pinned"][i] = bool(flags & 2)
        cols["relation"][i] = bool(flags & 4)
        cols["framed"][i] = bool(flags & 8)
        cols["n_sources"][i] = len(set(sources))
        cols["version"][i] = version
        texts.append(text)
        hashes.append(content_hash)
    return MemoryTable(namespace, list(ids), texts, hashes,
                       Vectors(present, codes=codes, scales=scales), cols)


class RecordMemo:
    """Decoded records (without vectors) keyed by their packed bytes: a reader that reads
    the same records again and again (search) decodes each one once. Correct without
    any invalidation: a changed record has other bytes, so it is decoded afresh. The
    memories handed out are shared: callers must not mutate them (copy first)."""

    def __init__(self, max_records: int = 50_000) -> None:
        if max_records < 1:
            raise ValueError(f"max_records must be >= 1, got {max_records}")
        self.max_records = max_records
        self._memo: dict[tuple[str, str], tuple[bytes, Memory]] = {}

    def decode(self, blob: bytes, namespace: str, memory_id: str) -> Memory:
        """:func:`unpack_memory` of ``blob`` with ``vector=False``, from the memo if the
        record's bytes did not change."""
        slot = (namespace, memory_id)
        known = self._memo.get(slot)
        if known is not None and known[0] == blob:
            return known[1]
        if known is not None and known[0][RECALL.size:] == blob[RECALL.size:]:
            # Only the recall header changed (a search's touch rewrites nothing else):
            # a copy with the new header fields, several times cheaper than decoding.
            memory = known[1].model_copy(update=recall_fields(blob, memory_id))
        else:
            memory = unpack_memory(blob, namespace, memory_id, vector=False)
        if len(self._memo) >= self.max_records:
            # Dicts keep insertion order: drop the oldest tenth at once (cheap, rare).
            for old in list(self._memo)[: max(1, self.max_records // 10)]:
                self._memo.pop(old, None)  # another thread may have dropped it
        self._memo[slot] = (blob, memory)
        return memory

    def __len__(self) -> int:
        return len(self._memo)
