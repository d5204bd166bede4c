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
    from spacy.tokens import Doc, Span, Token

_VALUE_DEPS = ("dobj", "npadvmod", "attr", "oprd", "pobj")
# Words that say a sentence corrects what was said before ("sorry, I told you wrong",
# "my mistake", "correction: ..."); with one, "X, not Y" anywhere in it is the correction.
# ("actually" and "sorry" alone are not: "Actually I prefer tea, not coffee" states a taste.)
_CUE_LEMMAS = frozenset({"correct", "correction", "mistake", "wrong", "typo", "misspeak",
                         "misremember"})
# Modifiers climbed from the word before the comma to the phrase it belongs to
# ("Saturday the 19th", "3 pm").
_PHRASE_PARTS = ("appos", "compound", "nummod", "amod", "det", "poss")
_MAX_VALUE_WORDS = 5
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


def _comma_not(doc: Doc) -> str | None:
    """"..., he moves in on Saturday the 19th, not the 20th": "It's Saturday the 19th,
    not the 20th." (the phrase before ", not" and the one after it), or None."""
    for tok in doc:
        if tok.lower_ != "not" or tok.i < 2:
            continue
        # "..., not Y", or typed without the comma: "a nurse not a vet".
        before = tok.i - 2 if doc[tok.i - 1].text == "," else tok.i - 1
        if before == tok.i - 1 and not _is_value(doc[before:tok.i]):
            continue
        node = doc[before]
        # "Guy's, not St Thomas'": the possessive mark belongs to the name before it.
        while node.dep_ in (*_PHRASE_PARTS, "case") and node.head.i < node.i:
            node = node.head
        start = node.left_edge.i
        # Never past a comma or colon: "Oops, typo: Lyon, not Lille" is "Lyon".
        start = max([start] + [t.i + 1 for t in doc[start:before] if t.is_punct])
        new = doc[start:before + 1]
        written = _replacing(new, doc[tok.i + 1:_to_punct(doc, tok.i + 1)])
        if written is not None:
            return written
    return None


def _to_punct(doc: Doc, start: int) -> int:
    """The index of the first punctuation at or after ``start`` (the doc's end if none)."""
    end = start
    while end < len(doc) and not doc[end].is_punct:
        end += 1
    return end


def _is_value(span: Span) -> bool:
    """A value names something or counts ("the 4th" is tagged an adjective)."""
    return any(t.pos_ in ("NOUN", "PROPN", "NUM") or t.like_num
               or any(c.isdigit() for c in t.text) for t in span)


def _replacing(new: Span, old: Span) -> str | None:
    """"It's <new>, not <old>." when both are short values, else None."""
    if all(_is_value(s) and 0 < len(s) <= _MAX_VALUE_WORDS for s in (new, old)):
        return f"It's {new.text}, not {old.text}."
    return None


def correction(doc: Doc) -> str | None:
    """The fact ``doc`` corrects to, written as "It's X[, not Y].", or None."""
    for tok in doc:
        value = _meant(tok)
        if value is None and tok.lemma_ in ("correct", "correction") and ":" in doc.text:
            value = _after_colon(doc)
        if value is not None:
            return _written(value)
    if any(t.lemma_.lower() in _CUE_LEMMAS for t in doc):
        return _comma_not(doc)
    return _not_then(doc)


# Openers before a "not Y, X" correction ("well, sorry, not an epipen, just antihistamine").
_OPENERS = frozenset({"sorry", "oops", "actually", "well", "no", "wait", "err", "erm", "oh", "ah",
                      "um", "uh", "hmm"})
# Openers that say the speaker takes something back ("well, not really" does not).
_SAYS_SO = frozenset({"sorry", "oops", "actually", "wait"})
# Words before the right value that are no part of it.
_LEADS = frozenset({"just", "only", "but", "it", "'s", "it's", "rather"})


def _taken_back_at(doc: Doc) -> int | None:
    """Where the wrong value starts: after openers that say the speaker takes something
    back and a "not" ("sorry, not ..."); None: the turn does not start so."""
    words = [t for t in doc if not t.is_punct]
    lead = 0
    while lead < len(words) and words[lead].lower_ in _OPENERS:
        lead += 1
    if not lead or lead >= len(words) or words[lead].lower_ != "not" or \
            not any(w.lower_ in _SAYS_SO for w in words[:lead]):
        return None
    return words[lead].i + 1


def _right_value(doc: Doc, comma: int) -> Span:
    """The value after the comma, less the words before it that are no part of it
    ("just", "only"), up to the next punctuation."""
    begin = comma + 1
    while begin < len(doc) and doc[begin].lower_ in _LEADS:
        begin += 1
    return doc[begin:_to_punct(doc, begin)]


def _not_then(doc: Doc) -> str | None:
    """"sorry, not an epipen, just antihistamine": "It's antihistamine, not an epipen."
    (after an opener that says so), or None."""
    start = _taken_back_at(doc)
    if start is None:
        return None
    comma = next((t.i for t in doc[start:] if t.text in (",", ";")), None)
    if comma is None:
        return None
    return _replacing(_right_value(doc, comma), doc[start:comma])


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
