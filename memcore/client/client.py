"""The producer and reader client: ``memcore.Client(redis_url)``.

Producers enqueue by task name, so they never import ``workers``; Celery itself is
imported lazily on the first ``add``.
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from memcore.adapters import Models, build_models
from memcore.client import hooks
from memcore.client.coalesce import TurnCoalescer
from memcore.client.context import build_context
from memcore.client.errors import Backpressure, BrokerBusy, NoWorker, UnknownTask
from memcore.client.messages import to_episodes
from memcore.client.namespaces import Visible, no_data_message
from memcore.client.operations import MemoryPage, erase_target
from memcore.client.search import ReadGuard, Searcher, SearchHit
from memcore.client.workers import WorkerCheck, no_worker_hint
from memcore.consolidation import profile as profile_of
from memcore.core.config import Settings, get_settings
from memcore.core.errors import (
    EpisodeNotFound,
    MemoryNotFound,
    NamespaceNotFound,
    UnknownNamespaceWarning,
)
from memcore.core.filters import FilterFields, Predicate, compile_filter
from memcore.core.models import (
    LIVE_STATUSES,
    AuditEvent,
    Episode,
    Kind,
    Memory,
    Status,
    as_instant,
    as_utc,
    utcnow,
    validate_identifier,
    validate_namespace,
)
from memcore.core.secrets import redact_episodes
from memcore.core.timeline import (
    earlier_values,
    expiry_of,
    predecessors,
    valid_at,
    version_at,
)
from memcore.language import secret_cues
from memcore.messaging import task_names
from memcore.messaging.celery_config import celery_urls
from memcore.messaging.payloads import ConsolidatePayload, IngestPayload
from memcore.observability import tracing
from memcore.observability.metrics import QueueLagCollector
from memcore.observability.usage import USAGE_FIELDS, collect_usage
from memcore.store import EraseReport, MemoryStore
from memcore.store.usage import PREFIX as USAGE_PREFIX

if TYPE_CHECKING:
    from celery import Celery

    from memcore.client.context import ContextBlock
    from memcore.observability.metrics import QueueLagCollector

_CELERY_LOCK = threading.Lock()

log = logging.getLogger(__name__)

NO_WORKER_CHECK_SECONDS = 5.0
"""How long ``Client.wait`` lets a task wait before it asks whether any worker is up."""

UNKNOWN_TASK_CHECK_SECONDS = 1.0
"""How long ``Client.wait`` lets a task wait before it asks whether the id exists at all
(the backlog, then the broker's queues); it asks twice, this far apart, before
:class:`~memcore.client.errors.UnknownTask`."""

BROKER_POOL_TIMEOUT_SECONDS = 5.0
"""Longest a send waits for a broker connection or producer of the process's pools (all
``broker_pool_limit`` in use) before it fails with :class:`BrokerBusy`."""

MAX_BATCH = 256
"""Most turns in one ingest task from ``Client.add``."""

RETRY_AFTER_SECONDS = 2.0
"""What :class:`Backpressure` (HTTP: ``Retry-After``) tells a refused producer to wait."""

BACKLOG_STALE_FACTOR = 2
"""A backlog entry older than this many visibility timeouts is a task lost with its
broker (a live one is delivered again within one): it no longer counts."""


MAX_LIST = 1000


def _position(memory: Memory | FilterFields) -> tuple[datetime, str]:
    return (as_utc(memory.created_at), memory.id)


def new_task_id() -> str:
    """A Celery task id, chosen before the task is sent (the backlog counts it first)."""
    import uuid

    return str(uuid.uuid4())


def encode_cursor(memory: Memory | FilterFields) -> str:
    """The opaque position after ``memory`` in a listing."""
    raw = f"{as_utc(memory.created_at).isoformat()}|{memory.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """Inverse of :func:`encode_cursor` (ValueError naming ``cursor`` when malformed)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        when, memory_id = raw.split("|", 1)
        return as_utc(datetime.fromisoformat(when)), validate_identifier(memory_id)
    except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
        raise ValueError(f"cursor: not a cursor returned by list ({cursor[:40]!r})") from exc


E = TypeVar("E", Status, Kind)
_T = TypeVar("_T")


def _enum_arg(enum: type[E], value: E | str | None, field: str) -> E | None:
    if value is None:
        return None
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        raise ValueError(f"{field}: unknown value {value!r} (one of: {allowed})") from None


@dataclass(frozen=True)
class _Listed:
    """Which memories :meth:`Client.list` returns: of ``status`` (else the live ones,
    any with ``include_inactive``; with ``instant``, those valid then), of ``kind``,
    accepted by the filter ``wanted``, after the cursor's position ``after``."""

    status: Status | None
    kind: Kind | None
    wanted: Predicate
    instant: datetime | None
    include_inactive: bool
    after: tuple[datetime, str] | None

    def admits(self, fields: FilterFields) -> bool:
        """Is the memory of ``fields`` on the list?"""
        if self.status is not None and fields.status is not self.status:
            return False
        if self.instant is not None:
            if not valid_at(fields, self.instant):
                return False
        elif self.status is None and not self.include_inactive and \
                fields.status not in LIVE_STATUSES:
            return False
        if self.kind is not None and fields.kind is not self.kind:
            return False
        if self.after is not None and _position(fields) <= self.after:
            return False
        return self.wanted(fields)


