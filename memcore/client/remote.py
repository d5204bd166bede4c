"""Clients of the HTTP service: ``memcore.RemoteClient`` and ``memcore.AsyncRemoteClient``.

Same methods and return types as :class:`memcore.Client` (``Memory``, ``SearchHit``,
``AuditEvent``...), over HTTP with an API key instead of the Redis URL. Errors are typed
(:mod:`memcore.client.errors`) and carry the server's message.

Each method is described once, as a :class:`Call` (method, path, body, how to read the
answer); the sync and async classes only differ in how they send it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic_core import to_jsonable_python

from memcore.client.client import MemoryPage, SearchHit
from memcore.client.context import ContextBlock
from memcore.client.errors import RemoteError, Unavailable, error_for
from memcore.core.errors import UnknownNamespaceWarning
from memcore.core.models import AuditEvent, Episode, Memory, as_instant

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request and how to turn its JSON answer into the Client's return type."""

    method: str
    path: str
    parse: Callable[[Any], T]
    body: Any = None
    params: Mapping[str, Any] | None = None
    timeout: float | None = None
    missing: Any = field(default=None)
    """Return this on 404 instead of raising, when ``none_on_404``."""
    none_on_404: bool = False


def _seg(value: str) -> str:
    """A path segment, percent-encoded entirely (the server rejects what is not an id)."""
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return quote(value, safe="")


def _ns(namespace: str, *rest: str) -> str:
    return "/v1/namespaces/" + _seg(namespace) + "".join("/" + _seg(r) for r in rest)


def _message(message: Mapping[str, Any] | Episode) -> dict[str, Any]:
    if isinstance(message, Episode):
        out = {"role": message.role.value, "content": message.text, "id": message.id,
               "timestamp": message.timestamp, "metadata": message.metadata or None}
        if message.speaker:
            out["speaker"] = message.speaker
        return {k: v for k, v in out.items() if v is not None}
    if not isinstance(message, Mapping):
        raise ValueError(f"messages: expected mappings, got {type(message).__name__}")
    return dict(message)


def _memories(data: Any) -> list[Memory]:
    return [Memory.model_validate(m) for m in data["memories"]]


def _warn(data: Any) -> None:
    """The server's ``warning`` (an empty answer of a namespace without data) as the
    :class:`UnknownNamespaceWarning` ``Client`` issues."""
    if data.get("warning"):
        warnings.warn(str(data["warning"]), UnknownNamespaceWarning, stacklevel=5)


def _hits(data: Any) -> list[SearchHit]:
    _warn(data)
    return [SearchHit(Memory.model_validate(r["memory"]), float(r["similarity"]),
                      float(r["score"]), tuple(_memories({"memories": r.get("earlier", [])})))
            for r in data["results"]]


def _profile(data: Any) -> list[Memory]:
    _warn(data)
    return _memories(data)


