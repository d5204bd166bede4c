"""First-person statements of a user turn as frames with a readable sentence.

"I'm 19, live in Manchester and work at a skate shop" -> age, residence, employer of
the speaker, each written from its frame ("Rory is 19 years old.", "Rory lives in
Manchester.", "Rory works at a skate shop."): grammatical by construction, whatever
the turn's spelling. Only the profile's core attributes are written this way
(:data:`TEMPLATES`); everything else is left to the extractor.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memcore.core.frames import is_single_valued
from memcore.core.models import Frame
from memcore.language.english import tables as T
from memcore.language.english.reader import (
    contact_value,
    read_clause,
    subject_of,
    surface,
    value_of,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_WORD = re.compile(r"[^\W_][\w'+-]*")
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
# attribute -> sentence; {s} the speaker, {v} the value as written.
TEMPLATES: dict[str, str] = {
    "residence": "{s} lives in {v}.",
    "employer": "{s} works at {v}.",
    "job": "{s} works as {a} {v}.",
    "age": "{s} is {v} years old.",
    "name": "{s}'s name is {v}.",
    "contact:phone": "{s}'s phone number is {v}.",
    "contact:email": "{s}'s e-mail address is {v}.",
    "contact:address": "{s}'s address is {v}.",
    "diet": "{s} is {v}.",
    "school": "{s} studies at {v}.",
    "reading": "{s} is reading {v}.",
    "main_language": "{s}'s main language is {v}.",
    "relation:partner": "{s}'s partner is {v}.",
}
_CAPITALIZED = frozenset({"residence", "employer", "name", "school", "relation:partner"})


def _article(value: str) -> str:
    return "an" if value[:1].lower() in "aeiou" else "a"


def _value_token(clause: Token, value: str) -> Token | None:
    """The token of the clause heading ``value`` (the frame's normalized value)."""
    for tok in clause.subtree:
        if value_of(tok) == value or contact_value(tok).lower() == value:
            return tok
    return None


def _written(attribute: str, text: str) -> str:
    """A value as it goes into a sentence: names capitalized ("manchester")."""
    if attribute in _CAPITALIZED and text.islower():
        head, comma, rest = text.partition(",")  # "leeds, near the station"
        return " ".join(w[:1].upper() + w[1:] if w not in ("of", "the", "and") else w
                        for w in head.split()) + comma + rest
    return text


def _clauses(sent: Span) -> list[tuple[Token, tuple[str, Token | None]]]:
    """The sentence's clauses with the subject a subject-less one shares."""
    root = sent.root
    shared = subject_of(root)
    out: list[tuple[Token, tuple[str, Token | None]]] = [(root, ("", None))]
    for tok in root.subtree:
        if tok.dep_ == "conj" and tok.pos_ in ("VERB", "AUX") and tok.head.i != tok.i:
            out.append((tok, shared))
    return out


def _intro(sent: Span, speaker: str) -> list[tuple[Frame, str]]:
    """A verbless self-introduction: "jade here, 22, barista at grindhouse coffee"."""
    root = sent.root
    if root.pos_ in ("VERB", "AUX") or not any(c.lower_ == "here" for c in root.children):
        return []
    out: list[tuple[Frame, str]] = []
    for tok in root.subtree:
        if tok.i == root.i or tok.head.i != root.i or tok.dep_ not in ("appos", "conj",
                                                                        "npadvmod"):
            continue
        if tok.like_num and tok.text.isdigit() and 10 <= int(tok.text) <= 110:
            out.append(framed(speaker, "age", tok.text, tok.text))
        elif tok.pos_ == "NOUN" and tok.lemma_.lower() in T.JOB_NOUNS:
            out.append(framed(speaker, "job", value_of(tok), surface(tok)))
            out += _employer(tok, tok, speaker)
    return out


def _employer(clause: Token, job: Token, speaker: str) -> list[tuple[Frame, str]]:
    """The employer named with a job ("a nurse at St James's", "barista at X")."""
    for head in (job, clause):
        for prep in head.children:
            if prep.dep_ == "prep" and prep.lower_ in ("at", "for", "with"):
                pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
                if pobj is not None and value_of(pobj) not in T.NO_VALUE:
                    return [framed(speaker, "employer", value_of(pobj), surface(pobj))]
    return []


def framed(speaker: str, attribute: str, value: str, written: str) -> tuple[Frame, str]:
    """The frame of the speaker's ``attribute`` = ``value`` and its sentence."""
    if not attribute.startswith("contact:"):  # compared by words, as frames are
        value = " ".join(_WORD.findall(value.lower()))
    frame = Frame(subject=speaker.lower()[:256], attribute=attribute, value=value[:256],
                  single=is_single_valued(attribute))
    text = TEMPLATES[attribute].format(s=speaker, v=_written(attribute, written),
                                       a=_article(written))
    return frame, text


def statements(doc: Doc, speaker: str) -> list[tuple[Frame, str]]:
    """The speaker's first-person statements of core attributes in ``doc``, each as
    its frame and a sentence written from it. Negated ones are left out (the
    extractor's change rules read them)."""
    out: list[tuple[Frame, str]] = []
    seen: set[tuple[str, str]] = set()
    for sent in doc.sents:
        found = _intro(sent, speaker)
        for clause, inherited in _clauses(sent):
            raw = read_clause(clause, inherited)
            if raw is None:
                continue
            subject, attribute, value, polarity, event = raw
            if (subject not in FIRST_PERSON or attribute not in TEMPLATES or polarity < 0
                    or event or not value):
                continue
            tok = _value_token(clause, value)
            if tok is None:
                continue
            if attribute.startswith("contact:"):  # a number or address as written
                written = contact_value(tok)
                found.append(framed(speaker, attribute, value, written))
                continue
            found.append(framed(speaker, attribute, value, surface(tok)))
            if attribute == "job":
                found += _employer(clause, tok, speaker)
        for frame, text in found:
            key = (frame.attribute, frame.value)
            if key not in seen:
                seen.add(key)
                out.append((frame, text))
    return out
