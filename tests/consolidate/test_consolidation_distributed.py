"""Distributed consolidation under faults (issue 5's tests), with real workers and Redis.

Writes during a pass; the consolidate worker SIGKILLed at several points of a pass;
a failing cluster batch; two beat processes; a pass rerun for the same version.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from memcore.client.client import Client
from memcore.core.models import Actor, Memory
from memcore.messaging import task_names
from memcore.store import keys
from memcore_bench.common import BENCH_APP
from tests.support.test_reliability_common import T0, Cluster, cluster, fact_text, turn_messages

PAIRS = ("Sam owns a blue bicycle", "Sam drinks green tea every morning",
         "Sam's sister lives in Lisbon", "Sam plays the cello in an orchestra")


def seed(client: Client, ns: str, singles: int, dup_groups: int) -> set[str]:
    """``singles`` distinct memories plus ``dup_groups`` near-duplicate pairs; their texts."""
    texts = [fact_text(10_000 + i, 0) for i in range(singles)]
    for g in range(dup_groups):
        base = f"{PAIRS[g % len(PAIRS)]} group {uuid.uuid5(uuid.NAMESPACE_DNS, str(g)).hex[:8]}"
        texts += [base, base + " indeed"]
    vectors = client.models.embedder.embed(texts)
    pipe_at = T0
    memories = [Memory(namespace=ns, text=text, vector=[float(x) for x in vec], importance=0.6,
                       last_used=pipe_at, created_at=pipe_at, updated_at=pipe_at,
                       sources=[f"seed-{uuid.uuid4().hex[:12]}"])
                for text, vec in zip(texts, vectors, strict=True)]
    # One commit (what add queues for each new memory): the passes are under test here.
    assert client.store.writes.add_new(ns, memories, actor=Actor.USER, reason="seed") == len(texts)
    return set(texts)


def present(client: Client, ns: str) -> set[str]:
    """Every text the current version still holds (any status, merged members too)."""
    out: set[str] = set()
    for m in client.store.records.iter_memories(ns):
        out.add(m.text)
        out.update(m.member_texts)
    return out


def finish_passes(client: Client, namespaces: list[str], timeout: float = 150.0
                  ) -> dict[str, int]:
    """Run a pass on each namespace until one completes (waiting out stale locks)."""
    done: dict[str, int] = {}
    deadline = time.monotonic() + timeout
    while len(done) < len(namespaces) and time.monotonic() < deadline:
        for ns in namespaces:
            if ns in done:
                continue
            before = client.store.current_version(ns)
            res = client.consolidate(ns, timeout=120, full=True)
            assert isinstance(res, dict)
            if client.store.current_version(ns) > before:
                done[ns] = client.store.current_version(ns)
        time.sleep(1)
    return done


def test_writes_during_a_pass_are_all_present(tmp_path: Path, long_mode: bool) -> None:
    turns = 600 if long_mode else 200
    ns = f"during-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs", env={"MEMCORE_OFFLINE_LATENCY_MS": "20"},
                 app=BENCH_APP) as c:
        c.spawn("ingest", "ingest", 2)
        c.spawn("consolidate", "consolidate", 2)
        c.wait_ready({"ingest", "consolidate"})
        client = Client(c.url)
        seeded = seed(client, ns, 300, 40)
        ids: list[str] = []

        def produce() -> None:
            for start in range(0, turns, 5):
                ids.extend(client.add(ns, turn_messages(start, 5, 2)))
                time.sleep(0.02)

        producer = threading.Thread(target=produce)
        producer.start()
        passes = 0
        while producer.is_alive():
            res = client.consolidate(ns, timeout=120, full=passes == 0)
            passes += isinstance(res, dict) and "skipped" not in res
        producer.join()
        client.wait(ids, timeout=120)
        passes += isinstance(client.consolidate(ns, timeout=120), dict)
        written = {fact_text(t, j) for t in range(turns) for j in range(2)}
        missing = (written | seeded) - present(client, ns)
        print(f"\n[writes during passes] {turns} turns ({len(written)} facts) written during "
              f"{passes} passes (v{client.store.current_version(ns)}): {len(missing)} missing")
        assert missing == set()
        client.close()


KILL_SCRIPT = r"""
import os, signal, sys
from memcore.consolidate import passes
from memcore.client.client import Client
from memcore.core.models import utcnow
client = Client(sys.argv[1])
ns = sys.argv[2]
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)  # v+1 is written; the pointer swap never happens
client.store.gateway.cas_commit = die
cfg = client.settings.consolidation
started = passes.start_pass(client.store, ns, "killed-pass",
                            client.store.coordination.last_pass_at(ns)
                            or utcnow(), cfg, full=True)
results = [passes.merge_batch(client.store, ns, "killed-pass", a, b, client.models.merger)
           for a, b in started.batches]
