"""Accepted turns whose message the broker lost are sent again (memcore.ingest.redelivery).

Celery's Redis transport loses a message a worker popped (``BRPOP``) and died before it
recorded it as taken, or that Redis lost between the two (the chaos run found it:
``notes/chaos.md``). Here the loss is made the same way, by taking the message off the
queue with no worker to record it; beat's tick then finds the kept copy that no queue
holds and no worker took, and sends it again.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from pathlib import Path

import pytest
import redis

from memcore.client.client import Client
from memcore.ingest.redelivery import MAX_RESENDS, redeliver_lost
from memcore.messaging import task_names
from memcore.observability.metrics import QueueLagCollector
from memcore.store import keys
from tests.support.test_reliability_common import SHORT_VISIBILITY, cluster, turn_messages


def _send(client: Client):  # type: ignore[no-untyped-def]
    def send(task_id: str, queue: str, payload: dict[str, object]) -> None:
        client.celery.send_task(task_names.INGEST, args=[payload], task_id=task_id,
                                queue=queue)
    return send


def _lose_the_queue(url: str) -> int:
    """What a worker killed between ``BRPOP`` and recording the delivery leaves: the
    messages gone from the queue and from ``unacked``."""
    r = redis.Redis.from_url(url)
    try:
        return int(r.delete(task_names.INGEST_QUEUE))
    finally:
        r.close()


def test_beat_sends_a_lost_message_again_and_the_turns_are_stored(tmp_path: Path) -> None:
    ns = f"redeliver-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        client = Client(c.url)
        [task_id] = client.add(ns, turn_messages(0, 3, 1))
        assert client.store.backlog.kept(task_id) is not None
        assert _lose_the_queue(c.url) == 1
        c.spawn("ingest", "ingest", concurrency=1)
        c.wait_ready({"ingest"})
        with pytest.raises(TimeoutError):  # nothing will run it by itself
            client.wait([task_id], timeout=2)

        # Beat's tick, once the message is older than the visibility timeout.
        time.sleep(SHORT_VISIBILITY + 0.5)
        tick = client.celery.send_task(task_names.SCHEDULE, queue=task_names.INGEST_QUEUE)
        tick.get(timeout=60)
        client.wait([task_id], timeout=60)
        assert len(list(client.store.episodes.iter_episodes(ns))) == 3
        assert client.store.backlog.kept(task_id) is None  # the ended task took it out
        assert client.store.backlog.depth(ns).namespace == 0
        assert "the broker lost its message; sent again" in c.logs()
        client.close()


def test_a_message_still_queued_or_taken_is_not_sent_again(tmp_path: Path) -> None:
    ns = f"redeliver-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        client = Client(c.url)
        queues = QueueLagCollector(c.url)
        taken, queued = client.add(ns, turn_messages(0, 1, 1))[0], \
            client.add(ns, turn_messages(1, 1, 1))[0]
        r = redis.Redis.from_url(c.url)
        # A worker took the first: kombu moved it to its unacked hash.
        raw = r.rpop(task_names.INGEST_QUEUE)
        assert raw is not None and taken.encode() in raw
        r.hset("unacked", "delivery-tag-1", json.dumps([json.loads(raw), "", "ingest"]))
        later = time.time() + 3600
        done = redeliver_lost(client.store.backlog, queues.holding, _send(client),
                              older_than=SHORT_VISIBILITY, now=later)
        assert (done.looked_at, done.resent, done.given_up) == (2, [], [])
        assert r.llen(task_names.INGEST_QUEUE) == 1
        # Looked at again one period later, not at every tick.
        assert client.store.backlog.sent_before(later, 10) == []
        assert queued != taken
        r.close()
        queues.close()
        client.close()


def test_a_message_lost_again_and_again_is_given_up_loudly(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ns = f"redeliver-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        client = Client(c.url)
        queues = QueueLagCollector(c.url)
        [task_id] = client.add(ns, turn_messages(0, 1, 1))
        now = time.time()
        resent = 0
        with caplog.at_level(logging.WARNING, logger="memcore.ingest.redelivery"):
            for _ in range(MAX_RESENDS + 1):
                _lose_the_queue(c.url)
                now += SHORT_VISIBILITY + 1
                done = redeliver_lost(client.store.backlog, queues.holding, _send(client),
                                      older_than=SHORT_VISIBILITY, now=now)
                resent += len(done.resent)
        assert resent == MAX_RESENDS
        assert done.given_up == [task_id]
        assert client.store.backlog.kept(task_id) is None
        assert client.store.backlog.depth(ns).namespace == 0
        assert any(r.levelno == logging.ERROR and task_id in r.getMessage()
                   for r in caplog.records)
        queues.close()
        client.close()


def test_the_kept_message_is_the_sent_one_and_goes_with_the_task(redis_url: str) -> None:
    """The store side: kept before it is sent, found by age, gone on release."""
    client = Client(redis_url)
    try:
        backlog = client.store.backlog
        payload = {"namespace": "n1", "episodes": [{"content": "ünïcode"}]}
        backlog.keep("t-1", "ingest", payload)
        kept = backlog.kept("t-1")
        assert kept is not None and (kept.queue, kept.payload, kept.resent) == (
            "ingest", payload, 0)
        assert backlog.sent_before(time.time() + 1, 10) == ["t-1"]
        assert backlog.sent_before(time.time() - 60, 10) == []
        backlog.sent_again(kept, time.time())
        assert backlog.kept("t-1").resent == 1  # type: ignore[union-attr]
        backlog.release("n1", ["t-1"])
        assert backlog.kept("t-1") is None
        raw = redis.Redis.from_url(redis_url)
        assert raw.exists(keys.OUTBOX, keys.OUTBOX_SENT) == 0
        raw.close()
    finally:
        client.close()