class BatchedAdder:
    """``Client.batched()``: validates like ``Client.add``, sends through a coalescer."""

    def __init__(self, coalescer: TurnCoalescer, max_turn_bytes: int) -> None:
        self.coalescer = coalescer
        self.max_turn_bytes = max_turn_bytes

    def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
            timestamp: datetime | str | None = None,
            metadata: Mapping[str, Any] | None = None) -> Future[list[str]]:
        """Queue turns; the future resolves to the ids of the tasks that carry them."""
        validate_namespace(namespace)
        episodes = to_episodes(namespace, messages, timestamp, metadata,
                               max_turn_bytes=self.max_turn_bytes)
        if not episodes:
            raise ValueError("messages: at least one message is required")
        return self.coalescer.submit(namespace, episodes)

    def flush(self) -> None:
        """Send every waiting turn now."""
        self.coalescer.flush()

    def close(self) -> None:
        """Send what still waits and stop the coalescer's timer."""
        self.coalescer.close()

    def __enter__(self) -> BatchedAdder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def pass_usage(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, int]:
    """The model usage of the passes that ran between two reads of a namespace's counters
    (one pass runs per namespace at a time: the one waited for)."""
    return {f: int(after.get(k, 0.0) - before.get(k, 0.0))
            for f, k in ((f, f"{USAGE_PREFIX}consolidate.{f}") for f in USAGE_FIELDS)}


