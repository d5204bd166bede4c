"""Per-API-key rate limits of the HTTP service (docs/design.md, rate limits).

Both limits are kept in Redis (:class:`memcore.store.rate_limits.RateLimits`), so every
server process of a deployment counts against the same budget:

* requests per second (``api.key_requests_per_second``): every ``/v1`` request of a key
  that authentication let through is counted by :class:`~memcore.api.auth.
  AuthMiddleware` before the route runs; past the limit, 429 ``rate_limited``.
* model calls per minute (``api.key_model_calls_per_minute``): model calls happen in the
  ingest workers, after the add was accepted, so they cannot be refused one by one.
  An add names its key in the ingest task (``IngestPayload.charge_to``); the worker
  charges the calls the task made to that key; the add route refuses the key's next adds
  (429 ``rate_limited``) while the calls of the last minute are at the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from memcore.client.errors import RateLimited
from memcore.core.config import ApiConfig
from memcore.store.rate_limits import RateLimits


def retry_after(seconds: float) -> str:
    """A ``Retry-After`` value: whole seconds, at least 1 (RFC 9110)."""
    return str(max(1, math.ceil(seconds)))


class KeyLimits:
    """The two per-key limits of one server process; both off when their setting is 0."""

    def __init__(self, config: ApiConfig, limits: Callable[[], RateLimits]) -> None:
        self.per_second = config.key_requests_per_second
        self.per_minute = config.key_model_calls_per_minute
        self._limits = limits

    @property
    def requests_limited(self) -> bool:
        """True if requests per second are limited (then each request costs a round trip)."""
        return self.per_second > 0

    def take_request(self, key_id: str) -> RateLimited | None:
        """Count one request of ``key_id``; the error to answer when it is over the limit
        (blocking: one Redis round trip)."""
        wait = self._limits().take_request(key_id, self.per_second)
        if wait <= 0:
            return None
        return RateLimited(f"this API key is over its limit of {self.per_second:g} requests "
                           f"per second (MEMCORE_API__KEY_REQUESTS_PER_SECOND); retry in "
                           f"{wait:.2f} s", retry_after=wait)

    def admit_add(self, key_id: str) -> str | None:
        """Before an add of ``key_id`` is accepted: raise :class:`RateLimited` while the
        model calls charged to the key in the last minute are at the limit; else the key
        id the add's ingest tasks charge their model calls to (None: not limited, not
        charged)."""
        if self.per_minute <= 0:
            return None
        used, wait = self._limits().model_call_wait(key_id, self.per_minute)
        if wait > 0:
            raise RateLimited(f"this API key's adds made {used} model calls in the last "
                              f"minute, its limit is {self.per_minute} "
                              "(MEMCORE_API__KEY_MODEL_CALLS_PER_MINUTE); retry in "
                              f"{wait:.1f} s", retry_after=wait)
        return key_id
