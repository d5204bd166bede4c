"""Exceptions to JSON error responses (``{"error": {code, message, field?}}``).

The Client's own exceptions carry the meaning: KeyError -> 404, ValueError -> 422, a
memory whose status forbids the operation -> 409, Redis unreachable, a wait on tasks no
worker will run (:class:`~memcore.client.errors.NoWorker`) or a send that found every
broker connection of the process in use (:class:`~memcore.client.errors.BrokerBusy`) ->
503 (with a code naming which), a full ingest backlog
(:class:`~memcore.client.errors.Backpressure`) -> 429 with ``Retry-After``, a wait that
ran out -> 504, anything else -> 500 (logged,
no internals in the body).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any, get_args

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from memcore.api.auth import BodyTooLarge
from memcore.client.errors import Backpressure, BrokerBusy, NoWorker, error_body
from memcore.core.errors import MemoryStateError
from memcore.core.suggest import did_you_mean
from memcore.messaging.errors import BROKER_UNREACHABLE
from memcore.store import StoreConflict
from memcore.store.errors import UNREACHABLE

log = logging.getLogger(__name__)

_HTTP_CODES = {400: "invalid", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 409: "conflict", 413: "too_large", 422: "invalid"}


def respond(status: int, code: str, message: str, field: str | None = None,
            headers: Mapping[str, str] | None = None) -> JSONResponse:
    """A JSON error response."""
    return JSONResponse(error_body(code, message, field), status_code=status,
                        headers=dict(headers) if headers else None)


def _field(loc: Sequence[Any]) -> str:
    # Only the first item says where (body, query string, path): a body field may itself
    # be called "query" (the search request's), and must still be named.
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path"):
        parts = parts[1:]
    return ".".join(parts) or "body"


def _model_at(model: Any, path: Sequence[Any]) -> type[BaseModel] | None:
    """The pydantic model found at ``path`` (field names and list indexes) inside
    ``model``, through lists, dicts and optionals; None when there is none."""
    for step in path:
        if isinstance(step, int) or not (isinstance(model, type)
                                         and issubclass(model, BaseModel)):
            model = _inner_model(model)
            if isinstance(step, int):
                continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = model.model_fields.get(str(step))
        if field is None:
            return None
        model = field.annotation
    model = model if isinstance(model, type) and issubclass(model, BaseModel) \
        else _inner_model(model)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _inner_model(annotation: Any) -> Any:
    """The model inside ``list[M]``, ``dict[str, M]`` or ``M | None``, else itself."""
    for arg in get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
        inner = _inner_model(arg)
        if inner is not arg:
            return inner
    return annotation


def _misspelt(request: Request, extra: Mapping[str, Any]) -> str:
    """`` (did you mean 'messages'?)`` for an unknown body field close to a field the
    request's model has at that place (``mesages`` is reported as unknown, with the
    right name: not as the missing ``messages``)."""
    loc = tuple(extra.get("loc", ()))
    route = request.scope.get("route")
    body_field = getattr(route, "body_field", None)
    if len(loc) < 2 or loc[0] != "body" or body_field is None:
        return ""
    model = _model_at(body_field.field_info.annotation, loc[1:-1])
    if model is None:
        return ""
    known = {f.alias or name for name, f in model.model_fields.items()}
    return did_you_mean(str(loc[-1]), known)


def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    # An unknown field first: a misspelt required one is also reported missing, and the
    # misspelling is the mistake to name.
    extras = [e for e in errors if e.get("type") == "extra_forbidden"]
    first = extras[0] if extras else errors[0] if errors else {
        "loc": ("body",), "msg": "invalid request"}
    field = _field(first.get("loc", ()))
    msg = str(first.get("msg", "invalid"))
    if first.get("type") == "extra_forbidden":
        msg = "unknown field" + _misspelt(request, first)
    elif first.get("type") == "json_invalid":
        field, msg = "body", "not valid JSON"
    # "Value error, x: ..." from our validators already names the field.
    msg = msg.removeprefix("Value error, ")
    named, sep, rest = msg.partition(": ")
    if sep and named.isidentifier():  # our validators start with the field they blame
        field = named if field == "body" else f"{field}.{named}"
        msg = rest
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return respond(422, "invalid", f"{field}: {msg}{more}", field)


def _http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400:  # FastAPI could not parse the body: bad input, like the rest
        return respond(422, "invalid", f"body: {exc.detail}", "body")
    code = _HTTP_CODES.get(exc.status_code, "error")
    return respond(exc.status_code, code, str(exc.detail), headers=exc.headers)


def _key_error(_: Request, exc: Exception) -> JSONResponse:
    message = str(exc.args[0]) if exc.args else "not found"
    return respond(404, "not_found", message)


def _value_error(_: Request, exc: Exception) -> JSONResponse:
    message = str(exc)
    field = message.split(":", 1)[0] if ":" in message and " " not in message.split(":")[0] \
        else None
    return respond(422, "invalid", message, field)


def _conflict(_: Request, exc: Exception) -> JSONResponse:
    return respond(409, "conflict", str(exc))


def _too_large(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BodyTooLarge)
    return respond(413, "too_large", str(exc.detail), "body")


def _unreachable(_: Request, exc: Exception) -> JSONResponse:
    log.warning("Redis unreachable: %s", exc)
    return respond(503, "unavailable", "the data store is unreachable; retry later")


def _broker_unreachable(_: Request, exc: Exception) -> JSONResponse:
    log.warning("broker unreachable: %s", exc)
    return respond(503, "unavailable", "the task queue is unreachable; retry later")


def _no_worker(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, NoWorker)
    log.warning("%s", exc)
    return respond(503, exc.code, str(exc))


def _broker_busy(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BrokerBusy)
    log.warning("%s", exc)
    return respond(503, exc.code, str(exc), headers={"Retry-After": "1"})


def _backpressure(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Backpressure)
    # Retry-After takes whole seconds (RFC 9110).
    return respond(429, exc.code, str(exc),
                   headers={"Retry-After": str(max(1, math.ceil(exc.retry_after)))})


def _timeout(_: Request, exc: Exception) -> JSONResponse:
    return respond(504, "timeout", str(exc) or "timed out")


def _internal(request: Request, exc: Exception) -> JSONResponse:
    # Celery wraps a lost result backend in a RuntimeError: an outage, not a bug.
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, UNREACHABLE + BROKER_UNREACHABLE):
            log.warning("Redis or broker unreachable: %s", cause)
            return respond(503, "unavailable", "the data store or task queue is unreachable; "
                                               "retry later")
        cause = cause.__cause__ or cause.__context__
    log.exception("unhandled error", exc_info=exc)
    return respond(500, "internal", "internal error (logged on the server)")


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(BodyTooLarge, _too_large)
    app.add_exception_handler(KeyError, _key_error)
    app.add_exception_handler(StoreConflict, _conflict)
    app.add_exception_handler(MemoryStateError, _conflict)
    app.add_exception_handler(ValueError, _value_error)
    app.add_exception_handler(NoWorker, _no_worker)
    app.add_exception_handler(Backpressure, _backpressure)
    app.add_exception_handler(BrokerBusy, _broker_busy)
    app.add_exception_handler(TimeoutError, _timeout)
    for exc_type in UNREACHABLE:
        app.add_exception_handler(exc_type, _unreachable)
    for exc_type in BROKER_UNREACHABLE:
        app.add_exception_handler(exc_type, _broker_unreachable)
    app.add_exception_handler(Exception, _internal)
