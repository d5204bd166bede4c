"""Which Celery workers consume which queues: asked once for every wait of a process.

:meth:`memcore.Client.wait` asks the workers whether any consumes the queue its tasks sit
in. A server process has many waits at once (the HTTP API's ``"wait": true``); each asking
on its own put one broadcast per wait on the broker, and, through Celery's pooled remote
control, deadlocked the process's connection pool. Here the question is asked
by one thread at a time (single flight) on a connection of its own
(:func:`memcore.messaging.broker.ask_workers`); the threads asking meanwhile share that
answer, and it is reused for ``ttl`` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

ANSWER_TTL_SECONDS = 2.0
"""How long one answer serves the waits that ask after it."""

FOLLOW_SLACK_SECONDS = 10.0
"""How much longer than its reply window a thread waits for another thread's broadcast
(connecting to the broker included) before it gives up and knows nothing."""


@dataclass(frozen=True)
class WorkerAnswer:
    """One broadcast's answer: ``consumers`` maps each worker that replied within
    ``reply_seconds`` to the queues it consumes; None when the broker could not be asked
    (then nothing is known). Times are ``time.monotonic()``."""

    consumers: dict[str, list[str]] | None
    asked_at: float
    answered_at: float
    reply_seconds: float


class WorkerCheck:
    """The workers' queues, asked by one thread for all (see the module docstring).

    ``ask(reply_seconds)`` does the broadcast; ``asked`` counts the broadcasts made.
    """

    def __init__(self, ask: Callable[[float], dict[str, list[str]]],
                 ttl: float = ANSWER_TTL_SECONDS) -> None:
        self._ask = ask
        self.ttl = ttl
        self.asked = 0
        self._lock = threading.Lock()
        self._last: WorkerAnswer | None = None
        self._flight: threading.Event | None = None

    def consumers(self, reply_seconds: float = 1.0, *,
                  newer_than: float | None = None) -> WorkerAnswer:
        """An answer with a reply window of at least ``reply_seconds``, made at most
        ``ttl`` seconds ago (and, with ``newer_than``, from a broadcast that started after
        that time: to ask again). Joins the broadcast under way, if any; never blocks
        longer than ``reply_seconds`` + :data:`FOLLOW_SLACK_SECONDS` (then the answer
        knows nothing: ``consumers`` is None)."""
        give_up = time.monotonic() + reply_seconds + FOLLOW_SLACK_SECONDS
        while True:
            with self._lock:
                now = time.monotonic()
                last = self._last
                if last is not None and now - last.answered_at <= self.ttl \
                        and last.reply_seconds >= reply_seconds \
                        and (newer_than is None or last.asked_at > newer_than):
                    return last
                flight = self._flight
                lead = flight is None
                if flight is None:
                    flight = self._flight = threading.Event()
            if lead:
                return self._broadcast(flight, reply_seconds)
            left = give_up - time.monotonic()
            if left <= 0 or not flight.wait(left):
                log.debug("the workers' check under way did not answer in time")
                return WorkerAnswer(None, now, time.monotonic(), reply_seconds)

    def _broadcast(self, flight: threading.Event, reply_seconds: float) -> WorkerAnswer:
        asked_at = time.monotonic()
        consumers: dict[str, list[str]] | None = None
        try:
            consumers = self._ask(reply_seconds)
        except Exception as exc:  # a broker hiccup must not turn a wait into an error
            log.debug("worker check failed: %s", exc)
        finally:
            answer = WorkerAnswer(consumers, asked_at, time.monotonic(), reply_seconds)
            with self._lock:
                self.asked += 1
                self._last = answer
                self._flight = None
            flight.set()
        return answer


def no_worker_hint(answer: WorkerAnswer, queue: str | None) -> str:
    """"" if a worker consumes ``queue`` (any worker answered, without one) or nothing is
    known, else what is wrong and what to do."""
    start_one = ("start one (`memcore up`, or `celery -A workers.app worker -Q "
                 "ingest,consolidate`) on this broker")
    consumed = answer.consumers
    if consumed is None:
        return ""
    if not consumed:
        consumes = f", so none consumes the {queue!r} queue" if queue else ""
        return f"no Celery worker answered a ping{consumes}: {start_one}"
    if queue is None or any(queue in names for names in consumed.values()):
        return ""
    up = "; ".join(f"{name} consumes {', '.join(names) or 'nothing'}"
                   for name, names in sorted(consumed.items()))
    return f"no Celery worker consumes the {queue!r} queue ({up}): {start_one}"
