"""The listener named only in an aside of the speaker's own statement.

"I've been reading that book you recommended", "This book I read reminds me to pursue
my dreams, just like you are doing": the sentence is about the speaker; "you" only
says which book, or whom the speaker is like. A sentence about the listener ("You're
gonna make a huge difference", "I think you should rest", "I love your work") is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_YOU = frozenset({"you", "ya", "u"})
_OTHER_SECOND = frozenset({"your", "yours", "yourself", "yourselves", "y'all"})
_FIRST = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our"})
_COMPARE = frozenset({"like", "as"})
_RELATIVE = frozenset({"that", "which", "who", "whom"})
_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
_NOMINAL_BEFORE = frozenset({"DT", "JJ", "PRP$", *_NOUN_TAGS})
_VERB_TAGS = frozenset({"VBD", "VBP", "VBZ", "MD", "VBN"})


def _in_aside(tok: Token) -> bool:
    """Is this "you" the subject of a clause that modifies a noun ("the book (that) you
    recommended") or the second term of a comparison ("like you (are doing)")?"""
    doc = tok.doc
    before = doc[tok.i - 1] if tok.i > 0 else None
    after = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
    if before is None:
        return False
    if before.lower_ in _COMPARE or (before.lower_ == "just" and tok.i > 1
                                     and doc[tok.i - 2].lower_ in _COMPARE):
        return True
    noun = before
    if before.lower_ in _RELATIVE and tok.i > 1:
        noun = doc[tok.i - 2]
    return (_nominal(noun) and after is not None and after.tag_ in _VERB_TAGS
            and after.lemma_ not in ("be",))


def _nominal(tok: Token) -> bool:
    """A noun, or a word right after a determiner, adjective or noun ("the ramen place",
    which the tagger may read as a verb)."""
    if tok.tag_ in _NOUN_TAGS:
        return True
    prev = tok.doc[tok.i - 1] if tok.i > 0 else None
    return prev is not None and prev.tag_ in _NOMINAL_BEFORE


def listener_aside(doc: Doc) -> bool:
    """Does ``doc`` speak of the speaker ("I", "me", "my", ...) before it names the
    listener, and name them only in asides (:func:`_in_aside`), never as "your",
    "yourself"? ("Ground rules for any code you write for me" is an instruction to the
    listener: its "me" is inside the aside.)"""
    if any(t.lower_ in _OTHER_SECOND or t.lower_.startswith("you'") for t in doc):
        return False
    yous = [t for t in doc if t.lower_ in _YOU]
    if not yous or not any(t.lower_ in _FIRST for t in doc[:yous[0].i]):
        return False
    return all(_in_aside(t) for t in yous)
