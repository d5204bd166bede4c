"""Group turns that arrive together into one ingest task per namespace.

A Celery task has a fixed cost (publish, deliver, ack, store the result) that a
one-turn task pays in full. A producer that sees turns one at a time (a chat server
handling many users) hands them to a :class:`TurnCoalescer` instead: turns of the same
namespace wait at most ``max_wait_ms`` and at most ``max_turns`` go into one task, so
the per-task cost is shared and the write path makes one extraction call per batch.
Turns of different namespaces never share a task (a task holds one namespace).

Each :meth:`TurnCoalescer.submit` returns a future that resolves to the ids of the
tasks that carry its turns (more than one when it held more than ``max_turns``), so
callers can still ``Client.wait`` for them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from memcore.core.models import Episode

SendBatch = Callable[[str, list[Episode]], str]
"""Enqueue one namespace's episodes as one task; returns the task id."""


@dataclass(eq=False)
class _Ticket:
    """One submit: resolved once every batch holding some of its turns was sent."""

    future: Future[list[str]] = field(default_factory=Future)
    task_ids: list[str] = field(default_factory=list)
    outstanding: int = 0


@dataclass
class _Pending:
    """The turns of one namespace waiting for their task."""

    opened_at: float
    episodes: list[Episode] = field(default_factory=list)
    tickets: list[_Ticket] = field(default_factory=list)


class TurnCoalescer:
    """Buffers turns per namespace; flushes a namespace at ``max_turns`` or after
    ``max_wait_ms`` since its first waiting turn, whichever comes first.

    Thread-safe. A background thread flushes expired buffers; :meth:`close` (or leaving
    the ``with`` block) flushes everything still waiting.
    """

    def __init__(self, send: SendBatch, *, max_turns: int = 32, max_wait_ms: float = 5.0
                 ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        if max_wait_ms < 0:
            raise ValueError(f"max_wait_ms must be >= 0, got {max_wait_ms}")
        self._send = send
        self.max_turns = max_turns
        self.max_wait = max_wait_ms / 1000.0
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._timer = threading.Thread(target=self._run, name="memcore-coalesce", daemon=True)
        self._timer.start()

    def submit(self, namespace: str, episodes: Sequence[Episode]) -> Future[list[str]]:
        """Queue one namespace's episodes; the future resolves to their task ids."""
        if not episodes:
            raise ValueError("episodes: at least one episode is required")
        ticket = _Ticket()
        ready: list[tuple[str, _Pending]] = []
        with self._lock:
            if self._closed:
                raise RuntimeError("the coalescer is closed")
            remaining = list(episodes)
            while remaining:
                pending = self._pending.get(namespace)
                if pending is None:
                    pending = self._pending[namespace] = _Pending(time.monotonic())
                    self._wake.notify()
                room = self.max_turns - len(pending.episodes)
                pending.episodes.extend(remaining[:room])
                remaining = remaining[room:]
                pending.tickets.append(ticket)
                ticket.outstanding += 1
                if len(pending.episodes) >= self.max_turns:
                    ready.append((namespace, self._pending.pop(namespace)))
        for ns, batch in ready:  # send outside the lock: publishing is network I/O
            self._flush(ns, batch)
        return ticket.future

    def flush(self) -> None:
        """Send every waiting buffer now."""
        with self._lock:
            ready = list(self._pending.items())
            self._pending.clear()
        for ns, batch in ready:
            self._flush(ns, batch)

    def close(self) -> None:
        """Flush and stop the timer thread (idempotent)."""
        with self._lock:
            self._closed = True
            self._wake.notify()
        self.flush()
        self._timer.join(timeout=5)

    def __enter__(self) -> TurnCoalescer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _flush(self, namespace: str, batch: _Pending) -> None:
        try:
            task_id = self._send(namespace, batch.episodes)
        except Exception as exc:  # every waiter learns why its turns were not sent
            for ticket in batch.tickets:
                if not ticket.future.done():
                    ticket.future.set_exception(exc)
            return
        finished = []
        with self._lock:
            for ticket in batch.tickets:
                ticket.task_ids.append(task_id)
                ticket.outstanding -= 1
                if ticket.outstanding == 0:
                    finished.append(ticket)
        for ticket in finished:
            if not ticket.future.done():
                ticket.future.set_result(ticket.task_ids)

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                now = time.monotonic()
                due = [ns for ns, p in self._pending.items() if now - p.opened_at >= self.max_wait]
                ready = [(ns, self._pending.pop(ns)) for ns in due]
                if not ready:
                    soonest = min((p.opened_at for p in self._pending.values()), default=None)
                    timeout = None if soonest is None else max(0.0, soonest + self.max_wait - now)
                    self._wake.wait(timeout)
                    continue
            for ns, batch in ready:
                self._flush(ns, batch)
