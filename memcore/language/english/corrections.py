"""Corrections: "sorry, I meant Thursday", "let me correct what I said: it was Porto".

A correction is no fact of its own: it names the value that replaces one the speaker
said before. The pack finds the value in the parse (the object of a past-tense
"meant" whose subject is a person, or the predicate after the colon of "correct" /
"correction"); the write path turns the fact into "It's <value>[, not <old>]." and
applies it to the memory it corrects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.language.english.reader import surface

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_VALUE_DEPS = ("dobj", "npadvmod", "attr", "oprd", "pobj")
_NOT_PEOPLE = frozenset({"it", "that", "this", "which", "what", "they", "he", "she"})


def _negated_alternative(tok: Token) -> str:
    """The value a correction says it is not ("the blue one, not the red one")."""
    negated_here = any(c.dep_ == "neg" for c in tok.children)
    for child in tok.children:
        if child.dep_ in ("appos", "conj") and (
                negated_here or any(g.dep_ == "neg" for g in child.children)):
            return surface(child)
    return ""


def _written(tok: Token) -> str:
    value = surface(tok)
    old = _negated_alternative(tok)
    if old and old in value:
        value = value[:value.index(old)].rstrip(" ,")
    return f"It's {value}, not {old}." if old else f"It's {value}."


def correction(doc: Doc) -> str | None:
    """The fact ``doc`` corrects to, written as "It's X[, not Y].", or None."""
    for tok in doc:
        value = _meant(tok)
        if value is None and tok.lemma_ in ("correct", "correction") and ":" in doc.text:
            value = _after_colon(doc)
        if value is not None:
            return _written(value)
    return None


def _meant(tok: Token) -> Token | None:
    """The value of "<someone> meant <value>" when ``tok`` is that "meant"."""
    if tok.lemma_ != "mean" or tok.tag_ != "VBD":
        return None
    subject = next((c for c in tok.children if c.dep_ == "nsubj"), None)
    if subject is None or subject.lower_ in _NOT_PEOPLE:
        return None
    value = next((c for c in tok.children if c.dep_ in _VALUE_DEPS), None)
    if value is not None and value.pos_ in ("NOUN", "PROPN", "NUM", "ADJ"):
        return value
    return None


def _after_colon(doc: Doc) -> Token | None:
    """The value of "it was <value>" after the colon of "let me correct that: ..."."""
    colon = next(t for t in doc if t.text == ":")
    after = [t for t in doc[colon.i + 1:] if t.head.i == t.i or t.dep_ == "ROOT"]
    root = after[0] if after else None
    if root is None or root.lemma_ != "be":
        return None
    subject = next((c for c in root.children if c.dep_ == "nsubj"), None)
    value = next((c for c in root.children if c.dep_ in ("attr", "acomp")), None)
    if subject is not None and subject.lower_ in ("it", "that") and value is not None:
        return value
    return None
