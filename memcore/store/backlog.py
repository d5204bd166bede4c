"""The ingest backlog: ingest tasks accepted and not yet finished, per namespace and in all.

Back-pressure compares these counts with the queue limits before an add is accepted
(docs/design.md, back-pressure). Each accepted task is a member of two sorted sets (its
namespace's ``mc:backlog:{ns}`` and the global ``mc:backlog``), scored with the time it
was accepted; the worker removes it when the task ends, stored, dropped or failed. Sets
of task ids rather than counters: a redelivered task removes itself twice without
counting twice, and an entry whose task was lost with its broker (never finished) ages
out after ``stale_seconds`` instead of holding the count up for ever. Reading a depth is
``ZCARD``: constant time, one round trip for both.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import redis

from memcore.core.models import validate_identifier, validate_namespace
from memcore.store import keys


@dataclass(frozen=True)
class Depth:
    """Ingest tasks accepted and not finished: of one namespace, and of all."""

    namespace: int
    total: int


class Backlog:
    """Reserve, release and count backlog entries."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client

    def reserve(self, namespace: str, task_ids: Sequence[str], *, namespace_limit: int,
                total_limit: int, stale_seconds: float) -> Depth | None:
        """Count ``task_ids`` into the backlog unless that takes it past a limit (0: none).

        None when they were counted; else the depth found (with them taken out again).
        Counted first and checked after, in one round trip: two producers racing for the
        last places can both be refused, never both let past the limit."""
        validate_namespace(namespace)
        ids = [validate_identifier(t) for t in task_ids]
        if not ids:
            return None
        now = time.time()
        mine, everyone = keys.backlog(namespace), keys.BACKLOG
        pipe = self._r.pipeline(transaction=False)
        for key in (mine, everyone):
            pipe.zremrangebyscore(key, "-inf", now - stale_seconds)
            pipe.zadd(key, dict.fromkeys(ids, now))
        pipe.zcard(mine)
        pipe.zcard(everyone)
        *_, ns_depth, total_depth = pipe.execute()
        over = ((namespace_limit and ns_depth > namespace_limit)
                or (total_limit and total_depth > total_limit))
        if not over:
            return None
        self.release(namespace, ids)
        return Depth(int(ns_depth) - len(ids), int(total_depth) - len(ids))

    def release(self, namespace: str, task_ids: Sequence[str]) -> None:
        """Take finished (or never sent) tasks out of the backlog; unknown ids are ignored."""
        ids = [validate_identifier(t) for t in task_ids]
        if not ids:
            return
        pipe = self._r.pipeline(transaction=False)
        pipe.zrem(keys.backlog(namespace), *ids)
        pipe.zrem(keys.BACKLOG, *ids)
        pipe.execute()

    def holds(self, task_id: str) -> bool:
        """Whether the ingest task ``task_id`` was accepted and has not finished."""
        return self._r.zscore(keys.BACKLOG, validate_identifier(task_id)) is not None

    def depth(self, namespace: str | None = None) -> Depth:
        """The backlog of ``namespace`` (0 without one) and of all namespaces."""
        pipe = self._r.pipeline(transaction=False)
        if namespace is not None:
            pipe.zcard(keys.backlog(namespace))
        pipe.zcard(keys.BACKLOG)
        counts = [int(c) for c in pipe.execute()]
        return Depth(counts[0] if namespace is not None else 0, counts[-1])
