"""Webhooks over HTTP (admin role): register, list and remove hooks, see and retry dead
letters (docs/operations.md, Webhooks). A key manages only hooks whose every scope it covers: a
scope pattern equal to one of its own, a literal namespace inside them, anything with
``*``; so a tenant's admin key can never hear another tenant's events."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import Field

from memcore.api.auth import INSECURE_DEV, Principal, requires
from memcore.api.errors import respond
from memcore.api.routes.common import errors
from memcore.api.schemas import Strict
from memcore.api.state import ApiState, current_state
from memcore.client.hooks import retry_dead
from memcore.store.api_keys import ApiRole
from memcore.store.hooks import Hook

router = APIRouter(prefix="/v1/hooks", tags=["webhooks"])

HOOK_ID = Path(..., description="hook id", pattern=r"^[0-9a-f]{12}$")


class HookIn(Strict):
    """A hook to register."""

    url: str = Field(description="http(s) URL the events are POSTed to")
    events: list[str] = Field(description="memory.created, memory.updated, "
                                          "memory.superseded, memory.deleted, "
                                          "memory.erased, pass.finished")
    scopes: list[str] = Field(description="namespace globs, e.g. acme-*")


class HookOut(Strict):
    """A registered hook; ``secret`` only in the answer that created it."""

    id: str
    url: str
    events: list[str]
    scopes: list[str]
    created_at: str
    secret: str | None = None


class RetryIn(Strict):
    """Which dead letters to queue again: ``ids``, or all of ``hook_id``, or (neither)
    all the key may see."""

    ids: list[str] | None = None
    hook_id: str | None = None


def _principal(request: Request) -> Principal:
    found = getattr(request.state, "principal", None)
    return found if isinstance(found, Principal) else INSECURE_DEV


def covers(principal: Principal, pattern: str) -> bool:
    """True if every namespace ``pattern`` can match is inside the key's scopes."""
    if "*" in principal.scopes or pattern in principal.scopes:
        return True
    return not any(c in pattern for c in "*?") and principal.allows(pattern)


def manages(principal: Principal, hook: Hook) -> bool:
    """True if the key may see and change ``hook``: it covers all its scopes."""
    return all(covers(principal, p) for p in hook.scopes)


@router.post("", status_code=201, response_model=HookOut, responses=errors())
@requires(ApiRole.ADMIN)
def add_hook(body: HookIn, request: Request,
             state: ApiState = Depends(current_state)) -> HookOut | Any:
    """Register a hook; the answer holds its signing secret, shown this once."""
    principal = _principal(request)
    outside = [p for p in body.scopes if not covers(principal, p)]
    if outside:
        return respond(403, "forbidden", f"scopes {outside} reach beyond this key's scopes")
    hook, secret = state.client.store.hooks.add(body.url, body.events, body.scopes)
    return HookOut(**hook.public(), secret=secret)


@router.get("", response_model=list[HookOut], responses=errors())
@requires(ApiRole.ADMIN)
def list_hooks(request: Request, state: ApiState = Depends(current_state)) -> list[HookOut]:
    """The hooks this key manages (no secrets)."""
    principal = _principal(request)
    return [HookOut(**h.public()) for h in state.client.store.hooks.registered()
            if manages(principal, h)]


@router.delete("/{hook_id}", responses=errors(404))
@requires(ApiRole.ADMIN)
def remove_hook(request: Request, hook_id: str = HOOK_ID,
                state: ApiState = Depends(current_state)) -> dict[str, Any]:
    """Remove a hook; its queued events are dropped."""
    found = state.client.store.hooks.get(hook_id)
    if found is None or not manages(_principal(request), found[0]):
        raise KeyError(f"hook {hook_id!r} not found")
    state.client.store.hooks.remove(hook_id)
    return {"id": hook_id, "removed": True}


def visible_dead(state: ApiState, principal: Principal) -> list[dict[str, Any]]:
    """The dead letters of the hooks ``principal`` manages, oldest first."""
    hooks = {h.id: h for h in state.client.store.hooks.registered()}
    return [d for d in state.client.store.hooks.dead()
            if (h := hooks.get(d["hook_id"])) is not None and manages(principal, h)]


@router.get("/dead", responses=errors())
@requires(ApiRole.ADMIN)
def dead_letters(request: Request, state: ApiState = Depends(current_state)
                 ) -> list[dict[str, Any]]:
    """Dead letters of this key's hooks, oldest first (events never carry text)."""
    return visible_dead(state, _principal(request))


@router.post("/dead/retry", responses=errors())
@requires(ApiRole.ADMIN)
async def retry(body: RetryIn, request: Request,
                state: ApiState = Depends(current_state)) -> dict[str, int]:
    """Queue dead letters again (at the end of their memory's queue)."""
    visible = visible_dead(state, _principal(request))
    ids = [d["id"] for d in visible if (body.ids is None or d["id"] in body.ids)
           and (body.hook_id is None or d["hook_id"] == body.hook_id)]
    count = await run_in_threadpool(retry_dead, state.client, ids) if ids else 0
    return {"requeued": count}
