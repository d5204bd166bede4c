"""Redis SIGKILLed and restarted on the same AOF (``appendfsync always``) during ingest.

The client only counts a turn as written when its task's SUCCESS is read back from
the result backend. Every such write must survive the restarts; workers and the
client reconnect by themselves. A turn whose task failed or never finished (the
server died under it) is simply sent again, as a client would: ingest is idempotent.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from pathlib import Path

from celery import states

from memcore.client.client import Client
from tests.support.test_reliability_common import (
    SHORT_VISIBILITY,
    cluster,
    fact_text,
    turn_messages,
)

FACTS_PER_TURN = 2
BATCH = 10


def test_redis_restarted_during_ingest_loses_no_acknowledged_write(tmp_path: Path,
                                                                    long_mode: bool) -> None:
    turns = 2000 if long_mode else 600
    restarts = 8 if long_mode else 3
    ns = f"restart-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs", appendfsync="always") as c:
        c.spawn("ingest", "ingest", concurrency=2)
        c.wait_ready({"ingest"})
        client = Client(c.url)
        sent: dict[str, int] = {}  # task id -> first turn of its batch
        sent_at: dict[str, float] = {}  # task id -> when it was sent
        send_errors = 0
        tasks = [0]
        pace = restarts * 2.0 / (turns // BATCH)
        done = threading.Event()

        def produce() -> None:
            nonlocal send_errors
            for start in range(0, turns, BATCH):
                while True:
                    try:
                        (tid,) = client.add(ns, turn_messages(start, BATCH, FACTS_PER_TURN))
                        sent_at[tid] = time.monotonic()
                        sent[tid] = start
                        tasks[0] += 1
                        break
                    except Exception:
                        send_errors += 1  # the server is down: not acknowledged, send again
                        time.sleep(0.2)
                time.sleep(pace)  # spread the sends over the restarts
            done.set()

        # A checker reads each task's outcome while the server dies under it; a batch
        # whose task failed, or is still unfinished well after the last restart (lost
        # with the server), is sent again.
        backend = client.celery.backend
        acked_at: dict[int, float] = {}
        resent = 0
        errors: Counter[str] = Counter()
        last_restart = [time.monotonic()]
        grace = SHORT_VISIBILITY + 5  # resending early only costs a duplicate task (idempotent)

        def check() -> None:
            nonlocal resent
            deadline = time.monotonic() + SHORT_VISIBILITY * 6 + 120
            while time.monotonic() < deadline:
                time.sleep(0.3)
                if done.is_set() and not restarting.is_set() and not sent:
                    return
                for tid, start in list(sent.items()):
                    try:
                        meta = backend.get_task_meta(tid)
                    except Exception as exc:
                        errors[repr(exc)[:120]] += 1
                        break  # the server is down
                    if meta["status"] == states.SUCCESS:
                        acked_at.setdefault(start, time.monotonic())
                        del sent[tid]
                    elif meta["status"] in states.READY_STATES or (
                            not restarting.is_set()
                            and time.monotonic() - max(last_restart[0], sent_at[tid]) > grace):
                        # Lost only if unfinished ``grace`` after both the last restart and
                        # its own sending: a slow (loaded) machine must not resend a task
                        # that is merely queued, over and over.
                        # Failed (the store went away mid-task) or lost with the server:
                        # the client was never told it succeeded, so it sends it again.
                        try:
                            (new,) = client.add(ns, turn_messages(start, BATCH, FACTS_PER_TURN))
                        except Exception as exc:
                            errors[repr(exc)[:120]] += 1
                            break
                        del sent[tid]
                        sent_at[new] = time.monotonic()
                        sent[new] = start
                        tasks[0] += 1
                        resent += 1

        restarting = threading.Event()
        restarting.set()
        t0 = time.monotonic()
        producer = threading.Thread(target=produce)
        checker = threading.Thread(target=check)
        producer.start()
        checker.start()
        down = 0.0
        for _ in range(restarts):
            time.sleep(1.5)
            c.server.kill()
            t_kill = time.monotonic()
            time.sleep(0.5)
            c.server.restart()
            down += time.monotonic() - t_kill
            last_restart[0] = time.monotonic()
        last_kill = t_kill
        producer.join()
        restarting.clear()
        checker.join()
        elapsed = time.monotonic() - t0
        pending = dict(sent)
        acknowledged = set(acked_at)
        before_last = sum(1 for t in acked_at.values() if t < last_kill)

        episodes = [e.id for e in client.store.episodes.iter_episodes(ns)]
        by_text = Counter(m.text for m in client.store.records.iter_memories(ns))
        lost_ack = [s for s in acknowledged
                    for t in range(s, s + BATCH)
                    if f"turn-{t}" not in episodes
                    or any(fact_text(t, j) not in by_text for j in range(FACTS_PER_TURN))]
        expected = {fact_text(t, j) for t in range(turns) for j in range(FACTS_PER_TURN)}
        missing = len(expected - set(by_text))
        dup = sum(n - 1 for n in by_text.values() if n > 1) + len(episodes) - len(set(episodes))
        print(f"\n[redis restart] {restarts} SIGKILL+restarts (appendfsync always, "
              f"{down:.1f} s down in all), {turns:,} turns in {tasks[0]} tasks, {elapsed:.0f} s: "
              f"{len(acknowledged) * BATCH:,} turns acknowledged ({before_last * BATCH:,} before "
              f"the last kill), {len(lost_ack)} acknowledged "
              f"batches lost; {send_errors} sends refused while down, {resent} batches resent "
              f"(failed or lost in flight); after resending {missing} facts missing, {dup} "
              f"duplicated; workers up: {c.alive('ingest')}; client errors while down: "
              f"{sum(errors.values())}")
        assert lost_ack == []
        assert not pending, f"{len(pending)} tasks never finished"
        assert missing == 0 and dup == 0
        assert len(acknowledged) == turns // BATCH
        assert c.alive("ingest")
        client.close()
