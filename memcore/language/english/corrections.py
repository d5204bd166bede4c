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
        if tok.lemma_ == "mean" and tok.tag_ == "VBD":
            subject = next((c for c in tok.children if c.dep_ == "nsubj"), None)
            if subject is None or subject.lower_ in _NOT_PEOPLE:
                continue
            value = next((c for c in tok.children if c.dep_ in _VALUE_DEPS), None)
            if value is not None and value.pos_ in ("NOUN", "PROPN", "NUM", "ADJ"):
                return _written(value)
        if tok.lemma_ in ("correct", "correction") and ":" in doc.text:
            colon = next(t for t in doc if t.text == ":")
            after = [t for t in doc[colon.i + 1:] if t.head.i == t.i or t.dep_ == "ROOT"]
            root = after[0] if after else None
            if root is None or root.lemma_ != "be":
                continue
            subject = next((c for c in root.children if c.dep_ == "nsubj"), None)
            value = next((c for c in root.children if c.dep_ in ("attr", "acomp")), None)
            if subject is not None and subject.lower_ in ("it", "that") and value is not None:
                return _written(value)
    return None
