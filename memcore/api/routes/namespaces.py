"""Namespace-wide reads and management: profile, stats, versions, rollback, consolidate,
erase."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Query, Request, Response

from memcore.api.auth import requires
from memcore.api.routes.common import NS, bare_all, errors, no_data_warning
from memcore.api.schemas import (
    ConsolidateReport,
    ConsolidateRequest,
    ConsolidateStarted,
    Erased,
    EraseRequest,
    ForgetBody,
    Forgotten,
    Profile,
    RollbackRequest,
    RollbackResponse,
    Stats,
    Versions,
)
from memcore.api.state import ApiState, current_state
from memcore.client.client import pass_usage
from memcore.ingest.forget import forget_text
from memcore.messaging.task_names import CONSOLIDATE_QUEUE
from memcore.store.api_keys import ApiRole

router = APIRouter(prefix="/v1/namespaces/{ns}", tags=["namespaces"])


@router.get("/profile", response_model=Profile, responses=errors())
@requires(ApiRole.READ)
def profile(request: Request, ns: str = NS,
            as_of: datetime | None = Query(None, description="the profile as it stood at "
                                           "this instant (ISO 8601)"),
            state: ApiState = Depends(current_state)) -> Profile:
    """The short list: active facts ranked by confidence (with ``as_of``: then)."""
    facts = state.client.profile(ns, as_of=as_of, warn=False)
    return Profile(memories=bare_all(facts),
                   warning=None if facts else no_data_warning(state, request.scope, ns))


@router.get("/stats", response_model=Stats, responses=errors())
@requires(ApiRole.READ)
def stats(ns: str = NS, state: ApiState = Depends(current_state)) -> Stats:
    """Counts by status, usage counters and the snapshot version."""
    return Stats.model_validate(state.client.stats(ns))


@router.get("/versions", response_model=Versions, responses=errors())
@requires(ApiRole.READ)
def versions(ns: str = NS, state: ApiState = Depends(current_state)) -> Versions:
    """The current snapshot version and the committed ones still kept."""
    return Versions.model_validate(state.client.versions(ns))


@router.post("/rollback", response_model=RollbackResponse, responses=errors())
@requires(ApiRole.ADMIN)
def rollback(body: RollbackRequest, ns: str = NS,
             state: ApiState = Depends(current_state)) -> RollbackResponse:
    """Point the namespace back at a committed snapshot version (audited)."""
    return RollbackResponse.model_validate(state.client.rollback(
        ns, body.version, reason="rollback over HTTP"))


@router.post("/consolidate", status_code=202,
             response_model=ConsolidateStarted | ConsolidateReport,
             responses={200: {"model": ConsolidateReport, "description": "finished (wait=true)"},
                        **errors(404)})
@requires(ApiRole.WRITE)
def consolidate(response: Response, ns: str = NS,
                body: ConsolidateRequest | None = None,
                state: ApiState = Depends(current_state)) -> ConsolidateStarted | ConsolidateReport:
    """Run a consolidation pass on the workers: 202 with its task id, or with
    ``wait=true`` 200 and the report once the whole pass is done (still 202 if it is not
    done within the timeout: the pass goes on); the report's ``usage``: the pass's model
    calls and tokens."""
    import time

    body = body or ConsolidateRequest()
    client = state.client
    before = client.store.coordination.counters(ns) if body.wait else {}
    task_id = str(client.consolidate(ns, wait=False, full=body.full))
    state.tasks().record(ns, [task_id])
    if not body.wait:
        return ConsolidateStarted(task_id=task_id)
    deadline = time.monotonic() + min(body.timeout, state.settings.api.wait_timeout_seconds)
    try:
        left = max(0.0, deadline - time.monotonic())
        started: dict[str, Any] = client.wait([task_id], timeout=left,
                                              queue=CONSOLIDATE_QUEUE, fail_fast=True)[0]
        # A pass that fanned out as a chord: wait for its reducer too, as Client does.
        report = started if "batches" not in started else client.wait_for_pass(
            ns, started, max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        return ConsolidateStarted(task_id=task_id)
    response.status_code = 200
    usage = pass_usage(before, client.store.coordination.counters(ns))
    return ConsolidateReport(report={**report, "usage": usage})


@router.post("/erase", response_model=Erased, responses=errors(404))
@requires(ApiRole.WRITE)
def erase(body: EraseRequest, ns: str = NS, state: ApiState = Depends(current_state)) -> Erased:
    """Erase a memory (and, unless ``keep_sources``, the turns it came from) or an
    episode's traces for good (not restorable); audited."""
    client = state.client
    count = client.erase(ns, memory_id=body.memory_id, episode_id=body.episode_id,
                         keep_sources=body.keep_sources)
    return Erased(erased=count)


@router.post("/forget", response_model=Forgotten, responses=errors())
@requires(ApiRole.WRITE)
def forget(body: ForgetBody, ns: str = NS,
           state: ApiState = Depends(current_state)) -> Forgotten:
    """Forget what the user asked to forget, as a request said in a turn would
    (memcore.ingest.forget): the scope's memories the text names are erased for good with
    the turns they came from; "that" is the scope's latest user turn; at most 20
    memories per request; audited without the erased text."""
    client = state.client
    outcome = forget_text(client.store, client.models.embedder, client.settings, ns,
                          body.text, user_id=body.user_id, agent_id=body.agent_id,
                          run_id=body.run_id)
    out = outcome.as_dict()
    out.pop("turn_id", None)
    return Forgotten.model_validate(out)


@router.delete("", response_model=Erased, responses=errors(404))
@requires(ApiRole.ADMIN)
def erase_namespace(ns: str = NS, state: ApiState = Depends(current_state)) -> Erased:
    """Erase everything of the namespace (admin); only the erase's own audit entry stays."""
    return Erased(erased=state.client.erase(ns, everything=True))
