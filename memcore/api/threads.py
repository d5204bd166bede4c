"""A small fixed pool of threads for the searches of one server process.

``anyio.to_thread.run_sync`` with a capacity limiter (what the searches used before)
costs the event loop, per call, a limiter acquire and release, a cancel scope, a
worker-thread lookup, a ``queue.Queue`` hand-off and its result report: profiled under
``bench api`` (py-spy ``--gil``, 32 clients), about a fifth of the interpreter time of a
server process went to that machinery. Here a call is a future, one put on a
:class:`queue.SimpleQueue` (in C) and one ``call_soon_threadsafe`` back: the threads take
calls first come, first served, so at most ``size`` run at once and the rest wait in the
queue, as they waited on the limiter.

``api.search_pool`` = ``anyio`` goes back to that limiter. Interleaved A/B of
``memcore bench api --memories 2000 --searches 3000`` (4 runs, order alternated, on a
shared 2-core machine at load 6 to 11; notes/api_machinery.md): median ratio this pool
/ anyio 0.82x the searches per second and 0.94x the server CPU per search, the runs
between 0.43x and 1.37x: at this noise the A/B neither shows that it pays nor that it
does not (the fifth of interpreter time above would be under its resolution). Kept
until a run on a quiet machine decides (the same command).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Call = tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any],
              asyncio.AbstractEventLoop]


class SearchThreads:
    """``size`` daemon threads running blocking calls for coroutines (see
    :meth:`run`); started on first use, stopped by :meth:`close`."""

    def __init__(self, size: int, name: str = "memcore-search") -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.size = size
        self.name = name
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in one of the threads; its result or its exception. A call whose
        caller was cancelled before a thread took it is not run."""
        if not self._threads:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._calls.put((fn, args, future, loop))
        return await future

    def _start(self) -> None:
        with self._lock:
            while len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"{self.name}-{len(self._threads)}")
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        while True:
            call = self._calls.get()
            if call is None:
                return
            fn, args, future, loop = call
            if future.cancelled():  # read across threads: at worst the call runs anyway
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # handed to the caller, as a thread pool does
                _resolve(loop, future, None, exc)
            else:
                _resolve(loop, future, result, None)

    def close(self, timeout: float = 5.0) -> None:
        """Let the threads finish the calls already queued, then stop them (a later
        :meth:`run` starts them again)."""
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._calls.put(None)
        for thread in threads:
            thread.join(timeout=timeout)


def _resolve(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any,
             exc: BaseException | None) -> None:
    # A closed loop (RuntimeError): nobody waits for this answer any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(_settle, future, result, exc)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    """In the loop: the call's outcome to its caller (unless it gave up waiting)."""
    if future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
