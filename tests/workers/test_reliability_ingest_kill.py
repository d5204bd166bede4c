"""Ingest workers SIGKILLed again and again during a run: nothing lost, nothing counted twice."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from pathlib import Path

from memcore.client.client import Client
from tests.support.test_reliability_common import (
    SHORT_VISIBILITY,
    cluster,
    counted_sources,
    expected_shared_support,
    fact_text,
    turn_messages,
)

FACTS_PER_TURN = 5
REPEAT_EVERY = 7
BATCH = 10


def test_ingest_worker_sigkilled_repeatedly(tmp_path: Path, long_mode: bool) -> None:
    turns = 2000 if long_mode else 1000
    kills_wanted = 20 if long_mode else 8
    ns = f"kill-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        c.spawn("ingest", "ingest", concurrency=2)
        c.spawn_beat()  # a whole-worker kill can lose a message it had just taken
        c.wait_ready({"ingest"})
        client = Client(c.url)
        task_ids: list[str] = []
        done = threading.Event()

        def produce() -> None:
            for start in range(0, turns, BATCH):
                task_ids.extend(client.add(ns, turn_messages(start, BATCH, FACTS_PER_TURN,
                                                             repeat_every=REPEAT_EVERY)))
                time.sleep(0.01)
            done.set()

        producer = threading.Thread(target=produce)
        t0 = time.monotonic()
        producer.start()
        # Kill while work is in flight: odd kills take one pool child (the task is
        # rejected and requeued), even kills the whole worker (the message waits in
        # the unacked set for the visibility timeout, then another worker gets it).
        while c.kills < kills_wanted:
            time.sleep(0.6)
            whole = c.kills % 2 == 0
            c.kill("ingest", whole_group=whole)
            if whole:
                c.spawn("ingest", "ingest", concurrency=2)
                c.wait_ready({"ingest"})
        producer.join()
        client.wait(task_ids, timeout=SHORT_VISIBILITY * 12 + 120)
        elapsed = time.monotonic() - t0

        episodes = [e.id for e in client.store.episodes.iter_episodes(ns)]
        memories = list(client.store.records.iter_memories(ns))
        by_text = Counter(m.text for m in memories)
        expected = {fact_text(t, j) for t in range(turns) for j in range(FACTS_PER_TURN)}
        shared = expected_shared_support(turns, REPEAT_EVERY)
        lost_turns = turns - len(set(episodes))
        dup_episodes = len(episodes) - len(set(episodes))
        lost_facts = len((expected | set(shared)) - set(by_text))
        dup_facts = sum(n - 1 for n in by_text.values() if n > 1)
        wrong_support = [m.text for m in memories if m.text in shared and (
            counted_sources(client.store, ns, m) != shared[m.text]
            or m.support != len(shared[m.text]))]
        wrong_support += [m.text for m in memories if m.text in expected and m.support != 1]
        print(f"\n[ingest SIGKILL] {c.kills} kills, {turns:,} turns, "
              f"{len(expected) + len(shared):,} distinct facts, {len(task_ids)} tasks, "
              f"{elapsed:.0f} s: {lost_turns} turns lost, {dup_episodes} episodes duplicated, "
              f"{lost_facts} facts lost, {dup_facts} duplicated, "
              f"{len(wrong_support)} with support counted twice")
        assert (lost_turns, dup_episodes, lost_facts, dup_facts) == (0, 0, 0, 0)
        assert wrong_support == []
        assert len(memories) == len(expected) + len(shared)
        client.close()
