"""``memcore serve --workers N``: N server processes, each with a listening socket of its
own on the same port (``SO_REUSEPORT``), so the kernel spreads new connections over them.

uvicorn's multi-process mode hands one shared listening socket to every process. When a
burst of clients connects, the first process to wake accepts every pending connection
(its event loop accepts until the queue is empty), and long-lived keep-alive connections
stay where they landed: in 5 of 10 ``memcore bench api``-style runs all 32 connections
sat on one process, which then used one core of two (about 440 searches/s against 800
with the load split; notes/benchmarks.md, "bench api, session 7"). With a socket per
process the kernel hashes each new connection to one of them.

The parent only supervises: it starts the processes, starts another when one dies
after it was up (a process that dies at start, e.g. on a port in use, stops the server
with its exit code) and passes SIGINT/SIGTERM on.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import socket
import sys
import threading
import time
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import NoReturn

import uvicorn

log = logging.getLogger("memcore.api")

STARTUP_SECONDS = 10.0
"""A process that exits sooner than this after its start failed to start (the server
stops); one that exits later is replaced."""


def supported() -> bool:
    """Whether this platform has ``SO_REUSEPORT`` (Linux, the BSDs, macOS)."""
    return hasattr(socket, "SO_REUSEPORT")


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT``, listening."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
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


def _serve_one(host: str, port: int, log_level: str) -> None:
    """One server process (spawned): its own socket, the app from the environment."""
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        logging.basicConfig()
        log.error("cannot listen on %s:%d: %s", host, port, exc)
        raise SystemExit(3) from exc
    config = uvicorn.Config("memcore.api.server:app_from_env", factory=True, host=host,
                            port=port, log_level=log_level, server_header=False,
                            timeout_graceful_shutdown=10)
    uvicorn.Server(config).run(sockets=[sock])


def serve_processes(host: str, port: int, workers: int, log_level: str = "info") -> None:
    """Run ``workers`` server processes on ``host:port`` until SIGINT/SIGTERM. The
    processes read their settings from the environment (set by the caller)."""
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    if port == 0:
        raise ValueError("port: several server processes need a fixed port, not 0")
    # Fail here, not in every process, when the port is taken: by a socket without
    # SO_REUSEPORT (the bind fails), or by another server of this user with it (which
    # the bind would join: it answers a connection).
    try:
        listening_socket(host, port).close()
    except OSError as exc:
        _refuse(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        pass
    else:
        _refuse(f"cannot listen on {host}:{port}: address already in use (a server "
                "answers there)")
    context = multiprocessing.get_context("spawn")
    stop = threading.Event()

    def start() -> tuple[BaseProcess, float]:
        process = context.Process(target=_serve_one, args=(host, port, log_level),
                                  name="memcore-api")
        process.start()
        return process, time.monotonic()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    running = [start() for _ in range(workers)]
    failure = 0
    try:
        while not stop.wait(0.5):
            for i, (process, started) in enumerate(running):
                if process.is_alive():
                    continue
                if time.monotonic() - started < STARTUP_SECONDS:
                    failure = process.exitcode or 1
                    log.error("server process %s exited with %s at start", process.pid,
                              process.exitcode)
                    stop.set()
                    break
                log.warning("server process %s exited with %s; starting another",
                            process.pid, process.exitcode)
                running[i] = start()
    finally:
        for process, _ in running:
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn shuts down gracefully
        deadline = time.monotonic() + 20
        for process, _ in running:
            process.join(max(0.1, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if failure:
        raise SystemExit(failure)
