"""Fixtures of the store's tests."""

from __future__ import annotations

import pytest
import redis

from memcore.store import MemoryStore


@pytest.fixture()
def store(redis_client: redis.Redis) -> MemoryStore:
    """A store on the flushed test server (a module that needs other settings defines
    its own)."""
    return MemoryStore(redis_client)
