"""Deterministic offline decider and merger (and the extractor, re-exported).

Both judge pairs with :func:`memcore.language.english.compare.relate`, so the write
path and consolidation agree on what counts as the same fact or a contradiction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memcore.adapters.extract import OfflineExtractor, split_sentences
from memcore.core.interfaces import (
    ClusterOutcome,
    ClusterRequest,
    Decision,
    DecisionRequest,
    Op,
    Verdict,
)
from memcore.language.english.compare import (
    Relation,
    completed_move,
    corrected,
    is_correction,
    relate,
)
from memcore.language.english.lexicon import canonical_terms, content_terms, fold, numbers
from memcore.observability.usage import Metered

__all__ = ["OfflineDecider", "OfflineExtractor", "OfflineMerger", "verdict"]

_MAX_MERGED_CHARS = 300


def verdict(a: str, b: str) -> tuple[Verdict, str]:
    """SAME / CONTRADICTS / DISTINCT for a borderline pair, by the decider's rules."""
    rel, reason = relate(a, b)
    if rel is Relation.CONTRADICTS:
        return Verdict.CONTRADICTS, reason
    if rel in (Relation.SAME, Relation.EXTENDS, Relation.SUBSUMED):
        return Verdict.SAME, reason
    return Verdict.DISTINCT, reason


class OfflineDecider(Metered):
    """ADD / UPDATE / DELETE / NOOP from lexical rules; one "call" per batch.

    NOOP when a neighbour says the same (or more); DELETE (supersede the
    neighbour) on a negation flip, a changed number or a new value of a
    single-valued attribute of the same subject; UPDATE when the fact extends
    a neighbour; otherwise ADD. Neighbours are tried most similar first.
    """

    def decide(self, requests: Sequence[DecisionRequest]) -> list[Decision]:
        """One decision per request, in order."""
        if requests:
            self.count_call()
        return [self.decide_one(request) for request in requests]

    @staticmethod
    def decide_one(request: DecisionRequest) -> Decision:
        """The decision for one fact. A correction ("It's Anne, not Anna") rewrites the
        first neighbour it applies to (the write path lists the speaker's latest memories
        first) and supersedes it with the corrected text."""
        if is_correction(request.fact):
            for index, neighbour in enumerate(request.neighbours):
                fixed = corrected(request.fact, neighbour.text)
                if fixed is not None:
                    return Decision(op=Op.DELETE, target=index, text=fixed,
                                    reason=f"corrected: {request.fact!r}")
        for index, neighbour in enumerate(request.neighbours):
            done = completed_move(request.fact, neighbour.text)
            if done is not None:  # the plan happened: it is history, the move a fact
                return Decision(op=Op.DELETE, target=index, text=done,
                                reason=f"the planned move happened: {request.fact!r}")
        order = sorted(range(len(request.neighbours)),
                       key=lambda i: -request.neighbours[i].similarity)
        judged = [(i, *relate(request.fact, request.neighbours[i].text)) for i in order]
        for wanted, op in ((Relation.SAME, Op.NOOP), (Relation.SUBSUMED, Op.NOOP),
                           (Relation.CONTRADICTS, Op.DELETE), (Relation.EXTENDS, Op.UPDATE)):
            for index, rel, reason in judged:
                if rel is wanted:
                    text = None if op is Op.NOOP else request.fact
                    return Decision(op=op, target=index, text=text, reason=reason)
        return Decision(op=Op.ADD, reason="no neighbour says the same or contradicts it")


def _informativeness(text: str) -> tuple[int, int, int]:
    return len(set(content_terms(text))), len(numbers(text)), len(text)


def merge_texts(texts: Sequence[str], limit: int = _MAX_MERGED_CHARS) -> str:
    """The most informative text plus the distinct details of the others, deduplicated."""
    unique: list[str] = []
    seen: set[str] = set()
    for text in texts:
        for sentence in split_sentences(text) or [text]:
            key = fold(sentence).strip(" .!")
            if key and key not in seen:
                seen.add(key)
                unique.append(sentence.strip().rstrip("."))
    if not unique:
        return ""
    best = max(unique, key=_informativeness)
    covered = set(canonical_terms(best))
    parts = [best]
    for sentence in sorted(unique, key=_informativeness, reverse=True):
        if sentence is best:
            continue
        new = set(canonical_terms(sentence)) - covered
        # Only keep a sentence that adds at least two new terms or a new number.
        if len(new) >= 2 or (numbers(sentence) - numbers(" ".join(parts))):
            candidate = "; ".join([*parts, sentence])
            if len(candidate) > limit:
                break
            parts.append(sentence)
            covered |= new
    return "; ".join(parts)[:limit].rstrip() + "."


_MAX_SUMMARY_CHARS = 1200


class OfflineMerger(Metered):
    """Rule-based merged texts, pair verdicts and one-line group summaries."""

    def merge(self, clusters: Sequence[ClusterRequest]) -> list[ClusterOutcome]:
        """One outcome per cluster: merged text of the originals plus pair verdicts."""
        if clusters:
            self.count_call()
        out = []
        for cluster in clusters:
            judged = [verdict(a, b) for a, b in cluster.pair_texts]
            merged = merge_texts(cluster.texts) if cluster.texts else None
            reasons = "; ".join(r for _, r in judged)
            out.append(ClusterOutcome(
                merged_text=merged or None,
                verdicts=[v for v, _ in judged],
                reason=f"merged {len(cluster.texts)} texts" + (f"; {reasons}" if reasons else ""),
            ))
        return out

    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """One line per group: "Recurring (n): shared key terms" with surface words."""
        if groups:
            self.count_call()
        return [summarize_group(group) for group in groups]


def summarize_group(texts: Sequence[str], max_terms: int = 6,
                    limit: int = _MAX_SUMMARY_CHARS) -> str:
    """A one-line digest of ``texts``: the terms most of them share, then each one's own
    content words (so the summary is still found by what its members said)."""
    if not texts:
        return ""
    doc_freq, surface = _term_counts(texts)
    shared = [t for t, n in doc_freq.most_common() if n >= 2] or [t for t, _ in
                                                                   doc_freq.most_common(3)]
    names = ", ".join(surface.get(t, t) for t in shared[:max_terms])
    head = f"Recurring ({len(texts)} memories): {names}"
    # Terms in most members (>= 80 %) are said once in the head, not per member.
    common = {t for t, n in doc_freq.items() if n >= max(2, (len(texts) * 4 + 4) // 5)}
    body = ""
    for detail in _details(texts, common):
        if len(head) + len(body) + len(detail) + 4 > limit:
            break
        body = f"{body}; {detail}" if body else detail
    return f"{head} - {body}." if body else f"{head}."


def _term_counts(texts: Sequence[str]) -> tuple[Counter[str], dict[str, str]]:
    """How many texts hold each content term, and each term's first surface word."""
    doc_freq: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for text in texts:
        words = [w.strip(".,!?;:'\"()") for w in text.split()]
        for word in words:
            terms = content_terms(word)
            if terms and terms[0] not in surface:
                surface[terms[0]] = word
        doc_freq.update(set(content_terms(text)))
    return doc_freq, surface


def _details(texts: Sequence[str], common: set[str]) -> list[str]:
    """Each text's own content words (without the ``common`` terms), once each."""
    details: list[str] = []
    for text in texts:
        kept = [w.strip(".,!?;:'\"()") for w in text.split()
                if (terms := content_terms(w)) and terms[0] not in common]
        detail = " ".join(kept)
        if detail and detail not in details:
            details.append(detail)
    return details