class Calls:
    """The request of every client method (shared by the sync and async clients)."""

    def __init__(self) -> None:
        self.task_namespaces: dict[str, str] = {}

    def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
            timestamp: datetime | None = None, metadata: Mapping[str, Any] | None = None,
            user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, infer: bool = True,
            expires_at: datetime | str | None = None,
            ttl_seconds: float | None = None) -> Call[list[str]]:
        body: dict[str, Any] = {"messages": [_message(m) for m in messages], "infer": infer}
        if expires_at is not None:
            body["expires_at"] = as_instant(expires_at, "expires_at").isoformat()
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        for name, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
            if value is not None:
                body[name] = value
        if timestamp is not None:
            body["timestamp"] = timestamp
        if metadata is not None:
            body["metadata"] = dict(metadata)

        def parse(data: Any) -> list[str]:
            ids = [str(t) for t in data["task_ids"]]
            self.task_namespaces.update(dict.fromkeys(ids, namespace))
            return ids

        return Call("POST", _ns(namespace, "messages"), parse, body)

    def wait(self, task_ids: Sequence[str], timeout: float) -> list[Call[list[Any]]]:
        groups: dict[str, list[str]] = {}
        for tid in task_ids:
            ns = self.task_namespaces.get(tid)
            if ns is None:
                raise ValueError(f"task_ids: {tid!r} was not enqueued by this client")
            groups.setdefault(ns, []).append(tid)
        def parse(data: Any) -> list[Any]:
            if data.get("pending"):  # as Client.wait does when the time runs out
                raise TimeoutError(f"tasks {data['pending']} did not finish within {timeout} s")
            return list(data["results"])

        return [Call("POST", _ns(ns, "tasks", "wait"), parse,
                     {"task_ids": ids, "timeout": timeout}, timeout=timeout + 30)
                for ns, ids in groups.items()]

    def consolidate(self, namespace: str, *, wait: bool, timeout: float,
                    full: bool) -> Call[dict[str, Any] | str]:
        def parse(data: Any) -> dict[str, Any] | str:
            if "report" in data:
                return dict(data["report"])
            self.task_namespaces[str(data["task_id"])] = namespace
            if wait:  # as Client.consolidate does when the time runs out
                raise TimeoutError(f"pass {data['task_id']} of {namespace} did not finish "
                                   f"within the server's wait limit ({timeout} s asked)")
            return str(data["task_id"])

        return Call("POST", _ns(namespace, "consolidate"), parse,
                    {"wait": wait, "timeout": timeout, "full": full},
                    timeout=timeout + 30 if wait else None)

    def search(self, namespace: str, query: str, k: int, *, max_chars: int,
               include_inactive: bool, filters: Mapping[str, Any] | None,
               as_of: datetime | str | None = None, include_history: bool = False,
               time_hint: bool = False) -> Call[list[SearchHit]]:
        body: dict[str, Any] = {"query": query, "k": k, "max_chars": max_chars,
                                "include_inactive": include_inactive}
        if filters is not None:
            body["filters"] = dict(filters)
        if as_of is not None:
            body["as_of"] = _instant(as_of)
        if include_history:
            body["include_history"] = True
        if time_hint:
            body["time_hint"] = True
        return Call("POST", _ns(namespace, "search"), _hits, body)

    def profile(self, namespace: str, as_of: datetime | str | None = None
                ) -> Call[list[Memory]]:
        return Call("GET", _ns(namespace, "profile"), _profile, params=_as_of(as_of))

    def context(self, namespace: str, query: str, max_tokens: int, *,
                now: datetime | str | None, filters: Mapping[str, Any] | None,
                time_hint: bool) -> Call[ContextBlock]:
        body = {"query": query, "max_tokens": max_tokens, "now": now, "time_hint": time_hint,
                "filters": None if filters is None else dict(filters)}
        return Call("POST", _ns(namespace, "context"), ContextBlock.from_dict,
                    {k: v for k, v in body.items() if v is not None})

    def get(self, namespace: str, memory_id: str, as_of: datetime | str | None = None
            ) -> Call[Memory | None]:
        return Call("GET", _ns(namespace, "memories", memory_id), Memory.model_validate,
                    none_on_404=True, params=_as_of(as_of))

    def earlier(self, namespace: str, memory_id: str) -> Call[list[Memory]]:
        return Call("GET", _ns(namespace, "memories", memory_id, "earlier"), _memories)

    def history(self, namespace: str, memory_id: str, as_of: datetime | str | None = None
                ) -> Call[list[AuditEvent]]:
        return Call("GET", _ns(namespace, "memories", memory_id, "history"),
                    lambda d: [AuditEvent.model_validate(e) for e in d["events"]],
                    params=_as_of(as_of))

    def stats(self, namespace: str) -> Call[dict[str, Any]]:
        return Call("GET", _ns(namespace, "stats"), dict)

    def manage(self, action: str, namespace: str, memory_id: str) -> Call[Memory]:
        return Call("POST", _ns(namespace, "memories", memory_id, action),
                    Memory.model_validate)

    def update(self, namespace: str, memory_id: str, *, text: str | None,
               metadata: Mapping[str, Any] | None, expires_at: datetime | str | None = None,
               ttl_seconds: float | None = None) -> Call[Memory]:
        body: dict[str, Any] = {}
        if expires_at is not None:
            body["expires_at"] = as_instant(expires_at, "expires_at").isoformat()
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        if text is not None:
            body["text"] = text
        if metadata is not None:
            body["metadata"] = dict(metadata)
        return Call("PATCH", _ns(namespace, "memories", memory_id), Memory.model_validate, body)

    def delete(self, namespace: str, memory_id: str) -> Call[Memory]:
        return Call("DELETE", _ns(namespace, "memories", memory_id), Memory.model_validate)

    def list(self, namespace: str, *, status: str | None, kind: str | None,
             filters: Mapping[str, Any] | None, include_inactive: bool, limit: int,
             cursor: str | None, as_of: datetime | str | None = None) -> Call[MemoryPage]:
        import json

        params = {"status": None if status is None else str(status),
                  "kind": None if kind is None else str(kind),
                  "include_inactive": "true" if include_inactive else None,
                  "limit": limit, "cursor": cursor,
                  "filters": None if filters is None else json.dumps(dict(filters)),
                  **_as_of(as_of)}
        return Call("GET", _ns(namespace, "memories"),
                    lambda d: MemoryPage(_memories(d), d["next_cursor"]), params=params)

    def erase(self, namespace: str, *, memory_id: str | None, episode_id: str | None,
              everything: bool, keep_sources: bool) -> Call[int]:
        chosen = [x for x in (memory_id, episode_id, everything or None) if x]
        if len(chosen) != 1:
            raise ValueError("erase: give exactly one of memory_id, episode_id, everything")
        if everything:
            return Call("DELETE", _ns(namespace), lambda d: int(d["erased"]))
        body: dict[str, Any] = ({"memory_id": memory_id, "keep_sources": keep_sources}
                                if memory_id else {"episode_id": episode_id})
        return Call("POST", _ns(namespace, "erase"), lambda d: int(d["erased"]), body)

    def versions(self, namespace: str) -> Call[dict[str, Any]]:
        return Call("GET", _ns(namespace, "versions"), dict)

    def rollback(self, namespace: str, version: int) -> Call[dict[str, Any]]:
        return Call("POST", _ns(namespace, "rollback"), dict, {"version": version})


