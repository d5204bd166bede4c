"""Request and response bodies of the HTTP API (pydantic; unknown fields are rejected).

Memories and audit events are returned as :class:`memcore.core.models.Memory` and
:class:`~memcore.core.models.AuditEvent` without their vectors, so the remote clients
parse them back into the same types :class:`memcore.Client` returns.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    model_validator,
)
from typing_extensions import TypedDict

from memcore.core.models import AuditEvent, Memory, Role

MAX_K = 100
"""Most results one search may ask for."""
MAX_PAGE = 500
"""Most memories one list page may hold."""
MAX_MESSAGES = 1000
"""Most messages one add may carry (the body size limit usually binds first)."""
MAX_WAIT_TASKS = 256

ID_PATTERN = r"^[A-Za-z0-9_.@-]{1,128}$"
Id = Annotated[str, Field(pattern=ID_PATTERN)]
"""A memory, episode or task id (the schema says so, so generated clients check it too)."""
MetaValue = StrictStr | bool | int | FiniteFloat | list[StrictStr]
Metadata = dict[Annotated[str, Field(min_length=1, max_length=128)], MetaValue]
Filters = dict[str, Any]


class Strict(BaseModel):
    """Base of every request body: an unknown field is an error naming it."""

    model_config = ConfigDict(extra="forbid")


class MessageIn(Strict):
    """One chat turn (the same keys ``Client.add`` accepts)."""

    role: Role = Role.USER
    content: str | None = Field(default=None, description="the turn's text")
    text: str | None = Field(default=None, description="alias of content")
    speaker: str | None = Field(default=None, max_length=256)
    name: str | None = Field(default=None, max_length=256, description="alias of speaker")
    timestamp: datetime | None = Field(default=None, description="when it was said (ISO-8601)")
    id: Id | None = Field(default=None, description="episode id (idempotency)")
    metadata: Metadata | None = None

    @model_validator(mode="after")
    def _has_text(self) -> MessageIn:
        if self.content is None and self.text is None:
            raise ValueError("content: a message needs content (or text)")
        return self


class AddRequest(Strict):
    """``POST /v1/namespaces/{ns}/messages``."""

    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    metadata: Metadata | None = Field(default=None, description="merged into every message")
    timestamp: datetime | None = Field(default=None, description="default time of the turns")
    user_id: Id | None = Field(default=None, description="scope: the user the turns are about")
    agent_id: Id | None = Field(default=None, description="scope: the agent")
    run_id: Id | None = Field(default=None, description="scope: the run / session")
    infer: StrictBool = Field(default=True, description="false: store user turns verbatim")
    wait: StrictBool = Field(default=False, description="block until stored; returns memory ids")
    expires_at: datetime | None = Field(default=None, description="the memories leave search "
                                        "and profile at this instant (ISO 8601)")
    ttl_seconds: FiniteFloat | None = Field(default=None, gt=0, description="or: that many "
                                            "seconds after each turn's timestamp")


class Usage(BaseModel):
    """The model calls a request caused and the tokens the endpoints reported for them
    (the offline models report none: 0)."""

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: dict[str, int] = Field(default_factory=dict,
                                  description="model_calls by role: extract, decide, "
                                  "merge, summarize, embed")


class TaskIds(BaseModel):
    """Enqueued ingest tasks (202)."""

    task_ids: list[str]


class MemoryIds(BaseModel):
    """Memories written by a waited-for add (200)."""

    memory_ids: list[str]
    task_ids: list[str]
    usage: Usage = Field(default_factory=Usage, description="what storing the turns cost")


class WaitRequest(Strict):
    """``POST /v1/namespaces/{ns}/tasks/wait``: tasks enqueued for this namespace."""

    task_ids: list[Id] = Field(min_length=1, max_length=MAX_WAIT_TASKS)
    timeout: float = Field(default=60.0, gt=0, le=600)


class WaitResponse(BaseModel):
    """Each task's result, in order; or every id in ``pending`` if the wait ran out."""

    results: list[dict[str, Any]]
    pending: list[str] = Field(default_factory=list)


class SearchRequest(Strict):
    """``POST /v1/namespaces/{ns}/search``."""

    query: str = Field(min_length=1, max_length=8192)
    k: StrictInt = Field(default=10, ge=1, le=MAX_K)
    filters: Filters | None = Field(default=None, description="the filter language")
    include_inactive: StrictBool = False
    max_chars: StrictInt = Field(default=4000, ge=1, le=1_000_000)
    as_of: datetime | None = Field(default=None, description="search the memories valid at "
                                   "this instant (ISO 8601) instead of the live ones")
    include_history: StrictBool = Field(default=False, description="each hit with the values "
                                        "its fact replaced (earlier), oldest first")
    time_hint: StrictBool = Field(default=False, description="a relative time in the query "
                                  "(last week, in March) becomes a filter on event_at")


class SearchResult(BaseModel):
    """One hit: the memory (no vector), its cosine similarity and the ranking score."""

    memory: Memory
    similarity: float
    score: float
    earlier: list[Memory] = Field(default_factory=list,
                                  description="with include_history: the values the fact "
                                  "replaced, oldest first")


class SearchResponse(BaseModel):
    """Ranked hits, best first."""

    results: list[SearchResult]
    warning: str | None = Field(
        default=None, description="set when the answer is empty because the namespace has "
        "no data: a typo (with the closest name in the key's scopes) or turns still queued")


