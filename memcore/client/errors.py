"""Typed errors of the remote clients, and the JSON error body the HTTP service sends.

Each error also derives from the built-in exception :class:`memcore.Client` raises in the
same situation, so code written against one client handles the other's errors too:
``NotFound`` is a ``KeyError``, ``Invalid`` a ``ValueError``, ``AuthError`` a
``PermissionError`` and ``Unavailable`` a ``ConnectionError``.
"""

from __future__ import annotations

from typing import Any


class RemoteError(Exception):
    """An error answered by (or on the way to) a memcore HTTP service."""

    def __init__(self, message: str, *, status: int = 0, code: str = "",
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.field = field

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class AuthError(RemoteError, PermissionError):
    """401 (missing or unknown key) or 403 (namespace outside the key's scopes, role too low)."""


class NotFound(RemoteError, KeyError):
    """404: no such memory, task or route."""


class Invalid(RemoteError, ValueError):
    """400/409/413/422: the request was refused as it stands; ``field`` names the culprit."""


class Unavailable(RemoteError, ConnectionError):
    """503/504, 5xx, or the service cannot be reached."""


class UnknownTask(KeyError):
    """:meth:`memcore.Client.wait` on a task id no one knows: no result, not accepted into
    the ingest backlog, not in a broker queue, not running (a typo, another deployment's
    id, or a result older than ``result_expires``). Raised within seconds instead of
    waiting out the timeout; over HTTP a 404."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown task"


NO_WORKER = "no_worker"
"""The error code of :class:`NoWorker` in an HTTP error body."""


class NoWorker(Unavailable):
    """A wait found that no Celery worker consumes the queue its tasks sit in (none
    answered within seconds). The tasks stay queued and run once a worker starts; the
    message says how to start one. Raised by :meth:`memcore.Client.wait` with
    ``fail_fast=True`` and, from the HTTP API's waits (a 503 with code ``no_worker``), by
    the remote clients, instead of waiting out the whole timeout in silence."""

    def __init__(self, message: str, *, status: int = 503, code: str = NO_WORKER,
                 field: str | None = None) -> None:
        super().__init__(message, status=status, code=code, field=field)


BROKER_BUSY = "broker_busy"
"""The error code of :class:`BrokerBusy` in an HTTP error body."""


class BrokerBusy(Unavailable):
    """The process could not get a broker connection or producer from its pool in time:
    all of them were in use (``broker_pool_limit`` of them, 10 by default). Nothing was
    sent; retry. Raised by :meth:`memcore.Client.add` and ``consolidate`` instead of
    waiting for the pool without end, and, from the HTTP API (a 503 with code
    ``broker_busy``), by the remote clients."""

    def __init__(self, message: str, *, status: int = 503, code: str = BROKER_BUSY,
                 field: str | None = None) -> None:
        super().__init__(message, status=status, code=code, field=field)


BACKPRESSURE = "backpressure"
"""The error code of :class:`Backpressure` in an HTTP error body."""


class Backpressure(Unavailable):
    """The ingest backlog is at its limit (``MEMCORE_QUEUE_LIMIT`` for all namespaces,
    ``MEMCORE_QUEUE_LIMIT_PER_NAMESPACE`` for one): the workers are behind, nothing was
    accepted; retry after ``retry_after`` seconds. Raised by :meth:`memcore.Client.add`
    and, from the HTTP API (a 429 with ``Retry-After``), by the remote clients."""

    def __init__(self, message: str, *, status: int = 429, code: str = BACKPRESSURE,
                 field: str | None = None, retry_after: float = 1.0) -> None:
        super().__init__(message, status=status, code=code, field=field)
        self.retry_after = retry_after


RATE_LIMITED = "rate_limited"
"""The error code of :class:`RateLimited` in an HTTP error body."""


class RateLimited(Backpressure):
    """The API key is over its rate limit (``MEMCORE_API__KEY_REQUESTS_PER_SECOND`` or
    ``MEMCORE_API__KEY_MODEL_CALLS_PER_MINUTE``): nothing was done; retry after
    ``retry_after`` seconds. Raised by the HTTP API (a 429 with ``Retry-After`` and code
    ``rate_limited``) and, from it, by the remote clients. A :class:`Backpressure`, so
    code that waits and retries on one does on the other."""

    def __init__(self, message: str, *, status: int = 429, code: str = RATE_LIMITED,
                 field: str | None = None, retry_after: float = 1.0) -> None:
        super().__init__(message, status=status, code=code, field=field,
                         retry_after=retry_after)


def error_body(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    """The JSON body of every error response: ``{"error": {code, message[, field]}}``."""
    err: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        err["field"] = field
    return {"error": err}


def error_for(status: int, body: Any, retry_after: str | None = None) -> RemoteError:
    """The typed error for an HTTP error response (``body`` as decoded JSON, or text;
    ``retry_after`` the response's ``Retry-After`` header, if any)."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        message, code = str(err.get("message", "")), str(err.get("code", ""))
        field = err.get("field")
    else:
        message, code, field = (str(body)[:500] or f"HTTP {status}"), "", None
    cls: type[RemoteError]
    if status == 429:
        try:
            wait = max(0.0, float(retry_after)) if retry_after else 1.0
        except ValueError:
            wait = 1.0
        limited = RateLimited if code == RATE_LIMITED else Backpressure
        return limited(message, status=status, code=code or BACKPRESSURE,
                            field=None if field is None else str(field), retry_after=wait)
    if status in (401, 403):
        cls = AuthError
    elif status == 404:
        cls = NotFound
    elif 400 <= status < 500:
        cls = Invalid
    elif code == NO_WORKER:
        cls = NoWorker
    elif code == BROKER_BUSY:
        cls = BrokerBusy
    else:
        cls = Unavailable
    return cls(message, status=status, code=code, field=None if field is None else str(field))
