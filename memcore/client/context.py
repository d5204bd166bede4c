"""``Client.context``: one prompt-ready block of what memcore knows that matters for a
query, bounded by a token budget (docs/design.md, context block).

Gathers the profile, the search hits and the facts they replaced; renders each with
:mod:`memcore.client.context_text`; orders and cuts them with :mod:`memcore.core.context`;
counts with :mod:`memcore.client.tokens`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcore.client import context_text
from memcore.client.tokens import TOKENIZER, count_tokens
from memcore.consolidation import profile as profile_of
from memcore.core import context as assembly
from memcore.core.config import Settings
from memcore.core.filters import compile_filter
from memcore.core.models import Memory, Status, as_instant, utcnow, validate_namespace
from memcore.store import MemoryStore

MIN_TOKENS = 50
MAX_TOKENS = 32_000
DEFAULT_TOKENS = 1000
TOKENS_PER_CANDIDATE = 10
"""Search hits considered per token of budget: a memory line is rarely under 10 tokens,
so more hits than ``max_tokens / 10`` could never all fit."""
MIN_CANDIDATES = 20
MAX_CANDIDATES = 100


@dataclass(frozen=True)
class ContextPart:
    """One line of a :class:`ContextBlock`: which memory, in which section
    (``profile``, ``relevant``, or ``previous`` for an earlier value of the memory
    ``replaced_by``), the line as the text shows it and its tokens on its own."""

    memory_id: str
    section: str
    line: str
    tokens: int
    replaced_by: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The part as JSON-ready data (what the HTTP API and MCP tool answer)."""
        return {"memory_id": self.memory_id, "section": self.section, "line": self.line,
                "tokens": self.tokens, "replaced_by": self.replaced_by}


@dataclass(frozen=True)
class ContextBlock:
    """A prompt-ready context: ``text`` and the ``parts`` it is made of (in the text's
    order of admission: most useful first). ``tokens`` is ``text`` counted by
    ``tokenizer``, never over ``max_tokens``."""

    namespace: str
    query: str
    text: str
    parts: list[ContextPart]
    tokens: int
    max_tokens: int
    tokenizer: str
    now: datetime
    usage: dict[str, Any] = field(default_factory=dict)
    """The model calls making the block cost (the query's embedding; tokens as reported)."""

    @property
    def memory_ids(self) -> list[str]:
        """The ids of the memories in the block."""
        return [p.memory_id for p in self.parts]

    def as_dict(self) -> dict[str, Any]:
        """The block as JSON-ready data."""
        return {"namespace": self.namespace, "query": self.query, "text": self.text,
                "parts": [p.as_dict() for p in self.parts], "tokens": self.tokens,
                "max_tokens": self.max_tokens, "tokenizer": self.tokenizer,
                "now": self.now.isoformat(), "usage": dict(self.usage)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ContextBlock:
        """Inverse of :meth:`as_dict` (the remote clients read answers with it)."""
        return cls(namespace=str(data["namespace"]), query=str(data["query"]),
                   text=str(data["text"]),
                   parts=[ContextPart(**p) for p in data["parts"]],
                   tokens=int(data["tokens"]), max_tokens=int(data["max_tokens"]),
                   tokenizer=str(data["tokenizer"]),
                   now=as_instant(data["now"], "now"), usage=dict(data.get("usage") or {}))


def check_max_tokens(max_tokens: Any) -> int:
    """``max_tokens`` if it is an integer from :data:`MIN_TOKENS` to :data:`MAX_TOKENS`,
    else a ValueError naming the field."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) \
            or not MIN_TOKENS <= max_tokens <= MAX_TOKENS:
        raise ValueError(f"max_tokens: expected an integer from {MIN_TOKENS} to "
                         f"{MAX_TOKENS}, got {max_tokens!r}")
    return max_tokens


def candidates(max_tokens: int) -> int:
    """How many search hits a block of ``max_tokens`` considers."""
    return max(MIN_CANDIDATES, min(MAX_CANDIDATES, max_tokens // TOKENS_PER_CANDIDATE))


def build_context(store: MemoryStore, settings: Settings,
                  search: Callable[[int, datetime], list[Memory]], namespace: str,
                  query: str, *, max_tokens: int, now: datetime | str | None,
                  filters: Mapping[str, Any] | None) -> ContextBlock:
    """The block for ``query`` (see :meth:`memcore.Client.context`); ``search(k, now)``
    gives the query's memories best first."""
    validate_namespace(namespace)
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query: must be a non-empty string")
    check_max_tokens(max_tokens)
    at = as_instant(now, "now") if now is not None else utcnow()
    wanted = compile_filter(filters)
    hits = search(candidates(max_tokens), at)
    # One scan gives the profile and every replaced fact (old.superseded_by = new.id).
    current: list[Memory] = []
    replaced: dict[str, list[Memory]] = {}
    for memory in store.records.iter_memories(namespace, vectors=False):
        if not wanted(memory):
            continue
        if memory.status is Status.SUPERSEDED and memory.superseded_by:
            replaced.setdefault(memory.superseded_by, []).append(memory)
        else:
            current.append(memory)
    profile = profile_of(current, at, settings.consolidation)
    by_id = {m.id: m for m in (*profile, *hits)}
    previous = {
        new_id: [assembly.Piece(m.id, assembly.PREVIOUS,
                                context_text.line(m, assembly.PREVIOUS, at,
                                                  replaced_by=by_id[new_id]), of=new_id)
                 for m in sorted(olds, key=_latest_first)]
        for new_id, olds in replaced.items() if new_id in by_id}
    order = assembly.admission_order(
        [assembly.Piece(m.id, assembly.PROFILE, context_text.line(m, assembly.PROFILE, at))
         for m in profile],
        [assembly.Piece(m.id, assembly.RELEVANT, context_text.line(m, assembly.RELEVANT, at))
         for m in hits],
        previous, max_tokens, count_tokens)
    chosen = assembly.fit(order, context_text.HEADERS, max_tokens, count_tokens)
    text = assembly.render(chosen, context_text.HEADERS)
    parts = [ContextPart(p.memory_id, p.section, p.line, count_tokens(p.line + "\n"), p.of)
             for p in chosen]
    return ContextBlock(namespace=namespace, query=query, text=text, parts=parts,
                        tokens=count_tokens(text), max_tokens=max_tokens,
                        tokenizer=TOKENIZER, now=at)


def _latest_first(memory: Memory) -> tuple[float, str]:
    ended = memory.valid_until or memory.updated_at
    return (-ended.timestamp(), memory.id)
