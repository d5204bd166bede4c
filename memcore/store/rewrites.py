"""An erase's file rewrites, remembered until Redis reports them done.

An erase starts ``BGREWRITEAOF`` (and ``BGSAVE`` where RDB snapshots are kept) and
answers; if Redis dies before the rewrite finishes, the old AOF (and ``dump.rdb``) it
restarts from still holds the erased bytes, and nothing would start the rewrite again.
So before starting them an erase writes a marker on the server (``mc:rewrite-pending``:
the server's ``run_id`` and its ``aof_rewrites`` / ``rdb_saves`` counts then), and each
beat tick reads it (:meth:`PendingRewrites.status`): done once the counts grew with no
rewrite in progress and a good last status (the marker goes); the server restarted, or
the rewrite failed: start them again (docs/design.md, Erase reaches every file).
On a cluster no marker is kept (the key lives on one primary): not covered.
"""

from __future__ import annotations

import time
from enum import StrEnum

import redis
from redis.cluster import RedisCluster

from memcore.store import keys

MARKER = keys.REWRITE_PENDING


class RewriteState(StrEnum):
    """What :meth:`PendingRewrites.status` found."""

    NONE = "none"          # no erase waits for a rewrite
    RUNNING = "running"    # started, not finished yet
    DONE = "done"          # finished: the marker was removed
    LOST = "lost"          # Redis restarted or the rewrite failed: start it again


class PendingRewrites:
    """The marker of the file rewrites an erase started (standalone Redis only)."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._enabled = not isinstance(client, RedisCluster)

    def mark(self) -> None:
        """Remember, before an erase starts its rewrites, what counts say they are done."""
        if not self._enabled:
            return
        info = self._r.info("persistence")
        self._r.hset(MARKER, mapping={
            "run_id": str(self._r.info("server").get("run_id", "")),
            "aof_rewrites": int(info.get("aof_rewrites", 0)),
            "rdb_saves": int(info.get("rdb_saves", 0)), "at": time.time()})

    def status(self) -> RewriteState:
        """Whether the marked rewrites finished; removes the marker when they did."""
        if not self._enabled:
            return RewriteState.NONE
        raw = self._r.hgetall(MARKER)
        if not raw:
            return RewriteState.NONE
        marked = {k.decode(): v.decode() for k, v in raw.items()}
        info = self._r.info("persistence")
        if str(self._r.info("server").get("run_id", "")) != marked.get("run_id"):
            return RewriteState.LOST  # restarted from files the rewrite never replaced
        if (info.get("aof_last_bgrewrite_status", "ok") != "ok"
                or info.get("rdb_last_bgsave_status", "ok") != "ok"):
            return RewriteState.LOST
        busy = any(int(info.get(f, 0)) for f in ("aof_rewrite_in_progress",
                                                  "aof_rewrite_scheduled",
                                                  "rdb_bgsave_in_progress"))
        aof_done = (not int(info.get("aof_enabled", 0))
                    or int(info.get("aof_rewrites", 0)) > int(marked.get("aof_rewrites", 0)))
        rdb_kept = bool(str(self._r.config_get("save").get("save", "")).strip()) \
            or int(marked.get("rdb_saves", 0)) > 0
        rdb_done = not rdb_kept or int(info.get("rdb_saves", 0)) > int(marked.get("rdb_saves", 0))
        if busy or not (aof_done and rdb_done):
            return RewriteState.RUNNING
        self._r.delete(MARKER)
        return RewriteState.DONE
