"""Write and search: ``POST .../messages``, ``POST .../tasks/wait``, ``POST .../search``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from starlette.types import Scope

from memcore.api.auth import confirms_key, key_guard, principal_of, requires
from memcore.api.routes.common import NS, bare, bare_all, errors, no_data_warning
from memcore.api.schemas import (
    SEARCH_RESPONSE_JSON,
    AddRequest,
    MemoryIds,
    SearchRequest,
    SearchResponse,
    TaskIds,
    Usage,
    WaitRequest,
    WaitResponse,
)
from memcore.api.state import ApiState, current_state
from memcore.client.errors import NoWorker
from memcore.messaging.task_names import INGEST_QUEUE
from memcore.observability.usage import CallUsage
from memcore.store.api_keys import ApiRole

router = APIRouter(prefix="/v1/namespaces/{ns}", tags=["memories"])


@router.post("/messages", status_code=202, response_model=TaskIds | MemoryIds,
             responses={200: {"model": MemoryIds, "description": "stored (wait=true)"},
                        **errors(429)})
@requires(ApiRole.WRITE)
def add_messages(body: AddRequest, request: Request, response: Response, ns: str = NS,
                 state: ApiState = Depends(current_state)) -> TaskIds | MemoryIds:
    """Enqueue turns for ingestion (202 with task ids), or wait until they are stored
    (``wait=true``: 200 with the memory ids written and the ``usage`` of model calls
    and tokens it cost; still 202 with the task ids if that
    takes longer than ``MEMCORE_API__WAIT_TIMEOUT_SECONDS``; 503 ``no_worker`` within
    seconds when no worker consumes the ingest queue: the turns stay queued). 429 with
    ``Retry-After`` when the ingest backlog is at its limit, or (code ``rate_limited``)
    while the key's model calls of the last minute are at
    ``MEMCORE_API__KEY_MODEL_CALLS_PER_MINUTE``: nothing was accepted."""
    client = state.client
    messages = [m.model_dump(exclude_none=True) for m in body.messages]
    charge_to = state.key_limits.admit_add(principal_of(request.scope).key_id)
    task_ids = client.add(ns, messages, timestamp=body.timestamp, metadata=body.metadata,
                          user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
                          infer=body.infer, expires_at=body.expires_at,
                          ttl_seconds=body.ttl_seconds, charge_to=charge_to)
    state.tasks().record(ns, task_ids)
    if not body.wait:
        return TaskIds(task_ids=task_ids)
    try:
        results = client.wait(task_ids, timeout=state.settings.api.wait_timeout_seconds,
                              queue=INGEST_QUEUE, fail_fast=True)
    except NoWorker as exc:  # queued, but nothing will store them: say so now (503)
        raise NoWorker(f"{exc} (task ids: {', '.join(task_ids)}; wait on them with "
                       "POST .../tasks/wait)") from exc
    except TimeoutError:  # accepted and still running: the caller can wait on the ids
        return TaskIds(task_ids=task_ids)
    response.status_code = 200
    ids: list[str] = []
    usage = CallUsage()
    for result in results:
        if not isinstance(result, dict):
            continue
        for memory_id in result.get("memory_ids", []):
            if memory_id not in ids:
                ids.append(memory_id)
        usage.add(CallUsage.from_dict(result.get("usage") or {}))
    return MemoryIds(memory_ids=ids, task_ids=task_ids, usage=Usage(**usage.as_dict()))


@router.post("/tasks/wait", response_model=WaitResponse, responses=errors(404))
@requires(ApiRole.WRITE)
def wait_tasks(body: WaitRequest, ns: str = NS,
               state: ApiState = Depends(current_state)) -> WaitResponse:
    """Block until tasks enqueued for this namespace finish: their results, in order; or,
    when the timeout runs out first, ``pending`` lists them all (503 ``no_worker`` within
    seconds when no worker is up to run them)."""
    owned = state.tasks().owned(ns, body.task_ids)
    for task_id, mine in zip(body.task_ids, owned, strict=True):
        if not mine:
            raise KeyError(f"task {task_id!r} was not enqueued for this namespace "
                           "(or is older than a day)")
    timeout = min(body.timeout, state.settings.api.wait_timeout_seconds)
    try:
        results = state.client.wait(body.task_ids, timeout=timeout, fail_fast=True)
    except TimeoutError:  # not an error of the server: the tasks are still running
        return WaitResponse(results=[], pending=list(body.task_ids))
    return WaitResponse(results=[r if isinstance(r, dict) else {"result": r} for r in results],
                        pending=[])


def search_json(state: ApiState, scope: Scope, ns: str, body: SearchRequest) -> bytes:
    """The search's JSON answer (blocking: the key check, Redis, the ranking). Shared by
    the route and :mod:`memcore.api.fastpath`."""
    # A key let through from the cache: still unrevoked? Checked in the search's first
    # round trip (with the namespace state), before any record is read.
    hits = state.client.search(ns, body.query, body.k, include_inactive=body.include_inactive,
                               max_chars=body.max_chars, filters=body.filters,
                               guard=key_guard(scope), as_of=body.as_of,
                               include_history=body.include_history,
                               time_hint=body.time_hint, warn=False)
    # A SearchResponse, serialized here, once, by pydantic's own serializer, from plain
    # dicts (the models are not built: SEARCH_RESPONSE_JSON). FastAPI would validate the
    # returned model against response_model again first (the schema stays documented).
    return SEARCH_RESPONSE_JSON.dump_json({"results": [
        {"memory": bare(h.memory), "similarity": float(h.similarity), "score": float(h.score),
         "earlier": bare_all(h.earlier)} for h in hits],
        "warning": None if hits else no_data_warning(state, scope, ns)})


@router.post("/search", response_model=SearchResponse, responses=errors())
@requires(ApiRole.READ)
@confirms_key
async def search(body: SearchRequest, request: Request, ns: str = NS,
                 state: ApiState = Depends(current_state)) -> Response:
    """Memories ranked for ``query`` by hybrid search (BM25 + vector) plus a little retention."""
    # The whole search in one worker thread: one thread hop per request. (Successful
    # searches are normally answered by memcore.api.fastpath; this route documents the
    # endpoint and answers every request that would not be a 200.)
    payload = await state.run_search(search_json, state, request.scope, ns, body)
    return Response(payload, media_type="application/json")
