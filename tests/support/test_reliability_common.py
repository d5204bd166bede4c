"""Shared harness of the reliability and security suite (no tests here).

A private real redis-server plus real Celery worker subprocesses that a test can
SIGKILL and restart; deterministic turns whose facts ride on the turn
(``MEMCORE_EXTRACTOR=provided``), so a content check knows exactly which facts must
exist; and helpers to read every key's raw bytes for leak scans.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import redis

from memcore.client.client import Client
from memcore.core.models import Memory
from memcore.local.redis_server import RedisServer, start_redis
from memcore.local.stack import WORKERS_APP, LocalStack, worker_command
from memcore.store import MemoryStore
from memcore.store.unlisted import unlisted_sources

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SHORT_VISIBILITY = 10  # seconds: a killed worker's messages come back quickly

FAULT_ENV = {
    "MEMCORE_EXTRACTOR": "provided",
    "MEMCORE_VISIBILITY_TIMEOUT": str(SHORT_VISIBILITY),
}


class Cluster:
    """A redis-server and named Celery workers that can be killed and respawned."""

    def __init__(self, log_dir: Path, *, env: dict[str, str] | None = None,
                 appendfsync: str = "everysec", redis_extra: list[str] | None = None,
                 url: str | None = None, password: str | None = None,
                 app: str = WORKERS_APP) -> None:
        self.server: RedisServer = start_redis(appendfsync=appendfsync, extra=redis_extra,
                                               password=password)
        self.url = url or self.server.url
        self.env = {**FAULT_ENV, **(env or {})}
        # The Client in this process must use the same settings as the workers.
        self._saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        self.stack = LocalStack(self.url, env=self.env, log_dir=log_dir, app=app)
        self.log_dir = log_dir
        self.kills = 0

    def spawn(self, name: str, queues: str, concurrency: int = 1,
              loglevel: str = "WARNING") -> subprocess.Popen[bytes]:
        """Start one worker process (own process group) named ``name``."""
        cmd = worker_command(queues, concurrency, name, app=self.stack.app)
        cmd[cmd.index("--loglevel") + 1] = loglevel
        return self.stack.spawn(name, cmd)

    def spawn_beat(self, interval_seconds: float = 2.0) -> subprocess.Popen[bytes]:
        """Start Celery beat, ticking every ``interval_seconds``: its tick sends again an
        accepted ingest message the broker lost (a worker killed between taking it off
        the queue and recording it; memcore.ingest.redelivery)."""
        return self.stack.spawn(
            "beat", [sys.executable, "-m", "celery", "-A", self.stack.app, "beat",
                     "--loglevel", "WARNING", "-s", str(self.log_dir / "beat-schedule")],
            env={"MEMCORE_BEAT_INTERVAL_SECONDS": str(interval_seconds)})

    def kill(self, name: str, whole_group: bool = True) -> None:
        """SIGKILL a worker: its whole process group, or only one pool child."""
        proc = self.stack.processes[name]
        if whole_group:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            del self.stack.processes[name]
        else:
            children = _children(proc.pid)
            if children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(children[0], signal.SIGKILL)
        self.kills += 1

    def wait_ready(self, names: set[str], timeout: float = 60.0) -> None:
        """Block until every named worker answers a ping."""
        client = Client(self.url)
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    replies = client.celery.control.ping(timeout=0.5) or []
                except (redis.ConnectionError, OSError):  # a pooled connection of a killed Redis
                    time.sleep(0.2)
                    continue
                seen = {next(iter(r)).split("@")[0] for r in replies}
                if names <= seen:
                    return
            raise TimeoutError(f"workers {names} did not answer")
        finally:
            client.close()

    def alive(self, name: str) -> bool:
        """True if the named worker's master process still runs."""
        proc = self.stack.processes.get(name)
        return proc is not None and proc.poll() is None

    def logs(self) -> str:
        """Everything the workers wrote to their logs."""
        return "\n".join(p.read_text(errors="replace") for p in self.log_dir.glob("*.log"))

    def close(self) -> None:
        """Stop workers and the server; restore the environment."""
        self.stack.stop()
        self.server.close()  # and its temp directory (135 were left in /tmp)
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def cluster(log_dir: Path, **kw: Any) -> Iterator[Cluster]:
    """Context manager around :class:`Cluster`."""
    c = Cluster(log_dir, **kw)
    try:
        yield c
    finally:
        c.close()


