"""Authentication and tenancy: one ASGI middleware in front of every ``/v1`` route.

Order of checks, so that a status code never depends on data the caller may not see:

0. more than one ``Authorization`` header -> 400 naming it (which one a proxy or the
   server would read differs: none is);
1. ``Authorization: Bearer <key>`` missing or unknown -> 401;
2. path tricks (encoded slashes, ``.``/``..`` segments) -> 422 naming ``path``;
3. ``{ns}`` not a legal namespace (a glob, ``..``) -> 422 naming ``ns``;
4. ``{ns}`` outside the key's scopes, or the route needs a higher role -> 403;
5. body larger than the limit -> 413;
6. a query parameter the route does not take -> 400 naming it (memcore.api.query_params);
7. the key over its requests per second -> 429 ``rate_limited`` with ``Retry-After``
   (memcore.api.rate_limits; only requests let through so far are counted).

All of it happens before the body is read or the namespace is touched, so a 403 is
the same whether or not the namespace exists. Routes declare their role with
:func:`requires`.

Verified keys are cached per process (:class:`KeyCache`). A cached key is trusted only
after the key revision in Redis is found unchanged; a route marked with
:func:`confirms_key` does that read itself, in the worker thread it runs in anyway
(the search: no Redis read and no thread hop in the middleware; the revision is read
with the namespace state, :func:`key_guard`), every other route has the middleware read
it first. A denial is never decided on a cached key alone: the key
is verified afresh first, so a revoked key always gets its 401.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memcore.api.query_params import allowed as allowed_query
from memcore.api.query_params import unknown as unknown_query
from memcore.api.rate_limits import KeyLimits, retry_after
from memcore.client.errors import error_body
from memcore.client.search import ReadGuard
from memcore.core.models import validate_namespace
from memcore.store.api_keys import API_KEYS_REV, ApiKey, ApiKeyRepository, ApiRole, digest

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
ROLE_ATTR = "__memcore_role__"
CONFIRMS_ATTR = "__memcore_confirms_key__"
STREAMS_ATTR = "__memcore_streams_body__"
STREAMED_SCOPE_KEY = "memcore_streamed_body"
UNAUTHORIZED = "missing or unknown API key (send 'Authorization: Bearer <key>')"
_TRICKS = re.compile(r"%2f|%5c|%2e|\\", re.I)
_RANK = {role: role.rank for role in ApiRole}  # ``ApiRole.rank`` lists the enum per call
_ROUTES_SEEN = 4096


def requires(role: ApiRole) -> Callable[[F], F]:
    """Mark a route handler as needing ``role`` (checked by :class:`AuthMiddleware`)."""

    def mark(fn: F) -> F:
        setattr(fn, ROLE_ATTR, role)
        return fn

    return mark


def streams_body(fn: F) -> F:
    """Mark a route handler that reads its body as a stream, line by line, holding one
    line at a time: ``max_body_bytes`` then bounds each line (the handler checks),
    not the whole body."""
    setattr(fn, STREAMS_ATTR, True)
    return fn


def confirms_key(fn: F) -> F:
    """Mark a route handler that confirms a cached key itself (:func:`key_guard`,
    before it reads or writes anything): the middleware then lets a cached key through
    without a Redis read."""
    setattr(fn, CONFIRMS_ATTR, True)
    return fn


@dataclass(frozen=True)
class KeyCheck:
    """A key taken from the cache, still to be confirmed: the plain key and the key
    revision it was verified at."""

    plain: str
    revision: str


class KeyCache:
    """Keys verified by this process: SHA-256 of the plain key -> (record, the key
    revision read before the record, when). Any revocation, by any process, replaces
    the revision (:meth:`ApiKeyRepository.revoke`), so comparing it (one GET) is enough
    to trust a cached record; entries also expire after ``ttl`` seconds."""

    def __init__(self, keys: Callable[[], ApiKeyRepository], *, ttl: float = 60.0,
                 max_keys: int = 10_000) -> None:
        self._keys = keys
        self.ttl = ttl
        self.max_keys = max_keys
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[ApiKey, str, float]] = {}

    def cached(self, plain: str) -> tuple[ApiKey, KeyCheck] | None:
        """The cached record of ``plain`` and what confirms it (no I/O), or None."""
        entry = self._entries.get(digest(plain))
        if entry is None or time.monotonic() - entry[2] > self.ttl:
            return None
        return entry[0], KeyCheck(plain, entry[1])

    def verify(self, plain: str) -> ApiKey | None:
        """Verify ``plain`` against Redis (the revision first, then the record) and cache
        the outcome of a valid key; None if unknown or revoked."""
        repo = self._keys()
        revision = repo.revision()
        key = repo.verify(plain)
        hashed = digest(plain)
        with self._lock:
            if key is None:
                self._entries.pop(hashed, None)
                return None
            if len(self._entries) >= self.max_keys:
                self._entries.clear()  # a flood of distinct valid keys: start over
            self._entries[hashed] = (key, revision, time.monotonic())
        return key

    def confirm(self, check: KeyCheck) -> ApiKey | None:
        """The key of ``check`` if it is still valid: unchanged revision (one GET), else
        verified afresh."""
        return self.confirm_at(check, self._keys().revision())

    def confirm_at(self, check: KeyCheck, revision: str | None) -> ApiKey | None:
        """:meth:`confirm` with the key revision already read (None: missing or not read;
        then the key is verified afresh, which reads it)."""
        if revision is not None and revision == check.revision:
            found = self.cached(check.plain)
            if found is not None and found[1].revision == check.revision:
                return found[0]
        return self.verify(check.plain)


def _pending(scope: Scope) -> tuple[KeyCache, KeyCheck] | None:
    pending: tuple[KeyCache, KeyCheck] | None = scope.get("state", {}).get(
        "memcore_key_check")
    return pending


def _revoked() -> HTTPException:
    return HTTPException(401, UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})


def key_guard(scope: Scope) -> ReadGuard | None:
    """:class:`~memcore.client.search.ReadGuard` of a search on a cached key: the
    key revision is read in the search's first round trip (with the namespace state)
    instead of one of its own, and checked before any record is read. None: the
    request's key was verified against Redis already (nothing to confirm)."""
    pending = _pending(scope)
    if pending is None:
        return None
    cache, check = pending

    def confirm(raw: bytes | None) -> None:
        if cache.confirm_at(check, None if raw is None else raw.decode()) is None:
            raise _revoked()

    return ReadGuard(API_KEYS_REV, confirm)


