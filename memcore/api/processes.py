"""``memcore serve --workers N``: N server processes behind one listening socket, with
the parent handing each accepted connection to the processes in turn.

uvicorn's multi-process mode hands the shared listening socket to every process. When a
burst of clients connects, the first process to wake accepts every pending connection
(its event loop accepts until the queue is empty), and long-lived keep-alive connections
stay where they landed: in 5 of 10 ``memcore bench api``-style runs all 32 connections
sat on one process, which then used one core of two (about 440 searches/s against 800
with the load split; notes/benchmarks.md, "bench api, session 7"). A listening socket
per process (``SO_REUSEPORT``, session 7) let the kernel hash connections instead, but
a hash splits 32 connections about 18/14, and the process with 18 answers each of them
later: its clients made the p95.

So the parent owns the one listening socket (a port in use fails its bind, as with one
process), accepts, and passes each connection (``SCM_RIGHTS`` over a Unix socket pair)
to the next process in turn, which serves it with uvicorn's own protocol: 32
connections are 16 and 16. It costs the parent one ``accept`` and one ``sendmsg`` per
*connection*, not per request. The parent also supervises: it starts another process
when one dies after it was up or is killed by a signal (a process that exits on its own
at start stops the server with its exit code) and passes SIGINT/SIGTERM on. A process
whose parent is gone (its pair closed) shuts down on its own.

``api.hand_connections`` = false goes back to uvicorn's shared socket. Interleaved A/B
of ``memcore bench api --memories 2000 --searches 3000`` (2 processes, 32 clients; 6
runs, order alternated, on the 2-core machine at load 1.9 to 2.6; notes/api_machinery.md,
session 13): median ratio handed / shared **1.36x the searches per second, 0.87x the
server CPU per search, 0.78x the p50 and 0.64x the p95**; handed did better in 5 runs
of 6 (the sixth 0.96x). (An earlier A/B at load 6 to 11 could not separate them.) The
even split, 16 and 16 connections, is tested (``tests/api/test_api_processes.py``).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any, NoReturn

import uvicorn

log = logging.getLogger("memcore.api")

STARTUP_SECONDS = 10.0
"""A process that exits on its own sooner than this after its start failed to start (the
server stops); one that exits later is replaced."""

KILLED_AT_START_LIMIT = 3
"""A process killed by a signal during its start is replaced this many times in a row;
one more stops the server."""

_BACKLOG = 2048
HAND_SECONDS = 10.0
"""How long an accepted connection waits for a server process to take it (all of them
busy starting, or being replaced) before it is closed."""


def supported() -> bool:
    """Whether this platform can pass sockets between processes (``socket.send_fds``:
    Unix)."""
    return hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")


def listening_socket(host: str, port: int, backlog: int = _BACKLOG) -> socket.socket:
    """A TCP socket bound to ``host:port``, listening (``OSError`` if the port is taken)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def _refuse(message: str) -> NoReturn:
    """Stop with uvicorn's start-up failure code and a one-line message, no traceback."""
    print(f"ERROR: {message}", file=sys.stderr)
    raise SystemExit(3)


