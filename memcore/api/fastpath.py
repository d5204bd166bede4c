"""The search's fast path: a successful ``POST /v1/namespaces/{ns}/search`` answered by an
ASGI middleware just inside authentication, without FastAPI's router, dependency
injection and request handling. Profiled under load (py-spy, ``bench api``), those
layers cost a server about as much CPU per search as the search itself.

Only the plain success path is served here: a JSON body that the route's own model
(:class:`~memcore.api.schemas.SearchRequest`) accepts, and a search that raises nothing.
Any other request (another content type, bad JSON, a rejected field, an error in the
search or in the key check, a client gone) is handed on unchanged, its body replayed,
to the FastAPI route, so every error status, message and header is the route's own; an
error found here only costs that request its search twice. The route also documents
the endpoint (OpenAPI) and stays the one and only definition of its answers: both call
:func:`memcore.api.routes.messages.search_json`.

:class:`SearchShortcut` goes one step further for a search whose key is in the cache:
``MemcoreAPI`` hands it the request before the middleware stack (Starlette's and
FastAPI's error, telemetry and body-limit layers, the metrics and authentication
middleware, each one more coroutine and ``send`` wrapper per request), and it does
what those layers and :class:`SearchFastPath` would do for a successful search in one
coroutine. Whatever it does not answer goes through the whole stack as before.

Both are on unless ``api.fast_path`` is false (then every request takes the route;
``tests/api/test_api_fastpath_parity.py`` sends every auth and error case both ways and
finds the same status, body and headers). What they pay, measured as an interleaved
A/B of ``memcore bench api --memories 2000 --searches 3000`` (2 server processes, 32
clients; 3 runs, order alternated, on a shared 2-core machine at load 7 to 11:
notes/api_machinery.md): median on/off ratio 2.6x the searches per second, 0.61x the
server CPU per search (1.2 to 1.7 ms against 1.9 to 2.9 ms), 0.26x the p50 latency; on
in every run.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memcore.api.auth import AuthMiddleware, BodyTooLarge
from memcore.api.metrics import STARTED, MetricsMiddleware
from memcore.api.routes.common import NS_PATTERN
from memcore.api.routes.messages import search_json
from memcore.api.schemas import SearchRequest
from memcore.api.state import ApiState

SEARCH_ROUTE = "/v1/namespaces/{ns}/search"
_NS_RE = re.compile(NS_PATTERN)
TRIED = "memcore_search_shortcut_tried"
"""Scope key: the shortcut read the body and could not answer; the route answers."""
_HEADERS = [(b"content-type", b"application/json")]


class _Fallback(Exception):
    """The fast path does not answer this request; the route will."""


class SearchFastPath:
    """Answers successful searches directly; everything else goes to ``app``. Must sit
    inside :class:`~memcore.api.auth.AuthMiddleware`, which has authenticated and
    authorized the request and named its route."""

    def __init__(self, app: ASGIApp, *, state: ApiState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope.get("memcore_route") != SEARCH_ROUTE
                or scope["method"] != "POST" or scope.get(TRIED)):
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        try:
            body = await _read_body(receive, received)
            request = _parse(scope, body, dict(scope["headers"]))
            payload = await self.state.run_search(search_json, self.state, scope,
                                                  request[0], request[1])
        except Exception as exc:  # the route answers it, from the same body
            await self.app(scope, _replay(received, receive, exc), send)
            return
        await _answer(send, payload)


class SearchShortcut:
    """A successful search, answered before the middleware stack (see the module's
    docstring). ``MemcoreAPI`` calls it for ``POST`` paths ending in ``/search`` with
    the stack to hand everything else to; it is what the stack's layers do for such a
    request (there ``SearchFastPath`` answers it):

    - metrics: the request counted and timed under its route template, as
      :class:`~memcore.api.metrics.MetricsMiddleware` does;
    - authentication: :meth:`AuthMiddleware.admit_cached
      <memcore.api.auth.AuthMiddleware.admit_cached>` (a cached key let through,
      confirmed by the search itself); anything it does not admit (a key not cached,
      a denial, another route) goes to the stack untouched, body unread;
    - the body: read within the size limit and parsed as :class:`SearchFastPath` does;
      a request it cannot answer from it (bad JSON, a rejected field, an error in the
      search, the size limit, a client gone) goes to the stack with its body replayed
      and marked (``TRIED``), so that the route answers it, exactly as when
      :class:`SearchFastPath` falls back (the stack authenticates it again first).

    The error, telemetry and body-limit layers of Starlette and FastAPI act only on an
    exception or a configuration that this path never sees (``MemcoreAPI`` calls it
    only while native telemetry is off; an exception leaves it for the stack)."""

    def __init__(self, *, state: ApiState, auth: AuthMiddleware,
                 metrics: MetricsMiddleware) -> None:
        self.state = state
        self.auth = auth
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send,
                       stack: ASGIApp) -> None:
        start = time.perf_counter()
        headers = dict(scope["headers"])
        if scope["method"] != "POST" or not self.auth.admit_cached(scope, headers) \
                or scope.get("memcore_route") != SEARCH_ROUTE:
            _forget(scope, start)
            await stack(scope, receive, send)
            return
        received: list[Message] = []
        try:
            body = await _read_body(receive, received, self.auth.max_body_bytes)
            request = _parse(scope, body, headers)
            payload = await self.state.run_search(search_json, self.state, scope,
                                                  request[0], request[1])
        except Exception as exc:  # the stack's route answers it, from the same body
            scope[TRIED] = True
            _forget(scope, start)
            await stack(scope, _replay(received, receive, exc), send)
            return
        try:
            await _answer(send, payload)
        finally:
            self.metrics.observe("POST", SEARCH_ROUTE, 200, time.perf_counter() - start)


def _forget(scope: Scope, start: float) -> None:
    """Before the stack takes the request over: what :meth:`AuthMiddleware.admit_cached`
    set goes (the stack decides afresh), and the metrics time it from ``start``."""
    state = scope.get("state", {})
    state.pop("memcore_key_check", None)
    state.pop("principal", None)
    scope[STARTED] = start


async def _answer(send: Send, payload: bytes) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [*_HEADERS, (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


async def _read_body(receive: Receive, received: list[Message],
                     limit: int | None = None) -> bytes:
    """The whole request body; every message received is kept in ``received``. Past
    ``limit`` bytes: :class:`~memcore.api.auth.BodyTooLarge` (the message that passed
    it kept too)."""
    chunks = []
    seen = 0
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            raise _Fallback()  # a disconnect: the route's body reader handles it
        chunk = message.get("body", b"")
        seen += len(chunk)
        if limit is not None and seen > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parse(scope: Scope, body: bytes, headers: dict[bytes, bytes]) -> tuple[str, SearchRequest]:
    """The namespace and the validated body, as the route would see them (the JSON
    parsed by ``json.loads`` and validated in Python mode, as FastAPI does);
    ``headers``: the request's, as a dict."""
    content_type = headers.get(b"content-type", b"")
    ns = scope.get("memcore_path_params", {}).get("ns")
    if content_type != b"application/json" or not isinstance(ns, str) \
            or not _NS_RE.fullmatch(ns):
        raise _Fallback()
    data = json.loads(body)  # ValueError: not JSON
    if not isinstance(data, dict):
        raise _Fallback()
    return ns, SearchRequest.model_validate(data)


def _replay(received: list[Message], receive: Receive,
            failed: BaseException) -> Callable[[], Awaitable[Message]]:
    """A ``receive`` that hands out ``received`` again; then, if receiving stopped short
    (it raised ``failed``, e.g. the size limit), raises ``failed`` again, else goes on
    with the real ``receive`` (the body was read whole, or the client left)."""
    pending = list(received)
    last = received[-1] if received else None
    ended = last is not None and (last["type"] != "http.request"
                                  or not last.get("more_body", False))

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        if not ended:
            raise failed
        return await receive()

    return replayed
