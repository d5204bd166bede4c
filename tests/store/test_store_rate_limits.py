"""The per-key limiters of memcore.store.rate_limits on a real Redis: GCRA for requests
per second, a sliding log for model calls per minute."""

from __future__ import annotations

import time

import pytest
import redis

from memcore.store import MemoryStore
from memcore.store.rate_limits import RateLimits


def test_requests_a_burst_of_one_second_then_the_rate(redis_client: redis.Redis) -> None:
    limits = RateLimits(redis_client)
    assert [limits.take_request("k1", 4) for _ in range(4)] == [0.0] * 4  # the burst
    wait = limits.take_request("k1", 4)
    assert 0 < wait <= 0.25  # one emission interval at most
    assert limits.take_request("k2", 4) == 0.0, "another key has its own budget"
    time.sleep(wait + 0.01)
    assert limits.take_request("k1", 4) == 0.0
    assert limits.take_request("k1", 4) > 0, "a refusal is not counted, a pass is"


def test_a_rate_below_one_a_second_lets_one_through_then_waits(
        redis_client: redis.Redis) -> None:
    limits = RateLimits(redis_client)
    assert limits.take_request("slow", 0.5) == 0.0
    assert 1.9 < limits.take_request("slow", 0.5) <= 2.0
    ttl = redis_client.pttl("mc:ratelimit:{slow}:requests")
    assert 0 < ttl <= 2002, "the state expires once it no longer limits anything"


def test_model_calls_sliding_log(redis_client: redis.Redis) -> None:
    limits = RateLimits(redis_client, model_call_window=1.5)
    assert limits.model_call_wait("k", 5) == (0, 0.0)
    assert limits.charge_model_calls("k", "task-1", 3) == 3
    assert limits.model_call_wait("k", 5) == (3, 0.0)
    assert limits.charge_model_calls("k", "task-1", 4) == 7, "each run of a task is charged"
    used, wait = limits.model_call_wait("k", 5)
    assert used == 7 and 1.0 < wait <= 1.5  # both entries must age out: the first first
    assert limits.model_call_wait("k", 8) == (7, 0.0)
    assert limits.model_call_wait("other", 5) == (0, 0.0)
    time.sleep(wait + 0.05)
    assert limits.model_call_wait("k", 5) == (0, 0.0)


def test_bad_arguments_are_refused(redis_client: redis.Redis) -> None:
    limits = MemoryStore(redis_client).rate_limits
    with pytest.raises(ValueError, match="per_second"):
        limits.take_request("k", 0)
    with pytest.raises(ValueError, match="per_minute"):
        limits.model_call_wait("k", 0)
    with pytest.raises(ValueError, match="calls"):
        limits.charge_model_calls("k", "t", -1)
    with pytest.raises(ValueError):
        limits.take_request("a key with spaces", 1)


def test_ingest_marker_only_moves_forward(redis_client: redis.Redis) -> None:
    marks = MemoryStore(redis_client).ingest_marks
    assert marks.progress("ns", "f1") == 0
    assert marks.advance("ns", "f1", 40) == 40
    assert marks.advance("ns", "f1", 20) == 40, "a slower twin run never moves it back"
    assert marks.progress("ns", "f1") == 40 and marks.progress("other", "f1") == 0
