"""One memory and listings: ``/v1/namespaces/{ns}/memories[/{id}[/history|pin|unpin|restore]]``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Query

from memcore.api.auth import requires
from memcore.api.routes.common import MEMORY_ID, NS, bare, bare_all, errors
from memcore.api.schemas import MAX_PAGE, History, MemoryList, MemoryPage, UpdateRequest
from memcore.api.state import ApiState, current_state
from memcore.core.models import Kind, Memory, Status
from memcore.store.api_keys import ApiRole

AS_OF = Query(None, description="as valid at this instant (ISO 8601)")

router = APIRouter(prefix="/v1/namespaces/{ns}/memories", tags=["memories"])


def parse_filters(raw: str | None) -> dict[str, Any] | None:
    """The ``filters`` query parameter: a JSON object, or None."""
    if raw is None or not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        raise ValueError("filters: not valid JSON") from None
    if not isinstance(value, dict):
        raise ValueError("filters: expected a JSON object")
    return value


@router.get("", response_model=MemoryPage, responses=errors())
@requires(ApiRole.READ)
def list_memories(ns: str = NS,
                  status: Status | None = Query(None, description="only this status"),
                  kind: Kind | None = Query(None, description="only this kind"),
                  include_inactive: bool = Query(False, description="superseded and "
                                                 "tombstoned too (without a status)"),
                  limit: int = Query(100, ge=1, le=MAX_PAGE),
                  cursor: str | None = Query(None, max_length=256,
                                             description="next_cursor of the previous page"),
                  filters: str | None = Query(None, max_length=16384,
                                              description="the filter language, as JSON"),
                  as_of: datetime | None = AS_OF,
                  state: ApiState = Depends(current_state)) -> MemoryPage:
    """Memories of the namespace a page at a time, oldest first; the cursor is a position,
    so memories written or deleted while paging never repeat or skip one."""
    page = state.client.list(ns, status=status, kind=kind, filters=parse_filters(filters),
                             include_inactive=include_inactive, limit=limit, cursor=cursor,
                             as_of=as_of)
    return MemoryPage(memories=bare_all(page.memories), next_cursor=page.next_cursor)


@router.get("/{memory_id}", response_model=Memory, responses=errors(404))
@requires(ApiRole.READ)
def get_memory(ns: str = NS, memory_id: str = MEMORY_ID, as_of: datetime | None = AS_OF,
               state: ApiState = Depends(current_state)) -> Memory:
    """One memory by id (any status); with ``as_of``, the value of its fact valid then."""
    memory = state.client.get(ns, memory_id, as_of=as_of)
    if memory is None:
        raise KeyError(f"memory {memory_id!r} not found" + (
            "" if as_of is None else f" valid at {as_of.isoformat()}"))
    return bare(memory)


@router.get("/{memory_id}/earlier", response_model=MemoryList, responses=errors(404))
@requires(ApiRole.READ)
def earlier(ns: str = NS, memory_id: str = MEMORY_ID,
            state: ApiState = Depends(current_state)) -> MemoryList:
    """The values the fact replaced, oldest first, each with its validity interval."""
    client = state.client
    if client.get(ns, memory_id) is None:
        raise KeyError(f"memory {memory_id!r} not found")
    return MemoryList(memories=bare_all(client.earlier(ns, memory_id)))


@router.patch("/{memory_id}", response_model=Memory, responses=errors(404, 409))
@requires(ApiRole.WRITE)
def update_memory(body: UpdateRequest, ns: str = NS, memory_id: str = MEMORY_ID,
                  state: ApiState = Depends(current_state)) -> Memory:
    """Edit the text (re-embedded), metadata or expiry; audited as a user edit."""
    return bare(state.client.update(ns, memory_id, text=body.text, metadata=body.metadata,
                                    expires_at=body.expires_at, ttl_seconds=body.ttl_seconds))


@router.delete("/{memory_id}", response_model=Memory, responses=errors(404, 409))
@requires(ApiRole.WRITE)
def delete_memory(ns: str = NS, memory_id: str = MEMORY_ID,
                  state: ApiState = Depends(current_state)) -> Memory:
    """Tombstone a memory (restorable with ``restore``); audited."""
    return bare(state.client.delete(ns, memory_id))


@router.get("/{memory_id}/history", response_model=History, responses=errors(404))
@requires(ApiRole.READ)
def history(ns: str = NS, memory_id: str = MEMORY_ID, as_of: datetime | None = AS_OF,
            state: ApiState = Depends(current_state)) -> History:
    """Every audited change of a memory, through merges and supersessions (with
    ``as_of``: those made by then)."""
    client = state.client
    events = client.history(ns, memory_id, as_of=as_of)
    if not events and client.get(ns, memory_id) is None:
        raise KeyError(f"memory {memory_id!r} not found")
    return History(events=events)


def _management(action: str, doc: str) -> None:
    @requires(ApiRole.WRITE)
    def handler(ns: str = NS, memory_id: str = MEMORY_ID,
                state: ApiState = Depends(current_state)) -> Memory:
        return bare(getattr(state.client, action)(ns, memory_id))

    handler.__doc__ = doc
    handler.__name__ = f"{action}_memory"
    router.add_api_route(f"/{{memory_id}}/{action}", handler, methods=["POST"],
                         response_model=Memory, responses=errors(404, 409),
                         name=f"{action}_memory")


_management("pin", "Pin a memory: it never decays and is never dropped.")
_management("unpin", "Undo pin.")
_management("restore", "Bring a tombstoned memory back.")
