"""Helpers shared by the route modules."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fastapi import Path
from starlette.types import Scope

from memcore.api.schemas import ErrorBody
from memcore.api.state import ApiState
from memcore.core.bounds import record_caps
from memcore.core.models import Memory

NS_PATTERN = r"^[A-Za-z0-9_.@-]{1,128}$"
NS = Path(..., description="namespace (letters, digits, '-', '_', '.', '@')",
          pattern=NS_PATTERN)
MEMORY_ID = Path(..., description="memory id", pattern=r"^[A-Za-z0-9_.@-]{1,128}$")


def errors(*extra: int) -> dict[int | str, dict[str, Any]]:
    """Error responses of a ``/v1`` route for the OpenAPI schema: the common ones plus
    ``extra`` (404 not found, 409 conflict, 504 wait ran out)."""
    texts = {401: "missing or unknown API key",
             403: "namespace outside the key's scopes, or role too low",
             404: "not found", 409: "conflict with a concurrent change",
             413: "body too large", 422: "invalid input (the field is named)",
             429: "the ingest backlog is full (backpressure): retry after Retry-After",
             503: "data store unreachable (unavailable), no worker runs the tasks waited "
                  "on (no_worker), or every broker connection of the server process "
                  "stayed in use (broker_busy: retry)",
             504: "the wait ran out"}
    codes = (401, 403, 413, 422, 503, *extra)
    out: dict[int | str, dict[str, Any]] = {
        code: {"model": ErrorBody, "description": texts[code]} for code in codes}
    # uvicorn itself answers a request it cannot parse (e.g. a request line over its
    # size limit) before the app sees it.
    out[400] = {"description": "malformed HTTP request, refused by the HTTP server"}
    return out


def bare(memory: Memory) -> Memory:
    """A memory without its vector (responses never carry vectors), with ``capped`` saying
    which bounds its record has reached (:func:`~memcore.core.bounds.record_caps`)."""
    caps = record_caps(memory)
    if memory.vector is None and caps == memory.capped:
        return memory  # the usual hit: no copy
    return memory.model_copy(update={"vector": None, "capped": caps})


def bare_all(memories: Iterable[Memory]) -> list[Memory]:
    """:func:`bare` of each."""
    return [bare(m) for m in memories]


def no_data_warning(state: ApiState, scope: Scope, ns: str) -> str | None:
    """The ``warning`` of an empty search or profile answer: why ``ns`` has no data (the
    same sentence as the Python warning), suggesting only names in the key's scopes."""
    principal = scope.get("state", {}).get("principal")
    return state.client.no_data(ns, None if principal is None else principal.allows)
