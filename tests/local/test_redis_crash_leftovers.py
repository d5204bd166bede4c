"""A Redis killed while a fork child saves or rewrites leaves that child's temporary file
(``temp-<pid>.rdb``, ``temp-rewriteaof[-bg]-<pid>.aof``) on disk for good, holding the data
as it was, erased text included; an orphaned BGSAVE child even renames its file over
``dump.rdb`` when it ends. A server memcore starts on such a directory stops the orphan
and removes the file first (``memcore.local.redis_server.remove_crash_leftovers``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from memcore.local.redis_server import CRASH_LEFTOVER, _running, start_redis

SECRET = b"the-erased-words-zq"


def _leftovers(directory: Path) -> list[Path]:
    return [p for place in (directory, directory / "appendonlydir") if place.is_dir()
            for p in place.iterdir() if CRASH_LEFTOVER.match(p.name)]


def _wait_for(check: Callable[[], list[Path]], seconds: float = 20.0) -> list[Path]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("no temporary file appeared")


@pytest.mark.parametrize("command", ["BGREWRITEAOF", "BGSAVE"])
def test_a_restart_stops_the_orphan_child_and_removes_its_file(tmp_path: Path,
                                                               command: str) -> None:
    server = start_redis(tmp_path / "data")
    try:
        client = server.client()
        pipe = client.pipeline(transaction=False)
        for i in range(2000):
            pipe.set(f"k{i}", SECRET + b" %d" % i)
        pipe.execute()
        # Slow the child down (microseconds per key) so the kill lands while it writes.
        client.config_set("rdb-key-save-delay", 5000)
        client.execute_command(command)
        leftover = _wait_for(lambda: _leftovers(server.directory))[0]
        child = int(CRASH_LEFTOVER.match(leftover.name).group(1))  # type: ignore[union-attr]
        assert _running(child)
        server.kill()  # the parent only, as a crash would
        # the orphan writes on, or (some builds signal a child whose parent died) is gone:
        # either way its file stays behind
        assert leftover.exists()

        server.restart()
        assert not _running(child)
        assert _leftovers(server.directory) == []
        restarted = server.client()
        assert restarted.get("k1999") == SECRET + b" 1999"  # the AOF was read whole
        restarted.close()
    finally:
        server.stop()


def test_a_file_that_only_looks_alike_stays(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    directory.mkdir()
    (directory / "temp-notes.aof").write_text("mine")
    server = start_redis(directory)
    try:
        assert (directory / "temp-notes.aof").read_text() == "mine"
        assert redis.Redis.from_url(server.url).ping()
    finally:
        server.stop()
