"""Domain model: episodes, memories, relations and audit events (pydantic v2).

Times are timezone-aware UTC datetimes. A naive datetime is read as UTC; an
episode's timestamp is always the event's own time and is required.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

import numpy as np
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from memcore.core.text import content_hash

NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_.@-]{1,128}$")
ID_RE = re.compile(r"^[A-Za-z0-9_.@-]{1,128}$")
MAX_TEXT_BYTES = 32 * 1024
"""Largest memory text. A turn's limit is the ``max_turn_bytes`` setting instead."""
TURN_LIMIT_CONTEXT = "max_turn_bytes"
"""Validation-context key carrying the largest accepted turn in bytes (see :func:`turn_limit`)."""


def validate_namespace(value: str) -> str:
    """Return ``value`` if it is a legal namespace, else raise ValueError.

    Namespaces end up inside Redis keys, so only letters, digits, ``-``, ``_``,
    ``.`` and ``@`` are allowed (no ``{``, ``}``, ``*``, ``:`` or whitespace), at
    most 128 characters.
    """
    if not isinstance(value, str):
        raise ValueError(f"namespace must be a string, got {type(value).__name__}")
    if not NAMESPACE_RE.fullmatch(value):
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise ValueError(
            f"invalid namespace {shown!r}: use 1-128 letters, digits, '-', '_', '.' or '@'"
        )
    return value


def validate_identifier(value: str) -> str:
    """Validate a memory or episode id (same alphabet as namespaces)."""
    if not isinstance(value, str) or not ID_RE.fullmatch(value):
        shown = value if not isinstance(value, str) or len(value) <= 40 else value[:40] + "..."
        raise ValueError(f"invalid id {shown!r}: use 1-128 letters, digits, '-', '_', '.' or '@'")
    return value


def as_utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime (naive values are taken as UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def as_instant(value: datetime | str, field: str) -> datetime:
    """``value`` (a datetime, or an ISO 8601 string such as ``"2026-03-01T10:00:00Z"``)
    as an aware UTC datetime; anything else is a ValueError naming ``field``."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"{field}: {value!r} is not an ISO 8601 date-time "
                             "(e.g. 2026-03-01T10:00:00Z)") from None
    if not isinstance(value, datetime):
        raise ValueError(f"{field}: expected a datetime or an ISO 8601 string, "
                         f"got {type(value).__name__}")
    return as_utc(value)


def _check_time(value: datetime) -> datetime:
    value = as_utc(value)
    if not (1900 <= value.year <= 2200):
        raise ValueError(f"timestamp {value.isoformat()} is outside the years 1900-2200")
    return value


def _check_text(value: str, limit: int | None = MAX_TEXT_BYTES) -> str:
    if not value.strip():
        raise ValueError("text must not be empty")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:  # lone surrogates
        raise ValueError("text is not valid UTF-8 (lone surrogate)") from exc
    if limit is not None and size > limit:
        raise ValueError(f"text is {size} bytes; the limit is {limit}")
    if has_control_characters(value):
        raise ValueError("text contains control characters")
    return value


def has_control_characters(value: str) -> bool:
    """True if ``value`` holds a control character other than tab, newline and carriage
    return (NUL, ESC, ...): refused in turns, memory texts and metadata strings alike."""
    return any(ord(c) < 32 and c not in "\t\n\r" for c in value)


def turn_limit(max_turn_bytes: int) -> dict[str, int]:
    """The validation context that bounds turn texts: ``Episode.model_validate(data,
    context=turn_limit(settings.max_turn_bytes))``. Without it a turn's size is not
    checked here; every entry point (client, task payload, write path) passes it."""
    return {TURN_LIMIT_CONTEXT: max_turn_bytes}


def check_turn_size(text: str, max_turn_bytes: int) -> str:
    """``text`` if it fits in ``max_turn_bytes`` (UTF-8), else a ValueError saying so."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_turn_bytes:
        raise ValueError(f"text is {size} bytes; the limit is {max_turn_bytes}")
    return text


def _check_turn(value: str, info: ValidationInfo) -> str:
    _check_text(value, limit=None)
    limit = (info.context or {}).get(TURN_LIMIT_CONTEXT)
    return value if limit is None else check_turn_size(value, int(limit))


METADATA_KEY_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
SCOPE_FIELDS = ("user_id", "agent_id", "run_id")
"""First-class scopes of a memory (Mem0's vocabulary); never part of ``metadata``."""
MAX_METADATA_KEYS = 64
MAX_METADATA_STRING = 4096
MAX_METADATA_LIST = 256
MAX_METADATA_BYTES = 64 * 1024

MetadataValue = str | int | float | bool | list[str]


def validate_metadata(value: Any, field: str = "metadata") -> dict[str, MetadataValue]:
    """Return ``value`` as a metadata object, or raise ValueError naming the bad field.

    Metadata is a JSON object whose values are strings, numbers, booleans or lists of
    strings (no nesting, no null). Keys are 1-64 letters, digits, ``_``, ``.`` or ``-``;
    ``user_id``, ``agent_id`` and ``run_id`` are scopes with their own argument, so a
    metadata key can never move a memory into another scope.
    """
    if not isinstance(value, dict):
        raise ValueError(f"{field}: expected a JSON object, got {type(value).__name__}")
    if len(value) > MAX_METADATA_KEYS:
        raise ValueError(f"{field}: {len(value)} keys; the limit is {MAX_METADATA_KEYS}")
    out: dict[str, MetadataValue] = {}
    size = 0
    for key, item in value.items():
        if not isinstance(key, str) or not METADATA_KEY_RE.fullmatch(key):
            raise ValueError(f"{field}: invalid key {key!r}: use 1-64 letters, digits, "
                             "'_', '.' or '-' (not starting with '.' or '-')")
        where = f"{field}.{key}"
        if key in SCOPE_FIELDS:
            raise ValueError(f"{where}: reserved; pass {key} as its own argument")
        out[key] = _metadata_value(item, where)
        size += len(key) + len(str(item))
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"{field}: about {size} bytes; the limit is {MAX_METADATA_BYTES}")
    return out


