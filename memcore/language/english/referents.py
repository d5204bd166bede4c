"""Third-person subjects resolved inside one turn: "Mum's been at Rosewood a week now.
She's settling in" -> "... Mum's settling in", so a fact read alone still says who.

Only a sentence-initial subject "he" / "she" is replaced, and only when the sentences
before it in the same turn (or, for a turn that names no one before it, the speaker's
previous turn) name exactly one person (a name the parser tags as a person,
or a kin word: "my sister", "Mum"); with none or several, the pronoun stays (a wrong
referent is worse than none). The speaker ("I") is never a candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memcore.language.english import tables as T

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

PRONOUNS = frozenset({"he", "she"})
_OPENERS = frozenset({"and", "but", "so", "then", "now", "also", "oh", "well", "anyway"})


def _mentions(sent: Span) -> list[str]:
    """The people ``sent`` names, as written ("my sister", "Mum", "Faisal")."""
    found: dict[int, str] = {}  # token index -> the person it names
    for tok in sent:
        if _a_person(tok):
            first = next((c for c in tok.lefts if c.dep_ == "compound"
                          and c.pos_ == "PROPN"), None)
            if tok.dep_ == "attr":  # "my manager is Tom Ellis": one person, by name
                for subject in tok.head.children:
                    if subject.dep_ in ("nsubj", "nsubjpass"):
                        found.pop(subject.i, None)
            found[tok.i] = f"{first.text} {tok.text}" if first is not None else tok.text
            continue
        kin = _kin_named(tok)
        if kin is not None:
            found[tok.i] = kin
    return list(found.values())


def _kin_named(tok: Token) -> str | None:
    """A relative named by a kin word: "my sister", "Mum" said as a name; not "my sister
    Lin" (one person, Lin)."""
    if tok.lemma_.lower() not in T.KIN or tok.pos_ not in ("NOUN", "PROPN") or any(
            _a_person(c) for c in tok.children):
        return None
    owner = next((c for c in tok.children if c.dep_ == "poss"), None)
    if owner is not None and owner.lower_ == "my":
        return f"my {tok.text}"
    if owner is None and tok.text[:1].isupper() and tok.tag_ == "NNP":
        return tok.text  # "Mum", said as a name
    return None


def _a_person(tok: Token) -> bool:
    """A name that acts or is acted on (subject, object, or set beside a kin word): the
    pipeline runs no entity recognizer, and a name after a preposition is as often a
    place ("in Leeds"). A name that is no person ("Little Acorns is closing") still counts
    as a second candidate, so a pronoun after two names stays."""
    if tok.pos_ != "PROPN" or not tok.text[:1].isupper() or tok.dep_ == "compound":
        return False
    if len(tok.text) > 1 and tok.text.isupper():
        return False  # "CTO", "NHS": a title or a body, not a name
    if tok.dep_ in ("nsubj", "nsubjpass", "dobj", "dative"):
        return True  # "Alfie cried", "we moved Alfie to Treetops"
    if tok.dep_ == "attr" and tok.head.lemma_ == "be":
        return True  # "Our CTO is Grace Adeyemi", "my landlord is Pete"
    if tok.dep_ == "conj" and tok.head.i != tok.i:
        return _a_person(tok.head)  # "Priya and Ana"
    return tok.dep_ == "appos" and tok.head.lemma_.lower() in T.KIN


def mentions(doc: Doc) -> list[str]:
    """The people ``doc`` names, in order."""
    return [m for sent in doc.sents for m in _mentions(sent)]


def opening_subject(sent: Span, words: frozenset[str],
                    openers: frozenset[str] = _OPENERS) -> Token | None:
    """The sentence's opening subject when it is one of ``words`` ("She's settling in",
    "And he left", "It broke"), after ``openers``; not one inside a sentence the parser
    split ("... turned 7 and she's obsessed with ..."): the extractor reads that clause
    apart itself."""
    before = sent.doc.text[:sent.start_char].rstrip()
    if before and before[-1] not in ".!?":
        return None
    for tok in sent:
        if tok.is_punct or tok.lower_ in openers:
            continue
        return tok if tok.lower_ in words and tok.dep_ in ("nsubj", "nsubjpass") else None
    return None


def resolve(doc: Doc, before: Sequence[str] = ()) -> str:
    """``doc``'s text with each resolvable opening "he"/"she" replaced by the one
    person named before it: in the turn, or else (``before``) in the speaker's previous
    turn (the text unchanged when none is resolvable)."""
    named: list[str] = []
    edits: list[tuple[int, int, str]] = []
    for sent in doc.sents:
        pronoun = opening_subject(sent, PRONOUNS)
        people = {m.lower(): m for m in (named or before)}
        if pronoun is not None and len(people) == 1:
            (who,) = people.values()
            if pronoun.text[0].isupper() and who.startswith("my "):
                who = "My" + who[2:]
            edits.append((pronoun.idx, pronoun.idx + len(pronoun.text), who))
        named += _mentions(sent)
    text = doc.text
    for start, end, who in reversed(edits):
        text = text[:start] + who + text[end:]
    return text
