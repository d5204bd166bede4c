"""Export and import of a namespace over HTTP (admin role): the memcore-export NDJSON
format of ``memcore export`` / ``memcore import`` (memcore.store.portable)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import anyio.from_thread
from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict

from memcore.api.auth import requires, streams_body
from memcore.api.errors import respond
from memcore.api.routes.common import NS, errors
from memcore.api.state import ApiState, current_state
from memcore.client.portability import export_lines, import_stream
from memcore.core.errors import NamespaceNotFound
from memcore.store.api_keys import ApiRole
from memcore.store.imports import ImportConflict
from memcore.store.portable import ExportFormatError

router = APIRouter(prefix="/v1/namespaces/{ns}", tags=["portability"])

NDJSON = "application/x-ndjson"


class ImportOut(BaseModel):
    """What an import did (lines: of the file; resumed_after: its last line already
    imported before this call)."""

    model_config = ConfigDict(extra="forbid")
    namespace: str
    export_id: str
    source_namespace: str
    lines: int
    resumed_after: int
    added: int
    existing: int
    episodes: int
    audit: int


@router.get("/export", response_class=StreamingResponse, responses={
    **errors(404), 200: {"content": {NDJSON: {}},
                         "description": "the memcore-export file, one JSON object a line"}})
@requires(ApiRole.ADMIN)
def export(ns: str = NS, with_episodes: bool = Query(False, description="also the raw turns"),
           as_of: datetime | None = Query(None, description="only the memories valid at "
                                                          "this instant; turns and audit "
                                                          "up to it"),
           state: ApiState = Depends(current_state)) -> StreamingResponse:
    """Stream the namespace as a memcore-export file (docs/operations.md: Export and import)."""
    store = state.client.store
    if not store.records.has_namespace(ns):
        raise NamespaceNotFound(f"namespace {ns!r} has no data")
    lines = export_lines(store, ns, with_episodes=with_episodes, as_of=as_of)

    def body() -> Iterator[bytes]:
        for line in lines:
            yield (line + "\n").encode("utf-8")

    return StreamingResponse(body(), media_type=NDJSON)


def body_lines(request: Request, max_line: int) -> Iterator[str]:
    """The lines of the request body as they arrive (no newlines; called in a worker
    thread: each piece of the body is awaited on the event loop). Holds one line and
    one received piece at a time; a line over ``max_line`` bytes or not UTF-8 is an
    :class:`ExportFormatError` naming it."""
    pieces = request.stream().__aiter__()
    pending = b""
    number = 0

    def decoded(raw: bytes) -> str:
        try:
            return raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ExportFormatError(number, "body", "not UTF-8") from exc

    async def next_piece() -> bytes:
        return await pieces.__anext__()

    while True:
        try:
            piece = anyio.from_thread.run(next_piece)
        except StopAsyncIteration:
            break
        *complete, pending = (pending + piece).split(b"\n")
        for raw in complete:
            number += 1
            yield decoded(raw)
        if len(pending) > max_line:
            raise ExportFormatError(number + 1, "body", f"a line longer than {max_line} "
                                    "bytes (MEMCORE_API__MAX_BODY_BYTES)")
    if pending:
        number += 1
        yield decoded(pending)


# The body is documented as text/plain (what OpenAPI tools can send); it is read as the
# NDJSON file whatever its Content-Type, streamed: MEMCORE_API__MAX_BODY_BYTES bounds
# each line, not the file (docs/operations.md: Export and import).
@router.post("/import", response_model=ImportOut, responses=errors(409), openapi_extra={
    "requestBody": {"required": True, "description": "the memcore-export file (NDJSON)",
                    "content": {"text/plain": {"schema": {"type": "string"}}}}})
@requires(ApiRole.ADMIN)
@streams_body
async def import_(request: Request, ns: str = NS,
                  resume: bool = Query(False, description="continue an import of this "
                                                          "file that stopped"),
                  state: ApiState = Depends(current_state)) -> ImportOut | Response:
    """Import a memcore-export file (the request body, streamed) into the namespace of
    the path; idempotent (ids kept) and resumable like ``memcore import``. The body is
    checked and committed chunk by chunk as it arrives: a bad line is a 422 naming the
    line and field, after the chunks before it are committed (send the fixed file again
    with ``resume=true``)."""
    lines = body_lines(request, state.settings.api.max_body_bytes)
    try:
        report = await run_in_threadpool(import_stream, state.client.store, ns, lines,
                                         resume=resume)
    except ExportFormatError as exc:
        return respond(422, "invalid", str(exc), exc.field)
    except ImportConflict as exc:
        return respond(409, "conflict", str(exc))
    return ImportOut.model_validate(report.as_dict())
