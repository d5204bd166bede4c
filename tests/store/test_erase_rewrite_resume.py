"""An erase's AOF rewrite cut short by a Redis crash is started again (notes/chaos.md,
Known gaps; docs/design.md, Erase reaches every file).

Redis is made to rewrite slowly (``rdb-key-save-delay``, a real server setting Redis's
own tests use), the erase starts the rewrite and answers, Redis is SIGKILLed mid-rewrite
and restarted on its old AOF, which still holds the erased text. The marker the erase
left makes the next check (each beat tick) start the rewrite again; once Redis reports it
done the marker goes and no AOF file holds the text.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

from memcore.adapters import build_models
from memcore.client.messages import to_episodes
from memcore.core.config import Settings
from memcore.core.models import utcnow
from memcore.ingest.write_path import IngestPipeline
from memcore.local.redis_server import running_redis
from memcore.store import MemoryStore, keys
from memcore.store.rewrites import RewriteState
from tests.support.test_reliability_common import T0

SECRET = "Sam's diary is hidden under the Quorbeltine stairs"


def aof_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in directory.rglob("*.aof*") if p.is_file())


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Redis's rewrite child)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def settled(store: MemoryStore, timeout: float = 30) -> RewriteState:
    """Check the pending rewrite until it is no longer running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = store.eraser.resume_rewrites()
        if state is not RewriteState.RUNNING:
            return state
        time.sleep(0.1)
    raise TimeoutError("the rewrite did not finish")


def test_a_rewrite_cut_short_by_a_crash_is_started_again() -> None:
    with running_redis(appendfsync="always") as server:
        try:
            settings = Settings(redis_url=server.url, extractor="provided")
            store = MemoryStore.from_url(server.url)
            pipeline = IngestPipeline(store, build_models(settings), settings)
            ns = "rw"
            pipeline.ingest(ns, to_episodes(ns, [
                {"role": "user", "id": "t1", "content": "a note",
                 "metadata": {"facts": [SECRET]}},
                {"role": "user", "id": "t2", "content": "other",
                 "metadata": {"facts": ["Sam likes jazz"]}}], T0, None))
            assert SECRET.encode() in aof_bytes(server.directory)
            (memory,) = [m.id for m in store.records.iter_memories(ns) if m.text == SECRET]
            store.client.config_set("rdb-key-save-delay", 500_000)  # 0.5 s per key
            store.eraser.erase_memory_and_sources(ns, memory, utcnow())
            info = store.client.info("persistence")
            assert info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]
            assert store.client.exists(keys.REWRITE_PENDING)
            forks = children(server.process.pid)
            server.kill()
            for pid in forks:  # the rewrite child dies with its server
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            store.close()
            server.restart()
            store = MemoryStore.from_url(server.url)
            left = SECRET.encode() in aof_bytes(server.directory)
            first = store.eraser.resume_rewrites()
            final = settled(store)
            print(f"\n[erase rewrite, crash] erased text in the AOF after the restart: {left}; "
                  f"first check: {first}, then: {final}; in the AOF now: "
                  f"{SECRET.encode() in aof_bytes(server.directory)}")
            assert left and first is RewriteState.LOST
            assert final is RewriteState.DONE
            assert not store.client.exists(keys.REWRITE_PENDING)
            assert SECRET.encode() not in aof_bytes(server.directory)
            assert [m.text for m in store.records.iter_memories(ns)] == ["Sam likes jazz"]
            assert store.eraser.resume_rewrites() is RewriteState.NONE
            store.close()
        finally:
            shutil.rmtree(server.directory, ignore_errors=True)
