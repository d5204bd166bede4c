"""Erases begun and not finished: remembered so a crash mid-erase does not leave half.

A turn erase drops the turn, then erases the memories it alone supports, each step its
own transaction; a memory erase with its sources also takes several steps. A process
killed between them (an API child SIGKILLed while answering) leaves some of the erase
undone and no one to finish it: the caller got no answer. So every erase first writes
what it was asked (kind, namespace, target, reason, time) to ``mc:erase-unfinished``
and removes it when done; beat's tick finishes the ones older than the visibility
timeout (their process is taken to have died) by running them again: every erase is
idempotent (docs/design.md, Erase reaches every file).
Ids and names only: no erased text is kept here.

A namespace erase is not noted: run again later it would also delete what was stored
after it. Its fence goes first, and a caller without an answer repeats it.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from enum import StrEnum

import redis

from memcore.store import keys

KEY = keys.ERASE_UNFINISHED


class EraseKind(StrEnum):
    """Which erase an entry stands for."""

    MEMORY = "memory"
    MEMORY_AND_SOURCES = "memory_and_sources"
    EPISODE = "episode"


@dataclass(frozen=True)
class UnfinishedErase:
    """One erase that began and has not said it finished."""

    token: str
    """The entry's own id (two requests for one target are two entries)."""
    kind: EraseKind
    namespace: str
    target: str
    """The memory or turn id."""
    reason: str
    at: float
    """When it began (epoch seconds)."""


class UnfinishedErases:
    """Begin, end and list the erases not finished yet (one sorted set, by start time)."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client

    def begin(self, kind: EraseKind, namespace: str, target: str, reason: str) -> str:
        """Note an erase before it removes anything; returns the token :meth:`end` takes
        (the entry itself: a random id makes two requests for one target two entries)."""
        token = uuid.uuid4().hex
        now = time.time()
        entry = json.dumps({"token": token, "kind": kind.value, "namespace": namespace,
                            "target": target, "reason": reason, "at": now})
        self._r.zadd(KEY, {entry: now})
        return entry

    def end(self, token: str) -> None:
        """The erase finished: forget the note."""
        self._r.zrem(KEY, token)

    def older_than(self, seconds: float, now: float | None = None) -> list[UnfinishedErase]:
        """The erases begun more than ``seconds`` ago and not ended, oldest first."""
        cutoff = (time.time() if now is None else now) - seconds
        out: list[UnfinishedErase] = []
        for raw in self._r.zrangebyscore(KEY, "-inf", cutoff):
            text = raw.decode() if isinstance(raw, bytes) else str(raw)
            try:
                data = json.loads(text)
                out.append(UnfinishedErase(token=text, kind=EraseKind(data["kind"]),
                                           namespace=str(data["namespace"]),
                                           target=str(data["target"]),
                                           reason=str(data["reason"]), at=float(data["at"])))
            except (ValueError, KeyError, TypeError):
                self._r.zrem(KEY, raw)  # not ours to finish; never blocks the others
        return out
