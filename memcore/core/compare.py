"""Rule-based comparison of two short facts: same, contradicting, extending or distinct.

Shared by the offline decider and merger so both judge pairs the same way.
Contradictions are only declared between facts about the same subject (the
Graphiti lesson: an over-eager check retires unrelated facts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from memcore.core.lexicon import canonical_terms, fold, numbers, polarity, stem

# Exclusive predicates: a subject has one value at a time, so a new value
# retires the old one. Each pattern captures (subject, value).
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern))
    for slot, pattern in (
        ("residence", r"^(?P<s>.+?) (?:now |currently |still )?(?:lives|live|living|is living|"
                      r"moved|has moved|relocated|is moving|is based|resides|reside)"
                      r" (?:in|to|at) (?:the )?(?P<v>[^,.;]+)"),
        ("residence", r"^(?P<s>.+?)'s? (?:home|home town|hometown) is (?:in )?(?P<v>[^,.;]+)"),
        ("employer", r"^(?P<s>.+?) (?:now |currently )?(?:works|work|is working|started working|"
                     r"has joined|joined|is employed) (?:at|for) (?P<v>[^,.;]+)"),
        ("job", r"^(?P<s>.+?)'s? (?:job|profession|occupation|role) is (?:as )?(?:an? )?"
                r"(?P<v>[^,.;]+)"),
        ("job", r"^(?P<s>.+?) (?:now |currently )?(?:works|work|is working|started working)"
                r" as (?:an? )?(?P<v>[^,.;]+?)(?: (?:at|for) [^,.;]+)?$"),
        ("name", r"^(?P<s>.+?)'s? name is (?P<v>[^,.;]+)"),
        ("age", r"^(?P<s>.+?) (?:is|turned) (?P<v>\d+)(?: years old)?\b"),
        ("partner", r"^(?P<s>.+?) (?:is married to|is dating|is engaged to) (?P<v>[^,.;]+)"),
        ("favorite", r"^(?P<s>.+?)'s? favou?rite (?P<k>[a-z ]+?) is (?P<v>[^,.;]+)"),
        ("school", r"^(?P<s>.+?) (?:studies|study|is studying|goes to school) at (?P<v>[^,.;]+)"),
    )
)


class Relation(StrEnum):
    """How a new fact relates to an existing one."""

    SAME = "same"
    CONTRADICTS = "contradicts"
    EXTENDS = "extends"  # the new fact says the old one plus more
    SUBSUMED = "subsumed"  # the old fact already says more than the new one
    DISTINCT = "distinct"


@dataclass(frozen=True)
class Slot:
    """A single-valued attribute of a subject, e.g. residence(Caroline) = Berlin."""

    name: str
    subject: str
    value: str
    raw: str = ""  # the value as written (``value`` is stemmed for comparison)


_VALUE_END = re.compile(
    r" (?:last|next|this|in|on|with|for|because|since|and|but|after|before|when|while|"
    r"now|recently|ago|years?|months?|weeks?|\d{4})\b.*$"
)


def _clean(text: str) -> str:
    text = fold(text).strip().rstrip(".!")
    return re.sub(r"\s+", " ", text)


def slot_of(text: str) -> Slot | None:
    """The exclusive slot ``text`` fills, if it matches one of the known predicates."""
    clean = _clean(text)
    for name, pattern in _SLOTS:
        match = pattern.search(clean)
        if match:
            key = name + (":" + match.group("k") if "k" in pattern.groupindex else "")
            raw = _VALUE_END.sub("", " " + match.group("v")).strip() or match.group("v")
            value = " ".join(stem(w) for w in raw.split() if w not in {"the", "a", "an"})
            return Slot(key, match.group("s").strip(), value.strip(), raw.strip())
    return None


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def relate(new: str, old: str) -> tuple[Relation, str]:
    """How ``new`` relates to ``old``, with a one-line reason."""
    terms_new, terms_old = canonical_terms(new), canonical_terms(old)
    nums_new, nums_old = numbers(new), numbers(old)
    pol_new, pol_old = polarity(new), polarity(old)
    overlap = _jaccard(terms_new, terms_old)

    slot_new, slot_old = slot_of(new), slot_of(old)
    if (slot_new and slot_old and slot_new.name == slot_old.name
            and slot_new.subject == slot_old.subject):
        a, b = slot_new.value, slot_old.value
        if a and b and (a in b or b in a) and pol_new == pol_old:
            if terms_old < terms_new:
                return Relation.EXTENDS, f"same {slot_new.name}, more detail"
            return Relation.SAME, f"same {slot_new.name} of {slot_new.subject}"
        if a and b and a not in b and b not in a:
            return Relation.CONTRADICTS, (
                f"{slot_new.name} of {slot_new.subject} changed: "
                f"{slot_old.value!r} -> {slot_new.value!r}")
    differ = len(terms_new ^ terms_old)
    # A flip only contradicts the *same* statement: "likes hiking and hates
    # swimming" must not retire "likes hiking".
    if pol_new != pol_old and (differ == 0 or (differ == 1 and len(terms_new | terms_old) >= 6)):
        return Relation.CONTRADICTS, "negation flip of the same statement"
    if nums_new and nums_old and nums_new != nums_old and overlap >= 0.6:
        return Relation.CONTRADICTS, (
            f"changed number {sorted(nums_old)} -> {sorted(nums_new)}")
    if pol_new != pol_old:
        return Relation.DISTINCT, "different polarity, different content"
    if terms_new == terms_old and nums_new == nums_old:
        return Relation.SAME, "same statement"
    if terms_old < terms_new and nums_old <= nums_new:
        return Relation.EXTENDS, "new fact adds detail to the old one"
    if terms_new < terms_old and nums_new <= nums_old:
        return Relation.SUBSUMED, "already known in more detail"
    if overlap >= 0.85 and nums_new == nums_old:
        return Relation.SAME, f"near-identical wording (overlap {overlap:.2f})"
    return Relation.DISTINCT, "different content"


_PREDICATES = {"residence": "lives_in", "employer": "works_at", "job": "works_as",
               "name": "is_named", "age": "has_age", "partner": "partner_of",
               "school": "studies_at"}


def relation_of(text: str) -> tuple[str, str, str] | None:
    """``(subject, predicate, object)`` when ``text`` fills a known single-valued slot,
    e.g. "Sam works at Acme" -> ("sam", "works_at", "acme")."""
    slot = slot_of(text)
    if slot is None or not slot.raw:
        return None
    base, _, detail = slot.name.partition(":")
    predicate = _PREDICATES.get(base, base)
    if detail:
        predicate = f"{predicate}_{detail.replace(' ', '_')}"
    return slot.subject, predicate, slot.raw
