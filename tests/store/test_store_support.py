"""Shared builders for the store tests (and a check that they build valid records)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import redis

from memcore.core.models import Memory, Status
from memcore.store import MemoryStore
from memcore.store.codec import pack_memory, unpack_memory

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
DIM = 384


def vec(seed: int, dim: int = DIM) -> list[float]:
    """A deterministic unit vector."""
    arr = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return [float(x) for x in arr / np.linalg.norm(arr)]


def mem(ns: str, text: str, *, seed: int = 0, mid: str | None = None,
        sources: list[str] | None = None, status: Status = Status.ACTIVE, at: datetime = T0,
        **kw: object) -> Memory:
    """A memory with a vector, stamped at ``at``."""
    extra: dict[str, object] = {"id": mid} if mid else {}
    return Memory(namespace=ns, text=text, vector=vec(seed), last_used=at, created_at=at,
                  updated_at=at, sources=sources if sources is not None else [f"ep{seed}"],
                  status=status, **extra, **kw)


def hundred_chars(i: int) -> str:
    """A distinct text of exactly 100 characters."""
    text = f"fact number {i:06d}: the user mentioned a preference about topic {i % 97} "
    return text.ljust(100, "x")


def store_on(client: redis.Redis) -> MemoryStore:
    """A store on ``client``."""
    return MemoryStore(client)


def later(minutes: float) -> datetime:
    """T0 plus some minutes."""
    return T0 + timedelta(minutes=minutes)


def test_record_roundtrip_keeps_every_field() -> None:
    m = mem("u", "Alice works at Acme", seed=3, sources=["e1", "e2"], pinned=True,
            valid_from=T0, expires_at=later(60), member_texts=["a", "b"], recall_count=4,
            frame_read=True)
    back = unpack_memory(pack_memory(m), "u", m.id)
    assert back.model_dump(exclude={"vector"}) == m.model_dump(exclude={"vector"})
    assert back.vector is not None and m.vector is not None
    cos = float(np.dot(back.vector, m.vector) / np.linalg.norm(back.vector))
    assert cos > 0.999  # int8 with a per-vector scale
    assert len(pack_memory(m)) < 600
