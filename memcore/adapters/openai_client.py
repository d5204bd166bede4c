"""One JSON-answering chat call over any OpenAI-compatible endpoint, with countable retries.

The ``openai`` client's own retries are switched off (``max_retries=0``) so
every attempt, retry and backoff is ours to count and to configure: 429, 5xx,
408/409 and timeouts/connection errors are retried with exponential backoff;
other errors fail at once. Malformed output gets one repair attempt quoting
the parse error; after that the caller falls back to its safe default.

Structured output: with ``response_format="auto"`` the first call to an endpoint asks
for the answer's JSON schema the OpenAI way (``{"type": "json_schema", ...}``). A server
that rejects it (llama.cpp's server answers HTTP 500, others 400/422) is asked again with
``{"type": "json_object", "schema": ...}`` (llama.cpp's own form, enforced by a grammar),
then with plain JSON mode. The mode that worked is remembered per endpoint and model,
so the probing costs one rejected request per process.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from memcore.observability.usage import Metered

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_RETRY_STATUS = frozenset({408, 409, 429})
RESPONSE_FORMATS = ("auto", "json_schema", "json_object_schema", "json_object", "none")
"""``auto`` probes the next three in order; ``none`` sends no response_format."""
_PROBE_ORDER = ("json_schema", "json_object_schema", "json_object")
# A status that says "this request's form is not supported" rather than "try again".
_FORM_REJECTED = frozenset({400, 404, 415, 422, 501})
_working_formats: dict[tuple[str, str], str] = {}
_formats_lock = threading.Lock()
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class ModelCallError(RuntimeError):
    """A model call that failed after all retries (or with a non-retryable error)."""


@dataclass(frozen=True)
class OpenAIConfig:
    """Where and how to reach an OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp)."""

    base_url: str | None = None
    api_key: str | None = None
    chat_model: str = "gpt-4o-mini"
    embedding_model: str = "text-embedding-3-small"
    timeout: float = 30.0
    max_retries: int = 3
    base_delay: float = 0.5  # first backoff; doubles per retry
    max_delay: float = 8.0
    temperature: float = 0.0
    response_format: str = "auto"  # one of RESPONSE_FORMATS
    max_tokens: int | None = 1024  # room for the JSON; a cut-off reply is malformed
    seed: int | None = None  # sent when set (repeatable sampling on servers that honour it)
    max_input_chars: int = 3000  # a batch's JSON input per call (small context windows)

    def __post_init__(self) -> None:
        if self.response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {', '.join(RESPONSE_FORMATS)}; "
                             f"got {self.response_format!r}")
        if self.max_tokens is not None and self.max_tokens < 16:
            raise ValueError(f"max_tokens must be >= 16, got {self.max_tokens}")
        if self.max_input_chars < 200:
            raise ValueError(f"max_input_chars must be >= 200, got {self.max_input_chars}")
        if self.timeout <= 0:
            raise ValueError(f"timeout must be positive, got {self.timeout}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("base_delay and max_delay must be >= 0")

    def client(self) -> openai.OpenAI:
        """A client with the library's retries off (ours are counted instead)."""
        return openai.OpenAI(
            api_key=self.api_key or "not-needed",  # local servers ignore the key
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
        )


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUS or exc.status_code >= 500
    return False


def _retry_after(exc: Exception) -> float | None:
    """The server's Retry-After in seconds, if it sent a numeric one."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _format_rejected(exc: Exception) -> bool:
    """Did the server refuse the request's response_format (not a passing failure)?"""
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code in _FORM_REJECTED:
        return True
    # llama.cpp's server answers 500 naming the field it could not validate.
    text = str(exc).lower()
    return exc.status_code >= 500 and ("response_format" in text or "json_schema" in text)


class FormatRejected(ModelCallError):
    """The server refused a response_format; the next, plainer one is tried."""


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema with every ``$ref`` inlined (grammar converters and
    small servers handle a flat schema best)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return inline(defs[ref.removeprefix("#/$defs/")])
            # Length bounds become huge grammars in llama.cpp's converter; the pydantic
            # model still checks them.
            return {k: inline(v) for k, v in node.items()
                    if k not in ("title", "default", "description", "minLength", "maxLength")}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    out: dict[str, Any] = inline(schema)
    return out


