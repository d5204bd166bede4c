"""The ingest backlog: ingest tasks accepted and not yet finished, per namespace and in all.

Back-pressure compares these counts with the queue limits before an add is accepted
(docs/design.md, back-pressure). Each accepted task is a member of two sorted sets (its
namespace's ``mc:backlog:{ns}`` and the global ``mc:backlog``), scored with the time it
was accepted; the worker removes it when the task ends, stored, dropped or failed. Sets
of task ids rather than counters: a redelivered task removes itself twice without
counting twice, and an entry whose task was lost with its broker (never finished) ages
out after ``stale_seconds`` instead of holding the count up for ever. Reading a depth is
``ZCARD``: constant time, one round trip for both.

The count is not the turns' safety. The Redis transport can lose a message the broker
already answered for: a worker takes it off the queue (``BRPOP``) and dies before it
records it as taken (kombu's ``unacked`` hash), or Redis dies in between. So each task's
message is also kept in the outbox (``mc:outbox:{tasks}``, zlib-packed JSON) from before
it is sent until the task ends; :mod:`memcore.ingest.redelivery` sends again what the
broker no longer holds. The outbox is left alone by the ageing of the count.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis

from memcore.core.models import validate_identifier, validate_namespace
from memcore.store import keys


@dataclass(frozen=True)
class Depth:
    """Ingest tasks accepted and not finished: of one namespace, and of all."""

    namespace: int
    total: int


@dataclass(frozen=True)
class KeptMessage:
    """An accepted ingest task's message, as kept in the outbox."""

    task_id: str
    queue: str
    payload: dict[str, Any]
    resent: int
    """How many times it was sent again after the broker lost it."""

    @property
    def namespace(self) -> str:
        return str(self.payload.get("namespace", ""))


def _pack(queue: str, payload: dict[str, Any], resent: int) -> bytes:
    blob = json.dumps({"queue": queue, "payload": payload, "resent": resent},
                      separators=(",", ":"))
    return zlib.compress(blob.encode(), 1)


class Backlog:
    """Reserve, release and count backlog entries; keep each task's message until it ends."""

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
        """Take finished (or never sent) tasks out of the backlog and their messages out
        of the outbox; unknown ids are ignored."""
        ids = [validate_identifier(t) for t in task_ids]
        if not ids:
            return
        pipe = self._r.pipeline(transaction=False)
        pipe.zrem(keys.backlog(namespace), *ids)
        pipe.zrem(keys.BACKLOG, *ids)
        pipe.hdel(keys.OUTBOX, *ids)
        pipe.zrem(keys.OUTBOX_SENT, *ids)
        pipe.execute()

    # -- the outbox -----------------------------------------------------------------------

    def keep(self, task_id: str, queue: str, payload: dict[str, Any]) -> None:
        """Keep task ``task_id``'s message before it is sent: until the task ends (or is
        released unsent) it can be sent again."""
        tid = validate_identifier(task_id)
        pipe = self._r.pipeline(transaction=False)
        pipe.hset(keys.OUTBOX, tid, _pack(queue, payload, 0))
        pipe.zadd(keys.OUTBOX_SENT, {tid: time.time()})
        pipe.execute()

    def sent_before(self, moment: float, limit: int) -> list[str]:
        """Up to ``limit`` kept tasks last sent before ``moment`` (epoch seconds), oldest
        first."""
        raw = self._r.zrangebyscore(keys.OUTBOX_SENT, "-inf", f"({moment}", start=0,
                                    num=limit)
        return [r.decode() if isinstance(r, bytes) else str(r) for r in raw]

    def kept(self, task_id: str) -> KeptMessage | None:
        """The kept message of ``task_id``; None once the task ended."""
        raw = self._r.hget(keys.OUTBOX, validate_identifier(task_id))
        if raw is None:
            return None
        data = json.loads(zlib.decompress(raw))
        return KeptMessage(task_id, str(data["queue"]), dict(data["payload"]),
                           int(data.get("resent", 0)))

    def sent_again(self, message: KeptMessage, at: float) -> None:
        """Record that ``message`` is being sent again now (before sending: a crash in
        between leaves it for the next sweep, never sends it twice in one)."""
        pipe = self._r.pipeline(transaction=False)
        pipe.hset(keys.OUTBOX, message.task_id,
                  _pack(message.queue, message.payload, message.resent + 1))
        pipe.zadd(keys.OUTBOX_SENT, {message.task_id: at})
        pipe.execute()

    def still_held(self, task_ids: Sequence[str], at: float) -> None:
        """The broker still holds these (queued behind others, or running): look again
        one period later, not at every sweep."""
        if task_ids:
            self._r.zadd(keys.OUTBOX_SENT, {validate_identifier(t): at for t in task_ids},
                         xx=True)

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
