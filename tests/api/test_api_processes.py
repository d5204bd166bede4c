"""``memcore serve --workers 2`` (memcore.api.processes): the parent accepts and hands
connections to the processes in turn, so they are split evenly instead of piling onto
the first process to wake; a process that dies is replaced; one whose parent is killed
stops; a port already served is refused."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from memcore.local.redis_server import free_port

pytestmark = pytest.mark.skipif(not hasattr(socket, "send_fds"), reason="no socket.send_fds")


def _start(redis_url: str, port: int,
           env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "memcore.cli", "serve", "--host",
                             "127.0.0.1", "--port", str(port), "--workers", "2",
                             "--log-level", "warning"],
                            env={**os.environ, "MEMCORE_REDIS_URL": redis_url, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, "memcore serve exited"
        try:
            if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "memcore serve did not become ready"
        time.sleep(0.2)


def _servers(proc: subprocess.Popen[bytes]) -> list[psutil.Process]:
    return [p for p in psutil.Process(proc.pid).children()
            if "resource_tracker" not in " ".join(p.cmdline())]


@pytest.fixture()
def served(redis_url: str) -> Iterator[tuple[str, int, subprocess.Popen[bytes]]]:
    port = free_port()
    proc = _start(redis_url, port)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, proc)
        yield base, port, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _established(pid: int, port: int, state_code: str = "01") -> int:
    """Established (``state_code`` 0A: listening) TCP sockets of ``pid`` whose local port
    is ``port`` (/proc)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state, inode = fields[1], fields[3], fields[9]
        if state == state_code and int(local.split(":")[1], 16) == port:
            inodes.add(inode)
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            count += 1
    return count


def test_connections_are_split_evenly(
        served: tuple[str, int, subprocess.Popen[bytes]]) -> None:
    base, port, proc = served
    # 32 keep-alive connections opened in a burst, as 32 agents would.
    clients = [httpx.Client(base_url=base, timeout=10) for _ in range(32)]
    try:
        for client in clients:
            assert client.get("/healthz").status_code == 200
        per_process = [_established(p.pid, port) for p in _servers(proc)]
        # Handed in turn: 16 and 16 (a kernel hash split them about 18/14).
        assert per_process == [16, 16], per_process
        assert _established(proc.pid, port) == 0  # the parent keeps none
    finally:
        for client in clients:
            client.close()


def test_hand_connections_off_gives_uvicorns_shared_socket(redis_url: str) -> None:
    """``MEMCORE_API__HAND_CONNECTIONS=false``: every process listens on the shared socket
    and accepts for itself (uvicorn's mode); with it on only the parent listens."""
    port = free_port()
    proc = _start(redis_url, port, {"MEMCORE_API__HAND_CONNECTIONS": "false"})
    try:
        _wait_ready(f"http://127.0.0.1:{port}", proc)
        children = [p for p in _servers(proc) if _established(p.pid, port, "0A")]
        assert len(children) == 2, [p.cmdline() for p in _servers(proc)]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            assert client.get("/healthz").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_only_the_parent_listens(served: tuple[str, int, subprocess.Popen[bytes]]) -> None:
    _, port, proc = served
    assert _established(proc.pid, port, "0A") == 1
    assert [_established(p.pid, port, "0A") for p in _servers(proc)] == [0, 0]


def test_clients_that_leave_at_once_do_not_hurt_the_processes(
        served: tuple[str, int, subprocess.Popen[bytes]]) -> None:
    base, port, proc = served
    for _ in range(50):  # connect, then reset before a request: handed all the same
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    with httpx.Client(base_url=base, timeout=10) as client:
        assert all(client.get("/healthz").status_code == 200 for _ in range(20))
    assert len(_servers(proc)) == 2 and proc.poll() is None


def test_a_dead_process_is_replaced(served: tuple[str, int, subprocess.Popen[bytes]]) -> None:
    base, _, proc = served
    time.sleep(10.5)  # past the start-up window: a death after it is replaced
    victim = _servers(proc)[0]
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    deadline = time.monotonic() + 60
    while len([p for p in _servers(proc) if p.pid != victim.pid]) < 2:
        assert time.monotonic() < deadline, "no new server process"
        time.sleep(0.2)
    _wait_ready(base, proc)
    assert proc.poll() is None