class Client:
    """Enqueue turns, search memories, and manage them (pin, restore, erase, ...)."""

    def __init__(self, redis_url: str | None = None, *,
                 settings: Settings | Mapping[str, Any] | None = None,
                 models: Models | None = None) -> None:
        if isinstance(settings, Mapping):  # Client(settings={"embedder": "local"})
            settings = Settings(**settings)
        elif settings is not None and not isinstance(settings, Settings):
            raise TypeError(f"settings: expected a Settings or a mapping of settings, "
                            f"got {type(settings).__name__}")
        self.settings = settings or get_settings()
        if redis_url:
            self.settings = self.settings.model_copy(update={"redis_url": redis_url})
        # Off unless MEMCORE_OTEL_ENDPOINT is set (the first setup of a process names it).
        tracing.setup_tracing(self.settings, "memcore-client")
        self.store = MemoryStore.from_url(self.settings.data_url())
        self._models = models
        self._celery: Celery | None = None
        self._queues: QueueLagCollector | None = None
        self.worker_check = WorkerCheck(self._ask_workers)
        """The no-worker check every :meth:`wait` of this client shares."""
        self._searcher = Searcher(self.store, self.settings, lambda: self.models)

    @property
    def models(self) -> Models:
        """The embedder (and models) matching the workers' configuration."""
        if self._models is None:
            self._models = build_models(self.settings)
        return self._models

    @property
    def celery(self) -> Celery:
        """A bare Celery producer on the broker (no task code imported)."""
        if self._celery is not None:
            return self._celery
        # The API server's threads reach this at once on their first requests: a
        # concurrent first import of celery sees a half-initialized module
        # ("cannot import name 'Celery'"), so one thread builds the app.
        with _CELERY_LOCK:
            if self._celery is not None:
                return self._celery
            from memcore.client.celery_app import build_app

            # Every wait for its pools ends (BrokerBusy), none waits forever.
            app = build_app(self.settings, BROKER_POOL_TIMEOUT_SECONDS)
            self._celery = app
            return app

    # -- write path ---------------------------------------------------------------------

    def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
            timestamp: datetime | str | None = None,
            metadata: Mapping[str, Any] | None = None, user_id: str | None = None,
            agent_id: str | None = None, run_id: str | None = None,
            infer: bool = True, expires_at: datetime | str | None = None,
            ttl_seconds: float | None = None, charge_to: str | None = None) -> list[str]:
        """Enqueue turns for ingestion; returns the Celery task ids.

        ``timestamp`` is when the turns happened, a datetime or an ISO 8601 string
        (each message may carry its own); without one, the time of this call is used.
        ``metadata`` and the scopes ``user_id``/``agent_id``/``run_id`` are given to
        every memory the turns produce.
        ``infer=False`` stores each user turn verbatim as one memory (no extraction, no
        decision call; exact repeats in the same scope still only reinforce).
        ``expires_at`` (an instant) or ``ttl_seconds`` (counted from each turn's
        timestamp) gives the memories the turns create an expiry: from then on they are
        out of search and profile, and maintenance tombstones them (restorable within
        ``consolidation.tombstone_grace_days``, audited EXPIRE). A turn that only
        repeats an existing memory leaves that memory's expiry as it was.
        ``charge_to``: an API key id whose model-call budget the workers charge the
        turns' model calls to (the HTTP API passes the caller's key when
        ``MEMCORE_API__KEY_MODEL_CALLS_PER_MINUTE`` is set).
        """
        validate_namespace(namespace)
        if isinstance(messages, (str, bytes, Mapping)):
            # Iterating a string or one dict would report "messages[0]: expected a
            # mapping, got str", which hides the real mistake.
            raise ValueError(f"messages: expected a list of messages ({{'role', 'content'}} "
                             f"mappings), got one {type(messages).__name__}")
        if not isinstance(infer, bool):
            raise ValueError(f"infer: expected a boolean, got {type(infer).__name__}")
        scopes = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        for name, value in scopes.items():
            if value is not None:
                try:
                    validate_identifier(value)
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None
        episodes = to_episodes(namespace, messages, timestamp, metadata, scopes,
                               max_turn_bytes=self.settings.max_turn_bytes)
        if not episodes:
            raise ValueError("messages: at least one message is required")
        if expires_at is not None or ttl_seconds is not None:
            episodes = [e.model_copy(update={"expires_at": expiry_of(
                expires_at, ttl_seconds, e.timestamp)}) for e in episodes]
        if charge_to is not None:
            validate_identifier(charge_to)
        # The root of the add's trace: its tasks carry the context to the workers.
        attributes: dict[str, str | int] = {"memcore.namespace": namespace,
                                            "memcore.turns": len(episodes)}
        with tracing.span("memcore.add", **attributes):
            return self._enqueue_all(namespace, [episodes[start:start + MAX_BATCH]
                                                 for start in range(0, len(episodes),
                                                                    MAX_BATCH)],
                                     infer=infer, charge_to=charge_to)

    def _enqueue(self, namespace: str, episodes: list[Episode], *, infer: bool = True) -> str:
        """Send one namespace's episodes as one ingest task; returns its id."""
        return self._enqueue_all(namespace, [episodes], infer=infer)[0]

    def _enqueue_all(self, namespace: str, batches: Sequence[list[Episode]], *,
                     infer: bool = True, charge_to: str | None = None) -> list[str]:
        """Send each batch as one ingest task; their ids. All or none are admitted to the
        backlog first (:class:`Backpressure` when it is full: nothing is sent)."""
        task_ids = [new_task_id() for _ in batches]
        self._admit(namespace, task_ids)
        sent = 0
        try:
            for task_id, episodes in zip(task_ids, batches, strict=True):
                # Secrets are masked before the turns reach the broker (workers mask too).
                episodes, _ = redact_episodes(
                    namespace, episodes, enabled=self.settings.redact_secrets,
                    exempt=self.settings.redact_secrets_exempt_namespaces,
                    max_bytes=self.settings.max_turn_bytes,
                    cues=secret_cues(self.settings.language))
                # The erase counts now: an erase of the namespace after this drops the
                # turns; a single erase after this keeps what it removed out of them.
                counts = self.store.fences.accepted(namespace)
                payload = IngestPayload(namespace=namespace, infer=infer, episodes=episodes,
                                        erase_fence=counts.fence, erasures=counts.erasures,
                                        charge_to=charge_to)
                wire = payload.wire()
                # Kept until the task ends: the broker can lose a message it took
                # (memcore.ingest.redelivery sends it again).
                self.store.backlog.keep(task_id, task_names.INGEST_QUEUE, wire)
                self._send(task_names.INGEST, wire, task_names.INGEST_QUEUE, task_id=task_id)
                sent += 1
        finally:
            if sent < len(task_ids):  # never sent: no worker will take them out
                self.store.backlog.release(namespace, task_ids[sent:])
        return task_ids

    def _admit(self, namespace: str, task_ids: list[str]) -> None:
        """Count the tasks into the ingest backlog, or raise :class:`Backpressure` when
        that would pass ``queue_limit`` or ``queue_limit_per_namespace``."""
        settings = self.settings
        full = self.store.backlog.reserve(
            namespace, task_ids, namespace_limit=settings.queue_limit_per_namespace,
            total_limit=settings.queue_limit,
            # A task lost with its broker never ends: its entry ages out instead.
            stale_seconds=BACKLOG_STALE_FACTOR * settings.visibility_timeout)
        if full is None:
            return
        mine = settings.queue_limit_per_namespace and \
            full.namespace + len(task_ids) > settings.queue_limit_per_namespace
        where = (f"namespace {namespace!r} has {full.namespace} ingest tasks waiting "
                 f"(queue_limit_per_namespace {settings.queue_limit_per_namespace})" if mine
                 else f"{full.total} ingest tasks wait in all (queue_limit "
                      f"{settings.queue_limit})")
        raise Backpressure(f"workers are behind: {where}; nothing was accepted, retry in "
                           f"{RETRY_AFTER_SECONDS:g} s", retry_after=RETRY_AFTER_SECONDS)

    def _send(self, name: str, payload: dict[str, Any], queue: str, *,
              task_id: str | None = None) -> str:
        """Send one task by name; its id. :class:`BrokerBusy` when the process's broker
        pools stay exhausted for :data:`BROKER_POOL_TIMEOUT_SECONDS`."""
        from memcore.messaging.broker import pool_exhausted

        try:
            return str(self.celery.send_task(name, args=[payload], queue=queue,
                                              task_id=task_id).id)
        except Exception as exc:
            if not pool_exhausted(exc):
                raise
            limit = self.celery.conf.broker_pool_limit
            raise BrokerBusy(f"no broker connection free: all {limit} of this process "
                             f"(broker_pool_limit) stayed in use for "
                             f"{BROKER_POOL_TIMEOUT_SECONDS:g} s; nothing was sent, "
                             "retry") from exc

    def batched(self, *, max_turns: int | None = None, max_wait_ms: float | None = None
                ) -> BatchedAdder:
        """An ``add`` that groups turns arriving together into one task per namespace.

        For producers that see turns one at a time: turns of one namespace wait at most
        ``max_wait_ms`` (default ``MEMCORE_INGEST_BATCH_MAX_WAIT_MS``) and at most
        ``max_turns`` (default ``MEMCORE_INGEST_BATCH_MAX_TURNS``) share a task. Use it
        as a context manager (leaving it sends what still waits)::

            with client.batched() as batch:
                future = batch.add("alice", [{"role": "user", "content": "I like tea."}])
            client.wait(future.result())
        """
        coalescer = TurnCoalescer(
            self._enqueue,
            max_turns=max_turns if max_turns is not None else self.settings.ingest_batch_max_turns,
            max_wait_ms=(max_wait_ms if max_wait_ms is not None
                         else self.settings.ingest_batch_max_wait_ms))
        return BatchedAdder(coalescer, self.settings.max_turn_bytes)

    def wait(self, task_ids: Sequence[str], timeout: float = 300.0, *,
             queue: str | None = None, fail_fast: bool = False) -> list[Any]:
        """Block until the tasks finish; returns their results (raises on task failure).

        Polls the result backend instead of subscribing, so no result object keeps a
        pub/sub subscription alive after the client is closed. A task still waiting after
        a few seconds (timeouts of 4 s or more) makes it ask the workers once whether any
        consumes ``queue`` (any worker at all without one; ``"ingest"`` for what
        :meth:`add` enqueues): if none does, a warning is logged and the TimeoutError
        says so. With ``fail_fast`` it raises :class:`~memcore.client.errors.NoWorker`
        right then instead (asked twice first: a busy worker may answer late), so a
        caller learns in seconds that nothing will run its tasks until a worker starts;
        they stay queued.

        An id no one knows (no result, not in the ingest backlog, not queued or running
        in the broker, twice a second apart) raises
        :class:`~memcore.client.errors.UnknownTask` after about a second instead of
        waiting out ``timeout``: a typo, or a result older than ``result_expires``.
        """
        if isinstance(task_ids, str | bytes):  # one id: not a list of its characters
            raise TypeError(f"task_ids: expected a list of task ids (what add returns), got "
                            f"one str {task_ids!r}; pass [{task_ids!r}]")
        import time

        from celery import states

        backend = self.celery.backend
        start = time.monotonic()
        deadline = start + timeout
        # A task nobody consumes waits out the whole timeout: ask once, a few seconds in,
        # whether any worker is up, and say so (a log warning now, in the error at the end).
        check_at = start + min(NO_WORKER_CHECK_SECONDS, timeout / 2) if timeout >= 4 else None
        no_worker = ""
        results: list[Any] = []
        for tid in task_ids:
            delay = 0.01
            # Each task still pending a second after its turn came is asked about once.
            unknown_at = time.monotonic() + UNKNOWN_TASK_CHECK_SECONDS
            while True:
                meta = backend.get_task_meta(tid)
                if meta["status"] in states.READY_STATES:
                    break
                now = time.monotonic()
                if now >= unknown_at:
                    unknown_at = float("inf")
                    self._require_known(tid)
                    continue
                if check_at is not None and now >= check_at:
                    check_at = None
                    # One broadcast at a time for every wait of this client, on a
                    # connection of its own: never one of the send pools.
                    answer = self.worker_check.consumers(1.0)
                    no_worker = no_worker_hint(answer, queue)
                    if no_worker and fail_fast:  # ask again: a busy worker answers late
                        answer = self.worker_check.consumers(2.0, newer_than=answer.asked_at)
                        no_worker = no_worker_hint(answer, queue)
                    if no_worker and fail_fast \
                            and backend.get_task_meta(tid)["status"] not in states.READY_STATES:
                        raise NoWorker(f"task {tid} is queued but {no_worker}; it runs "
                                       "once a worker starts")
                    if no_worker:
                        log.warning("task %s still waits after %.0f s: %s", tid, now - start,
                                    no_worker)
                if now > deadline:
                    raise TimeoutError(f"task {tid} did not finish within {timeout} s"
                                       + (f": {no_worker}" if no_worker else ""))
                time.sleep(delay)
                delay = min(delay * 1.5, 0.2)
            if meta["status"] != states.SUCCESS:
                raise backend.exception_to_python(meta["result"])
            results.append(meta["result"])
        return results

    def _require_known(self, task_id: str) -> None:
        """Raise :class:`UnknownTask` unless ``task_id`` has a result, is in the ingest
        backlog or is held by the broker, asked twice
        :data:`UNKNOWN_TASK_CHECK_SECONDS` apart (a message between the queue and the
        worker's unacked set is in neither for an instant)."""
        import time

        from celery import states

        for attempt in range(2):
            if attempt:
                time.sleep(UNKNOWN_TASK_CHECK_SECONDS)
            if (self.store.backlog.holds(task_id)
                    or self.celery.backend.get_task_meta(task_id)["status"] != states.PENDING
                    or self._queue_reader().holding([task_id])):
                return
        raise UnknownTask(f"task {task_id!r} is unknown: no result, and not queued or "
                          "running (a wrong id, or a result older than an hour: "
                          "results are kept that long)")

    def _queue_reader(self) -> QueueLagCollector:
        if self._queues is None:
            self._queues = QueueLagCollector(celery_urls(self.settings,
                                                         self.settings.data_url())[0])
        return self._queues

    def _ask_workers(self, reply_seconds: float) -> dict[str, list[str]]:
        """``{worker: [queues it consumes]}`` of the workers that answer within
        ``reply_seconds``, asked on an unpooled connection (see :attr:`worker_check`)."""
        from memcore.messaging.broker import ask_workers

        conf = self.celery.conf
        replies = ask_workers(self.celery.connection_for_write(), "active_queues",
                              reply_seconds, exchange=conf.control_exchange,
                              accept=conf.accept_content, serializer=conf.task_serializer,
                              queue_ttl=conf.control_queue_ttl,
                              queue_expires=conf.control_queue_expires,
                              queue_exclusive=conf.control_queue_exclusive)
        return {name: sorted(str(q.get("name", "?")) for q in queues
                             if isinstance(q, dict))
                for name, queues in replies.items() if isinstance(queues, list)}

    def publish_check(self, timeout: float = 1.0) -> str:
        """"ok" if a producer of this process's pool (and its broker connection) can be
        taken within ``timeout`` seconds, else why not: what ``/readyz`` reports."""
        from memcore.messaging.broker import pool_exhausted

        try:
            producer = self.celery.producer_pool.acquire(block=True, timeout=timeout)
        except Exception as exc:
            if pool_exhausted(exc):
                limit = self.celery.conf.broker_pool_limit
                return (f"error: no broker producer free within {timeout:g} s (all {limit} "
                        "in use)")
            return f"error: {type(exc).__name__}"
        producer.release()
        return "ok"

    def consolidate(self, namespace: str, *, wait: bool = True, timeout: float = 600.0,
                    now: datetime | None = None, full: bool = False) -> dict[str, Any] | str:
        """Run a consolidation pass on the workers; waits for the whole chord if asked.

        ``full`` searches every memory against every other; otherwise only what changed
        since the last pass is searched. When waiting, the report also has ``changed``
        (live memories written since the last pass), ``merge_calls`` (merger calls of
        the pass) and ``usage`` (its model calls and reported tokens), read from the
        namespace's counters (one pass runs per namespace at a time). A namespace without data
        raises :class:`NamespaceNotFound` (a pass of a typo'd name would write a
        snapshot for it) saying why: its turns are still queued, or the name is unknown.
        """
        validate_namespace(namespace)
        missing = self.no_data(namespace)
        if missing:  # its turns still queued, or a typo
            raise NamespaceNotFound(f"{missing}: nothing to consolidate")
        payload = ConsolidatePayload(namespace=namespace, now=now, full=full)
        before = self.store.coordination.counters(namespace) if wait else {}
        with tracing.span("memcore.consolidate", **{"memcore.namespace": namespace}):
            task_id = self._send(task_names.CONSOLIDATE, payload.model_dump(mode="json"),
                                 task_names.CONSOLIDATE_QUEUE)
        if not wait:
            return task_id
        started: dict[str, Any] = self.wait([task_id], timeout=timeout)[0]
        report = (self.wait_for_pass(namespace, started, timeout) if "batches" in started
                  else started)
        after = self.store.coordination.counters(namespace)
        for key, counter in (("changed", "pass_changed"), ("merge_calls", "merge_calls")):
            report[key] = int(after.get(counter, 0.0) - before.get(counter, 0.0))
        report["usage"] = pass_usage(before, after)
        return report

    def wait_for_pass(self, namespace: str, started: dict[str, Any], timeout: float
                      ) -> dict[str, Any]:
        """Wait until the pass ``started`` (the report of a consolidate task that fanned
        out) has committed or given up; its report with the version now current."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.store.coordination.pass_lock_holder(namespace) != started["pass_id"]:
                return {**started, "to_version": self.store.current_version(namespace)}
            time.sleep(0.1)
        raise TimeoutError(f"pass {started['pass_id']} of {namespace} did not finish")

    # -- reads ----------------------------------------------------------------------------

    def search(self, namespace: str, query: str, k: int = 10, *, max_chars: int = 4000,
               include_inactive: bool = False, now: datetime | str | None = None,
               touch: bool = True, retention_weight: float = 0.05,
               hybrid: bool = True, filters: Mapping[str, Any] | None = None,
               guard: ReadGuard | None = None, as_of: datetime | str | None = None,
               include_history: bool = False, time_hint: bool = False,
               warn: bool = True) -> list[SearchHit]:
        """Memories ranked for ``query``: BM25 over their text fused with vector
        similarity (reciprocal rank fusion), lifted a little by retention. A memory
        that shares no word and no meaning with the query (no BM25 match, cosine <= 0)
        is no hit: fewer than ``k`` come back rather than unrelated ones.

        ``as_of`` (a datetime or ISO 8601 string) searches the memories valid at that
        instant instead of the live ones (:mod:`memcore.core.timeline`: values
        superseded since count, memories stored later do not; ``include_inactive`` is
        then ignored), chosen before ranking like ``filters``; retention is scored at
        ``as_of`` (unless ``now`` is given) and nothing is touched.
        ``include_history`` gives each hit the values its fact replaced
        (``SearchHit.earlier``, oldest first; one scan of the superseded memories).
        ``time_hint`` turns a relative time in the query ("last week", "in March",
        "3 days ago"), resolved against ``now``, into a filter on ``event_at`` chosen
        before ranking, and ranks the rest of the query (:mod:`memcore.core.timehint`).

        ``hybrid=False`` ranks by cosine similarity alone (plus retention), as before
        hybrid retrieval existed. Superseded and tombstoned memories are left out
        unless ``include_inactive``. ``filters`` (see ``memcore.core.filters``) choose
        the memories before they are ranked, so ``k`` matches come back whenever ``k``
        exist. The texts returned never exceed ``max_chars`` in total (a hard cap, not
        a hint). Recall bookkeeping (last_used, strength, recall_count) is recorded
        unless ``touch`` is False. The memories of the hits carry no ``vector`` (as over
        HTTP; :meth:`get` has it) and are shared with this client's cache: copy one
        (``model_copy``) before changing it.

        Indexes are cached per process and checked on every search against the
        namespace's version, log length and erase epoch in Redis, so a write or an erase
        made by any process is seen by the next search. An unfiltered search ranks on
        the cached index and reads that state with its first records (one round trip);
        when the state shows the index stale, it is brought up to date and the search
        ranked again. ``guard`` (servers): a key read with the state and checked before
        any record is used (:class:`~memcore.client.search.ReadGuard`).

        No hits from a namespace that has no data issue an
        :class:`~memcore.core.errors.UnknownNamespaceWarning` saying why (a typo, with the
        closest name; or its turns still queued) unless ``warn`` is False (for callers
        that say it their own way: :meth:`no_data`).
        """
        hits = self._searcher.search(namespace, query, k, max_chars=max_chars,
                                     include_inactive=include_inactive, now=now, touch=touch,
                                     retention_weight=retention_weight, hybrid=hybrid,
                                     filters=filters, guard=guard, as_of=as_of,
                                     include_history=include_history, time_hint=time_hint)
        if not hits and warn:
            self._warn_no_data(namespace)
        return hits

    def no_data(self, namespace: str, visible: Visible | None = None) -> str | None:
        """None if ``namespace`` has data, else the sentence saying why it has none (its
        turns still queued, or an unknown name with the closest stored one ``visible``
        allows): what :class:`~memcore.core.errors.UnknownNamespaceWarning`, the HTTP
        ``warning`` field and the CLI say."""
        validate_namespace(namespace)
        return no_data_message(self.store, namespace, visible)

    def _warn_no_data(self, namespace: str) -> None:
        message = self.no_data(namespace)
        if message:
            # stacklevel 3: the caller of search/profile, not this client.
            warnings.warn(message, UnknownNamespaceWarning, stacklevel=3)

    def forget_indexes(self, namespace: str | None = None) -> None:
        """Drop this process's search indexes of ``namespace`` (of all, without one); they
        are rebuilt from the store on the next search. Never needed for correctness (a
        search sees other processes' writes and erases by itself); it frees memory."""
        self._searcher.invalidate(namespace)

    def profile(self, namespace: str, now: datetime | str | None = None, *,
                filters: Mapping[str, Any] | None = None,
                as_of: datetime | str | None = None, warn: bool = True) -> list[Memory]:
        """The profile: active facts ranked by their standing (decayed confidence; a remark
        no frame was read in fades sooner: :func:`memcore.core.scoring.profile_standing`),
        at most 50; ``filters`` choose
        whose (e.g. ``{"user_id": "alice"}``). ``as_of``: the profile as it stood then,
        from the facts valid at that instant (values superseded since included). An empty
        profile of a namespace without data warns as :meth:`search` does."""
        wanted = compile_filter(filters)
        instant = as_instant(as_of, "as_of") if as_of is not None else None
        now = as_instant(now, "now") if now is not None else instant or utcnow()
        memories = (m for m in self.store.records.iter_memories(namespace,
                                                                vectors=False) if wanted(m))
        if instant is not None:
            facts = profile_of(memories, instant, self.settings.consolidation, as_of=True)
        else:
            facts = profile_of(memories, now, self.settings.consolidation)
        if not facts and warn:
            self._warn_no_data(namespace)
        return facts

    def context(self, namespace: str, query: str, max_tokens: int = 1000, *,
                now: datetime | str | None = None,
                filters: Mapping[str, Any] | None = None,
                time_hint: bool = True) -> ContextBlock:
        """A prompt-ready block for ``query``: the profile's most useful facts, the
        memories relevant to the query with their dates said from ``now`` ("since March
        2026"), and under a changed fact its previous value, marked as past. At most
        ``max_tokens`` (50-32,000) ``cl100k_base`` tokens; ordered by usefulness and
        deterministic (docs/design.md, context block). ``filters`` choose whose
        memories, as in :meth:`search`; ``time_hint`` (on by default here) reads a
        relative time in the query ("last week") as a filter on the relevant memories, as
        :meth:`search` does; recall is not recorded (no touch). An unknown namespace
        gives an empty block, as :meth:`search` gives no hits."""
        def hits(k: int, at: datetime) -> list[Memory]:
            return [h.memory for h in self.search(namespace, query, k, max_chars=1_000_000,
                                                  now=at, touch=False, filters=filters,
                                                  time_hint=time_hint, warn=False)]

        with collect_usage() as usage:
            block = build_context(self.store, self.settings, hits, namespace, query,
                                  max_tokens=max_tokens, now=now, filters=filters)
        self.store.usage.record(namespace, "context", usage)
        return replace(block, usage=usage.as_dict())

    def get(self, namespace: str, memory_id: str, *,
            as_of: datetime | str | None = None) -> Memory | None:
        """One memory by id (any status). ``as_of``: the value of its fact valid at that
        instant instead (itself, an earlier value it replaced, or a later one that
        replaced it), None if none was valid then; it reads the namespace's live and
        superseded records (one scan)."""
        if as_of is None:
            return self.store.records.get(namespace, memory_id)
        instant = as_instant(as_of, "as_of")
        validate_identifier(memory_id)
        memories = list(self.store.records.iter_memories(
            namespace, {*LIVE_STATUSES, Status.SUPERSEDED}, vectors=False))
        return version_at(memory_id, {m.id: m for m in memories}, predecessors(memories),
                          instant)

    def earlier(self, namespace: str, memory_id: str) -> list[Memory]:
        """The values the fact ``memory_id`` replaced, oldest first ("lived in Paris
        2019-2024" before "lives in Berlin"): each a superseded memory whose
        ``valid_from``/``valid_until`` say when it held (one scan of the superseded)."""
        validate_namespace(namespace)
        validate_identifier(memory_id)
        return earlier_values(memory_id, predecessors(self.store.records.iter_memories(
            namespace, {Status.SUPERSEDED}, vectors=False)))

    def history(self, namespace: str, memory_id: str, *,
                as_of: datetime | str | None = None) -> list[AuditEvent]:
        """Every audited change of a memory, through merges and supersessions;
        ``as_of``: only those made at or before that instant."""
        instant = as_instant(as_of, "as_of") if as_of is not None else None
        events = self.store.audit.history(namespace, memory_id)
        return events if instant is None else [e for e in events if e.at <= instant]

    def stats(self, namespace: str) -> dict[str, Any]:
        """Counts by status, counters and the snapshot version; ``usage``: model calls
        and reported tokens by operation (ingest, consolidate, context); ``backlog``: ingest tasks
        accepted and not finished (of the namespace, and ``total``: what the queue limits
        compare), ``queues``: messages waiting in each broker queue (empty if the broker
        cannot be read)."""
        depth = self.store.backlog.depth(namespace)
        return {"namespace": namespace, "version": self.store.current_version(namespace),
                "status": self.store.records.count_by_status(namespace),
                "counters": self.store.coordination.counters(namespace),
                "usage": self.store.usage.of(namespace),
                "backlog": {"namespace": depth.namespace, "total": depth.total},
                "queues": self.queue_lengths()}

    def versions(self, namespace: str) -> dict[str, Any]:
        """``{"current": v, "versions": [...]}``: the current snapshot version and the
        committed ones still kept (``version``, ``created_at``, ``memories`` each)."""
        validate_namespace(namespace)
        return {"current": self.store.current_version(namespace),
                "versions": [{"version": v.version, "created_at": v.created_at,
                              "memories": v.memories}
                             for v in self.store.snapshots.versions(namespace)]}

    def queue_lengths(self) -> dict[str, int]:
        """Messages waiting in each broker queue (``ingest``, ``consolidate``); empty when
        the broker cannot be read."""
        return self._queue_reader().lengths()

    # -- management -------------------------------------------------------------------------

    def pin(self, namespace: str, memory_id: str) -> Memory:
        """Pin a memory: it never decays and is never dropped."""
        return self._changed(namespace, self.store.writes.pin(namespace, memory_id, utcnow()))

    def unpin(self, namespace: str, memory_id: str) -> Memory:
        """Undo :meth:`pin`."""
        return self._changed(namespace, self.store.writes.unpin(namespace, memory_id, utcnow()))

    def update(self, namespace: str, memory_id: str, *, text: str | None = None,
               metadata: Mapping[str, Any] | None = None,
               expires_at: datetime | str | None = None,
               ttl_seconds: float | None = None) -> Memory:
        """Edit a memory's text (re-embedded), replace its metadata and/or give it an
        expiry (``expires_at``, or ``ttl_seconds`` from now: see :meth:`add`); audited as
        an UPDATE by the user. Scopes cannot be changed (metadata may not name them)."""
        validate_namespace(namespace)
        now = utcnow()
        expiry = expiry_of(expires_at, ttl_seconds, now)
        vector = None
        if text is not None:
            if not isinstance(text, str):
                raise ValueError(f"text: expected a string, got {type(text).__name__}")
            vector = [float(x) for x in self.models.embedder.embed([text])[0]]
        return self._changed(namespace, self.store.writes.edit(
            namespace, memory_id, now=now, text=text, vector=vector, metadata=metadata,
            expires_at=expiry))

    def delete(self, namespace: str, memory_id: str) -> Memory:
        """Delete a memory: it is tombstoned (out of search and list, restorable with
        :meth:`restore`); deleting an unknown or deleted memory raises. To forget for
        good, use :meth:`erase`."""
        return self._changed(namespace,
                             self.store.writes.tombstone(namespace, memory_id, utcnow()))

    def restore(self, namespace: str, memory_id: str) -> Memory:
        """Bring a tombstoned memory back."""
        return self._changed(namespace,
                             self.store.writes.restore(namespace, memory_id, utcnow()))

    def erase(self, namespace: str, *, memory_id: str | None = None,
              episode_id: str | None = None, everything: bool = False,
              keep_sources: bool = False) -> int:
        """Erase on the user's request: a memory, an episode's traces, or the namespace.

        Erasing a memory also erases the turns it came from, unless ``keep_sources``
        (see :meth:`erase_memory`); an unknown or already erased memory raises
        MemoryNotFound, an episode that erased nothing EpisodeNotFound. Returns how
        many memories and turns were removed (keys, for the whole namespace)."""
        erase_target(memory_id, episode_id, everything)
        now = utcnow()
        if memory_id:
            self._need(namespace, memory_id)
            if keep_sources:
                return self._changed(namespace, self.store.eraser.erase_memory(
                    namespace, memory_id, now))
            report = self.erase_memory(namespace, memory_id)
            return len(report.removed) + len(report.episodes)
        if episode_id:
            erased = self.store.eraser.erase_episode(namespace, episode_id, now)
            if not erased:  # a typo'd id must not read as "forgotten"
                raise EpisodeNotFound(f"episode {episode_id!r} not found in namespace "
                                      f"{namespace!r} (never there, or already erased)")
            return self._changed(namespace, erased)
        erased = self.store.eraser.erase_namespace(namespace, now)
        # The namespace starts again from an empty order log: drop this process's index.
        self.forget_indexes(namespace)
        return self._changed(namespace, erased)

    def rollback(self, namespace: str, version: int, *,
                 reason: str = "rollback") -> dict[str, Any]:
        """Point the namespace back at a committed snapshot version (audited with
        ``reason``); ``{"namespace", "from_version", "to_version"}``."""
        validate_namespace(namespace)
        before = self.store.current_version(namespace)
        self.store.snapshots.rollback(namespace, version, utcnow(), reason=reason)
        return {"namespace": namespace, "from_version": before, "to_version": version}

    def erase_memory(self, namespace: str, memory_id: str) -> EraseReport:
        """Erase a memory everywhere together with the turns it came from.

        A turn that also carried other facts is erased whole; those other memories stay
        (their text is their own) and the report lists as ``orphaned`` the ones left
        without any source turn, for the caller to erase too if the user wants. An
        unknown (or already erased) memory raises MemoryNotFound."""
        self._need(namespace, memory_id)
        return self._changed(namespace, self.store.eraser.erase_memory_and_sources(
            namespace, memory_id, utcnow()))

    def _changed(self, namespace: str, result: _T) -> _T:
        """``result``, after queueing the webhook dispatch of the change just audited."""
        hooks.notify(self, namespace)
        return result

    def _need(self, namespace: str, memory_id: str) -> None:
        """MemoryNotFound unless the memory exists: erasing a typo'd id must not report
        success (0 removed) to someone who asked to be forgotten."""
        validate_namespace(namespace)
        validate_identifier(memory_id)
        if self.store.records.get(namespace, memory_id) is None:
            raise MemoryNotFound(f"memory {memory_id!r} not found in namespace {namespace!r} "
                                 "(never there, or already erased)")

    def defer_touches(self, delay: float) -> None:
        """Record searches' recall bookkeeping (last_used, strength, recall_count) in
        batches written every ``delay`` seconds by a background thread, instead of one
        write per search: what a server answering many searches a second wants (the API
        does, ``MEMCORE_API__TOUCH_BATCH_SECONDS``). ``0`` writes with each search
        again; :meth:`close` writes what is still queued."""
        self._searcher.defer_touches(delay)

    def close(self) -> None:
        """Release connections (after writing any deferred recall bookkeeping)."""
        self._searcher.close()
        if self._celery is not None:
            self._celery.close()
            self._celery = None
        if self._queues is not None:
            self._queues.close()
            self._queues = None
        self.store.close()

    # Last in the class: a method named ``list`` shadows the builtin in later annotations.
    def list(self, namespace: str, *, status: Status | str | None = None,
             kind: Kind | str | None = None, filters: Mapping[str, Any] | None = None,
             include_inactive: bool = False, limit: int = 100,
             cursor: str | None = None, as_of: datetime | str | None = None) -> MemoryPage:
        """One page of memories, oldest first (by ``created_at``, then id).

        Live memories only unless ``status`` is given or ``include_inactive``; with
        ``as_of``, the memories valid at that instant (:mod:`memcore.core.timeline`),
        narrowed by ``status`` if given. Pass the
        returned ``next_cursor`` to get the next page: the cursor is a position, not an
        offset, so memories written or deleted meanwhile never repeat or skip one.
        Memories are returned without vectors.
        """
        validate_namespace(namespace)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
            raise ValueError(f"limit: expected an integer from 1 to {MAX_LIST}, got {limit!r}")
        listed = _Listed(_enum_arg(Status, status, "status"), _enum_arg(Kind, kind, "kind"),
                         compile_filter(filters),
                         as_instant(as_of, "as_of") if as_of is not None else None,
                         include_inactive, decode_cursor(cursor) if cursor else None)
        found = [fields for fields in self.store.records.iter_filter_fields(namespace)
                 if listed.admits(fields)]  # cheap: no whole records
        found.sort(key=_position)
        chosen = [f.id for f in found[:limit]]
        # A record erased since the scan is left out; the cursor still moves past it.
        page = [m for m in self.store.records.get_many(namespace, chosen, vectors=False)
                if m is not None]
        more = len(found) > limit
        return MemoryPage(page, encode_cursor(found[limit - 1]) if more else None)
