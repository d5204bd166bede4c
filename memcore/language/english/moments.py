"""Facts that report a passing event: something done once, in the past, that leaves no
lasting state behind ("Dan cried in the car", "Keith put up shelves", "Joan has had her
cataracts done").

Such a fact is history, not part of who the speaker is now: the write path stores it
as an event valid at the moment of its turn, so it is found by search but is no longer
a current profile fact (docs/design.md, Frames). A past that changes what lasts (moved,
married, bought, joined, started, quit, ...) is not passing, and neither is a habit
("always", "every week") or a negation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# Verbs whose past leaves a lasting state (a home, a partner, a thing owned, a membership,
# a new role, a skill, an ending): the fact stays a fact.
LASTING = frozenset({
    "move", "relocate", "marry", "divorce", "separate", "adopt", "buy", "purchase", "join",
    "start", "begin", "graduate", "become", "learn", "grow", "bear", "retire", "quit",
    "sell", "lose", "find", "get", "switch", "change", "have", "own", "rent", "qualify",
    "pass", "leave", "die", "break", "stop", "give", "take", "sign", "enrol", "enroll",
    "hire", "promote", "fire", "diagnose", "name", "call", "turn", "decide", "agree",
    "resolve", "accept", "land", "win", "launch", "found", "open", "close", "cancel",
    "finish", "complete", "set", "convert", "upgrade", "swap", "replace", "drop",
    # A life's lasting story: where one studied, worked, lived, served, met someone.
    "study", "train", "work", "live", "serve", "teach", "attend", "meet",
    # Changes of amount, schedule or state: "cut down to", "went back to full time",
    # "handed in his notice", "surrendered the allotment", "hurt his foot".
    "cut", "reduce", "increase", "go", "surrender", "hand", "hurt", "injure", "entrust",
    "pivot", "raise", "lower", "book", "schedule",
    # Where something is kept: "housed in National hives", "based in Leeds".
    "house", "keep", "store", "base", "locate", "place", "put",
    # Reported speech: what was said ("the sleep study said ...") is the fact.
    "say", "tell", "report", "show", "confirm",
})
# Words that make a past clause a habit or a span, not one event.
_SPAN_WORDS = frozenset({"always", "usually", "often", "never", "every", "each", "since",
                         "years", "months", "weeks", "still", "ever", "used", "until"})


def _perfect(root: Token) -> bool:
    """"has had", "have done": a present perfect."""
    return root.tag_ == "VBN" and any(c.dep_ == "aux" and c.lemma_ == "have"
                                      and c.tag_ in ("VBZ", "VBP") for c in root.children)


def passing_event(doc: Doc) -> bool:
    """Does the one-sentence fact ``doc`` report a passing event (see the module)?"""
    sents = list(doc.sents)
    if len(sents) != 1:
        return False
    root = sents[0].root
    if root.pos_ != "VERB" or not (root.tag_ == "VBD" or _perfect(root)):
        return False
    if root.lemma_.lower() in LASTING or any(c.dep_ == "neg" for c in root.children):
        return False
    if any(c.dep_ == "conj" and c.pos_ == "VERB" for c in root.children):
        return False  # "cried and then moved out": one part may last
    if any(c.dep_ in ("ccomp", "parataxis") and c.tag_ in ("VBZ", "VBP", "VBG")
           for c in root.children):
        return False  # "Decision made: Nadia is pivoting to ...": a state now
    return not any(t.lower_ in _SPAN_WORDS for t in doc)
