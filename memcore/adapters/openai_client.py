"""One JSON-answering chat call over any OpenAI-compatible endpoint, with countable retries.

The ``openai`` client's own retries are switched off (``max_retries=0``) so
every attempt, retry and backoff is ours to count and to configure: 429, 5xx,
408/409 and timeouts/connection errors are retried with exponential backoff;
other errors fail at once. Malformed output gets one repair attempt quoting
the parse error; after that the caller falls back to its safe default.
"""

from __future__ import annotations

import json
import re
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
    json_mode: bool = True  # send response_format={"type": "json_object"}

    def __post_init__(self) -> None:
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

    def with_retries(self, send: Callable[[], T]) -> T:
        """Run ``send`` with exponential backoff on retryable errors."""
        usage = self.owner.usage
        cfg = self.config
        for attempt in range(cfg.max_retries + 1):
            usage.requests += 1
            try:
                return send()
            except openai.OpenAIError as exc:
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

    def _complete(self, messages: list[dict[str, str]]) -> str:
        cfg = self.config
        extra: dict[str, Any] = {}
        if cfg.json_mode:
            extra["response_format"] = {"type": "json_object"}

        def send() -> Any:
            return self.client.chat.completions.create(
                model=cfg.chat_model, messages=messages,  # type: ignore[arg-type]
                temperature=cfg.temperature, **extra,
            )

        response = self.with_retries(send)
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.owner.count_tokens(int(usage.prompt_tokens or 0),
                                    int(usage.completion_tokens or 0))
        if not response.choices:
            return ""
        return response.choices[0].message.content or ""

    def ask(self, system: str, user: str, schema: type[M], what: str) -> M | None:
        """One logical call: the parsed answer, or None (error recorded) for the safe default."""
        self.owner.count_call()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        try:
            content = self._complete(messages)
            try:
                return parse_json(content, schema)
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
                    return parse_json(self._complete(messages), schema)
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
