"""Clients of the HTTP service: ``memcore.RemoteClient`` and ``memcore.AsyncRemoteClient``.

Same operations and return types as :class:`memcore.Client` (``Memory``, ``SearchHit``,
``AuditEvent``...), over HTTP with an API key instead of the Redis URL. Errors are typed
(:mod:`memcore.client.errors`) and carry the server's message.

Every operation is declared once, in :mod:`memcore.client.operations` (its parameters,
validation, request and result type); the methods here are generated from it, and the
sync and async classes only differ in how they send a request.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx
from pydantic_core import to_jsonable_python

from memcore.client.errors import RemoteError, Unavailable, error_for
from memcore.client.operations import OPERATIONS, Call, Calls, Request, signature

T = TypeVar("T")
P = ParamSpec("P")

DEFAULT_TIMEOUT = 30.0


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


def _described(method: Callable[..., Any], build: Callable[..., Any]) -> None:
    """Give a generated method its operation's name, docstring and public signature."""
    functools.update_wrapper(method, build, updated=())
    del method.__wrapped__  # type: ignore[attr-defined]
    method.__signature__ = signature(build.__name__)  # type: ignore[attr-defined]


def _sync(build: Callable[Concatenate[Calls, P], Request[T]]
          ) -> Callable[Concatenate[RemoteClient, P], T]:
    """The :class:`RemoteClient` method of the operation ``build`` declares."""
    def method(self: RemoteClient, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(build(self._calls, *args, **kwargs))

    _described(method, build)
    return method


def _async(build: Callable[Concatenate[Calls, P], Request[T]]
           ) -> Callable[Concatenate[AsyncRemoteClient, P], Coroutine[Any, Any, T]]:
    """The :class:`AsyncRemoteClient` method of the operation ``build`` declares."""
    async def method(self: AsyncRemoteClient, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(build(self._calls, *args, **kwargs))

    _described(method, build)
    return method


def _owned(cls: type) -> None:
    """Name the generated methods after ``cls``; a missing operation fails at import."""
    for name in OPERATIONS:
        getattr(cls, name).__qualname__ = f"{cls.__name__}.{name}"


class RemoteClient:
    """:class:`memcore.Client`'s operations over HTTP: ``RemoteClient(base_url, api_key)``."""

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float = DEFAULT_TIMEOUT, http: httpx.Client | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._calls = Calls()
        self._http = http or httpx.Client(base_url=self.base_url, headers=_headers(api_key),
                                          timeout=timeout)

    def _run(self, request: Request[T]) -> T:
        answers = []  # a loop, not a comprehension: warnings' stacklevel counts frames
        for call in request.parts():
            answers.append(self._send(call))
        return request.finish(answers)

    def _send(self, call: Call[T]) -> T:
        try:
            response = self._http.request(call.method, call.path, **_request_args(call))
        except httpx.TransportError as exc:
            raise Unavailable(f"cannot reach {self.base_url}: {exc}") from exc
        return _answer(call, response)

    add = _sync(Calls.add)
    wait = _sync(Calls.wait)
    consolidate = _sync(Calls.consolidate)
    search = _sync(Calls.search)
    profile = _sync(Calls.profile)
    context = _sync(Calls.context)
    get = _sync(Calls.get)
    earlier = _sync(Calls.earlier)
    history = _sync(Calls.history)
    stats = _sync(Calls.stats)
    versions = _sync(Calls.versions)
    pin = _sync(Calls.pin)
    unpin = _sync(Calls.unpin)
    restore = _sync(Calls.restore)
    update = _sync(Calls.update)
    delete = _sync(Calls.delete)
    erase = _sync(Calls.erase)
    rollback = _sync(Calls.rollback)
    list = _sync(Calls.list)

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

    async def _run(self, request: Request[T]) -> T:
        answers = []  # a loop, not a comprehension: warnings' stacklevel counts frames
        for call in request.parts():
            answers.append(await self._send(call))
        return request.finish(answers)

    async def _send(self, call: Call[T]) -> T:
        try:
            response = await self._http.request(call.method, call.path, **_request_args(call))
        except httpx.TransportError as exc:
            raise Unavailable(f"cannot reach {self.base_url}: {exc}") from exc
        return _answer(call, response)

    add = _async(Calls.add)
    wait = _async(Calls.wait)
    consolidate = _async(Calls.consolidate)
    search = _async(Calls.search)
    profile = _async(Calls.profile)
    context = _async(Calls.context)
    get = _async(Calls.get)
    earlier = _async(Calls.earlier)
    history = _async(Calls.history)
    stats = _async(Calls.stats)
    versions = _async(Calls.versions)
    pin = _async(Calls.pin)
    unpin = _async(Calls.unpin)
    restore = _async(Calls.restore)
    update = _async(Calls.update)
    delete = _async(Calls.delete)
    erase = _async(Calls.erase)
    rollback = _async(Calls.rollback)
    list = _async(Calls.list)

    async def aclose(self) -> None:
        """Release connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRemoteClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


_owned(RemoteClient)
_owned(AsyncRemoteClient)

__all__ = ["AsyncRemoteClient", "Call", "Calls", "RemoteClient", "RemoteError"]
