"""The chaos run's machinery (no tests here; ``tests/workers/test_chaos.py`` runs it).

A real Redis (AOF ``appendfsync always``, RDB snapshots configured), ingest and
consolidate workers and a ``memcore serve --workers 2``, all of them SIGKILLed at random
while HTTP clients add turns, search, erase turns and whole namespaces and start passes.
Every request's answer is recorded; :func:`verdict` then says, for each accepted turn
(its add answered 202), whether it is stored exactly once or erased, and finds erased
text in any key, the AOF or ``dump.rdb``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from memcore.client.client import Client
from memcore.local.redis_server import free_port
from memcore.store import MemoryStore, keys
from memcore.store.api_keys import ApiKeyRepository
from tests.store.test_erase_rdb import SNAPSHOTS
from tests.support.test_reliability_common import SHORT_VISIBILITY, Cluster, _children, all_values

NAMESPACES = 4
TURNS_PER_ADD = 2
ADD_PAUSE = 0.4  # seconds between one adder's adds (3 adders: about 15 turns/s)
KINDS = ("ingest", "ingest-child", "consolidate", "api", "api-child", "redis")
# Worker log level (INFO logs each task received and ended: to trace a lost turn).
WORKER_LOGLEVEL = os.environ.get("MEMCORE_CHAOS_LOGLEVEL", "WARNING")
BEAT_SECONDS = 2


@dataclass
class Turn:
    """A turn whose add was answered 202."""

    ns: str
    id: str
    words: str  # in its text and its fact, and nowhere else
    sent: float
    answered: float
    task_ids: list[str]

    @property
    def fact(self) -> str:
        return f"Sam remembers {self.words}"


@dataclass
class Erase:
    """An erase request: of a namespace (``turn`` None) or of one turn."""

    ns: str
    turn: str | None
    start: float
    end: float
    status: int | None  # None: no answer (the server died under it)


@dataclass
class Log:
    """What the clients saw, and what the killer did."""

    start: float = field(default_factory=time.monotonic)
    accepted: list[Turn] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)  # add outcomes other than 202
    erases: list[Erase] = field(default_factory=list)
    searches: Counter[str] = field(default_factory=Counter)
    passes: Counter[str] = field(default_factory=Counter)
    kills: Counter[str] = field(default_factory=Counter)
    timeline: list[tuple[float, str]] = field(default_factory=list)  # (when, kill kind)
    lock: threading.Lock = field(default_factory=threading.Lock)


def words_of(tag: str) -> str:
    """Five made-up words no other turn has (the hashing embedder keeps them apart)."""
    h = hashlib.sha1(tag.encode()).hexdigest()
    return " ".join("q" + h[i:i + 6] for i in range(0, 30, 6))


class Chaos:
    """The processes of a chaos run and the clients that load them."""

    def __init__(self, log_dir: Path, seed: int) -> None:
        # Beat ticks often: its tick sends again what the broker lost (the outbox).
        self.cluster = Cluster(log_dir, appendfsync="always", redis_extra=SNAPSHOTS,
                               env={"MEMCORE_BEAT_INTERVAL_SECONDS": str(BEAT_SECONDS)})
        self.log_dir = log_dir
        self.rng = random.Random(seed)
        self.tag = f"{seed:x}"
        self.namespaces = [f"chaos-{self.tag}-{i}" for i in range(NAMESPACES)]
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = Log()
        self.stop = threading.Event()
        client = redis.Redis.from_url(self.cluster.url)
        try:
            self.key = ApiKeyRepository(client).create([f"chaos-{self.tag}-*"], "admin",
                                                       "chaos")[1]
        finally:
            client.close()
        self.down: set[str] = set()  # what the killer is restarting right now
        self._client: Client | None = None

    # -- processes ------------------------------------------------------------------------

    def start(self) -> None:
        self.cluster.spawn("ingest", "ingest", concurrency=2, loglevel=WORKER_LOGLEVEL)
        self.cluster.spawn("consolidate", "consolidate", concurrency=1,
                           loglevel=WORKER_LOGLEVEL)
        self._spawn_api()
        self.cluster.stack.spawn("beat", [sys.executable, "-m", "celery", "-A",
                                          self.cluster.stack.app, "beat", "--loglevel",
                                          WORKER_LOGLEVEL, "-s",
                                          str(self.log_dir / "beat-schedule")])
        self.cluster.wait_ready({"ingest", "consolidate"}, timeout=120)
        self._wait_api()

    def _spawn_api(self) -> None:
        self.cluster.stack.spawn("api", [sys.executable, "-m", "memcore.cli", "serve",
                                         "--host", "127.0.0.1", "--port", str(self.port),
                                         "--workers", "2", "--log-level", "warning"])

    def _wait_api(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.base + "/readyz", timeout=3).status_code == 200:
                    return
            time.sleep(0.2)
        raise TimeoutError("the API did not become ready")

    def kill(self, kind: str) -> None:
        """SIGKILL one part and bring it back as an operator's supervisor would."""
        c = self.cluster
        self.down.add(kind)
        try:
            if kind in ("ingest", "consolidate"):
                c.kill(kind)
                c.spawn(kind, kind, concurrency=2 if kind == "ingest" else 1,
                        loglevel=WORKER_LOGLEVEL)
                c.wait_ready({kind}, timeout=120)
            elif kind == "ingest-child":
                c.kill("ingest", whole_group=False)  # the pool starts another child
            elif kind == "api":
                proc = c.stack.processes.pop("api")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
                self._spawn_api()
                self._wait_api()
            elif kind == "api-child":
                children = [p for p in _children(c.stack.processes["api"].pid)]
                if children:  # the parent replaces it (memcore.api.processes)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(self.rng.choice(children), signal.SIGKILL)
            elif kind == "redis":
                c.server.kill()
                time.sleep(0.3)
                c.server.restart()
            self.log.kills[kind] += 1
            self.log.timeline.append((time.monotonic(), kind))
        finally:
            self.down.discard(kind)

    # -- clients --------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=15,
                            headers={"Authorization": f"Bearer {self.key}"})

    def adder(self, n: int) -> None:
        with self._http() as http:
            i = 0
            while not self.stop.is_set():
                ns = self.rng.choice(self.namespaces)
                turns = []
                for _ in range(TURNS_PER_ADD):
                    tid = f"a{n}-{i}"
                    i += 1
                    words = words_of(f"{self.tag}/{tid}")
                    turns.append((tid, words))
                body = {"messages": [{"id": tid, "role": "user", "content": f"note {w}",
                                      "metadata": {"facts": [f"Sam remembers {w}"]}}
                                     for tid, w in turns]}
                sent = time.monotonic()
                task_ids: list[str] = []
                try:
                    reply = http.post(f"/v1/namespaces/{ns}/messages", json=body)
                    status = reply.status_code
                    if status == 202:
                        task_ids = reply.json()["task_ids"]
                except httpx.HTTPError as exc:
                    status, outcome = None, type(exc).__name__
                answered = time.monotonic()
                if status == 202:
                    with self.log.lock:
                        self.log.accepted += [Turn(ns, tid, w, sent, answered, task_ids)
                                              for tid, w in turns]
                else:
                    self.log.refused[str(status) if status else outcome] += 1
                # Paced below what two ingest processes store under the kills, so the
                # backlog stays short and erases find the turns they pick stored.
                time.sleep(ADD_PAUSE)

    def searcher(self) -> None:
        with self._http() as http:
            while not self.stop.is_set():
                with self.log.lock:
                    pick = self.rng.choice(self.log.accepted) if self.log.accepted else None
                if pick is None:
                    time.sleep(0.2)
                    continue
                try:
                    status = http.post(f"/v1/namespaces/{pick.ns}/search",
                                       json={"query": pick.fact, "k": 5}).status_code
                    self.log.searches[str(status)] += 1
                except httpx.HTTPError as exc:
                    self.log.searches[type(exc).__name__] += 1
                time.sleep(0.1)

    def eraser(self, period: float) -> None:
        """Erase one stored turn (and what it alone supports), now and then a namespace."""
        with self._http() as http:
            while not self.stop.wait(period * (0.5 + self.rng.random())):
                with self.log.lock:  # likely stored by now: accepted 3 s ago or earlier
                    old = time.monotonic() - 3
                    recent = [t for t in self.log.accepted[-400:] if t.answered < old]
                if not recent:
                    continue
                whole = self.rng.random() < 0.25
                pick = self.rng.choice(recent)
                start = time.monotonic()
                try:
                    if whole:
                        status: int | None = http.delete(f"/v1/namespaces/{pick.ns}").status_code
                    else:
                        status = http.post(f"/v1/namespaces/{pick.ns}/erase",
                                           json={"episode_id": pick.id}).status_code
                except httpx.HTTPError:
                    status = None
                with self.log.lock:
                    self.log.erases.append(Erase(pick.ns, None if whole else pick.id, start,
                                                 time.monotonic(), status))

    def passer(self, period: float) -> None:
        with self._http() as http:
            while not self.stop.wait(period):
                ns = self.rng.choice(self.namespaces)
                try:
                    status = http.post(f"/v1/namespaces/{ns}/consolidate",
                                       json={"wait": False}).status_code
                    self.log.passes[str(status)] += 1
                except httpx.HTTPError as exc:
                    self.log.passes[type(exc).__name__] += 1

    def killer(self, period: float) -> None:
        """Kill every kind once per round, in a random order (a short run on a slow
        machine still kills several kinds: each restart waits until the part is back)."""
        kinds: list[str] = []
        while not self.stop.wait(period * (0.5 + self.rng.random())):
            if not kinds:
                kinds = self.rng.sample(KINDS, len(KINDS))
            self.kill(kinds.pop())

    def run(self, seconds: float, *, kill_every: float) -> None:
        """Load and kill for ``seconds``, then stop the clients (the processes stay up)."""
        threads = [threading.Thread(target=self.adder, args=(n,)) for n in range(3)]
        threads += [threading.Thread(target=self.searcher),
                    threading.Thread(target=self.eraser, args=(2.0,)),
                    threading.Thread(target=self.passer, args=(3.0,))]
        killer = threading.Thread(target=self.killer, args=(kill_every,))
        for t in [*threads, killer]:
            t.start()
        time.sleep(seconds)
        self.stop.set()
        for t in [*threads, killer]:
            t.join(timeout=300)
            assert not t.is_alive(), f"{t.name} did not stop"

    # -- the end --------------------------------------------------------------------------

    def settle(self, timeout: float) -> float:
        """Wait until no task waits, runs or is taken (then one more redelivery window);
        returns the seconds it took."""
        t0 = time.monotonic()
        client = redis.Redis.from_url(self.cluster.url)
        try:
            quiet_since: float | None = None
            while True:
                # An accepted task's message stays in the outbox until the task ends,
                # also when the broker lost it: nothing waits only when it is empty.
                # An erase cut short by a kill is finished by beat's tick.
                busy = (client.llen("ingest") + client.llen("consolidate")
                        + client.hlen("unacked") + client.hlen(keys.OUTBOX)
                        + client.zcard(keys.ERASE_UNFINISHED))
                now = time.monotonic()
                quiet_since = None if busy else (quiet_since or now)
                if quiet_since is not None and now - quiet_since > SHORT_VISIBILITY + 5:
                    break
                assert now - t0 < timeout, f"{busy} tasks still queued or taken"
                time.sleep(0.2)
            while True:  # an erase's AOF rewrite or BGSAVE may still run
                info = client.info("persistence")
                if not (info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]
                        or info["rdb_bgsave_in_progress"]):
                    break
                assert time.monotonic() - t0 < timeout, "a rewrite did not finish"
                time.sleep(0.1)
        finally:
            client.close()
        return time.monotonic() - t0

    def resent(self) -> int:
        """How many lost ingest messages beat's tick sent again (its warnings)."""
        return sum(p.read_text(errors="replace").count("the broker lost its message")
                   for p in self.log_dir.glob("*.log"))

    def answers(self) -> dict[str, bool]:
        """Does every process answer: Redis, each worker, the API (ready)?"""
        out: dict[str, bool] = {}
        client = redis.Redis.from_url(self.cluster.url)
        try:
            out["redis"] = bool(client.ping())
        finally:
            client.close()
        for name in ("ingest", "consolidate"):
            try:
                self.cluster.wait_ready({name}, timeout=30)
                out[name] = True
            except TimeoutError:
                out[name] = False
        try:
            out["api"] = httpx.get(self.base + "/readyz", timeout=10).status_code == 200
        except httpx.HTTPError:
            out["api"] = False
        return out

    def celery_backend(self) -> Any:
        """The result backend (task outcomes), for failure messages."""
        if self._client is None:
            self._client = Client(self.cluster.url)
        return self._client.celery.backend

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        self.cluster.close()


