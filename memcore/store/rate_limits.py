"""Per-API-key rate limits shared by every server process (docs/design.md, rate limits).

Two limiters, each one Lua script (atomic, timed by the Redis server's own clock, so
processes on hosts whose clocks differ still agree):

* **requests per second**: GCRA (the generic cell rate algorithm). One key holds the
  theoretical arrival time (TAT, microseconds); a request is let through if the TAT,
  moved on by one emission interval, stays within ``burst`` intervals of now. O(1), no
  window edge where twice the rate gets through.
* **model calls per minute**: a sliding log. Workers add one entry per ingest task that
  made model calls (the calls are made before anyone can refuse them, so they are
  charged afterwards and never refused); the API asks, before it accepts an add,
  whether the calls of the last 60 s have reached the limit, and for how long. One large
  add may overdraw the budget: the next adds wait until the log's old entries age out.

Keys (outside every namespace, hash tag = the key id)::

    mc:ratelimit:{<key id>}:requests    STRING TAT in microseconds (PX: until it is past)
    mc:ratelimit:{<key id>}:modelcalls  ZSET   "<calls>:<task id>:<nonce>" -> time (ms)
"""

from __future__ import annotations

import math
import uuid

import redis

from memcore.core.models import validate_identifier
from memcore.store import keys
from memcore.store.gateway import LuaScript

MODEL_CALL_WINDOW_SECONDS = 60.0
"""The window the model-call limit counts over."""

# GCRA. KEYS: tat. ARGV: emission interval (us), burst (requests)
# -> 0 (let through, counted) or the microseconds to wait before one is let through.
TAKE_REQUEST = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if now < allow_at then
  return math.ceil(allow_at - now)
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat),
  'PX', math.ceil((new_tat - now) / 1000) + 1)
return 0
"""

# Sliding log: add one charge. KEYS: log. ARGV: member, window (ms) -> calls in the window
CHARGE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], window + 1000)
local total = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  total = total + tonumber(string.match(m, '^(%d+):'))
end
return total
"""

# Sliding log: is there room? KEYS: log. ARGV: limit, window (ms)
# -> {calls in the window, milliseconds until they are below the limit (0: now)}
ROOM = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local total = 0
for i = 1, #entries, 2 do
  total = total + tonumber(string.match(entries[i], '^(%d+):'))
end
if total < limit then return {total, 0} end
local left = total
for i = 1, #entries, 2 do
  left = left - tonumber(string.match(entries[i], '^(%d+):'))
  if left < limit then
    return {total, math.max(1, tonumber(entries[i + 1]) + window - now)}
  end
end
return {total, window}
"""


class RateLimits:
    """The per-key limiters (requests per second, model calls per minute)."""

    def __init__(self, client: redis.Redis, *,
                 model_call_window: float = MODEL_CALL_WINDOW_SECONDS) -> None:
        """``model_call_window``: seconds the model-call log counts over (a minute; the
        store's tests shorten it)."""
        self._window_ms = int(model_call_window * 1000)
        self._take = LuaScript(client, TAKE_REQUEST)
        self._charge = LuaScript(client, CHARGE)
        self._room = LuaScript(client, ROOM)

    def take_request(self, key_id: str, per_second: float) -> float:
        """Count one request of ``key_id`` against ``per_second`` (a burst of up to one
        second's worth, at least 1, is let through at once). 0.0: let through; else the
        seconds to wait before a request would be (nothing was counted)."""
        if per_second <= 0:
            raise ValueError(f"per_second: must be > 0, got {per_second}")
        interval = 1_000_000 / per_second
        burst = max(1, math.floor(per_second))
        wait_us = self._take([keys.rate_requests(key_id)], [f"{interval:.0f}", burst])
        return int(wait_us) / 1_000_000

    def charge_model_calls(self, key_id: str, task_id: str, calls: int) -> int:
        """Record that ingest task ``task_id`` made ``calls`` model calls for ``key_id``
        (each run of a task is charged: a redelivered task makes its calls again); the
        calls of the last minute, this charge included."""
        if calls < 0:
            raise ValueError(f"calls: must be >= 0, got {calls}")
        member = f"{calls}:{validate_identifier(task_id)}:{uuid.uuid4().hex[:8]}"
        return int(self._charge([keys.rate_model_calls(key_id)],
                                [member, self._window_ms]))

    def model_call_wait(self, key_id: str, per_minute: int) -> tuple[int, float]:
        """The model calls charged to ``key_id`` in the last window (a minute) and the
        seconds until they are below ``per_minute`` (0.0: below it now: an add may be
        accepted)."""
        if per_minute <= 0:
            raise ValueError(f"per_minute: must be > 0, got {per_minute}")
        used, wait_ms = self._room([keys.rate_model_calls(key_id)],
                                   [per_minute, self._window_ms])
        return int(used), int(wait_ms) / 1000