passes.finish_pass(client.store, ns, "killed-pass", results, cfg, client.models.merger)
"""


def test_consolidate_worker_sigkilled_mid_pass(tmp_path: Path, long_mode: bool) -> None:
    singles = 6000 if long_mode else 2500
    # A short pass lock, so the passes after the kills wait seconds, not a minute.
    ttl = {"MEMCORE_CONSOLIDATION__PASS_LOCK_TTL_SECONDS": "10"}
    with cluster(tmp_path / "logs", env={"MEMCORE_OFFLINE_LATENCY_MS": "300", **ttl},
                 app=BENCH_APP) as c:
        c.spawn("consolidate", "consolidate", 2)
        c.wait_ready({"consolidate"})
        client = Client(c.url)
        phases = {"partition": _lock_held_no_plan, "fan-out": _plan_no_building,
                  "reducer": _building}
        namespaces: list[str] = []
        seeded: dict[str, set[str]] = {}
        hit: dict[str, str] = {}
        for phase, reached in phases.items():
            ns = f"kill-{phase}-{uuid.uuid4().hex[:6]}"
            namespaces.append(ns)
            seeded[ns] = seed(client, ns, singles, 60)
            client.consolidate(ns, wait=False, full=True)
            hit[ns] = _kill_when(c, client, ns, reached)
            assert client.store.current_version(ns) == 0, f"{phase}: pointer moved half-way"
            c.spawn("consolidate", "consolidate", 2)
            c.wait_ready({"consolidate"})
        # Just before the swap: a process that dies inside commit_pass, after writing v+1.
        ns = f"kill-swap-{uuid.uuid4().hex[:6]}"
        namespaces.append(ns)
        seeded[ns] = seed(client, ns, 200, 20)
        proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, c.url, ns],
                              env={**os.environ, **ttl, "PYTHONPATH": str(Path.cwd())},
                              timeout=120,
                              capture_output=True)
        hit[ns] = f"before swap (exit {proc.returncode})"
        assert proc.returncode == -9, proc.stderr.decode()[-2000:]
        assert client.store.current_version(ns) == 0
        t0 = time.monotonic()
        done = finish_passes(client, namespaces)
        lost = {ns: len(seeded[ns] - present(client, ns)) for ns in namespaces}
        print(f"\n[consolidate SIGKILL] {len(namespaces)} kills at {list(hit.values())}: "
              f"pointer never half-way, next pass completed on {len(done)}/{len(namespaces)} "
              f"in {time.monotonic() - t0:.0f} s, lost {sum(lost.values())} of "
              f"{sum(len(s) for s in seeded.values())} memories")
        assert sorted(done) == sorted(namespaces)
        assert all(v >= 1 for v in done.values())
        assert sum(lost.values()) == 0
        client.close()


def _lock_held_no_plan(client: Client, ns: str) -> bool:
    r = client.store.client
    return bool(r.exists(keys.pass_lock(ns))) and not list(
        r.scan_iter(match=keys.prefix(ns) + "passplan:*", count=1000))


def _plan_no_building(client: Client, ns: str) -> bool:
    r = client.store.client
    return bool(list(r.scan_iter(match=keys.prefix(ns) + "passplan:*", count=1000))
                ) and not r.zcard(keys.building(ns))


def _building(client: Client, ns: str) -> bool:
    return bool(client.store.client.zcard(keys.building(ns)))


def _kill_when(c: Cluster, client: Client, ns: str, reached: Any) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if reached(client, ns):
            c.kill("consolidate")
            return reached.__name__.strip("_")
        time.sleep(0.002)
    raise TimeoutError(f"phase {reached.__name__} never reached on {ns}")


def test_failing_cluster_batch_lets_the_rest_land(tmp_path: Path) -> None:
    from tests.workers.test_reliability_models import merge_server

    with merge_server(fail_marker="FAILME") as base_url, cluster(tmp_path / "logs", env={
            "MEMCORE_OPENAI_API_KEY": "sk-test-not-a-secret", "MEMCORE_OPENAI_BASE_URL": base_url,
            "MEMCORE_MODEL_MAX_RETRIES": "0", "MEMCORE_MODEL_TIMEOUT": "5"}) as c:
        c.spawn("consolidate", "consolidate", 2)
        c.wait_ready({"consolidate"})
        client = Client(c.url)
        ns = f"failing-{uuid.uuid4().hex[:6]}"
        seeded = seed(client, ns, 50, 70)  # 70 clusters: 3 batches of <= 32
        bad = [m for m in client.store.records.iter_memories(ns) if PAIRS[0] in m.text][:2]
        for m in bad:  # mark one cluster: its batch's model call fails every time
            client.store.writes.update(ns, m.id, text=m.text + " FAILME", vector=m.vector,
                                source="mark", now=T0, reason="test")
        live_before = sum(1 for m in client.store.records.iter_memories(ns) if m.live)
        res = client.consolidate(ns, timeout=120, full=True, now=T0 + timedelta(days=1))
        assert isinstance(res, dict)
        live = [m for m in client.store.records.iter_memories(ns) if m.live]
        merged = live_before - len(live)  # each merged pair leaves one live memory
        unmerged_marked = sum(1 for m in live if "FAILME" in m.text)
        print(f"\n[failing cluster batch] pass v{client.store.current_version(ns)}: "
              f"{merged} clusters merged, marked cluster left unmerged "
              f"({unmerged_marked} live members), "
              f"{len(seeded - present(client, ns) - {m.text for m in bad})} lost (the 2 "
              f"marked texts were renamed by the test)")
        assert client.store.current_version(ns) == 1
        assert merged > 0 and unmerged_marked == 2
        assert seeded <= present(client, ns) | {m.text for m in bad}
        client.close()


def test_two_beats_schedule_each_due_namespace_once_per_interval(tmp_path: Path) -> None:
    interval = 2.0
    with cluster(tmp_path / "logs", env={
            "MEMCORE_BEAT_INTERVAL_SECONDS": str(interval),
            "MEMCORE_CONSOLIDATION_IMPORTANCE_THRESHOLD": "0"}) as c:
        client = Client(c.url)
        namespaces = [f"beat-{i}-{uuid.uuid4().hex[:6]}" for i in range(4)]
        for ns in namespaces:
            seed(client, ns, 3, 0)
        c.spawn("ingest", "ingest", 2)  # runs the schedule task; no consolidate worker
        c.wait_ready({"ingest"})
        for i in range(2):
            beat_dir = tmp_path / f"beat{i}"
            beat_dir.mkdir()
            c.stack.spawn(f"beat{i}", [sys.executable, "-m", "celery", "-A", "workers.app",
                                       "beat", "--loglevel", "WARNING",
                                       "-s", str(beat_dir / "schedule")])
        claims: dict[str, set[int]] = {ns: set() for ns in namespaces}
        # The window starts at the first claim: two beats starting up on a loaded machine
        # can take longer than the whole window (seen at load 15: 3 intervals of 8).
        first = time.monotonic() + 120
        while time.monotonic() < first and not any(
                client.store.client.scan_iter(match=keys.prefix(ns) + "sched:*")
                for ns in namespaces):
            time.sleep(0.1)
        t_end = time.monotonic() + 8 * interval
        while time.monotonic() < t_end:
            for ns in namespaces:
                for key in client.store.client.scan_iter(match=keys.prefix(ns) + "sched:*"):
                    claims[ns].add(int(key.decode().rsplit(":", 1)[1]))
            time.sleep(0.2)
        for i in range(2):
            c.kill(f"beat{i}")
        time.sleep(interval)
        for ns in namespaces:  # claims made in the last moments
            for key in client.store.client.scan_iter(match=keys.prefix(ns) + "sched:*"):
                claims[ns].add(int(key.decode().rsplit(":", 1)[1]))
        queued = Counter(_namespace(raw)
                         for raw in client.store.client.lrange("consolidate", 0, -1))
        per_ns = {ns: (queued[ns], len(claims[ns])) for ns in namespaces}
        print(f"\n[two beats] {len(namespaces)} due namespaces, {8 * interval:.0f} s at "
              f"{interval:.0f} s intervals: (passes enqueued, intervals) per namespace "
              f"{sorted(per_ns.values())}")
        assert all(q == n and n >= 4 for q, n in per_ns.values())
        client.close()


def _namespace(raw: bytes) -> str:
    """The namespace of a queued consolidate message (kombu JSON, base64 body)."""
    import base64

    args = json.loads(base64.b64decode(json.loads(raw)["body"]))[0]
    return str(args[0]["namespace"])


def test_redelivered_pass_tasks_change_nothing(tmp_path: Path) -> None:
    """The chord's tasks delivered again (as after a visibility timeout) change nothing."""
    with cluster(tmp_path / "logs") as c:
        c.spawn("consolidate", "consolidate", 2)
        c.wait_ready({"consolidate"})
        client = Client(c.url)
        ns = f"rerun-{uuid.uuid4().hex[:6]}"
        seed(client, ns, 200, 30)
        now = T0 + timedelta(days=3)

        def state() -> list[str]:
            return sorted(m.model_dump_json() for m in client.store.records.iter_memories(ns))

        started = client.consolidate(ns, now=now, full=True, timeout=120)
        assert isinstance(started, dict)
        first, v1 = state(), client.store.current_version(ns)
        pass_id = started["pass_id"]
        again = [client.celery.send_task(task_names.CONSOLIDATE_BATCH, args=[ns, pass_id, 0, 32],
                                         queue="consolidate"),
                 client.celery.send_task(task_names.CONSOLIDATE_REDUCE,
                                         args=[[None], ns, pass_id], queue="consolidate")]
        outcomes = []
        for res in again:
            try:
                outcomes.append(str(res.get(timeout=60))[:60])
            except Exception as exc:
                outcomes.append(type(exc).__name__)
        second, v2 = state(), client.store.current_version(ns)
        changed = len(set(first) ^ set(second))
        print(f"\n[redelivered pass tasks] pass {pass_id[:8]} v{v1}; batch and reducer "
              f"delivered again -> {outcomes}; v{v2}, {len(first)} records, {changed} differ")
        assert (v2, changed) == (v1, 0)
        client.close()
