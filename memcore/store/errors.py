"""Exception types for "Redis cannot be reached", so upper layers need not import redis."""

from __future__ import annotations

import redis

UNREACHABLE: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError,
                                            redis.BusyLoadingError)
"""Raised by the store when the data Redis is down, slow or still loading."""


class ErasedMeanwhile(Exception):
    """A fenced write (memcore.store.gateway, :meth:`Gateway.fenced`) was refused: the
    namespace was erased, or one of its memories or turns was, since the writer read
    the erase counts. Nothing of the refused write was stored; the writer reads again."""
