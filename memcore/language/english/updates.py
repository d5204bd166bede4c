"""A bare new value said of the speaker's previous statement: "Python is my main
language" then "these days it's all Go for me" -> "My main language is Go."

The "it" of such a sentence is no thing: it stands for the attribute the speaker's
previous turn gave a value ("my main language", "my number", "my home"). The sentence is
rewritten with that attribute when (1) it is "it is <value>" with a word that says
the value holds now ("now", "these days", "nowadays", "currently", "instead"), and (2)
the previous turn names exactly one attribute of the speaker's of a single-valued kind
(:func:`memcore.core.frames.is_single_valued`). Anything else stays as written: a wrong
attribute is worse than none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.core.frames import is_single_valued
from memcore.language.english.reader import noun_attribute

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_NOW = frozenset({"now", "nowadays", "currently", "instead", "days"})
_FILLERS = frozenset({"all", "just", "only", "mostly", "pretty", "basically", "totally"})
_MINE = frozenset({"my", "our"})


def _said_now(sent: Span) -> bool:
    words = {t.lower_ for t in sent}
    return bool(words & (_NOW - {"days"})) or ("these" in words and "days" in words)


def _new_value(sent: Span) -> str | None:
    """The value of "it's (all) <value> (now / for me)", or None. Read from the words
    after "it's": a run of names, nouns and numbers ("Go" is tagged a verb there)."""
    if not _said_now(sent):
        return None
    words = [t for t in sent if not t.is_punct]
    at = next((i for i, t in enumerate(words[:-2]) if t.lower_ == "it"
               and t.dep_ in ("nsubj", "nsubjpass") and words[i + 1].lemma_ == "be"), None)
    if at is None:
        return None
    rest = words[at + 2:]
    while rest and rest[0].lower_ in _FILLERS:
        rest = rest[1:]
    run = []
    for tok in rest:
        if not _a_value_word(tok):
            break
        run.append(tok.text)
    return " ".join(run) if run else None


def _a_value_word(tok: Token) -> bool:
    """A word of a value: a name (capitalized, however tagged), a noun or a number."""
    if tok.lower_ in _NOW or tok.lower_ in ("these", "for", "tbh", "lol"):
        return False
    return tok.like_num or tok.text[:1].isupper() or tok.pos_ in ("PROPN", "NOUN", "NUM")


def _attribute_phrase(doc: Doc) -> str | None:
    """The one phrase of the speaker's attribute ("my main language") the turn names
    with a value, or None when it names none or several."""
    found = []
    for tok in doc:
        attribute = noun_attribute(tok) if tok.pos_ == "NOUN" else None
        if attribute is None or not is_single_valued(attribute):
            continue
        owner = next((c for c in tok.children if c.dep_ == "poss"), None)
        if owner is None or owner.lower_ not in _MINE:
            continue
        mods = [c for c in tok.lefts if c.dep_ in ("amod", "compound")]
        found.append(" ".join([owner.lower_, *(m.lower_ for m in mods), tok.lower_]))
    return found[0] if len(set(found)) == 1 else None


def updated(doc: Doc, previous: Doc | None) -> str | None:
    """``doc`` with its "it's <value> now" sentences written with the attribute the
    speaker's ``previous`` turn gave a value, or None when nothing is rewritten."""
    if previous is None:
        return None
    phrase = _attribute_phrase(previous)
    if phrase is None:
        return None
    out, changed = [], False
    for sent in doc.sents:
        value = _new_value(sent)
        if value is None:
            out.append(sent.text_with_ws)
            continue
        # Newer than the value it replaces, so no "now" needed (the parser reads
        # "is Go now" as a passive verb).
        out.append(f"{phrase[:1].upper()}{phrase[1:]} is {value}. ")
        changed = True
    return "".join(out).strip() if changed else None
