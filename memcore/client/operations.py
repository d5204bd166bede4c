"""The client operations, declared once: name, parameters (types, defaults), validation
and result type of every operation ``memcore.Client``, ``RemoteClient`` and
``AsyncRemoteClient`` share.

Each operation is a method of :class:`Calls` whose signature is the operation's public
signature and whose return annotation is ``Request[<result type>]``: it validates its
arguments and returns the HTTP request(s) and how to read the answer, without doing any
I/O (sans-IO). The remote clients' methods are generated from these methods
(:mod:`memcore.client.remote`); ``memcore.Client`` implements each with the same
parameters (plus local-only options, keyword-only with defaults), which
``tests/client/test_remote_client_parity.py`` checks against :data:`OPERATIONS`.
"""

from __future__ import annotations

import inspect
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from memcore.client.context import ContextBlock
from memcore.client.search import SearchHit
from memcore.core.errors import UnknownNamespaceWarning
from memcore.core.models import AuditEvent, Episode, Kind, Memory, Status, as_instant

T = TypeVar("T")


@dataclass(frozen=True)
class MemoryPage:
    """One page of ``list``; ``next_cursor`` is None on the last page."""

    memories: list[Memory]
    next_cursor: str | None


class Request(Generic[T]):
    """What an operation sends (:meth:`parts`) and how the answers become its result."""

    def parts(self) -> tuple[Call[Any], ...]:
        """The HTTP calls to make, in order."""
        raise NotImplementedError

    def finish(self, answers: list[Any]) -> T:
        """The result, from the parsed answers of :meth:`parts` (same order)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Call(Request[T]):
    """One HTTP request and how to turn its JSON answer into the operation's result."""

    method: str
    path: str
    parse: Callable[[Any], T]
    body: Any = None
    params: Mapping[str, Any] | None = None
    timeout: float | None = None
    missing: Any = field(default=None)
    """Return this on 404 instead of raising, when ``none_on_404``."""
    none_on_404: bool = False

    def parts(self) -> tuple[Call[Any], ...]:
        return (self,)

    def finish(self, answers: list[Any]) -> T:
        result: T = answers[0]
        return result


@dataclass(frozen=True)
class Plan(Request[T]):
    """Several calls whose answers make one result (``wait`` asks once per namespace)."""

    calls: tuple[Call[Any], ...]
    combine: Callable[[list[Any]], T]

    def parts(self) -> tuple[Call[Any], ...]:
        return self.calls

    def finish(self, answers: list[Any]) -> T:
        return self.combine(answers)


def erase_target(memory_id: str | None, episode_id: str | None, everything: bool) -> None:
    """ValueError unless exactly one of ``erase``'s targets is given."""
    chosen = [x for x in (memory_id, episode_id, everything or None) if x]
    if len(chosen) != 1:
        raise ValueError("erase: give exactly one of memory_id, episode_id, everything")


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
        # Points at the caller of the client method (above: the parser, _answer, _send,
        # _run and the method itself).
        warnings.warn(str(data["warning"]), UnknownNamespaceWarning, stacklevel=7)


def _hits(data: Any) -> list[SearchHit]:
    _warn(data)
    return [SearchHit(Memory.model_validate(r["memory"]), float(r["similarity"]),
                      float(r["score"]), tuple(_memories({"memories": r.get("earlier", [])})))
            for r in data["results"]]


def _profile(data: Any) -> list[Memory]:
    _warn(data)
    return _memories(data)


def _erased(data: Any) -> int:
    return int(data["erased"])


def _instant(value: datetime | str) -> str:
    """``value`` as the ISO 8601 string the API reads (a bad one: ValueError naming as_of)."""
    return as_instant(value, "as_of").isoformat()


def _as_of(value: datetime | str | None) -> dict[str, str]:
    """The ``as_of`` query parameter (none without a value)."""
    return {} if value is None else {"as_of": _instant(value)}


def _expiry(body: dict[str, Any], expires_at: datetime | str | None,
            ttl_seconds: float | None) -> None:
    if expires_at is not None:
        body["expires_at"] = as_instant(expires_at, "expires_at").isoformat()
    if ttl_seconds is not None:
        body["ttl_seconds"] = ttl_seconds


WAIT_LIMIT_SECONDS = 600.0
"""Longest one HTTP ``wait`` asks the server to wait (the server's own limit)."""