@dataclass
class Verdict:
    """Each accepted turn's fate, and where erased text was found."""

    stored_once: int = 0
    erased: int = 0
    either: int = 0  # an erase raced its add: stored once or erased are both right
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    resurrected: list[str] = field(default_factory=list)  # erased, yet stored
    leaked: dict[str, list[str]] = field(default_factory=dict)  # turn id -> where

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.resurrected or self.leaked)


def _expectation(turn: Turn, erases: list[Erase]) -> str:
    """``stored``, ``erased`` or ``either`` for one accepted turn."""
    mine = [e for e in erases if e.ns == turn.ns and (e.turn is None or e.turn == turn.id)]
    # Erased for sure: a namespace erase that answered (200, or 404: the fence is set
    # anyway) and began after the add was answered; a turn erase that answered 200.
    if any(e.turn is None and e.status in (200, 404) and e.start > turn.answered
           for e in mine):
        return "erased"
    if any(e.turn == turn.id and e.status == 200 for e in mine):
        return "erased"
    # An erase that overlapped the add, or began after it and got no answer (it may or
    # may not have run), or a turn erase refused (404: maybe not stored yet).
    if any(e.turn is None and e.end >= turn.sent and (e.status is None or e.start <= turn.answered)
           for e in mine):
        return "either"
    if any(e.turn == turn.id and e.status != 200 for e in mine):
        return "either"
    return "stored"


