"""An erase whose process dies mid-way is finished later (notes/chaos.md, Known gaps;
docs/design.md, Erase reaches every file).

A child process runs a real turn erase against the test's Redis and SIGKILLs itself
between dropping the turn and erasing the memories it alone supports: the very cut a
chaos run once hit. The turn is gone and its fact live; the erase's note stays behind,
and the next check (each beat tick) runs the erase again, so both are gone.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import redis

from memcore.core.models import Actor, AuditAction, Episode, Role
from memcore.store import MemoryStore, keys
from memcore.store.unfinished import EraseKind
from tests.store.test_store_support import later, mem

DIES_MID_ERASE = textwrap.dedent("""
    import os, signal, sys
    import redis
    from memcore.store import MemoryStore
    from memcore.store.erase import Eraser
    from tests.store.test_store_support import later

    def die(*args, **kwargs):  # the turn is dropped; the memories are next
        os.kill(os.getpid(), signal.SIGKILL)

    Eraser._erase = die
    store = MemoryStore(redis.Redis.from_url(sys.argv[1]))
    store.eraser.erase_episode("u", sys.argv[2], later(5), reason="user asked")
""")


def _seed(store: MemoryStore) -> tuple[str, str]:
    store.episodes.add_episodes([
        Episode(id="e-secret", namespace="u", role=Role.USER, text="my PIN is 4921",
                timestamp=later(0)),
        Episode(id="e-other", namespace="u", role=Role.USER, text="I live in Oslo",
                timestamp=later(1))])
    secret = store.writes.add("u", mem("u", "user's PIN is 4921", seed=1, sources=["e-secret"]),
                              actor=Actor.INGEST, reason="extracted")
    keep = store.writes.add("u", mem("u", "user lives in Oslo", seed=2, sources=["e-other"]),
                            actor=Actor.INGEST, reason="extracted")
    return secret.id, keep.id


def _killed_mid_erase(url: str, episode_id: str) -> None:
    done = subprocess.run([sys.executable, "-c", DIES_MID_ERASE, url, episode_id],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, done.stderr


def test_a_turn_erase_killed_half_way_is_finished_by_the_next_check(
        redis_url: str, redis_client: redis.Redis) -> None:
    store = MemoryStore(redis_client)
    secret, keep = _seed(store)
    _killed_mid_erase(redis_url, "e-secret")
    # The cut: the turn is gone, the fact it alone carried is still live.
    assert store.episodes.get_episode("u", "e-secret") is None
    assert store.records.get("u", secret) is not None
    [entry] = store.eraser.unfinished.older_than(0)
    assert (entry.kind, entry.namespace, entry.target) == (EraseKind.EPISODE, "u", "e-secret")
    assert "4921" not in redis_client.zrange(keys.ERASE_UNFINISHED, 0, -1)[0].decode()
    # Younger than the limit: its process may still be working on it.
    assert store.eraser.finish_unfinished(older_than=3600) == 0
    assert store.records.get("u", secret) is not None

    assert store.eraser.finish_unfinished(older_than=0) == 1
    assert store.records.get("u", secret) is None
    assert store.records.get("u", keep) is not None
    assert store.episodes.get_episode("u", "e-other") is not None
    assert store.eraser.unfinished.older_than(0) == []
    erases = [e for e in store.audit.tail("u", 100) if e.action is AuditAction.ERASE]
    assert any("finished after an interruption" in (e.reason or "") for e in erases)


def test_a_finished_erase_leaves_no_note_and_a_second_check_does_nothing(
        redis_client: redis.Redis) -> None:
    store = MemoryStore(redis_client)
    _, keep = _seed(store)
    store.eraser.erase_episode("u", "e-secret", later(5))
    store.eraser.erase_memory("u", keep, later(6))
    assert redis_client.zcard(keys.ERASE_UNFINISHED) == 0
    assert store.eraser.finish_unfinished(older_than=0) == 0


def test_a_note_that_is_not_an_erase_is_dropped_not_retried(
        redis_client: redis.Redis) -> None:
    store = MemoryStore(redis_client)
    redis_client.zadd(keys.ERASE_UNFINISHED, {"not json": 1.0})
    assert store.eraser.finish_unfinished(older_than=0) == 0
    assert redis_client.zcard(keys.ERASE_UNFINISHED) == 0
