"""Export and import of a namespace over HTTP (admin role): the memcore-export NDJSON
format of ``memcore export`` / ``memcore import`` (memcore.store.portable)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict

from memcore.api.auth import requires
from memcore.api.errors import respond
from memcore.api.routes.common import NS, errors
from memcore.api.state import ApiState, current_state
from memcore.client.portability import export_lines, import_lines
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


# The body is documented as text/plain (what OpenAPI tools can send); it is read as the
# NDJSON file whatever its Content-Type.
@router.post("/import", response_model=ImportOut, responses=errors(409), openapi_extra={
    "requestBody": {"required": True, "description": "the memcore-export file (NDJSON)",
                    "content": {"text/plain": {"schema": {"type": "string"}}}}})
@requires(ApiRole.ADMIN)
async def import_(request: Request, ns: str = NS,
                  resume: bool = Query(False, description="continue an import of this "
                                                          "file that stopped"),
                  state: ApiState = Depends(current_state)) -> ImportOut | Response:
    """Import a memcore-export file (the request body) into the namespace of the path;
    idempotent (ids kept) and resumable like ``memcore import``. Every line is checked
    before the first is written; a bad one is a 422 naming the line and field."""
    raw = await request.body()
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return respond(422, "invalid", "body: not UTF-8", "body")
    try:
        report = await run_in_threadpool(import_lines, state.client.store, ns, lambda: lines,
                                         resume=resume)
    except ExportFormatError as exc:
        return respond(422, "invalid", str(exc), exc.field)
    except ImportConflict as exc:
        return respond(409, "conflict", str(exc))
    return ImportOut.model_validate(report.as_dict())