def verdict(log: Log, store: MemoryStore, data_dir: Path) -> Verdict:
    """Check every accepted turn against the store, every key and the files on disk."""
    out = Verdict()
    episodes: Counter[tuple[str, str]] = Counter()
    facts: Counter[tuple[str, str]] = Counter()
    for ns in {t.ns for t in log.accepted}:
        episodes.update((ns, e.id) for e in store.episodes.iter_episodes(ns))
        facts.update((ns, m.text) for m in store.records.iter_memories(ns))
    keys_blob = b"\n".join(raw for _, raw in all_values(store.client))
    files = {p.name: p.read_bytes() for p in data_dir.rglob("*")
             if p.is_file() and (p.name == "dump.rdb" or ".aof" in p.name)}
    for turn in log.accepted:
        expect = _expectation(turn, log.erases)
        n_ep, n_fact = episodes[(turn.ns, turn.id)], facts[(turn.ns, turn.fact)]
        if n_ep > 1 or n_fact > 1:
            out.duplicated.append(turn.id)
        if expect == "erased":
            if n_ep or n_fact:
                out.resurrected.append(turn.id)
            needle = turn.words.encode()
            where = [name for name, raw in files.items() if needle in raw]
            if needle in keys_blob:
                where.append("keys")
            if where:
                out.leaked[turn.id] = where
            out.erased += 1
        elif expect == "stored":
            if (n_ep, n_fact) == (1, 1):
                out.stored_once += 1
            elif n_ep == 0 or n_fact == 0:
                out.lost.append(turn.id)
        else:
            out.either += 1
            if n_ep != n_fact:  # a turn is stored whole or not at all
                out.lost.append(turn.id)
    return out


def story(log: Log, turn_ids: list[str], backend: Any, start: float) -> str:
    """For a failure message: each turn's times, its tasks' outcomes and the kills near it."""
    by_id = {t.id: t for t in log.accepted}
    lines = []
    for tid in turn_ids[:5]:
        t = by_id[tid]
        metas = [backend.get_task_meta(i) for i in t.task_ids]
        outcomes = [(i, m["status"], str(m.get("result"))[:160])
                    for i, m in zip(t.task_ids, metas, strict=True)]
        near = [(round(w - start, 1), k) for w, k in log.timeline if abs(w - t.sent) < 30]
        erases = [(round(e.start - start, 1), e.turn, e.status) for e in log.erases
                  if e.ns == t.ns]
        lines.append(f"{tid} in {t.ns}: sent {t.sent - start:.1f} s, answered "
                     f"{t.answered - start:.1f} s, tasks {outcomes}, kills near {near}, "
                     f"erases of its namespace {erases}")
    return "\n".join(lines)
