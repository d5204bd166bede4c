"""Erase reaches the disk: the append-only file is rewritten, so erased text leaves it too."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from memcore.adapters import build_models
from memcore.client.client import to_episodes
from memcore.core.config import Settings
from memcore.core.models import utcnow
from memcore.ingest.write_path import IngestPipeline
from memcore.local.redis_server import running_redis
from memcore.store import MemoryStore
from tests.support.test_reliability_common import T0

SECRET = "ZEBRA-4471-diary-code"


def _aof_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in directory.rglob("*.aof*") if p.is_file())


def _wait_rewrite(store: MemoryStore) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = store.client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return
        time.sleep(0.05)
    raise TimeoutError("AOF rewrite did not finish")


def erase_secret(store: MemoryStore, ns: str, what: str, secret: str) -> None:
    """Erase the memory holding ``secret`` and its turn t1, or the whole namespace."""
    if what == "memory":
        (mid,) = [m.id for m in store.records.iter_memories(ns) if secret in m.text]
        store.eraser.erase_memory(ns, mid, utcnow())
        store.eraser.erase_episode(ns, "t1", utcnow())  # the turn's own text holds it too
    else:
        store.eraser.erase_namespace(ns, utcnow())


@pytest.mark.parametrize("what", ["memory", "namespace"])
def test_erase_rewrites_the_aof(what: str) -> None:
    with running_redis(appendfsync="always") as server:
        try:
            # The secret must reach the AOF to be erased from it: codes are masked by
            # default (issue 28), so this deployment keeps them.
            s = Settings(redis_url=server.url, extractor="provided", redact_secrets=False)
            store = MemoryStore.from_url(server.url)
            pipeline = IngestPipeline(store, build_models(s), s)
            ns = "aof"
            pipeline.ingest(ns, to_episodes(ns, [
                {"role": "user", "id": "t1", "content": "note",
                 "metadata": {"facts": [f"Sam's diary code is {SECRET}"]}},
                {"role": "user", "id": "t2", "content": "other",
                 "metadata": {"facts": ["Sam likes jazz"]}}], T0, None))
            before = SECRET.encode() in _aof_bytes(server.directory)
            erase_secret(store, ns, what, SECRET)
            _wait_rewrite(store)
            after = SECRET.encode() in _aof_bytes(server.directory)
            kept = [m.text for m in store.records.iter_memories(ns)]
            print(f"\n[erase {what} + AOF] secret in the AOF before erase: {before}, after the "
                  f"rewrite erase triggers: {after}; other memories kept: {kept}")
            assert before and not after
            assert kept == ([] if what == "namespace" else ["Sam likes jazz"])
        finally:
            shutil.rmtree(server.directory, ignore_errors=True)
