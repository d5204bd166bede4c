"""Adding under back-pressure: wait and retry instead of failing.

A refused add (:class:`~memcore.client.errors.Backpressure`) accepted nothing, so sending
it again is safe. Bulk producers (``memcore ingest``) slow down to the workers' pace this
way: each refusal waits what the server asked (``retry_after``), longer on each refusal
in a row, up to :data:`MAX_WAIT_SECONDS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from memcore.client.errors import Backpressure

T = TypeVar("T")

MAX_WAIT_SECONDS = 30.0
"""The longest single wait between two tries."""


def patiently(send: Callable[[], T], *, give_up_after: float,
              on_wait: Callable[[Backpressure, float], None] | None = None,
              sleep: Callable[[float], None] = time.sleep) -> T:
    """``send()``, tried again after each :class:`Backpressure` until it is accepted; the
    last refusal is raised once ``give_up_after`` seconds have passed. ``on_wait(error,
    seconds)`` is told of each wait (progress output)."""
    deadline = time.monotonic() + give_up_after
    refusals = 0
    while True:
        try:
            return send()
        except Backpressure as exc:
            wait = min(MAX_WAIT_SECONDS, max(0.05, exc.retry_after) * 1.5 ** refusals)
            if time.monotonic() + wait > deadline:
                raise
            refusals += 1
            if on_wait is not None:
                on_wait(exc, wait)
            sleep(wait)