def _children(pid: int) -> list[int]:
    import psutil

    with contextlib.suppress(psutil.NoSuchProcess):
        return [p.pid for p in psutil.Process(pid).children()]
    return []


SHARED = ("Sam owns a blue bicycle", "Sam drinks green tea every morning",
          "Sam's sister lives in Lisbon", "Sam plays the cello in an orchestra",
          "Sam is allergic to peanuts")


def fact_text(turn: int, j: int) -> str:
    """A distinct fact of made-up words (the hashing embedder keeps them far apart)."""
    h = hashlib.sha1(f"{turn}/{j}".encode()).hexdigest()
    return "Sam remembers " + " ".join(h[i:i + 6] for i in range(0, 30, 6))


def turn_messages(start: int, count: int, facts_per_turn: int, *, repeat_every: int = 0
                  ) -> list[dict[str, Any]]:
    """``count`` user turns from index ``start``; each carries its own facts.

    With ``repeat_every`` > 0 every such turn also restates one shared fact, whose
    support must then equal the number of distinct turns that stated it.
    """
    out: list[dict[str, Any]] = []
    for t in range(start, start + count):
        facts: list[Any] = [fact_text(t, j) for j in range(facts_per_turn)]
        if repeat_every and t % repeat_every == 0:
            facts.append(shared_fact(t // repeat_every % 5))
        out.append({"id": f"turn-{t}", "role": "user", "speaker": "Sam",
                    "content": f"turn {t} of the run", "timestamp": T0 + timedelta(seconds=t),
                    "metadata": {"facts": facts}})
    return out


def shared_fact(k: int) -> str:
    """One of five facts restated by many turns."""
    return SHARED[k]


def expected_shared_support(turns: int, repeat_every: int) -> dict[str, set[str]]:
    """Shared fact -> the turn ids that stated it."""
    out: dict[str, set[str]] = {}
    for t in range(turns):
        if repeat_every and t % repeat_every == 0:
            out.setdefault(shared_fact(t // repeat_every % 5), set()).add(f"turn-{t}")
    return out


def counted_sources(store: MemoryStore, namespace: str, memory: Memory) -> set[str]:
    """Every turn ``memory`` counts: those its record lists and those it no longer lists
    (a record lists its newest MAX_SOURCES; memcore.store.unlisted keeps the rest)."""
    return set(memory.sources) | unlisted_sources(store.client, namespace, [memory.id])


def all_values(client: redis.Redis, pattern: str = "*") -> Iterator[tuple[bytes, bytes]]:
    """(key, raw bytes of every value in it) for each key matching ``pattern``.

    Reads values by type (never DUMP, whose compression could hide a string).
    """
    for key in client.scan_iter(match=pattern, count=1000):
        kind = client.type(key)
        parts: list[bytes] = []
        if kind == b"string":
            parts = [client.get(key) or b""]
        elif kind == b"hash":
            for f, v in client.hgetall(key).items():
                parts += [f, v]
        elif kind == b"list":
            parts = list(client.lrange(key, 0, -1))
        elif kind == b"set":
            parts = list(client.smembers(key))
        elif kind == b"zset":
            parts = [m for m, _ in client.zrange(key, 0, -1, withscores=True)]
        elif kind == b"stream":
            for _, fields in client.xrange(key):
                for f, v in fields.items():
                    parts += [f, v]
        yield key, b"\x00".join([key, *parts])
