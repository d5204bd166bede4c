"""Connection, durability check, shared types and low-level helpers of the store."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import redis

from memcore.core.models import Memory, validate_identifier, validate_namespace
from memcore.store import keys, scripts
from memcore.store.records import from_micros, pack_memory, quantize, to_micros, unpack_memory

log = logging.getLogger(__name__)

BATCH = 1000
"""Keys per pipelined round trip for bulk reads and writes."""


class DurabilityError(RuntimeError):
    """The Redis server could silently drop memcore's keys (eviction policy)."""


class StoreConflict(RuntimeError):
    """A compare-and-swap lost: another pass moved the pointer (or took over the pass)."""


@dataclass
class PassView:
    """A consistent read of version ``version`` taken by :meth:`MemoryStore.begin_pass`."""

    version: int
    delta_cursor: str
    memories: list[Memory]
    token: str = ""
    pending_importance: float = 0.0
    record_versions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class VersionInfo:
    """One committed snapshot version."""

    version: int
    created_at: datetime
    memories: int


def encode_args(args: dict[str, Any]) -> str:
    """JSON for a delta entry's arguments (datetimes as epoch microseconds)."""
    out = {k: (to_micros(v) if isinstance(v, datetime) else v) for k, v in args.items()}
    return json.dumps(out, separators=(",", ":"))


def decode_args(raw: bytes | str) -> dict[str, Any]:
    """Inverse of :func:`encode_args` (``now`` back to a datetime)."""
    args: dict[str, Any] = json.loads(raw)
    if "now" in args:
        args["now"] = from_micros(int(args["now"]))
    return args


@dataclass
class DeltaEntry:
    """One per-record effect logged to the delta stream while a pass runs."""

    memory_id: str
    op: str
    version: int
    args: dict[str, Any] = field(default_factory=dict)
    record: Memory | None = None

    def fields(self) -> dict[str, bytes | str | int]:
        """Stream entry fields."""
        out: dict[str, bytes | str | int] = {"id": self.memory_id, "op": self.op,
                                             "ver": self.version}
        args = dict(self.args)
        vector = args.pop("vector", None)
        if vector is not None:
            out["vec"] = quantize(vector)
        out["args"] = encode_args(args)
        if self.record is not None:
            out["rec"] = pack_memory(self.record)
        return out


class StoreBase:
    """Connection and helpers every part of the store shares."""

    def __init__(self, client: redis.Redis, *, check_durability: bool = True,
                 strength_cap: float = 10.0, pass_ttl_seconds: int = 6 * 3600) -> None:
        """Wrap ``client``; refuse a server whose eviction policy could drop keys."""
        self._r = client
        self.strength_cap = strength_cap
        self.pass_ttl_seconds = pass_ttl_seconds
        self._known: set[str] = set()
        if check_durability:
            self.check_durability()
        self._mget_current = client.register_script(scripts.MGET_CURRENT)
        self._order_append = client.register_script(scripts.ORDER_APPEND)
        self._audit_append = client.register_script(scripts.AUDIT_APPEND)
        self._touch = client.register_script(scripts.TOUCH)
        self._cas_commit = client.register_script(scripts.CAS_COMMIT)
        self._rewrite_stream = client.register_script(scripts.REWRITE_STREAM)
        self._add_episodes = client.register_script(scripts.ADD_EPISODES)
        self._read_for_write = client.register_script(scripts.READ_FOR_WRITE)
        self._commit_write = client.register_script(scripts.COMMIT_WRITE)
        self._order_since = client.register_script(scripts.ORDER_SINCE)

    @property
    def client(self) -> redis.Redis:
        """The underlying Redis client."""
        return self._r

    def check_durability(self) -> None:
        """Raise DurabilityError unless ``maxmemory-policy`` is ``noeviction``."""
        info = self._r.info("memory")
        policy = str(info.get("maxmemory_policy", "noeviction"))
        if policy != "noeviction":
            raise DurabilityError(
                f"Redis maxmemory-policy is {policy!r}: the server may evict memcore's keys and "
                "lose memories silently. Set 'maxmemory-policy noeviction' (see notes/store.md).")
        persistence = self._r.info("persistence")
        if not persistence.get("aof_enabled"):
            log.warning("Redis AOF is off: acknowledged writes can be lost on a crash "
                        "(set appendonly yes, appendfsync everysec or always)")

    # --- helpers -------------------------------------------------------------------------
    def _register(self, ns: str) -> None:
        """Add ``ns`` to the registry (once per process; SADD is idempotent)."""
        if ns not in self._known:
            self._r.sadd(keys.REGISTRY, ns)
            self._known.add(ns)

    def current_version(self, ns: str) -> int:
        """The current snapshot version (0 before any pass)."""
        raw = self._r.get(keys.current(ns))
        return int(raw) if raw is not None else 0

    def _load(self, ns: str, version: int, ids: Sequence[str]) -> list[Memory | None]:
        """Records of ``ids`` in ``version`` (pipelined MGET in batches)."""
        out: list[Memory | None] = []
        for start in range(0, len(ids), BATCH):
            chunk = ids[start : start + BATCH]
            raws = self._r.mget([keys.memory(ns, version, i) for i in chunk])
            out.extend(None if raw is None else unpack_memory(raw, ns, i)
                       for i, raw in zip(chunk, raws, strict=True))
        return out

    def _read_current(self, ns: str, ids: Sequence[str], *, vectors: bool = True
                      ) -> tuple[int, list[Memory | None]]:
        """Pointer and records in one atomic round trip (never a mix of versions)."""
        validate_namespace(ns)
        for memory_id in ids:
            validate_identifier(memory_id)
        res = self._mget_current(keys=[keys.current(ns)], args=[keys.prefix(ns), *ids])
        version = int(res[0])
        recs = [None if raw is None else unpack_memory(raw, ns, i, vector=vectors)
                for i, raw in zip(ids, res[1:], strict=True)]
        return version, recs

    def _order_ids(self, ns: str, version: int, offset: int,
                   limit: int | None = None) -> list[str]:
        """Ids of the insertion-order log of ``version`` from ``offset``."""
        total = int(self._r.get(keys.order_len(ns, version)) or 0)
        end = total if limit is None else min(total, offset + limit)
        ids: list[str] = []
        pos = offset
        while pos < end:
            chunk, start = divmod(pos, keys.ORDER_CHUNK)
            stop = min(keys.ORDER_CHUNK - 1, start + (end - pos) - 1)
            got = self._r.lrange(keys.order_chunk(ns, version, chunk), start, stop)
            if not got:
                break
            ids.extend(g.decode() for g in got)
            pos += len(got)
        return ids