def test_a_process_killed_while_it_starts_is_replaced(redis_url: str) -> None:
    """A SIGKILL during the start (an operator, the OOM killer) is no start failure of
    the process's own: the server replaces it instead of stopping (the chaos run's
    killer once hit a process 3 s after a restart, and the whole API stayed down)."""
    port = free_port()
    proc = _start(redis_url, port)
    try:
        deadline = time.monotonic() + 30
        while len(_servers(proc)) < 2:
            assert time.monotonic() < deadline, "no server processes"
            time.sleep(0.05)
        victim = _servers(proc)[0]
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        _wait_ready(f"http://127.0.0.1:{port}", proc)
        deadline = time.monotonic() + 60
        while len([p for p in _servers(proc) if p.pid != victim.pid]) < 2:
            assert time.monotonic() < deadline, "no new server process"
            time.sleep(0.2)
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_port_already_served_is_refused(
        served: tuple[str, int, subprocess.Popen[bytes]], redis_url: str) -> None:
    _, port, _ = served
    second = _start(redis_url, port)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 3
    assert b"address already in use" in err.lower()
    assert b"Traceback" not in err


def test_a_port_taken_by_another_program_is_refused(redis_url: str) -> None:
    with socket.socket() as other:  # a plain listener, as `memcore up` binds its API
        other.bind(("127.0.0.1", 0))
        other.listen()
        proc = _start(redis_url, other.getsockname()[1])
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3
    assert b"address already in use" in err.lower()
    assert b"Traceback" not in err


def test_processes_stop_when_the_parent_is_killed(
        served: tuple[str, int, subprocess.Popen[bytes]]) -> None:
    _, _, proc = served
    children = _servers(proc)
    assert len(children) == 2
    proc.send_signal(signal.SIGKILL)  # no chance to pass anything on
    proc.wait(10)
    _, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, [p.pid for p in alive]


def _received(channel: socket.socket) -> list[int]:
    """The ports of the connections waiting on a process's end of its pair."""
    channel.setblocking(False)
    ports = []
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(channel, 1, 1)
        except BlockingIOError:
            return ports
        for fd in fds:
            with socket.socket(fileno=fd) as conn:
                ports.append(conn.getpeername()[1])


@contextmanager
def _handing(processes: int) -> Iterator[tuple[Any, list[tuple[socket.socket, socket.socket]],
                                             socket.socket]]:
    """A dispatcher on a local listener handing to ``processes`` socket pairs (parent
    ends non-blocking, as ``serve_processes`` makes them); yields it, the pairs and the
    listener."""
    from memcore.api.processes import _Child, _Dispatcher

    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(processes)]
    for parent, _ in pairs:
        parent.setblocking(False)
    children = [_Child(process=None, channel=parent, started=0.0)  # type: ignore[arg-type]
                for parent, _ in pairs]
    try:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            yield _Dispatcher(listener, children), pairs, listener
    finally:
        for parent, child in pairs:
            parent.close()
            child.close()


def _hand_new(dispatcher: Any, listener: socket.socket, n: int) -> list[int]:
    """``n`` new client connections accepted and handed; their local ports."""
    clients = [socket.create_connection(listener.getsockname()) for _ in range(n)]
    ports = [c.getsockname()[1] for c in clients]
    for _ in clients:
        conn, _ = listener.accept()
        with conn:
            dispatcher._hand(conn)
    for c in clients:
        c.close()  # the handed copies stay open on the pairs until received
    return ports


def test_the_hand_off_takes_turns_and_skips_a_process_that_is_gone() -> None:
    with _handing(3) as (dispatcher, pairs, listener):
        pairs[1][1].close()  # the second process died: its pair is closed
        ports = _hand_new(dispatcher, listener, 6)
        got = [_received(pairs[i][1]) for i in (0, 2)]
        # Turns 0,1,2,0,1,2: the dead second's turns went to the third.
        assert got == [[ports[0], ports[3]], [ports[1], ports[2], ports[4], ports[5]]]


def test_a_process_whose_pair_is_full_is_skipped() -> None:
    with _handing(2) as (dispatcher, pairs, listener):
        # The first process is slow to start: its pair is full (it reads nothing yet).
        while True:
            try:
                pairs[0][0].send(b"x" * 4096)
            except BlockingIOError:
                break
        ports = _hand_new(dispatcher, listener, 1)  # the first's turn: to the second
        assert _received(pairs[1][1]) == ports
