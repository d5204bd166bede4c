"""Call, token, retry and error counters that every model adapter keeps about itself.

An adapter (:class:`Metered`) counts what only it can see: logical calls, tokens the
endpoint reported, retries, repairs and the errors it turned into a safe default. The
instrumentation wrappers (:mod:`memcore.observability.instrument`) read the per-thread
part after each call and turn it into metrics and MODEL_ERROR audit entries, and add it
to every :class:`CallUsage` this thread is collecting (:func:`collect_usage`): what one
operation (an ingest task, a pass's batch, a context block) spent, as its response's
``usage`` reports it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any


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
        self.prompt_tokens = 0
        self.completion_tokens = 0
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
        return self._thread.prompt_tokens + self._thread.completion_tokens

    @property
    def thread_prompt_tokens(self) -> int:
        """Prompt tokens reported to this thread."""
        return self._thread.prompt_tokens

    @property
    def thread_completion_tokens(self) -> int:
        """Completion tokens reported to this thread."""
        return self._thread.completion_tokens

    @property
    def model_name(self) -> str:
        """The model this adapter calls (trace attributes); adapters with a remote model
        override it."""
        return type(self).__name__

    @property
    def model_system(self) -> str:
        """Who serves the model (``gen_ai.system``): ``memcore`` for the built-in rules."""
        return "memcore"

    def count_call(self) -> None:
        """Count one logical model call (one per batch)."""
        self.usage.calls += 1
        self._thread.calls += 1

    def count_tokens(self, prompt: int, completion: int = 0) -> None:
        """Count the tokens an endpoint reported for one request."""
        self.usage.prompt_tokens += prompt
        self.usage.completion_tokens += completion
        self._thread.prompt_tokens += prompt
        self._thread.completion_tokens += completion

    def record_error(self, message: str) -> None:
        """Count an error and keep its message for the MODEL_ERROR audit entry."""
        self.usage.errors += 1
        self._thread.errors.append(message)

    def drain_errors(self) -> list[str]:
        """Return this thread's recorded error messages and forget them."""
        out = list(self._thread.errors)
        self._thread.errors.clear()
        return out


USAGE_FIELDS = ("model_calls", "prompt_tokens", "completion_tokens")
"""What a response's ``usage`` and the per-namespace usage counters count."""


@dataclass
class CallUsage:
    """The model calls one operation made and the tokens the endpoints reported for them.

    The offline models make calls but report no tokens: their token counts stay 0.
    ``calls`` splits ``model_calls`` by role (extract, decide, merge, summarize, embed).
    """

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: dict[str, int] = field(default_factory=dict)

    def note(self, role: str, calls: int, prompt: int, completion: int) -> None:
        """Count ``calls`` calls of ``role`` and their tokens."""
        self.model_calls += calls
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if calls:
            self.calls[role] = self.calls.get(role, 0) + calls

    def add(self, other: CallUsage) -> None:
        """Add ``other``'s counts to this one."""
        for role, n in other.calls.items():
            self.calls[role] = self.calls.get(role, 0) + n
        self.model_calls += other.model_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        """The JSON form a response's ``usage`` has."""
        return {"model_calls": self.model_calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "calls": dict(self.calls)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallUsage:
        """Inverse of :meth:`as_dict`."""
        return cls(int(data.get("model_calls", 0)), int(data.get("prompt_tokens", 0)),
                   int(data.get("completion_tokens", 0)),
                   {str(k): int(v) for k, v in dict(data.get("calls") or {}).items()})


class _Collecting(threading.local):
    def __init__(self) -> None:
        self.open: list[CallUsage] = []


_collecting = _Collecting()


@contextmanager
def collect_usage() -> Iterator[CallUsage]:
    """Collect the model calls this thread makes inside the ``with`` block (nested
    blocks each see every call made inside them)."""
    usage = CallUsage()
    _collecting.open.append(usage)
    try:
        yield usage
    finally:
        _collecting.open.remove(usage)


def note_usage(role: str, calls: int, prompt: int, completion: int) -> None:
    """Add one instrumented call to every usage this thread is collecting."""
    for usage in _collecting.open:
        usage.note(role, calls, prompt, completion)