class Calls:
    """Every client operation, as the request(s) it makes (one instance per client: it
    remembers which namespace each task it enqueued belongs to, for ``wait``)."""

    def __init__(self) -> None:
        self.task_namespaces: dict[str, str] = {}

    # -- write path ---------------------------------------------------------------------
    def add(self, namespace: str, messages: Sequence[Mapping[str, Any] | Episode], *,
            timestamp: datetime | str | None = None,
            metadata: Mapping[str, Any] | None = None, user_id: str | None = None,
            agent_id: str | None = None, run_id: str | None = None,
            infer: bool = True, expires_at: datetime | str | None = None,
            ttl_seconds: float | None = None) -> Request[list[str]]:
        """Enqueue turns for ingestion; returns the task ids (see :meth:`wait`);
        ``expires_at``/``ttl_seconds``: the memories' expiry (see
        :meth:`memcore.Client.add`)."""
        body: dict[str, Any] = {"messages": [_message(m) for m in messages], "infer": infer}
        _expiry(body, expires_at, ttl_seconds)
        for name, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id),
                            ("timestamp", timestamp)):
            if value is not None:
                body[name] = value
        if metadata is not None:
            body["metadata"] = dict(metadata)

        def parse(data: Any) -> list[str]:
            ids = [str(t) for t in data["task_ids"]]
            self.task_namespaces.update(dict.fromkeys(ids, namespace))
            return ids

        return Call("POST", _ns(namespace, "messages"), parse, body)

    def wait(self, task_ids: Sequence[str], timeout: float = 300.0) -> Request[list[Any]]:
        """Block until tasks enqueued by this client finish; their results, in order."""
        timeout = min(timeout, WAIT_LIMIT_SECONDS)
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

        def combine(answers: list[Any]) -> list[Any]:
            results: dict[str, Any] = {}
            for ids, done in zip(groups.values(), answers, strict=True):
                results.update(zip(ids, done, strict=True))
            return [results[t] for t in task_ids]

        return Plan(tuple(Call("POST", _ns(ns, "tasks", "wait"), parse,
                               {"task_ids": ids, "timeout": timeout}, timeout=timeout + 30)
                          for ns, ids in groups.items()), combine)

    def consolidate(self, namespace: str, *, wait: bool = True, timeout: float = 600.0,
                    full: bool = False) -> Request[dict[str, Any] | str]:
        """Run a consolidation pass; the report when ``wait``, else the task id."""
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

    # -- reads ------------------------------------------------------------------------------
    def search(self, namespace: str, query: str, k: int = 10, *, max_chars: int = 4000,
               include_inactive: bool = False, filters: Mapping[str, Any] | None = None,
               as_of: datetime | str | None = None, include_history: bool = False,
               time_hint: bool = False) -> Request[list[SearchHit]]:
        """Memories ranked by hybrid search (BM25 + vector) plus a little retention
        (``as_of``: among those valid then; ``include_history``: with earlier values)."""
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

    def profile(self, namespace: str, *,
                as_of: datetime | str | None = None) -> Request[list[Memory]]:
        """Active facts ranked by confidence (``as_of``: as they stood then)."""
        return Call("GET", _ns(namespace, "profile"), _profile, params=_as_of(as_of))

    def context(self, namespace: str, query: str, max_tokens: int = 1000, *,
                now: datetime | str | None = None, filters: Mapping[str, Any] | None = None,
                time_hint: bool = True) -> Request[ContextBlock]:
        """A prompt-ready block for ``query`` within ``max_tokens`` (see
        :meth:`memcore.Client.context`)."""
        body = {"query": query, "max_tokens": max_tokens, "now": now, "time_hint": time_hint,
                "filters": None if filters is None else dict(filters)}
        return Call("POST", _ns(namespace, "context"), ContextBlock.from_dict,
                    {k: v for k, v in body.items() if v is not None})

    def get(self, namespace: str, memory_id: str, *,
            as_of: datetime | str | None = None) -> Request[Memory | None]:
        """One memory by id (any status), or None (``as_of``: its fact's value then)."""
        return Call("GET", _ns(namespace, "memories", memory_id), Memory.model_validate,
                    none_on_404=True, params=_as_of(as_of))

    def earlier(self, namespace: str, memory_id: str) -> Request[list[Memory]]:
        """The values the fact replaced, oldest first."""
        return Call("GET", _ns(namespace, "memories", memory_id, "earlier"), _memories)

    def history(self, namespace: str, memory_id: str, *,
                as_of: datetime | str | None = None) -> Request[list[AuditEvent]]:
        """Every audited change of a memory (``as_of``: made by then)."""
        return Call("GET", _ns(namespace, "memories", memory_id, "history"),
                    lambda d: [AuditEvent.model_validate(e) for e in d["events"]],
                    params=_as_of(as_of))

    def stats(self, namespace: str) -> Request[dict[str, Any]]:
        """Counts by status, counters, usage, backlog and the snapshot version."""
        return Call("GET", _ns(namespace, "stats"), dict)

    def versions(self, namespace: str) -> Request[dict[str, Any]]:
        """``{"current": v, "versions": [...]}``."""
        return Call("GET", _ns(namespace, "versions"), dict)

    # -- management -------------------------------------------------------------------------
    def pin(self, namespace: str, memory_id: str) -> Request[Memory]:
        """Pin a memory: it never decays and is never dropped."""
        return Call("POST", _ns(namespace, "memories", memory_id, "pin"), Memory.model_validate)

    def unpin(self, namespace: str, memory_id: str) -> Request[Memory]:
        """Undo :meth:`pin`."""
        return Call("POST", _ns(namespace, "memories", memory_id, "unpin"),
                    Memory.model_validate)

    def restore(self, namespace: str, memory_id: str) -> Request[Memory]:
        """Bring a tombstoned memory back."""
        return Call("POST", _ns(namespace, "memories", memory_id, "restore"),
                    Memory.model_validate)

    def update(self, namespace: str, memory_id: str, *, text: str | None = None,
               metadata: Mapping[str, Any] | None = None,
               expires_at: datetime | str | None = None,
               ttl_seconds: float | None = None) -> Request[Memory]:
        """Edit a memory's text (re-embedded), metadata or expiry, as the user."""
        body: dict[str, Any] = {}
        _expiry(body, expires_at, ttl_seconds)
        if text is not None:
            body["text"] = text
        if metadata is not None:
            body["metadata"] = dict(metadata)
        return Call("PATCH", _ns(namespace, "memories", memory_id), Memory.model_validate, body)

    def delete(self, namespace: str, memory_id: str) -> Request[Memory]:
        """Tombstone a memory (restorable)."""
        return Call("DELETE", _ns(namespace, "memories", memory_id), Memory.model_validate)

    def erase(self, namespace: str, *, memory_id: str | None = None,
              episode_id: str | None = None, everything: bool = False,
              keep_sources: bool = False) -> Request[int]:
        """Erase for good: a memory (and its source turns unless ``keep_sources``), an
        episode's traces, or the namespace (admin); how many were removed."""
        erase_target(memory_id, episode_id, everything)
        if everything:
            return Call("DELETE", _ns(namespace), _erased)
        body: dict[str, Any] = ({"memory_id": memory_id, "keep_sources": keep_sources}
                                if memory_id else {"episode_id": episode_id})
        return Call("POST", _ns(namespace, "erase"), _erased, body)

    def rollback(self, namespace: str, version: int) -> Request[dict[str, Any]]:
        """Point the namespace back at a committed version (admin)."""
        return Call("POST", _ns(namespace, "rollback"), dict, {"version": version})

    # Last in the class: a method named ``list`` shadows the builtin in later annotations.
    def list(self, namespace: str, *, status: Status | str | None = None,
             kind: Kind | str | None = None, filters: Mapping[str, Any] | None = None,
             include_inactive: bool = False, limit: int = 100, cursor: str | None = None,
             as_of: datetime | str | None = None) -> Request[MemoryPage]:
        """One page of memories, oldest first; pass ``next_cursor`` back for the next
        (``as_of``: those valid then)."""
        params = {"status": None if status is None else str(status),
                  "kind": None if kind is None else str(kind),
                  "include_inactive": "true" if include_inactive else None,
                  "limit": limit, "cursor": cursor,
                  "filters": None if filters is None else json.dumps(dict(filters)),
                  **_as_of(as_of)}
        return Call("GET", _ns(namespace, "memories"),
                    lambda d: MemoryPage(_memories(d), d["next_cursor"]), params=params)


OPERATIONS: tuple[str, ...] = tuple(
    name for name, fn in inspect.getmembers(Calls, inspect.isfunction)
    if not name.startswith("_"))
"""The names of the client operations (what every client offers), from :class:`Calls`."""


def signature(name: str) -> inspect.Signature:
    """Operation ``name``'s public signature: its :class:`Calls` method's, with the result
    type (``T`` of ``Request[T]``) as return annotation (annotations are strings)."""
    sig = inspect.signature(getattr(Calls, name))
    returns = str(sig.return_annotation)
    if not (returns.startswith("Request[") and returns.endswith("]")):
        raise TypeError(f"Calls.{name} must be annotated '-> Request[...]', not {returns}")
    return sig.replace(return_annotation=returns[len("Request["):-1])
