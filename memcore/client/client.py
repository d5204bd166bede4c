"""The producer and reader client: ``memcore.Client(redis_url)``.

Producers enqueue by task name, so they never import ``workers``; Celery itself is
imported lazily on the first ``add``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from memcore.adapters import Models, build_models
from memcore.client.coalesce import TurnCoalescer
from memcore.core import retrieval
from memcore.core.config import Settings, get_settings
from memcore.core.consolidation import profile as profile_of
from memcore.core.models import (
    LIVE_STATUSES,
    AuditEvent,
    Episode,
    Memory,
    Role,
    as_utc,
    check_turn_size,
    turn_limit,
    utcnow,
    validate_namespace,
)
from memcore.core.scoring import effective_relation_weight, memory_score
from memcore.core.vector_index import IndexCache
from memcore.messaging import task_names
from memcore.messaging.payloads import ConsolidatePayload, IngestPayload
from memcore.store import MemoryStore

if TYPE_CHECKING:
    from celery import Celery

MAX_BATCH = 256
"""Most turns in one ingest task from ``Client.add``."""


@dataclass(frozen=True)
class SearchHit:
    """One search result: the memory, its similarity and the combined score."""

    memory: Memory
    similarity: float
    score: float


MESSAGE_KEYS = frozenset({"role", "content", "text", "speaker", "name", "timestamp", "id",
                          "metadata"})
"""The keys a ``Client.add`` message may carry; any other key is an error."""


def to_episodes(namespace: str, messages: Iterable[Mapping[str, Any] | Episode],
                timestamp: datetime | None, metadata: Mapping[str, Any] | None, *,
                max_turn_bytes: int | None = None) -> list[Episode]:
    """Validate chat messages into episodes (an error names the message and field).

    ``max_turn_bytes`` (the setting of that name) bounds each turn's text; None leaves
    the size to whoever receives the episodes.
    """
    episodes: list[Episode] = []
    default_time = as_utc(timestamp) if timestamp else utcnow()
    context = turn_limit(max_turn_bytes) if max_turn_bytes is not None else None
    for i, message in enumerate(messages):
        if isinstance(message, Episode):
            if max_turn_bytes is not None:
                try:
                    check_turn_size(message.text, max_turn_bytes)
                except ValueError as exc:
                    raise ValueError(f"messages[{i}].text: {exc}") from None
            episodes.append(message)
            continue
        if not isinstance(message, Mapping):
            raise ValueError(f"messages[{i}]: expected a mapping, got {type(message).__name__}")
        unknown = [k for k in message if k not in MESSAGE_KEYS]
        if unknown:
            # A silently dropped "tenant" or per-message "namespace" would store the turn
            # somewhere the caller did not mean.
            raise ValueError(f"messages[{i}].{unknown[0]}: unknown key (allowed: "
                             f"{', '.join(sorted(MESSAGE_KEYS))}; the namespace is the "
                             "argument of add)")
        text = message.get("content", message.get("text"))
        extra = message.get("metadata")
        extra = {} if extra is None else extra
        if not isinstance(extra, Mapping):
            raise ValueError(f"messages[{i}].metadata: expected a mapping, "
                             f"got {type(extra).__name__}")
        speaker = message.get("speaker", message.get("name"))
        data: dict[str, Any] = {
            "namespace": namespace,
            "role": message.get("role", Role.USER),
            "speaker": "" if speaker is None else speaker,  # 0 or False must fail, not vanish
            "text": text,
            "timestamp": message.get("timestamp", default_time),
            "metadata": {**(metadata or {}), **dict(extra)},
        }
        if message.get("id") is not None:
            data["id"] = message["id"]
        try:
            episodes.append(Episode.model_validate(data, context=context))
        except ValueError as exc:
            raise ValueError(f"messages[{i}]: {exc}") from exc
    return episodes


class BatchedAdder:
    """``Client.batched()``: validates like ``Client.add``, sends through a coalescer."""

    def __init__(self, coalescer: TurnCoalescer, max_turn_bytes: int) -> None:
        self.coalescer = coalescer
        self.max_turn_bytes = max_turn_bytes

    def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
            timestamp: datetime | None = None,
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


class Client:
    """Enqueue turns, search memories, and manage them (pin, restore, erase, ...)."""

    def __init__(self, redis_url: str | None = None, *, settings: Settings | None = None,
                 models: Models | None = None) -> None:
        self.settings = settings or get_settings()
        if redis_url:
            self.settings = self.settings.model_copy(update={"redis_url": redis_url})
        self.store = MemoryStore.from_url(self.settings.data_url())
        self._models = models
        self._celery: Celery | None = None
        self._index_cache: IndexCache | None = None
        self._text_cache = retrieval.TextIndexCache(self._texts_of)

    @property
    def models(self) -> Models:
        """The embedder (and models) matching the workers' configuration."""
        if self._models is None:
            self._models = build_models(self.settings)
        return self._models

    @property
    def _index(self) -> IndexCache:
        if self._index_cache is None:
            self._index_cache = IndexCache(self.store.vectors_since, self.models.embedder.dim,
                                           drains=True)
        return self._index_cache

    def _texts_of(self, namespace: str, ids: Sequence[str]) -> list[str | None]:
        memories = self.store.get_many(namespace, ids, vectors=False)
        return [None if m is None else m.text for m in memories]

    @property
    def celery(self) -> Celery:
        """A bare Celery producer on the broker (no task code imported)."""
        if self._celery is None:
            from celery import Celery

            from memcore.messaging.celery_config import celery_config
            from memcore.messaging.transport import install as install_transport

            install_transport()  # survive a lost broker, as the workers do
            url = self.settings.data_url()
            app = Celery("memcore-client")
            app.conf.update(celery_config(self.settings, self.settings.broker_url or url,
                                          self.settings.result_backend or url))
            self._celery = app
        return self._celery

    # -- write path ---------------------------------------------------------------------

    def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
            timestamp: datetime | None = None,
            metadata: Mapping[str, Any] | None = None) -> list[str]:
        """Enqueue turns for ingestion; returns the Celery task ids.

        ``timestamp`` is when the turns happened (each message may carry its own);
        without one, the time of this call is used.
        """
        validate_namespace(namespace)
        episodes = to_episodes(namespace, messages, timestamp, metadata,
                               max_turn_bytes=self.settings.max_turn_bytes)
        if not episodes:
            raise ValueError("messages: at least one message is required")
        return [self._enqueue(namespace, episodes[start:start + MAX_BATCH])
                for start in range(0, len(episodes), MAX_BATCH)]

    def _enqueue(self, namespace: str, episodes: list[Episode]) -> str:
        """Send one namespace's episodes as one ingest task; returns its id."""
        payload = IngestPayload(namespace=namespace, episodes=episodes)
        result = self.celery.send_task(task_names.INGEST, args=[payload.model_dump(mode="json")],
                                       queue="ingest")
        return str(result.id)

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

    def wait(self, task_ids: Sequence[str], timeout: float = 300.0) -> list[Any]:
        """Block until the tasks finish; returns their results (raises on task failure).

        Polls the result backend instead of subscribing, so no result object keeps a
        pub/sub subscription alive after the client is closed.
        """
        import time

        from celery import states

        backend = self.celery.backend
        deadline = time.monotonic() + timeout
        results: list[Any] = []
        for tid in task_ids:
            delay = 0.01
            while True:
                meta = backend.get_task_meta(tid)
                if meta["status"] in states.READY_STATES:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"task {tid} did not finish within {timeout} s")
                time.sleep(delay)
                delay = min(delay * 1.5, 0.2)
            if meta["status"] != states.SUCCESS:
                raise backend.exception_to_python(meta["result"])
            results.append(meta["result"])
        return results

    def consolidate(self, namespace: str, *, wait: bool = True, timeout: float = 600.0,
                    now: datetime | None = None, full: bool = False) -> dict[str, Any] | str:
        """Run a consolidation pass on the workers; waits for the whole chord if asked.

        ``full`` searches every memory against every other; otherwise only what changed
        since the last pass is searched.
        """
        payload = ConsolidatePayload(namespace=namespace, now=now, full=full)
        result = self.celery.send_task(task_names.CONSOLIDATE,
                                       args=[payload.model_dump(mode="json")],
                                       queue="consolidate")
        if not wait:
            return str(result.id)
        started: dict[str, Any] = self.wait([result.id], timeout=timeout)[0]
        if "batches" not in started:
            return started
        return self._wait_pass(namespace, started, timeout)

    def _wait_pass(self, namespace: str, started: dict[str, Any], timeout: float
                   ) -> dict[str, Any]:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.store.pass_lock_holder(namespace) != started["pass_id"]:
                return {**started, "to_version": self.store.current_version(namespace)}
            time.sleep(0.1)
        raise TimeoutError(f"pass {started['pass_id']} of {namespace} did not finish")

    # -- reads ----------------------------------------------------------------------------

    def search(self, namespace: str, query: str, k: int = 10, *, max_chars: int = 4000,
               include_inactive: bool = False, now: datetime | None = None,
               touch: bool = True, retention_weight: float = 0.05,
               hybrid: bool = True) -> list[SearchHit]:
        """Memories ranked for ``query``: BM25 over their text fused with vector
        similarity (reciprocal rank fusion), lifted a little by retention.

        ``hybrid=False`` ranks by cosine similarity alone (plus retention), as before
        hybrid retrieval existed. Superseded and tombstoned memories are left out
        unless ``include_inactive``; the texts returned never exceed ``max_chars`` in
        total (a hard cap, not a hint). Recall bookkeeping (last_used, strength,
        recall_count) is recorded unless ``touch`` is False.
        """
        validate_namespace(namespace)
        if not query.strip():
            raise ValueError("query must not be empty")
        if k < 1:
            raise ValueError("k must be at least 1")
        now = as_utc(now) if now else utcnow()
        version = self.store.current_version(namespace)
        index = self._index.get(namespace, version)
        if len(index) == 0:
            return []
        roles = self.models.instrumented
        try:
            vec = roles.embedder.embed([query])
        finally:
            # Counted and logged by the instrumentation; a read has no audit entry to write.
            roles.instruments.drain_errors()
        depth = max(k * 4, retrieval.DEPTH if hybrid else 20)
        (row,) = index.search(vec, depth)
        if hybrid:
            lexical = self._text_cache.get(namespace, version, index).search(query, depth)
            # A cosine <= 0 shares nothing with the query (the hashing embedder gives
            # exact zeros): such a rank is noise, not evidence.
            rank = retrieval.fuse([[mid for mid, sim in row if sim > 0],
                                   [mid for mid, _ in lexical]])
            for mid, _ in row:
                rank.setdefault(mid, 0.0)  # still returned, after every real match
            bm25 = dict(lexical)
        else:
            rank = {mid: float(sim) for mid, sim in row}
            bm25 = {}
        cosine = dict(row)
        order = sorted(rank, key=lambda mid: (-rank[mid], -bm25.get(mid, 0.0),
                                              -cosine.get(mid, 0.0), mid))
        cfg = self.settings.consolidation
        query_vec = np.asarray(vec, dtype=np.float32).reshape(-1)
        hits: list[SearchHit] = []
        # Read records a chunk at a time until k live ones are found.
        step = max(k * 4, 20)
        for start in range(0, len(order), step):
            ids = order[start:start + step]
            for mid, memory in zip(ids, self.store.get_many(namespace, ids), strict=True):
                if memory is None or (not include_inactive
                                      and memory.status not in LIVE_STATUSES):
                    continue
                keep = (effective_relation_weight(memory, now, cfg)
                        if memory.relation is not None else memory_score(memory, now, cfg))
                sim = float(query_vec @ memory.array) if memory.vector is not None else 0.0
                # Cosine is additive with retention; a fused rank score is scaled by it.
                score = (rank[mid] * (1.0 + retention_weight * keep) if hybrid
                         else sim + retention_weight * keep)
                hits.append(SearchHit(memory, sim, score))
            if len(hits) >= k:
                break
        # Equal fused ranks (common with RRF) go to the stronger text match.
        hits.sort(key=lambda h: (-h.score, -bm25.get(h.memory.id, 0.0), -h.similarity,
                                 h.memory.id))
        chosen: list[SearchHit] = []
        used = 0
        for hit in hits[:k]:
            if used + len(hit.memory.text) > max_chars and chosen:
                break
            chosen.append(hit)
            used += len(hit.memory.text)
        if touch and chosen:
            self.store.touch(namespace, [h.memory.id for h in chosen], now, cfg.strength_cap)
        return chosen

    def profile(self, namespace: str, now: datetime | None = None) -> list[Memory]:
        """The profile: active facts ranked by confidence (at most 50)."""
        now = as_utc(now) if now else utcnow()
        return profile_of(self.store.iter_memories(namespace), now, self.settings.consolidation)

    def get(self, namespace: str, memory_id: str) -> Memory | None:
        """One memory by id (any status)."""
        return self.store.get(namespace, memory_id)

    def history(self, namespace: str, memory_id: str) -> list[AuditEvent]:
        """Every audited change of a memory, through merges and supersessions."""
        return self.store.history(namespace, memory_id)

    def stats(self, namespace: str) -> dict[str, Any]:
        """Counts by status, counters and the snapshot version."""
        return {"namespace": namespace, "version": self.store.current_version(namespace),
                "status": self.store.count_by_status(namespace),
                "counters": self.store.counters(namespace)}

    # -- management -------------------------------------------------------------------------

    def pin(self, namespace: str, memory_id: str) -> Memory:
        """Pin a memory: it never decays and is never dropped."""
        return self.store.pin(namespace, memory_id, utcnow())

    def unpin(self, namespace: str, memory_id: str) -> Memory:
        """Undo :meth:`pin`."""
        return self.store.unpin(namespace, memory_id, utcnow())

    def restore(self, namespace: str, memory_id: str) -> Memory:
        """Bring a tombstoned memory back."""
        return self.store.restore(namespace, memory_id, utcnow())

    def erase(self, namespace: str, *, memory_id: str | None = None,
              episode_id: str | None = None, everything: bool = False) -> int:
        """Erase on the user's request: a memory, an episode's traces, or the namespace."""
        chosen = [x for x in (memory_id, episode_id, everything or None) if x]
        if len(chosen) != 1:
            raise ValueError("erase: give exactly one of memory_id, episode_id, everything")
        now = utcnow()
        if memory_id:
            return self.store.erase_memory(namespace, memory_id, now)
        if episode_id:
            return self.store.erase_episode(namespace, episode_id, now)
        return self.store.erase_namespace(namespace, now)

    def close(self) -> None:
        """Release connections."""
        if self._celery is not None:
            self._celery.close()
            self._celery = None
        self.store.close()
