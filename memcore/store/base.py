"""Types every repository of the store shares: errors, pass views, delta entries."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memcore.core.errors import MemoryNotFound
from memcore.core.models import Memory
from memcore.index.table import MemoryTable
from memcore.store.codec import from_micros, pack_memory, quantize, to_micros

BATCH = 1000
"""Keys per pipelined round trip for bulk reads and writes."""


class DurabilityError(RuntimeError):
    """The Redis server could silently drop memcore's keys (eviction policy)."""


class StoreConflict(RuntimeError):
    """A compare-and-swap lost: another pass moved the pointer (or took over the pass)."""


class PurgedError(MemoryNotFound):
    """The memory was a tombstone past its grace period and maintenance deleted it."""


class DeltaOp(StrEnum):
    """What a delta-log entry does to one record (``store/ops.py`` applies it)."""

    ADD = "add"
    UPDATE = "update"
    REINFORCE = "reinforce"
    CLOSE = "close"
    TOUCH = "touch"  # written by the TOUCH script as the literal 'touch'
    PIN = "pin"
    UNPIN = "unpin"
    RESTORE = "restore"
    TOMBSTONE = "tombstone"  # a user's delete
    EDIT = "edit"  # a user's edit of text and/or metadata
    ERASE = "erase"
    ERASE_SOURCE = "erase_source"


@dataclass
class PassView:
    """A consistent read of version ``version`` taken by :meth:`Snapshots.begin_pass`."""

    version: int
    delta_cursor: str
    memories: list[Memory]
    token: str = ""
    pending_importance: float = 0.0
    record_versions: dict[str, int] = field(default_factory=dict)
    table: MemoryTable | None = None
    """The version as columns (``begin_pass(columns=True)``; ``memories`` is then empty)."""


@dataclass(frozen=True)
class NamespaceState:
    """What a reader's per-process caches of a namespace are checked against (one round
    trip, :meth:`MemoryStore.namespace_state`): the current version, the epoch (the
    generation token ``mc:{ns}:gen``: replaced by an erase, a purge or a rollback; '' while
    missing), the order log's length (every memory write appends to it) and the count of
    committed record changes (``writes``: '' before any; recall bookkeeping not counted)."""

    version: int
    epoch: str
    order_length: int
    writes: str = ""


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
    op: DeltaOp
    version: int
    args: dict[str, Any] = field(default_factory=dict)
    record: Memory | None = None

    def __post_init__(self) -> None:
        self.op = DeltaOp(self.op)  # a bare string is checked against the enum here

    def fields(self) -> dict[str, bytes | str | int]:
        """Stream entry fields."""
        out: dict[str, bytes | str | int] = {"id": self.memory_id, "op": self.op.value,
                                             "ver": self.version}
        args = dict(self.args)
        vector = args.pop("vector", None)
        if vector is not None:
            out["vec"] = quantize(vector)
        out["args"] = encode_args(args)
        if self.record is not None:
            out["rec"] = pack_memory(self.record)
        return out
