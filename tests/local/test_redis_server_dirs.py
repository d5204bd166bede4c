"""A private redis-server's temp directory goes with it (tests had left 135 in /tmp)."""

from __future__ import annotations

from pathlib import Path

from memcore.local.redis_server import start_redis


def test_close_removes_the_temp_directory_start_redis_made(tmp_path: Path) -> None:
    made = start_redis()
    assert made.owns_directory and made.directory.is_dir()
    made.close()
    assert not made.directory.exists()

    given = start_redis(tmp_path / "data")  # the caller's directory is the caller's
    assert not given.owns_directory
    given.close()
    assert given.directory.is_dir()