def union_metadata(objects: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Metadata objects combined, the first the strongest (a merge's survivor, the memory
    a repeat reinforces).

    Every key of every object is kept. Where they disagree, strings and lists of strings
    become one list of their distinct strings (in order), so a filter that matched any
    of them still matches; differing numbers or booleans, and mixed types, keep the
    first object's value.
    """
    out: dict[str, Any] = {}
    for key in dict.fromkeys(k for obj in objects for k in obj):
        values = [obj[key] for obj in objects if key in obj]
        first = values[0]
        if all(type(v) is type(first) and v == first for v in values):
            out[key] = first
        elif all(isinstance(v, str | list) for v in values):
            out[key] = list(dict.fromkeys(
                s for v in values for s in ([v] if isinstance(v, str) else v)))
        else:
            out[key] = first
    return out


FACTS_KEY = "facts"
"""Episode metadata key for facts the producer extracted itself (strings or objects,
checked by the ``provided`` extractor); never copied to memories."""


def validate_episode_metadata(value: Any) -> dict[str, Any]:
    """Episode metadata: memory metadata plus the producer's ``facts`` list."""
    if isinstance(value, dict) and FACTS_KEY in value:
        rest = {k: v for k, v in value.items() if k != FACTS_KEY}
        return {**validate_metadata(rest), FACTS_KEY: value[FACTS_KEY]}
    return validate_metadata(value)


def _metadata_value(item: Any, where: str) -> MetadataValue:
    if isinstance(item, bool):
        return item
    if isinstance(item, int):
        if abs(item) >= 2**63:
            raise ValueError(f"{where}: integer out of the 64-bit range")
        return item
    if isinstance(item, float):
        if not math.isfinite(item):
            raise ValueError(f"{where}: number must be finite")
        return item
    if isinstance(item, str):
        _check_meta_string(item, where)
        return item
    if isinstance(item, list | tuple):
        if len(item) > MAX_METADATA_LIST:
            raise ValueError(f"{where}: {len(item)} items; the limit is {MAX_METADATA_LIST}")
        for i, element in enumerate(item):
            if not isinstance(element, str):
                raise ValueError(f"{where}[{i}]: lists may hold only strings, got "
                                 f"{type(element).__name__}")
            _check_meta_string(element, f"{where}[{i}]")
        return list(item)
    raise ValueError(f"{where}: expected a string, number, boolean or list of strings, got "
                     f"{type(item).__name__}")


def _check_meta_string(item: str, where: str) -> None:
    if len(item) > MAX_METADATA_STRING:
        raise ValueError(f"{where}: {len(item)} characters; the limit is {MAX_METADATA_STRING}")
    try:
        item.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{where}: not valid UTF-8 (lone surrogate)") from exc
    if has_control_characters(item):
        # As in turns: NUL and ESC bytes would reach logs and the inspector's HTML raw.
        raise ValueError(f"{where}: contains control characters (only tab, newline and "
                         "carriage return are allowed)")


def scope_key(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    """The scope as one string ("" when unscoped): memories of different scopes are never
    deduplicated, merged or compared with each other."""
    if user_id is None and agent_id is None and run_id is None:
        return ""
    return f"u={user_id or ''}\x1fa={agent_id or ''}\x1fr={run_id or ''}"


Namespace = Annotated[str, AfterValidator(validate_namespace)]
Identifier = Annotated[str, AfterValidator(validate_identifier)]
Metadata = Annotated[dict[str, Any], AfterValidator(validate_metadata)]
EpisodeMetadata = Annotated[dict[str, Any], AfterValidator(validate_episode_metadata)]
UtcDatetime = Annotated[datetime, AfterValidator(_check_time)]
Text = Annotated[str, AfterValidator(_check_text)]
TurnText = Annotated[str, AfterValidator(_check_turn)]
Unit = Annotated[float, Field(ge=0.0, le=1.0)]


def new_id() -> str:
    """A fresh random id (32 hex characters)."""
    return uuid.uuid4().hex


def utcnow() -> datetime:
    """The wall clock as an aware UTC datetime (for bookkeeping, never event time)."""
    return datetime.now(UTC)


class Role(StrEnum):
    """Who spoke a turn."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Kind(StrEnum):
    """What sort of fact a memory holds; decides its confidence half-life."""

    PREFERENCE = "preference"
    KNOWLEDGE = "knowledge"
    GOAL = "goal"
    TEMPORARY = "temporary"
    EVENT = "event"
    SUMMARY = "summary"
    RELATION = "relation"


class Status(StrEnum):
    """Life-cycle of a memory."""

    CANDIDATE = "candidate"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    TOMBSTONED = "tombstoned"


LIVE_STATUSES = frozenset({Status.CANDIDATE, Status.ACTIVE})


class Episode(BaseModel):
    """One conversation turn as it happened."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Identifier = Field(default_factory=new_id)
    namespace: Namespace
    role: Role
    speaker: str = Field(default="", max_length=256)
    text: TurnText
    timestamp: UtcDatetime
    metadata: EpisodeMetadata = Field(default_factory=dict)
    user_id: Identifier | None = None
    agent_id: Identifier | None = None
    run_id: Identifier | None = None
    expires_at: UtcDatetime | None = None
    """The caller's expiry for the memories this turn produces (``ttl_seconds`` or
    ``expires_at`` on add); not stored with the turn."""

    @property
    def scope(self) -> str:
        """See :func:`scope_key`."""
        return scope_key(self.user_id, self.agent_id, self.run_id)


class Relation(BaseModel):
    """A subject-predicate-object fact, e.g. works_at(Alice, Acme)."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(min_length=1, max_length=256)
    predicate: str = Field(min_length=1, max_length=128)
    object: str = Field(min_length=1, max_length=256)
    weight: Unit = 1.0

    def render(self) -> str:
        """The relation as ``predicate(subject, object)``."""
        return f"{self.predicate}({self.subject}, {self.object})"


class Frame(BaseModel):
    """A fact's structure: who (``subject``), which attribute, what value, said how.

    Built by a language pack from the fact's text (docs/design.md, frames); the core
    compares frames without knowing any language. ``attribute`` is a frame name from
    :data:`memcore.core.frames.SINGLE_VALUED` or another lower-case name
    (``owns``, ``relation:sister``, ``instruction:headings``); ``event`` is ``end`` when
    the fact says its value ended (died, sold, left, quit, healed), ``correction``
    when it corrects an earlier value and ``plan`` when it plans to come to it
    (``plan:owns``: "thinking about getting a road bike"; the fulfilment retires it).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject: str = Field(min_length=1, max_length=256)
    attribute: str = Field(min_length=1, max_length=128)
    value: str = Field(default="", max_length=256)
    polarity: int = Field(default=1, ge=-1, le=1)
    single: bool = False
    event: str = Field(default="", pattern=r"^(|end|correction|plan)$")

    def render(self) -> str:
        """``attribute(subject) = value`` with its polarity and event, for people."""
        sign = "not " if self.polarity < 0 else ""
        event = f" [{self.event}]" if self.event else ""
        return f"{sign}{self.attribute}({self.subject}) = {self.value}{event}"


class Memory(BaseModel):
    """One remembered fact with everything scoring and consolidation need."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    id: Identifier = Field(default_factory=new_id)
    namespace: Namespace
    text: Text
    vector: list[float] | None = None
    importance: Unit = 0.5
    last_used: UtcDatetime
    strength: float = Field(default=1.0, ge=1.0)
    confidence: Unit = 0.5
    last_supported: UtcDatetime | None = None
    kind: Kind = Kind.KNOWLEDGE
    sources: list[str] = Field(default_factory=list)
    support: int = Field(default=1, ge=0)
    explicit: bool = False
    pinned: bool = False
    valid_from: UtcDatetime | None = None
    valid_until: UtcDatetime | None = None
    expires_at: UtcDatetime | None = None
    expiry_given: bool = False
    """``expires_at`` was given by the caller (``ttl_seconds``/``expires_at`` on add, or
    an update): the memory leaves search and profile at that instant and is tombstoned
    (restorable, audited EXPIRE); an expiry the extractor guessed is the pass's to
    handle (docs/design.md)."""
    status: Status = Status.CANDIDATE
    superseded_by: str | None = None
    derived_level: int = Field(default=0, ge=0, le=1)
    recall_count: int = Field(default=0, ge=0)
    content_hash: str = ""
    member_texts: list[str] = Field(default_factory=list)
    relation: Relation | None = None
    frame: Frame | None = None
    frame_read: bool = False
    """A language pack read this fact's text (with ``frame`` None: it found no known
    attribute in it: a remark, news, an episode). False for what no pack read: a
    verbatim turn, a memory added as given, one stored without a language pack."""
    created_at: UtcDatetime
    updated_at: UtcDatetime
    version: int = Field(default=0, ge=0)
    metadata: Metadata = Field(default_factory=dict)
    user_id: Identifier | None = None
    agent_id: Identifier | None = None
    run_id: Identifier | None = None
    capped: dict[str, Any] | None = Field(
        default=None,
        description="which bounds the record has reached (memcore.core.bounds.record_caps): "
                    "filled in the HTTP API's answers, not stored; None: none")

    @field_validator("vector")
    @classmethod
    def _unit_vector(cls, value: list[float] | None) -> list[float] | None:
        if value is None:
            return None
        arr = np.asarray(value, dtype=np.float32)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError("vector must be a non-empty list of floats")
        if not np.all(np.isfinite(arr)):
            raise ValueError("vector contains NaN or infinity")
        norm = float(np.linalg.norm(arr))
        if norm < 1e-12:
            raise ValueError("vector has zero length")
        if abs(norm - 1.0) > 1e-3:
            arr = arr / norm
        return [float(x) for x in arr]

    @model_validator(mode="after")
    def _derived(self) -> Memory:
        if not self.content_hash:
            self.content_hash = content_hash(self.text, self.scope)
        if self.last_supported is None:
            self.last_supported = self.last_used
        if self.valid_from and self.valid_until and self.valid_until < self.valid_from:
            raise ValueError("valid_until is before valid_from")
        return self

    @property
    def array(self) -> np.ndarray:
        """The vector as float32 numpy array (raises if there is none)."""
        if self.vector is None:
            raise ValueError(f"memory {self.id} has no vector")
        return np.asarray(self.vector, dtype=np.float32)

    @property
    def scope(self) -> str:
        """See :func:`scope_key`."""
        return scope_key(self.user_id, self.agent_id, self.run_id)

    @property
    def live(self) -> bool:
        """Candidate or active: part of the current set."""
        return self.status in LIVE_STATUSES

    @property
    def event_at(self) -> datetime:
        """When the fact happened: its ``valid_from``, else when it was stored."""
        return self.valid_from or self.created_at


class AuditAction(StrEnum):
    """Every kind of change the audit log records."""

    ADD = "ADD"
    UPDATE = "UPDATE"
    SUPERSEDE = "SUPERSEDE"
    NOOP = "NOOP"
    MERGE = "MERGE"
    EXPIRE = "EXPIRE"
    TOMBSTONE = "TOMBSTONE"
    RESTORE = "RESTORE"
    PIN = "PIN"
    UNPIN = "UNPIN"
    ERASE = "ERASE"
    PURGE = "PURGE"
    ROLLBACK = "ROLLBACK"
    PROMOTE = "PROMOTE"
    SUMMARIZE = "SUMMARIZE"
    MODEL_ERROR = "MODEL_ERROR"
    DROP = "DROP"
    """Turns not stored: accepted before their namespace was erased (no text kept)."""
    REDACT = "REDACT"
    """Secrets masked in a turn before it was stored: their kinds, never the values."""


class Actor(StrEnum):
    """Who made a change."""

    INGEST = "ingest"
    CONSOLIDATION = "consolidation"
    USER = "user"


class AuditEvent(BaseModel):
    """One change to the memory set, with the reason."""

    model_config = ConfigDict(extra="forbid")

    action: AuditAction
    namespace: Namespace
    before: list[str] = Field(default_factory=list)
    after: list[str] = Field(default_factory=list)
    reason: str = ""
    actor: Actor = Actor.CONSOLIDATION
    decision: str | None = None
    text: str | None = None
    at: UtcDatetime
