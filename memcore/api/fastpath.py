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
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memcore.api.routes.common import NS_PATTERN
from memcore.api.routes.messages import search_json
from memcore.api.schemas import SearchRequest
from memcore.api.state import ApiState

SEARCH_ROUTE = "/v1/namespaces/{ns}/search"
_NS_RE = re.compile(NS_PATTERN)


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
                or scope["method"] != "POST"):
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        try:
            body = await _read_body(receive, received)
            request = _parse(scope, body)
            payload = await self.state.run_search(search_json, self.state, scope,
                                                  request[0], request[1])
        except Exception as exc:  # the route answers it, from the same body
            await self.app(scope, _replay(received, receive, exc), send)
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


async def _read_body(receive: Receive, received: list[Message]) -> bytes:
    """The whole request body; every message received is kept in ``received``."""
    chunks = []
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            raise _Fallback()  # a disconnect: the route's body reader handles it
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parse(scope: Scope, body: bytes) -> tuple[str, SearchRequest]:
    """The namespace and the validated body, as the route would see them (the JSON
    parsed by ``json.loads`` and validated in Python mode, as FastAPI does)."""
    content_type = dict(scope["headers"]).get(b"content-type", b"")
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
