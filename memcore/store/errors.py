"""Exception types for "Redis cannot be reached", so upper layers need not import redis."""

from __future__ import annotations

import redis

UNREACHABLE: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError,
                                            redis.BusyLoadingError)
"""Raised by the store when the data Redis is down, slow or still loading."""
