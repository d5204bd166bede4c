"""Which Celery tasks were enqueued for which namespace, so the HTTP service lets a key
wait only on its own namespace's tasks.

Key (inside the namespace: erased with it)::

    mc:{ns}:tasks     ZSET   task id -> enqueue time (epoch s); entries older than a day go
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import redis

from memcore.core.models import validate_identifier
from memcore.store import keys

KEEP_SECONDS = 24 * 3600.0


def task_key(namespace: str) -> str:
    """The namespace's task log."""
    return keys.prefix(namespace) + "tasks"


class TaskLog:
    """Record and check task ownership per namespace."""

    def __init__(self, client: redis.Redis, keep_seconds: float = KEEP_SECONDS) -> None:
        self._r = client
        self.keep_seconds = keep_seconds

    def record(self, namespace: str, task_ids: Sequence[str]) -> None:
        """Remember that ``task_ids`` were enqueued for ``namespace`` (and forget old entries)."""
        if not task_ids:
            return
        now = time.time()
        key = task_key(namespace)
        pipe = self._r.pipeline(transaction=False)
        pipe.zadd(key, {validate_identifier(t): now for t in task_ids})
        pipe.zremrangebyscore(key, "-inf", now - self.keep_seconds)
        pipe.expire(key, int(self.keep_seconds) + 60)
        pipe.execute()

    def owned(self, namespace: str, task_ids: Sequence[str]) -> list[bool]:
        """For each id, whether it was enqueued for ``namespace`` within the kept window."""
        if not task_ids:
            return []
        scores = self._r.zmscore(task_key(namespace), [validate_identifier(t) for t in task_ids])
        return [s is not None for s in scores]