class _SearchResultDict(TypedDict):
    memory: Memory
    similarity: float
    score: float
    earlier: list[Memory]


class _SearchResponseDict(TypedDict):
    results: list[_SearchResultDict]
    warning: str | None


SEARCH_RESPONSE_JSON = TypeAdapter(_SearchResponseDict)
"""Serializes a :class:`SearchResponse` given as plain dicts (same fields, same order:
the same JSON, byte for byte) without building the models first: about a third of the
cost of answering a search's hits. Give it what the models would hold: ``Memory``
instances and ``float`` values (nothing is validated or converted)."""


class MemoryPage(BaseModel):
    """One page of a listing; pass ``next_cursor`` back as ``cursor`` for the next."""

    memories: list[Memory]
    next_cursor: str | None


class MemoryList(BaseModel):
    """Memories."""

    memories: list[Memory]


class Profile(MemoryList):
    """The profile's facts, highest confidence first."""

    warning: str | None = Field(
        default=None, description="set when the answer is empty because the namespace has "
        "no data: a typo (with the closest name in the key's scopes) or turns still queued")


class History(BaseModel):
    """Every audited change of a memory."""

    events: list[AuditEvent]


class Stats(BaseModel):
    """Counts by status, counters and the snapshot version."""

    namespace: str
    version: int
    status: dict[str, int]
    counters: dict[str, float]
    backlog: dict[str, int] = Field(
        default_factory=dict,
        description="ingest tasks accepted and not finished: namespace, total")
    queues: dict[str, int] = Field(default_factory=dict,
                                   description="messages waiting per broker queue")
    usage: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="model_calls, prompt_tokens and completion_tokens "
        "by operation (ingest, consolidate, context)")


class VersionOut(BaseModel):
    """One committed snapshot."""

    version: int
    created_at: datetime
    memories: int


class Versions(BaseModel):
    """The current version and the snapshots kept."""

    current: int
    versions: list[VersionOut]


class RollbackRequest(Strict):
    """``POST /v1/namespaces/{ns}/rollback``."""

    version: StrictInt = Field(ge=0)


class RollbackResponse(BaseModel):
    """The pointer move."""

    namespace: str
    from_version: int
    to_version: int


class ConsolidateRequest(Strict):
    """``POST /v1/namespaces/{ns}/consolidate``."""

    wait: StrictBool = Field(default=False, description="block until the whole pass is done")
    full: StrictBool = Field(default=False, description="compare everything, not only what changed")
    timeout: float = Field(default=600.0, gt=0, le=3600)


class ConsolidateStarted(BaseModel):
    """The enqueued pass (202)."""

    task_id: str


class ConsolidateReport(BaseModel):
    """What the finished pass did (200)."""

    report: dict[str, Any]


class EraseRequest(Strict):
    """``POST /v1/namespaces/{ns}/erase``: exactly one of the two."""

    memory_id: Id | None = None
    episode_id: Id | None = None
    keep_sources: StrictBool = Field(
        default=False, description="erasing a memory also erases the turns it came from "
                                   "unless true")

    @model_validator(mode="after")
    def _one(self) -> EraseRequest:
        if (self.memory_id is None) == (self.episode_id is None):
            raise ValueError("memory_id: give exactly one of memory_id, episode_id")
        return self


class Erased(BaseModel):
    """How many records were erased."""

    erased: int


class ForgetBody(Strict):
    """``POST /v1/namespaces/{ns}/forget``: what the user asked to forget, as said
    ("please forget my address", "that") or as a phrase ("my home address")."""

    text: str = Field(min_length=1, max_length=2000)
    user_id: Id | None = Field(default=None, description="scope: only this user's memories")
    agent_id: Id | None = None
    run_id: Id | None = None


class Forgotten(BaseModel):
    """What a forget request erased: ids and counts, never the erased text."""

    kind: str = Field(description="attribute | entity | turn | everything | unread "
                                  "(not read as a request: nothing erased)")
    matched: int
    erased: int = Field(description="memories erased")
    memory_ids: list[str]
    turns_erased: list[str]
    over_limit: int = Field(description="matches kept: more than a request may erase")


class UpdateRequest(Strict):
    """``PATCH /v1/namespaces/{ns}/memories/{id}``: new text and/or metadata."""

    text: str | None = Field(default=None, min_length=1, max_length=32768)
    metadata: Metadata | None = None
    expires_at: datetime | None = Field(default=None, description="expire at this instant")
    ttl_seconds: FiniteFloat | None = Field(default=None, gt=0,
                                            description="or: that many seconds from now")

    @model_validator(mode="after")
    def _something(self) -> UpdateRequest:
        if self.text is None and self.metadata is None and self.expires_at is None \
                and self.ttl_seconds is None:
            raise ValueError("text: give text, metadata, expires_at or ttl_seconds to change")
        return self


class Health(BaseModel):
    """Liveness / readiness."""

    status: str
    checks: dict[str, str] = Field(default_factory=dict)


class ErrorDetail(BaseModel):
    """What went wrong; ``field`` names the offending input when there is one."""

    code: str
    message: str
    field: str | None = None


class ErrorBody(BaseModel):
    """Every error response."""

    error: ErrorDetail
