"""``bench locomo --context-tokens 1000,2000``: how often a LoCoMo question's evidence
is inside a token-bounded prompt context, for memcore's context block and for raw turns
cut to the same budget, measured in the same run (docs/design.md, context block).

For each question (categories 1-4) and budget B (``cl100k_base`` tokens):

- ``memcore``: ``Client.context(ns, question, B, now=last session)`` over the
  conversation's consolidated memories; an evidence turn is inside when a memory of
  the block has it among its sources (``strict``: a summary's sources do not count);
- ``raw_search``: the conversation's turns ranked by the same hybrid search over the
  raw namespace (every turn as "Speaker: text"), one line each, cut at B;
- ``raw_recent``: the conversation's last turns, one line each, cut at B (what a
  prompt holds without any memory).

``inside`` is the share of questions whose every evidence turn is inside;
``evidence`` the mean share of a question's evidence turns inside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memcore.client.client import Client
from memcore.client.context import MAX_TOKENS, MIN_TOKENS, candidates
from memcore.client.tokens import TOKENIZER, count_tokens
from memcore_bench.common import markdown_table

METHODS = ("memcore", "raw_search", "raw_recent")


def parse_budgets(text: str) -> list[int]:
    """``"1000,2000"`` as ``[1000, 2000]``; an error names ``--context-tokens``."""
    budgets: list[int] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        try:
            value = int(item)
        except ValueError:
            raise ValueError(f"--context-tokens: {item!r} is not an integer") from None
        if not MIN_TOKENS <= value <= MAX_TOKENS:
            raise ValueError(f"--context-tokens: {value} is outside {MIN_TOKENS}-{MAX_TOKENS}")
        budgets.append(value)
    return sorted(set(budgets))


def cut(lines: Sequence[tuple[str, frozenset[str]]], budget: int) -> tuple[set[str], int]:
    """The sources of the first lines whose text fits in ``budget`` tokens together, and
    the tokens they take."""
    used, inside = 0, set[str]()
    for text, sources in lines:
        cost = count_tokens(text + "\n")
        if used + cost > budget:
            break
        used += cost
        inside |= sources
    return inside, used


@dataclass
class Tally:
    """One method at one budget: per question, all evidence inside or not, the share
    inside, and the tokens used."""

    inside: list[float] = field(default_factory=list)
    evidence: list[float] = field(default_factory=list)
    strict: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def add(self, evidence: frozenset[str], found: set[str], tokens: int,
            strict: set[str] | None = None) -> None:
        """Record one question."""
        self.inside.append(float(evidence <= found))
        self.evidence.append(len(evidence & found) / len(evidence))
        self.strict.append(float(evidence <= (found if strict is None else strict)))
        self.tokens.append(tokens)

    def summary(self) -> dict[str, Any]:
        """The figures of this method and budget."""
        n = max(1, len(self.inside))
        return {"inside": sum(self.inside) / n, "evidence": sum(self.evidence) / n,
                "inside_strict": sum(self.strict) / n,
                "tokens": sum(self.tokens) / n, "questions": len(self.inside)}


def raw_text(message: Mapping[str, Any]) -> str:
    """A turn as the raw baseline stores it: ``"Speaker: text"``."""
    speaker = str(message.get("speaker") or "").strip()
    return f"{speaker}: {message['content']}" if speaker else str(message["content"])


def measure_context(client: Client, ns: str, raw_ns: str, conv: Any,
                    budgets: Sequence[int]) -> dict[int, dict[str, Tally]]:
    """Every question of ``conv`` (a locomo ``Conversation``) at every budget."""
    tallies = {b: {m: Tally() for m in METHODS} for b in budgets}
    turns = [m for s in conv.sessions for m in s]
    recent = [(raw_text(m), frozenset([str(m["id"])])) for m in reversed(turns)]
    for q in conv.questions:
        hits = client.search(raw_ns, q.text, k=candidates(max(budgets)), max_chars=10**7,
                             now=conv.last_time, touch=False)
        ranked = [(h.memory.text, frozenset(h.memory.sources)) for h in hits]
        for budget in budgets:
            block = client.context(ns, q.text, budget, now=conv.last_time)
            read = client.store.records.get_many(ns, block.memory_ids, vectors=False)
            memories = [m for m in read if m is not None]
            found = {s for m in memories for s in m.sources}
            kept = {s for m in memories if m.derived_level == 0 for s in m.sources}
            tallies[budget]["memcore"].add(q.evidence, found, block.tokens, kept)
            for method, lines in (("raw_search", ranked), ("raw_recent", recent)):
                inside, used = cut(lines, budget)
                tallies[budget][method].add(q.evidence, inside, used)
    return tallies


def combine_context(per: Sequence[Mapping[int, Mapping[str, Tally]]],
                    budgets: Sequence[int]) -> dict[str, Any]:
    """All conversations' figures: ``{"tokenizer", "budgets", "by_budget": {"1000":
    {method: figures}}}``."""
    out: dict[str, Any] = {"tokenizer": TOKENIZER, "budgets": list(budgets), "by_budget": {}}
    for budget in budgets:
        row: dict[str, Any] = {}
        for method in METHODS:
            total = Tally()
            for conv in per:
                t = conv[budget][method]
                total.inside += t.inside
                total.evidence += t.evidence
                total.strict += t.strict
                total.tokens += t.tokens
            row[method] = total.summary()
        out["by_budget"][str(budget)] = row
    return out


def context_markdown(context: Mapping[str, Any]) -> str:
    """The figures as a table: one row per budget and method."""
    rows = [(budget, method, f["inside"], f["inside_strict"], f["evidence"], round(f["tokens"]))
            for budget, by in context["by_budget"].items() for method, f in by.items()]
    return "\n".join([
        f"## Evidence inside a context of B {context['tokenizer']} tokens", "",
        markdown_table(("B", "context", "questions with all evidence inside",
                        "same, no summary credit", "evidence turns inside (mean share)",
                        "tokens (mean)"), rows), ""])
