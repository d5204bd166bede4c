"""Erase reaches dump.rdb too: with RDB snapshots configured, an erase triggers BGSAVE.

Seen before: erase rewrote the AOF, but Redis's default RDB snapshots kept the erased
text in ``dump.rdb`` until the next save point (up to an hour later, or never on a quiet
server). Here Redis keeps both files, uncompressed so a byte scan can see the text; a
snapshot holding the secret is written first, then an erase: afterwards neither the AOF
nor ``dump.rdb`` holds it. A server without snapshots gets no ``dump.rdb`` from an erase.
"""

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
from tests.store.test_security_erase_aof import erase_secret
from tests.support.test_reliability_common import T0

SECRET = "OKAPI-9182-locker-code"
# rdbcompression no: LZF would hide the text from a byte scan (of the RDB preamble of the
# AOF too); "save 3600 1": snapshots configured, but no save point due during the test.
SNAPSHOTS = ["--save", "3600 1", "--rdbcompression", "no"]


def _files(directory: Path) -> dict[str, bytes]:
    """dump.rdb and every AOF part, by name."""
    return {p.name: p.read_bytes() for p in directory.rglob("*")
            if p.is_file() and (p.name == "dump.rdb" or ".aof" in p.name)}


def _holding(directory: Path) -> list[str]:
    return sorted(name for name, raw in _files(directory).items() if SECRET.encode() in raw)


def _idle(store: MemoryStore, saves_at_least: int, timeout: float = 30) -> None:
    """Wait until no rewrite or save runs or waits, and ``saves_at_least`` saves were made."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = store.client.info("persistence")
        if not (info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]
                or info["rdb_bgsave_in_progress"]) and info["rdb_saves"] >= saves_at_least:
            assert info["rdb_last_bgsave_status"] == "ok"
            return
        time.sleep(0.05)
    raise TimeoutError("rewrite or save did not finish")


def _ingest_secret(url: str, store: MemoryStore, ns: str) -> None:
    # The secret must reach the files to be erased from them: codes are masked by default.
    s = Settings(redis_url=url, extractor="provided", redact_secrets=False)
    IngestPipeline(store, build_models(s), s).ingest(ns, to_episodes(ns, [
        {"role": "user", "id": "t1", "content": "note",
         "metadata": {"facts": [f"Sam's locker code is {SECRET}"]}},
        {"role": "user", "id": "t2", "content": "other",
         "metadata": {"facts": ["Sam likes jazz"]}}], T0, None))


@pytest.mark.parametrize("what", ["memory", "namespace"])
def test_erase_rewrites_dump_rdb_and_the_aof(what: str) -> None:
    with running_redis(appendfsync="always", extra=SNAPSHOTS) as server:
        store = MemoryStore.from_url(server.url)
        try:
            ns = "rdb"
            _ingest_secret(server.url, store, ns)
            store.client.bgsave()  # a snapshot taken while the secret was stored
            _idle(store, 1)
            before = _holding(server.directory)
            saves = store.client.info("persistence")["rdb_saves"]
            erase_secret(store, ns, what, SECRET)
            _idle(store, saves + 1)
            after = _holding(server.directory)
            print(f"\n[erase {what} + RDB] files holding the secret before the erase: "
                  f"{before}; after: {after}; saves {saves} -> "
                  f"{store.client.info('persistence')['rdb_saves']}")
            assert "dump.rdb" in before and any(".aof" in n for n in before)
            assert after == []
            assert b"Sam likes jazz" in _files(server.directory)["dump.rdb"] \
                or what == "namespace"
        finally:
            store.close()
            shutil.rmtree(server.directory, ignore_errors=True)


def test_an_erase_writes_no_snapshot_where_none_is_kept() -> None:
    with running_redis(appendfsync="always") as server:  # save "": AOF only
        store = MemoryStore.from_url(server.url)
        try:
            _ingest_secret(server.url, store, "plain")
            store.eraser.erase_namespace("plain", utcnow())
            _idle(store, 0)
            assert store.eraser.save_snapshot() is False
            assert store.client.info("persistence")["rdb_saves"] == 0
            assert not (server.directory / "dump.rdb").exists()
            assert _holding(server.directory) == []
        finally:
            store.close()
            shutil.rmtree(server.directory, ignore_errors=True)
