"""Chat spellings written out before a text is read: "me n callum r movin in" -> "me and
callum are moving in", "im", "dont", "pls".

Whole words from :data:`~memcore.language.english.tables.CHAT_WORDS` (case-sensitive: "U"
stays), and the dropped g of a lower-case -ing word ("movin", "rollin'") where the -ing word
is one the parser's vocabulary knows ("cabin", "penicillin" and "Berlin" stay).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memcore.language.english.tables import CHAT_WORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_MIN_DROPPED_G = 5  # "movin", not "akin"


def spelled(text: str, is_word: Callable[[str], bool] | None = None) -> str:
    """``text`` with chat spellings written out; a dropped g ("movin") only where
    ``is_word`` knows the -ing word ("moving": yes, "penicilling": no)."""
    def one(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in CHAT_WORDS:
            return CHAT_WORDS[word]
        if is_word is None or not word.islower() or len(word) < _MIN_DROPPED_G:
            return word
        bare = word[:-1] if word.endswith("in'") else word
        if bare.endswith("in") and is_word(bare + "g"):
            return bare + "g"
        return word

    return _IS_BEFORE_ARTICLE.sub(r"\g<who> is \g<article> ", _WORD.sub(one, text))


# "Ana's a nurse", "my sister's an architect": before an article "'s" is "is" (a
# possessive never takes one); the parser reads it as a possessive. Pronouns are left
# as written ("it's a", "that's the": they parse well, and "It's X" is a correction).
_IS_BEFORE_ARTICLE = re.compile(
    r"\b(?P<who>(?!(?:It|That|There|What|Here|He|She|Who|Where|How|Let|This)'s)[A-Z][a-z]+|"
    r"(?:[Mm]y|[Oo]ur|[Yy]our|[Hh]is|[Hh]er|[Tt]heir) [a-z]+)'s (?P<article>a|an|the) ")


# A tag said to the listener after a statement ("..., can you believe it", "..., you know",
# "..., right?"): the statement is the speaker's, the tag no question or request.
_LISTENER_TAG = re.compile(r",\s*(?:(?:can|could|would) (?:you|u) (?:believe|imagine) (?:it|that)|"
                           r"believe it or not|if you can believe it|you know|you see|y'know|"
                           r"as you know|right|innit|eh|isn'?t it|don'?t you think)"
                           r"[\s.!?]*(?=$|\s+[A-Z])", re.I | re.M)


def without_listener_tags(text: str) -> str:
    """``text`` without the tags its sentences end with for the listener."""
    return _LISTENER_TAG.sub(".", text) if _LISTENER_TAG.search(text) else text
