"""Call, token, retry and error counters shared by every model adapter."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass


@dataclass
class ModelUsage:
    """What an adapter has spent so far.

    ``calls`` counts logical model calls (one per batch), ``requests`` the HTTP
    requests actually sent (retries and repair attempts included), ``retries``
    the re-sends after 429 / 5xx / timeouts, ``repairs`` the follow-ups after
    malformed output and ``errors`` the calls that ended in a safe default or
    an exception.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: int = 0
    retries: int = 0
    requests: int = 0
    repairs: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: ModelUsage) -> None:
        """Add ``other``'s counters to this one (for aggregating adapters)."""
        for key, value in asdict(other).items():
            setattr(self, key, getattr(self, key) + value)

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict (for metrics and benchmarks)."""
        return asdict(self)


class Metered:
    """Base for adapters: a ``usage`` counter and the ``errors`` the caller audits.

    ``usage`` adds up every thread's calls; ``thread_calls`` and ``errors`` are per
    thread, so with a threads pool a task counts and audits only its own calls.
    """

    def __init__(self) -> None:
        self.usage = ModelUsage()
        self._local = threading.local()

    @property
    def errors(self) -> list[str]:
        """Errors recorded by this thread since they were last drained."""
        errors: list[str] | None = getattr(self._local, "errors", None)
        if errors is None:
            errors = self._local.errors = []
        return errors

    @property
    def thread_calls(self) -> int:
        """Logical model calls made by this thread."""
        return int(getattr(self._local, "calls", 0))

    def count_call(self) -> None:
        """Count one logical model call (one per batch)."""
        self.usage.calls += 1
        self._local.calls = self.thread_calls + 1

    def record_error(self, message: str) -> None:
        """Count an error and keep its message for the MODEL_ERROR audit entry."""
        self.usage.errors += 1
        self.errors.append(message)

    def drain_errors(self) -> list[str]:
        """Return the recorded error messages and forget them."""
        out = list(self.errors)
        self.errors.clear()
        return out
