"""Call, token, retry and error counters that every model adapter keeps about itself.

An adapter (:class:`Metered`) counts what only it can see: logical calls, tokens the
endpoint reported, retries, repairs and the errors it turned into a safe default. The
instrumentation wrappers (:mod:`memcore.observability.instrument`) read the per-thread
part after each call and turn it into metrics and MODEL_ERROR audit entries.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass


@dataclass
class ModelUsage:
    """What an adapter has spent so far.

    ``calls`` counts logical model calls (one per batch), ``requests`` the HTTP
    requests actually sent (retries and repair attempts included), ``retries``
    the re-sends after 429 / 5xx / timeouts, ``repairs`` the follow-ups after
    malformed output, ``format_fallbacks`` the requests whose response_format the
    server refused (answered again in a plainer form) and ``errors`` the calls that
    ended in a safe default or an exception.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: int = 0
    retries: int = 0
    requests: int = 0
    repairs: int = 0
    format_fallbacks: int = 0

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


class _ThreadState(threading.local):
    """One thread's share of an adapter's counters (a threads pool runs tasks side by side)."""

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0
        self.errors: list[str] = []


class Metered:
    """Base for adapters: a ``usage`` counter and the ``errors`` the caller audits.

    ``usage`` adds up every thread's calls; ``thread_calls``, ``thread_tokens`` and
    ``errors`` are per thread, so with a threads pool a task counts and audits only its
    own calls.
    """

    def __init__(self) -> None:
        self.usage = ModelUsage()
        self._thread = _ThreadState()

    def share_counters(self, other: Metered) -> None:
        """Count into ``other``'s counters from now on (for adapters that wrap another)."""
        self.usage = other.usage
        self._thread = other._thread

    @property
    def errors(self) -> list[str]:
        """Errors recorded by this thread since they were last drained."""
        return self._thread.errors

    @property
    def thread_calls(self) -> int:
        """Logical model calls made by this thread."""
        return self._thread.calls

    @property
    def thread_tokens(self) -> int:
        """Tokens (prompt + completion) reported to this thread."""
        return self._thread.tokens

    def count_call(self) -> None:
        """Count one logical model call (one per batch)."""
        self.usage.calls += 1
        self._thread.calls += 1

    def count_tokens(self, prompt: int, completion: int = 0) -> None:
        """Count the tokens an endpoint reported for one request."""
        self.usage.prompt_tokens += prompt
        self.usage.completion_tokens += completion
        self._thread.tokens += prompt + completion

    def record_error(self, message: str) -> None:
        """Count an error and keep its message for the MODEL_ERROR audit entry."""
        self.usage.errors += 1
        self._thread.errors.append(message)

    def drain_errors(self) -> list[str]:
        """Return this thread's recorded error messages and forget them."""
        out = list(self._thread.errors)
        self._thread.errors.clear()
        return out