@dataclass(frozen=True)
class Principal:
    """Who is calling: a key, or the anonymous developer of ``--insecure-dev``."""

    key_id: str
    role: ApiRole
    scopes: tuple[str, ...]

    @classmethod
    def of(cls, key: ApiKey) -> Principal:
        """The principal of a verified key."""
        return cls(key.id, key.role, key.scopes)

    def allows(self, namespace: str) -> bool:
        """True if ``namespace`` matches one of the scopes (globs with ``*`` and ``?``)."""
        return any(fnmatch.fnmatchcase(namespace, pattern) for pattern in self.scopes)


INSECURE_DEV = Principal("insecure-dev", ApiRole.ADMIN, ("*",))


def principal_of(scope: Scope) -> Principal:
    """Who sent the request of ``scope`` (set by :class:`AuthMiddleware` before any
    ``/v1`` route runs)."""
    principal: Principal = scope["state"]["principal"]
    return principal


def check_namespace(ns: str) -> str:
    """A namespace from a URL: the store's rule, and not made of dots only."""
    validate_namespace(ns)
    if not ns.strip("."):
        raise ValueError(f"invalid namespace {ns!r}: dots only")
    return ns


class ErrorResponse:
    """A JSON error answered straight from the middleware."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.body = json.dumps(error_body(code, message, field)).encode()
        self.headers = headers or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(self.body)).encode())]
        headers += [(k.lower().encode(), v.encode()) for k, v in self.headers.items()]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


class BodyTooLarge(HTTPException):
    """Raised inside the app when a streamed body passes the limit (an HTTPException, so
    FastAPI's body reader passes it on instead of calling it a parse error)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"body: larger than {limit} bytes")


def authorization_headers(scope: Scope) -> int:
    """How many ``Authorization`` headers the request has (the key check reads one)."""
    return sum(1 for name, _ in scope["headers"] if name.lower() == b"authorization")


class AuthMiddleware:
    """Authenticate, authorize and size-limit every ``/v1`` request."""

    def __init__(self, app: ASGIApp, *, routes: list[BaseRoute], keys: KeyCache,
                 insecure_dev: bool, max_body_bytes: int,
                 limits: KeyLimits | None = None) -> None:
        """``routes``: the ``/v1`` routes (their handlers carry the role they need);
        ``limits``: the per-key rate limits (None: none)."""
        self.app = app
        self.routes = routes
        self.keys = keys
        self.insecure_dev = insecure_dev
        self.max_body_bytes = max_body_bytes
        self.limits = limits if limits is not None and limits.requests_limited else None
        self._routes_seen: dict[tuple[str, str], tuple[Any, dict[str, Any]]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1"):
            await self.app(scope, receive, send)
            return
        denied = await self._check(scope)
        if denied is None:
            denied = self._check_query(scope)
        if denied is None and self.limits is not None:
            denied = await self._check_rate(scope)
        if denied is not None:
            await denied(scope, receive, send)
            return
        streamed = scope.get(STREAMED_SCOPE_KEY, False)
        await self.app(scope, receive if streamed else self._limited(receive), send)

    async def _check_rate(self, scope: Scope) -> ErrorResponse | None:
        """A 429 when the request's key is over its requests per second (None: counted)."""
        assert self.limits is not None
        refused = await run_in_threadpool(self.limits.take_request,
                                          principal_of(scope).key_id)
        if refused is None:
            return None
        return ErrorResponse(429, refused.code, refused.message,
                             headers={"Retry-After": retry_after(refused.retry_after)})

    def _check_query(self, scope: Scope) -> ErrorResponse | None:
        """A 400 naming the query parameters the route does not take (None: all known)."""
        route = self._route(scope)[0] if scope.get("query_string") else None
        stray = unknown_query(route, scope["query_string"]) if route is not None else []
        if not stray:
            return None
        takes = ", ".join(sorted(allowed_query(route))) or "none"
        return ErrorResponse(400, "invalid", f"query: unknown parameter(s) {', '.join(stray)} "
                             f"(this route takes: {takes})", f"query.{stray[0]}")

    async def _check(self, scope: Scope) -> ErrorResponse | None:
        sent = authorization_headers(scope)
        if sent > 1:  # which one would count is up to each proxy and server: refuse both
            return ErrorResponse(400, "invalid", f"Authorization: the header was sent {sent} "
                                 "times; send exactly one", "Authorization")
        route, params = self._route(scope)
        if route is not None:  # the metrics label, even for a 401
            scope["memcore_route"] = getattr(route, "path", None)
            scope["memcore_path_params"] = params
        endpoint = getattr(route, "endpoint", None)
        headers = dict(scope["headers"])
        token = self._token(headers)
        if token and not self.insecure_dev and getattr(endpoint, CONFIRMS_ATTR, False):
            hit = self.keys.cached(token)
            if hit is not None:
                denied = self._decide(scope, route, params, Principal.of(hit[0]), headers)
                if denied is None:  # the route confirms the key before it acts
                    scope["state"]["memcore_key_check"] = (self.keys, hit[1])
                    return None
                # A denial is decided on a freshly verified key (revoked: 401, not 403).
        principal = await self._authenticate(token)
        return self._decide(scope, route, params, principal, headers)

    def admit_cached(self, scope: Scope, headers: dict[bytes, bytes]) -> bool:
        """What :meth:`__call__` decides without I/O, for the search's shortcut
        (:class:`~memcore.api.fastpath.SearchShortcut`; ``headers``: the request's, as a
        dict): True if the request goes to a route that confirms its key, with a cached
        key that :meth:`_decide` lets through; ``scope`` is then marked as
        :meth:`_check` marks it. False: anything else (no I/O done, nothing decided;
        the whole middleware decides it). Called outside the middleware: a path the
        middleware would not check (not ``/v1``) is False too."""
        if self.insecure_dev or not scope["path"].startswith("/v1") \
                or authorization_headers(scope) > 1 or scope.get("query_string") \
                or self.limits is not None:  # counting a request costs a round trip
            return False
        route, params = self._route_cached(scope)
        if route is None or not getattr(route.endpoint, CONFIRMS_ATTR, False):
            return False
        token = self._token(headers)
        hit = self.keys.cached(token) if token else None
        if hit is None:
            return False
        scope["memcore_route"] = route.path
        scope["memcore_path_params"] = params
        if self._decide(scope, route, params, Principal.of(hit[0]), headers) is not None:
            return False
        scope["state"]["memcore_key_check"] = (self.keys, hit[1])
        return True

    def _decide(self, scope: Scope, route: Any, params: dict[str, Any],
                principal: Principal | None,
                headers: dict[bytes, bytes]) -> ErrorResponse | None:
        if principal is None:
            return ErrorResponse(401, "unauthorized", UNAUTHORIZED,
                                 headers={"WWW-Authenticate": "Bearer"})
        scope.setdefault("state", {})["principal"] = principal
        raw = scope.get("raw_path") or scope["path"].encode()
        raw_path = raw.decode("latin-1").split("?", 1)[0]
        if _TRICKS.search(raw_path) or any(s in (".", "..") for s in raw_path.split("/")):
            return ErrorResponse(422, "invalid", "path: encoded slashes, backslashes and dot "
                                 "segments are not allowed", "path")
        if route is None:
            return None  # the router answers 404 / 405
        ns = params.get("ns")
        if ns is not None:
            try:
                check_namespace(ns)
            except ValueError as exc:
                return ErrorResponse(422, "invalid", f"ns: {exc}", "ns")
            if not principal.allows(ns):
                return ErrorResponse(403, "forbidden",
                                     "this key's scopes do not include the namespace")
        needed = getattr(getattr(route, "endpoint", None), ROLE_ATTR, ApiRole.ADMIN)
        if _RANK[principal.role] < _RANK[needed]:
            return ErrorResponse(403, "forbidden",
                                 f"this key's role {principal.role.value!r} cannot do this "
                                 f"(needs {needed.value!r})")
        if getattr(getattr(route, "endpoint", None), STREAMS_ATTR, False):
            scope[STREAMED_SCOPE_KEY] = True
            return None
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
            return ErrorResponse(413, "too_large",
                                 f"body: larger than {self.max_body_bytes} bytes", "body")
        return None

    @staticmethod
    def _token(headers: dict[bytes, bytes]) -> str:
        """The bearer token of the request ('' without one); ``headers``: its headers."""
        header = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else ""

    async def _authenticate(self, token: str) -> Principal | None:
        if self.insecure_dev:
            return INSECURE_DEV
        if not token:
            return None
        key = await run_in_threadpool(self.keys.verify, token)
        return None if key is None else Principal.of(key)

    def _route(self, scope: Scope) -> tuple[Any, dict[str, Any]]:
        for route in self.routes:
            match, child = route.matches(scope)
            if match is Match.FULL:
                return route, dict(child.get("path_params", {}))
        return None, {}

    def _route_cached(self, scope: Scope) -> tuple[Any, dict[str, Any]]:
        """:meth:`_route`, remembered per method and path (routes match on nothing else
        in a scope straight from the server: no root path, no enclosing router). The
        cache is bounded (cleared when full): paths carry namespaces and ids."""
        if scope.get("root_path") or "path_params" in scope:
            return self._route(scope)
        slot = (scope["method"], scope["path"])
        found = self._routes_seen.get(slot)
        if found is None:
            found = self._route(scope)
            if len(self._routes_seen) >= _ROUTES_SEEN:
                self._routes_seen.clear()
            self._routes_seen[slot] = found
        return found[0], dict(found[1])

    def _limited(self, receive: Receive) -> Receive:
        seen = 0
        limit = self.max_body_bytes

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        return counted
