"""``POST /v1/namespaces/{ns}/context``: a prompt-ready context block for a query
(:meth:`memcore.Client.context`)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field, StrictBool, StrictInt

from memcore.api.auth import requires
from memcore.api.routes.common import NS, errors
from memcore.api.schemas import Filters, Strict, Usage
from memcore.api.state import ApiState, current_state
from memcore.client.context import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS
from memcore.store.api_keys import ApiRole

router = APIRouter(prefix="/v1/namespaces/{ns}", tags=["memories"])


class ContextRequest(Strict):
    """``POST /v1/namespaces/{ns}/context``."""

    query: str = Field(min_length=1, max_length=8192)
    max_tokens: StrictInt = Field(default=DEFAULT_TOKENS, ge=MIN_TOKENS, le=MAX_TOKENS,
                                  description="budget in cl100k_base tokens")
    now: datetime | None = Field(default=None, description="dates are said from this "
                                 "instant (ISO-8601; default: the server's clock)")
    filters: Filters | None = Field(default=None, description="the filter language")
    time_hint: StrictBool = Field(default=True, description="read a relative time in the "
                                  "query ('last week') as a filter, as search does")


class ContextPartOut(BaseModel):
    """One line of the block: the memory, its section (profile, relevant, previous),
    the line, its tokens, and for a previous value the memory that replaced it."""

    memory_id: str
    section: str
    line: str
    tokens: int
    replaced_by: str | None


class ContextResponse(BaseModel):
    """The block's ``text`` (at most ``max_tokens`` tokens of ``tokenizer``) and its
    ``parts``, most useful first."""

    namespace: str
    query: str
    text: str
    parts: list[ContextPartOut]
    tokens: int
    max_tokens: int
    tokenizer: str
    now: datetime
    usage: Usage = Field(default_factory=Usage, description="the model calls the block cost")


@router.post("/context", response_model=ContextResponse, responses=errors())
@requires(ApiRole.READ)
def context(body: ContextRequest, ns: str = NS,
            state: ApiState = Depends(current_state)) -> ContextResponse:
    """One prompt-ready text: the profile's most useful facts, the memories relevant to
    ``query`` with their dates said from ``now``, a changed fact's previous value marked
    as past; ordered by usefulness, deterministic, within ``max_tokens``. An unknown
    namespace gives an empty block, as search gives no results."""
    block = state.client.context(ns, body.query, body.max_tokens, now=body.now,
                                 filters=body.filters, time_hint=body.time_hint)
    return ContextResponse.model_validate(block.as_dict())