def _instant(value: datetime | str) -> str:
    """``value`` as the ISO 8601 string the API reads (a bad one: ValueError naming as_of)."""
    return as_instant(value, "as_of").isoformat()


def _as_of(value: datetime | str | None) -> dict[str, str]:
    """The ``as_of`` query parameter (none without a value)."""
    return {} if value is None else {"as_of": _instant(value)}


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _answer(call: Call[T], response: httpx.Response) -> T:
    if call.none_on_404 and response.status_code == 404:
        return call.missing
    if response.status_code >= 400:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        raise error_for(response.status_code, body, response.headers.get("Retry-After"))
    return call.parse(response.json())


def _request_args(call: Call[Any]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if call.body is not None:
        args["json"] = to_jsonable_python(call.body)
    if call.params:
        args["params"] = {k: v for k, v in call.params.items() if v is not None}
    if call.timeout is not None:
        args["timeout"] = call.timeout
    return args


class RemoteClient:
    """:class:`memcore.Client`'s methods over HTTP: ``RemoteClient(base_url, api_key)``."""

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float = DEFAULT_TIMEOUT, http: httpx.Client | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._calls = Calls()
        self._http = http or httpx.Client(base_url=self.base_url, headers=_headers(api_key),
                                          timeout=timeout)

    def _run(self, call: Call[T]) -> T:
        try:
            response = self._http.request(call.method, call.path, **_request_args(call))
        except httpx.TransportError as exc:
            raise Unavailable(f"cannot reach {self.base_url}: {exc}") from exc
        return _answer(call, response)

    # -- write path ---------------------------------------------------------------------
    def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
            timestamp: datetime | None = None, metadata: Mapping[str, Any] | None = None,
            user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, infer: bool = True,
            expires_at: datetime | str | None = None,
            ttl_seconds: float | None = None) -> list[str]:
        """Enqueue turns for ingestion; returns the task ids (see :meth:`wait`);
        ``expires_at``/``ttl_seconds``: the memories' expiry."""
        return self._run(self._calls.add(namespace, messages, timestamp=timestamp,
                                         metadata=metadata, user_id=user_id,
                                         agent_id=agent_id, run_id=run_id, infer=infer,
                                         expires_at=expires_at, ttl_seconds=ttl_seconds))

    def wait(self, task_ids: Sequence[str], timeout: float = 300.0) -> list[Any]:
        """Block until tasks enqueued by this client finish; their results, in order."""
        results: dict[str, Any] = {}
        for call in self._calls.wait(task_ids, min(timeout, 600.0)):
            ids: list[str] = call.body["task_ids"]
            done: list[Any] = self._run(call)
            results.update(zip(ids, done, strict=True))
        return [results[t] for t in task_ids]

    def consolidate(self, namespace: str, *, wait: bool = True, timeout: float = 600.0,
                    full: bool = False) -> dict[str, Any] | str:
        """Run a consolidation pass; the report when ``wait``, else the task id."""
        return self._run(self._calls.consolidate(namespace, wait=wait, timeout=timeout,
                                                 full=full))

    # -- reads ------------------------------------------------------------------------------
    def search(self, namespace: str, query: str, k: int = 10, *, max_chars: int = 4000,
               include_inactive: bool = False,
               filters: Mapping[str, Any] | None = None, as_of: datetime | str | None = None,
               include_history: bool = False, time_hint: bool = False) -> list[SearchHit]:
        """Memories ranked by hybrid search (BM25 + vector) plus a little retention
        (``as_of``: among those valid then; ``include_history``: with earlier values)."""
        return self._run(self._calls.search(namespace, query, k, max_chars=max_chars,
                                            include_inactive=include_inactive,
                                            filters=filters, as_of=as_of,
                                            include_history=include_history,
                                            time_hint=time_hint))

    def profile(self, namespace: str, *, as_of: datetime | str | None = None) -> list[Memory]:
        """Active facts ranked by confidence (``as_of``: as they stood then)."""
        return self._run(self._calls.profile(namespace, as_of))

    def context(self, namespace: str, query: str, max_tokens: int = 1000, *,
                now: datetime | str | None = None,
                filters: Mapping[str, Any] | None = None,
                time_hint: bool = True) -> ContextBlock:
        """A prompt-ready block for ``query`` within ``max_tokens`` (see
        :meth:`memcore.Client.context`)."""
        return self._run(self._calls.context(namespace, query, max_tokens, now=now,
                                             filters=filters, time_hint=time_hint))

    def get(self, namespace: str, memory_id: str, *,
            as_of: datetime | str | None = None) -> Memory | None:
        """One memory by id (any status), or None (``as_of``: its fact's value then)."""
        return self._run(self._calls.get(namespace, memory_id, as_of))

    def earlier(self, namespace: str, memory_id: str) -> list[Memory]:
        """The values the fact replaced, oldest first."""
        return self._run(self._calls.earlier(namespace, memory_id))

    def history(self, namespace: str, memory_id: str, *,
                as_of: datetime | str | None = None) -> list[AuditEvent]:
        """Every audited change of a memory (``as_of``: made by then)."""
        return self._run(self._calls.history(namespace, memory_id, as_of))

    def stats(self, namespace: str) -> dict[str, Any]:
        """Counts by status, counters and the snapshot version."""
        return self._run(self._calls.stats(namespace))

    def versions(self, namespace: str) -> dict[str, Any]:
        """``{"current": v, "versions": [...]}``."""
        return self._run(self._calls.versions(namespace))

    # -- management -------------------------------------------------------------------------
    def pin(self, namespace: str, memory_id: str) -> Memory:
        """Pin a memory: it never decays and is never dropped."""
        return self._run(self._calls.manage("pin", namespace, memory_id))

    def unpin(self, namespace: str, memory_id: str) -> Memory:
        """Undo :meth:`pin`."""
        return self._run(self._calls.manage("unpin", namespace, memory_id))

    def restore(self, namespace: str, memory_id: str) -> Memory:
        """Bring a tombstoned memory back."""
        return self._run(self._calls.manage("restore", namespace, memory_id))

    def update(self, namespace: str, memory_id: str, *, text: str | None = None,
               metadata: Mapping[str, Any] | None = None,
               expires_at: datetime | str | None = None,
               ttl_seconds: float | None = None) -> Memory:
        """Edit a memory's text (re-embedded), metadata or expiry, as the user."""
        return self._run(self._calls.update(namespace, memory_id, text=text, metadata=metadata,
                                            expires_at=expires_at, ttl_seconds=ttl_seconds))

    def delete(self, namespace: str, memory_id: str) -> Memory:
        """Tombstone a memory (restorable)."""
        return self._run(self._calls.delete(namespace, memory_id))

    def erase(self, namespace: str, *, memory_id: str | None = None,
              episode_id: str | None = None, everything: bool = False,
              keep_sources: bool = False) -> int:
        """Erase for good: a memory (and its source turns unless ``keep_sources``), an
        episode's traces, or the namespace (admin)."""
        return self._run(self._calls.erase(namespace, memory_id=memory_id,
                                           episode_id=episode_id, everything=everything,
                                           keep_sources=keep_sources))

    def list(self, namespace: str, *, status: str | None = None, kind: str | None = None,
             filters: Mapping[str, Any] | None = None, include_inactive: bool = False,
             limit: int = 100, cursor: str | None = None,
             as_of: datetime | str | None = None) -> MemoryPage:
        """One page of memories, oldest first; pass ``next_cursor`` back for the next
        (``as_of``: those valid then)."""
        return self._run(self._calls.list(namespace, status=status, kind=kind, filters=filters,
                                          include_inactive=include_inactive, limit=limit,
                                          cursor=cursor, as_of=as_of))

    def rollback(self, namespace: str, version: int) -> dict[str, Any]:
        """Point the namespace back at a committed version (admin)."""
        return self._run(self._calls.rollback(namespace, version))

    def close(self) -> None:
        """Release connections."""
        self._http.close()

    def __enter__(self) -> RemoteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncRemoteClient:
    """The same as :class:`RemoteClient`, with ``async`` methods (httpx.AsyncClient)."""

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float = DEFAULT_TIMEOUT, http: httpx.AsyncClient | None = None,
                 max_connections: int = 100) -> None:
        self.base_url = base_url.rstrip("/")
        self._calls = Calls()
        limits = httpx.Limits(max_connections=max_connections,
                              max_keepalive_connections=max_connections)
        self._http = http or httpx.AsyncClient(base_url=self.base_url,
                                               headers=_headers(api_key), timeout=timeout,
                                               limits=limits)

    async def _run(self, call: Call[T]) -> T:
        try:
            response = await self._http.request(call.method, call.path, **_request_args(call))
        except httpx.TransportError as exc:
            raise Unavailable(f"cannot reach {self.base_url}: {exc}") from exc
        return _answer(call, response)

    async def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
                  timestamp: datetime | None = None, metadata: Mapping[str, Any] | None = None,
                  user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None, infer: bool = True,
                  expires_at: datetime | str | None = None,
                  ttl_seconds: float | None = None) -> list[str]:
        """Enqueue turns for ingestion; returns the task ids (``expires_at``/
        ``ttl_seconds``: the memories' expiry)."""
        return await self._run(self._calls.add(namespace, messages, timestamp=timestamp,
                                               metadata=metadata, user_id=user_id,
                                               agent_id=agent_id, run_id=run_id, infer=infer,
                                               expires_at=expires_at,
                                               ttl_seconds=ttl_seconds))

    async def wait(self, task_ids: Sequence[str], timeout: float = 300.0) -> list[Any]:
        """Block until tasks enqueued by this client finish; their results, in order."""
        results: dict[str, Any] = {}
        for call in self._calls.wait(task_ids, min(timeout, 600.0)):
            ids: list[str] = call.body["task_ids"]
            done: list[Any] = await self._run(call)
            results.update(zip(ids, done, strict=True))
        return [results[t] for t in task_ids]

    async def consolidate(self, namespace: str, *, wait: bool = True, timeout: float = 600.0,
                          full: bool = False) -> dict[str, Any] | str:
        """Run a consolidation pass; the report when ``wait``, else the task id."""
        return await self._run(self._calls.consolidate(namespace, wait=wait, timeout=timeout,
                                                       full=full))

    async def search(self, namespace: str, query: str, k: int = 10, *, max_chars: int = 4000,
                     include_inactive: bool = False,
                     filters: Mapping[str, Any] | None = None,
                     as_of: datetime | str | None = None,
                     include_history: bool = False,
                     time_hint: bool = False) -> list[SearchHit]:
        """Memories ranked by hybrid search (BM25 + vector) plus a little retention
        (``as_of``: among those valid then; ``include_history``: with earlier values)."""
        return await self._run(self._calls.search(namespace, query, k, max_chars=max_chars,
                                                  include_inactive=include_inactive,
                                                  filters=filters, as_of=as_of,
                                                  include_history=include_history,
                                                  time_hint=time_hint))

    async def profile(self, namespace: str, *,
                      as_of: datetime | str | None = None) -> list[Memory]:
        """Active facts ranked by confidence (``as_of``: as they stood then)."""
        return await self._run(self._calls.profile(namespace, as_of))

    async def context(self, namespace: str, query: str, max_tokens: int = 1000, *,
                      now: datetime | str | None = None,
                      filters: Mapping[str, Any] | None = None,
                      time_hint: bool = True) -> ContextBlock:
        """A prompt-ready block for ``query`` within ``max_tokens``."""
        return await self._run(self._calls.context(namespace, query, max_tokens, now=now,
                                                   filters=filters, time_hint=time_hint))

    async def get(self, namespace: str, memory_id: str, *,
                  as_of: datetime | str | None = None) -> Memory | None:
        """One memory by id (any status), or None (``as_of``: its fact's value then)."""
        return await self._run(self._calls.get(namespace, memory_id, as_of))

    async def earlier(self, namespace: str, memory_id: str) -> list[Memory]:
        """The values the fact replaced, oldest first."""
        return await self._run(self._calls.earlier(namespace, memory_id))

    async def history(self, namespace: str, memory_id: str, *,
                      as_of: datetime | str | None = None) -> list[AuditEvent]:
        """Every audited change of a memory (``as_of``: made by then)."""
        return await self._run(self._calls.history(namespace, memory_id, as_of))

    async def stats(self, namespace: str) -> dict[str, Any]:
        """Counts by status, counters and the snapshot version."""
        return await self._run(self._calls.stats(namespace))

    async def versions(self, namespace: str) -> dict[str, Any]:
        """``{"current": v, "versions": [...]}``."""
        return await self._run(self._calls.versions(namespace))

    async def pin(self, namespace: str, memory_id: str) -> Memory:
        """Pin a memory."""
        return await self._run(self._calls.manage("pin", namespace, memory_id))

    async def unpin(self, namespace: str, memory_id: str) -> Memory:
        """Undo :meth:`pin`."""
        return await self._run(self._calls.manage("unpin", namespace, memory_id))

    async def restore(self, namespace: str, memory_id: str) -> Memory:
        """Bring a tombstoned memory back."""
        return await self._run(self._calls.manage("restore", namespace, memory_id))

    async def update(self, namespace: str, memory_id: str, *, text: str | None = None,
                     metadata: Mapping[str, Any] | None = None,
                     expires_at: datetime | str | None = None,
                     ttl_seconds: float | None = None) -> Memory:
        """Edit a memory's text, metadata or expiry, as the user."""
        return await self._run(self._calls.update(namespace, memory_id, text=text,
                                                  metadata=metadata, expires_at=expires_at,
                                                  ttl_seconds=ttl_seconds))

    async def delete(self, namespace: str, memory_id: str) -> Memory:
        """Tombstone a memory (restorable)."""
        return await self._run(self._calls.delete(namespace, memory_id))

    async def erase(self, namespace: str, *, memory_id: str | None = None,
                    episode_id: str | None = None, everything: bool = False,
                    keep_sources: bool = False) -> int:
        """Erase for good: a memory (and its source turns unless ``keep_sources``), an
        episode's traces, or the namespace (admin)."""
        return await self._run(self._calls.erase(namespace, memory_id=memory_id,
                                                 episode_id=episode_id, everything=everything,
                                                 keep_sources=keep_sources))

    async def list(self, namespace: str, *, status: str | None = None,
                   kind: str | None = None, filters: Mapping[str, Any] | None = None,
                   include_inactive: bool = False, limit: int = 100,
                   cursor: str | None = None,
                   as_of: datetime | str | None = None) -> MemoryPage:
        """One page of memories, oldest first; pass ``next_cursor`` back for the next
        (``as_of``: those valid then)."""
        return await self._run(self._calls.list(namespace, status=status, kind=kind,
                                                filters=filters,
                                                include_inactive=include_inactive,
                                                limit=limit, cursor=cursor, as_of=as_of))

    async def rollback(self, namespace: str, version: int) -> dict[str, Any]:
        """Point the namespace back at a committed version (admin)."""
        return await self._run(self._calls.rollback(namespace, version))

    async def aclose(self) -> None:
        """Release connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRemoteClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["AsyncRemoteClient", "Call", "Calls", "RemoteClient", "RemoteError"]