def response_format(mode: str, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` request field of ``mode`` (None: send none)."""
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def describe(exc: Exception) -> str:
    """A short, log-safe description of a client error."""
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    return f"{kind} (HTTP {status})" if status else kind


def parse_json(content: str, schema: type[M]) -> M:
    """Parse a model reply into ``schema`` (code fences tolerated); raises ValueError."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text.startswith("{"):  # chatty models wrap JSON in prose
        start, end = text.find("{"), text.rfind("}")
        if start >= 0 and end > start:
            text = text[start : end + 1]
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        errors = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise ValueError(errors) from None


class JSONChat:
    """Sends chat requests for one adapter and charges its ``usage``/``errors``."""

    def __init__(self, config: OpenAIConfig, owner: Metered,
                 client: openai.OpenAI | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.owner = owner
        self.client = client or config.client()
        self._sleep = sleep

    @property
    def endpoint(self) -> tuple[str, str]:
        """What the working response_format is remembered for: server and model."""
        return (str(self.client.base_url), self.config.chat_model)

    def formats(self) -> list[str]:
        """The response_format modes to try, in order."""
        mode = self.config.response_format
        if mode != "auto":
            return [mode]
        with _formats_lock:
            known = _working_formats.get(self.endpoint)
        return [known] if known else list(_PROBE_ORDER)

    def with_retries(self, send: Callable[[], T], probing: bool = False) -> T:
        """Run ``send`` with exponential backoff on retryable errors.

        ``probing``: a refused response_format raises :class:`FormatRejected` at once.
        """
        usage = self.owner.usage
        cfg = self.config
        for attempt in range(cfg.max_retries + 1):
            usage.requests += 1
            try:
                return send()
            except openai.OpenAIError as exc:
                if probing and _format_rejected(exc):
                    raise FormatRejected(f"response_format refused: {describe(exc)}") from exc
                if not _retryable(exc):
                    raise ModelCallError(f"model request failed: {describe(exc)}") from exc
                if attempt == cfg.max_retries:
                    raise ModelCallError(
                        f"model request failed after {attempt + 1} attempts: {describe(exc)}"
                    ) from exc
                delay = min(cfg.max_delay, cfg.base_delay * 2**attempt)
                hinted = _retry_after(exc)
                if hinted is not None:
                    delay = min(cfg.max_delay, max(delay, hinted))
                usage.retries += 1
                self._sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _send(self, messages: list[dict[str, str]], mode: str, name: str,
              schema: dict[str, Any], probing: bool) -> Any:
        cfg = self.config
        extra: dict[str, Any] = {}
        fmt = response_format(mode, name, schema)
        if fmt is not None:
            extra["response_format"] = fmt
        if cfg.max_tokens is not None:
            extra["max_tokens"] = cfg.max_tokens
        if cfg.seed is not None:
            extra["seed"] = cfg.seed

        def send() -> Any:
            return self.client.chat.completions.create(
                model=cfg.chat_model, messages=messages,  # type: ignore[arg-type]
                temperature=cfg.temperature, **extra,
            )

        return self.with_retries(send, probing=probing)

    def _complete(self, messages: list[dict[str, str]], name: str,
                  schema: dict[str, Any]) -> tuple[str, bool]:
        """The reply's text and whether it was cut off (max_tokens ran out)."""
        modes = self.formats()
        response: Any = None
        for i, mode in enumerate(modes):
            probing = len(modes) > 1 and i < len(modes) - 1
            try:
                response = self._send(messages, mode, name, schema, probing)
            except FormatRejected:
                self.owner.usage.format_fallbacks += 1
                continue  # the next, plainer form
            if len(modes) > 1:
                with _formats_lock:
                    _working_formats[self.endpoint] = mode
            break
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.owner.count_tokens(int(usage.prompt_tokens or 0),
                                    int(usage.completion_tokens or 0))
        if not response.choices:
            return "", False
        choice = response.choices[0]
        return choice.message.content or "", choice.finish_reason == "length"

    def _parse(self, reply: tuple[str, bool], schema: type[M]) -> M:
        content, cut = reply
        if cut:
            raise ValueError("the reply was cut off at max_tokens (unfinished JSON); "
                             "answer shorter")
        return parse_json(content, schema)

    def ask(self, system: str, user: str, schema: type[M], what: str,
            shape: dict[str, Any] | None = None) -> M | None:
        """One logical call: the parsed answer, or None (error recorded) for the safe default.

        ``shape``: the JSON schema sent as the response format when it should be tighter
        than ``schema``'s own (e.g. exactly one item per input, ids as an enum); the reply
        is still parsed and checked with ``schema``.
        """
        self.owner.count_call()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        shape = shape if shape is not None else json_schema(schema)
        try:
            reply = self._complete(messages, schema.__name__, shape)
            content = reply[0]
            try:
                return self._parse(reply, schema)
            except ValueError as first:
                # One repair attempt: show the model its own reply and what was wrong.
                self.owner.usage.repairs += 1
                messages += [
                    {"role": "assistant", "content": content[:4000]},
                    {"role": "user", "content": (
                        f"Your reply could not be parsed: {str(first)[:500]}. Reply again with "
                        "only one JSON object that follows the required format exactly.")},
                ]
                try:
                    return self._parse(self._complete(messages, schema.__name__, shape), schema)
                except ValueError as second:
                    self.owner.record_error(
                        f"{what}: malformed model output after one repair: {str(second)[:300]}")
                    return None
        except ModelCallError as exc:
            self.owner.record_error(f"{what}: {exc}")
            return None


def dumps(data: Any) -> str:
    """Compact JSON for prompts (non-ASCII kept readable)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