class HandedConnectionsServer(uvicorn.Server):
    """A uvicorn server that listens on nothing: it serves the connections its parent
    sends over ``channel`` (one byte and one file descriptor per connection)."""

    def __init__(self, config: uvicorn.Config, channel: socket.socket) -> None:
        super().__init__(config)
        self.channel = channel
        # The loop keeps only weak references to tasks: these keep the hand-overs alive.
        self._connecting: set[asyncio.Task[Any]] = set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # the app's lifespan; no listener of its own
        if not self.started:
            return
        loop = asyncio.get_running_loop()
        self.channel.setblocking(False)
        loop.add_reader(self.channel.fileno(), self._receive, loop)

    def _protocol(self, loop: asyncio.AbstractEventLoop) -> asyncio.Protocol:
        # What uvicorn's own startup() builds for each connection of its listeners.
        return self.config.http_protocol_class(  # type: ignore[call-arg]
            config=self.config, server_state=self.server_state,
            app_state=self.lifespan.state, _loop=loop)

    def _receive(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(self.channel, 1, 1)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data, fds = b"", []
            if not data:  # the parent is gone: no more connections will come
                self._stop_receiving(loop)
                self.should_exit = True
                return
            for fd in fds:
                conn = socket.socket(fileno=fd)
                if self.should_exit:
                    conn.close()
                    continue
                conn.setblocking(False)
                task = loop.create_task(loop.connect_accepted_socket(
                    lambda: self._protocol(loop), conn))
                self._connecting.add(task)
                task.add_done_callback(self._connected)

    def _connected(self, task: asyncio.Task[Any]) -> None:
        self._connecting.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # A client that left between the parent's accept and now: nothing to serve.
            log.debug("a handed connection could not be served: %s", task.exception())

    def _stop_receiving(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.channel.fileno() >= 0:
            loop.remove_reader(self.channel.fileno())

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._stop_receiving(asyncio.get_running_loop())
        await super().shutdown(sockets=sockets)


def _serve_one(channel: socket.socket, log_level: str) -> None:
    """One server process (spawned): the app from the environment, serving what arrives
    on ``channel``."""
    config = uvicorn.Config("memcore.api.server:app_from_env", factory=True,
                            log_level=log_level, server_header=False,
                            timeout_graceful_shutdown=10)
    HandedConnectionsServer(config, channel).run()


@dataclass
class _Child:
    process: BaseProcess
    channel: socket.socket  # the parent's end of the pair
    started: float


class _Dispatcher:
    """Accepts on ``listener`` (in a thread) and hands connections round-robin to the
    children's channels; a child that cannot take one (dead, restarting) is skipped."""

    def __init__(self, listener: socket.socket, children: list[_Child]) -> None:
        self.listener = listener
        self.children = children
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.turn = 0
        self.thread = threading.Thread(target=self._accept, name="memcore-api-accept",
                                       daemon=True)

    def _accept(self) -> None:
        self.listener.settimeout(0.5)  # wakes to see `stop`
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if self.stop.is_set():
                    return
                log.warning("accept failed: %s", exc)
                time.sleep(0.05)  # e.g. out of file descriptors: do not spin
                continue
            with conn:
                self._hand(conn)

    def _hand(self, conn: socket.socket) -> None:
        with self.lock:
            first = self.turn
            self.turn += 1
        deadline = time.monotonic() + HAND_SECONDS
        while not self.stop.is_set():
            with self.lock:
                channels = [child.channel for child in self.children]
            for i in range(len(channels)):
                try:
                    # The pairs are non-blocking (MSG_DONTWAIT is not enough: a send with
                    # a descriptor still blocked on a full pair): a process still
                    # starting, its pair full of waiting connections, or gone must not
                    # hold up the others' connections.
                    socket.send_fds(channels[(first + i) % len(channels)], [b"c"],
                                    [conn.fileno()])
                    return
                except OSError:
                    continue  # full, or that process is gone (the supervisor replaces it)
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        log.warning("no server process took a connection within %.0f s; closed it",
                    HAND_SECONDS)


def serve_processes(host: str, port: int, workers: int, log_level: str = "info") -> None:
    """Run ``workers`` server processes on ``host:port`` until SIGINT/SIGTERM. The
    processes read their settings from the environment (set by the caller)."""
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    if port == 0:
        raise ValueError("port: several server processes need a fixed port, not 0")
    try:
        listener = listening_socket(host, port)
    except OSError as exc:
        _refuse(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    context = multiprocessing.get_context("spawn")
    stop = threading.Event()

    def start() -> _Child:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        process = context.Process(target=_serve_one, args=(child_end, log_level),
                                  name="memcore-api")
        process.start()
        child_end.close()
        parent_end.setblocking(False)  # see _Dispatcher._hand
        return _Child(process, parent_end, time.monotonic())

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    children = [start() for _ in range(workers)]
    dispatcher = _Dispatcher(listener, children)
    dispatcher.thread.start()
    failure = 0
    killed_at_start = [0] * workers
    try:
        while not stop.wait(0.5):
            failure = _replace_exited(children, killed_at_start, dispatcher, start)
            if failure:
                stop.set()
    finally:
        _shut_down(dispatcher, listener, children)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if failure:
        raise SystemExit(failure)


def _replace_exited(children: list[_Child], killed_at_start: list[int],
                    dispatcher: _Dispatcher, start: Callable[[], _Child]) -> int:
    """Start a process in place of each one that exited; the exit code (non-zero) of one
    that failed at start, which ends the server, else 0."""
    for i, child in enumerate(children):
        if child.process.is_alive():
            continue
        code = child.process.exitcode
        at_start = time.monotonic() - child.started < STARTUP_SECONDS
        # Killed by a signal (SIGKILL, the OOM killer): no fault of its own, so it
        # is replaced, unless that keeps happening at start.
        killed = code is not None and code < 0
        killed_at_start[i] = killed_at_start[i] + 1 if killed and at_start else 0
        if at_start and (not killed or killed_at_start[i] > KILLED_AT_START_LIMIT):
            log.error("server process %s exited with %s at start", child.process.pid, code)
            return code or 1
        log.warning("server process %s exited with %s; starting another",
                    child.process.pid, child.process.exitcode)
        replacement = start()
        with dispatcher.lock:
            children[i] = replacement
        child.channel.close()
    return 0


def _shut_down(dispatcher: _Dispatcher, listener: socket.socket,
               children: list[_Child]) -> None:
    """Stop handing connections, then stop the processes: SIGTERM (uvicorn shuts down
    gracefully), SIGKILL for one still running after 20 s."""
    dispatcher.stop.set()
    dispatcher.thread.join(5)
    listener.close()
    for child in children:
        if child.process.is_alive():
            child.process.terminate()  # SIGTERM: uvicorn shuts down gracefully
    deadline = time.monotonic() + 20
    for child in children:
        child.process.join(max(0.1, deadline - time.monotonic()))
        if child.process.is_alive():
            child.process.kill()
            child.process.join(5)
        child.channel.close()
