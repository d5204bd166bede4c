"""Client.batched / TurnCoalescer: turns of one namespace share a task, bounded by size
and wait; every turn reaches a task; errors reach the waiters. Real workers and Redis."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime

import pytest

from memcore.client.client import Client
from memcore.client.coalesce import TurnCoalescer
from memcore.core.models import Episode, Role
from memcore.local.stack import LocalStack

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def episode(ns: str, i: int) -> Episode:
    return Episode(id=f"e{i}", namespace=ns, role=Role.USER, text=f"turn {i}", timestamp=T0)


class Recorder:
    """A send function that records the batches it was given (no broker involved)."""

    def __init__(self) -> None:
        self.batches: list[tuple[str, list[str]]] = []
        self.lock = threading.Lock()

    def __call__(self, namespace: str, episodes: list[Episode]) -> str:
        with self.lock:
            self.batches.append((namespace, [e.id for e in episodes]))
            return f"task-{len(self.batches)}"


def test_size_bound_splits_and_every_future_names_all_its_tasks() -> None:
    send = Recorder()
    with TurnCoalescer(send, max_turns=3, max_wait_ms=10_000) as co:
        small = co.submit("a", [episode("a", 0)])
        big = co.submit("a", [episode("a", i) for i in range(1, 5)])
        other = co.submit("b", [episode("b", 9)])
        assert small.result(timeout=1) == ["task-1"]  # full at 3: sent without waiting
        assert not big.done()  # two of its turns still wait
    assert big.result(timeout=1) == ["task-1", "task-2"]
    assert other.result(timeout=1) == ["task-3"]
    assert send.batches == [("a", ["e0", "e1", "e2"]), ("a", ["e3", "e4"]),
                            ("b", ["e9"])]


def test_wait_bound_sends_a_lonely_turn() -> None:
    send = Recorder()
    with TurnCoalescer(send, max_turns=100, max_wait_ms=20) as co:
        future = co.submit("a", [episode("a", 0)])
        assert future.result(timeout=5) == ["task-1"]


def test_send_errors_reach_every_waiter_and_the_coalescer_goes_on() -> None:
    calls = {"n": 0}

    def flaky(namespace: str, episodes: list[Episode]) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("broker down")
        return "ok"

    with TurnCoalescer(flaky, max_turns=2, max_wait_ms=10_000) as co:
        first = co.submit("a", [episode("a", 0), episode("a", 1)])
        with pytest.raises(ConnectionError, match="broker down"):
            first.result(timeout=1)
        assert co.submit("a", [episode("a", 2), episode("a", 3)]).result(timeout=1) == ["ok"]


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="max_turns"):
        TurnCoalescer(Recorder(), max_turns=0)
    with pytest.raises(ValueError, match="max_wait_ms"):
        TurnCoalescer(Recorder(), max_wait_ms=-1)
    co = TurnCoalescer(Recorder())
    with pytest.raises(ValueError, match="episodes"):
        co.submit("a", [])
    co.close()
    with pytest.raises(RuntimeError, match="closed"):
        co.submit("a", [episode("a", 0)])


def test_batched_adds_reach_the_store_in_shared_tasks(celery_stack: LocalStack) -> None:
    client = Client(celery_stack.redis_url)
    namespaces = [f"t-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    try:
        with client.batched(max_turns=8, max_wait_ms=50) as batch:
            with pytest.raises(ValueError, match=r"messages\[0\]"):
                batch.add(namespaces[0], [{"role": "user"}])
            futures = [batch.add(namespaces[i % 2],
                                 [{"role": "user", "content": f"I have a pet number {i}.",
                                   "id": f"turn-{i}", "timestamp": T0}])
                       for i in range(20)]
        task_ids = sorted({tid for f in futures for tid in f.result(timeout=10)})
        assert len(task_ids) < 20, "turns of one namespace share tasks"
        results = client.wait(task_ids, timeout=120)
        assert sum(r["new_episodes"] for r in results) == 20
        for i, ns in enumerate(namespaces):
            for j in range(i, 20, 2):
                assert client.store.episodes.get_episode(ns, f"turn-{j}") is not None
    finally:
        client.close()
