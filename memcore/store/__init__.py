"""The Redis store layer: see :class:`MemoryStore` and notes/store.md."""

from memcore.store.base import (
    DeltaOp,
    DurabilityError,
    NamespaceState,
    PassView,
    PurgedError,
    StoreConflict,
    VersionInfo,
)
from memcore.store.codec import RecordMemo
from memcore.store.erase import EraseReport
from memcore.store.footprint import footprint
from memcore.store.locks import LockLost, RenewedLock
from memcore.store.maintenance import MaintenanceReport
from memcore.store.memory_store import MemoryStore

__all__ = ["DeltaOp", "DurabilityError", "EraseReport", "LockLost", "MaintenanceReport",
           "MemoryStore", "NamespaceState", "PassView", "PurgedError", "RecordMemo",
           "RenewedLock", "StoreConflict", "VersionInfo", "footprint"]
