"""The Redis store layer: see :class:`MemoryStore` and notes/store.md."""

from memcore.store.base import DurabilityError, PassView, StoreConflict, VersionInfo
from memcore.store.memory_store import MemoryStore, footprint

__all__ = ["DurabilityError", "MemoryStore", "PassView", "StoreConflict", "VersionInfo",
           "footprint"]
