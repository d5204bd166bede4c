"""Casual spellings and typos written out before a turn is read for a request, with a
map back to the turn's own characters (docs/design.md, Forget on request).

A request's spans index the turn as it was written (its sentences are cut out of the
stored text), so the words are replaced one by one and every replacement remembered:
:meth:`Respelled.original` maps an offset of the respelled text back. Three classes:

- chat words (:data:`~memcore.language.english.tables.CHAT_WORDS`: "u", "pls", "dont"),
  but not after a determiner ("my id" is no "my I'd");
- a word the parser's vocabulary does not know that is one edit (a letter dropped,
  added, changed or two swapped) from exactly one word of a given vocabulary ("delte",
  "forgett", "adress");
- "forgot" right after "please" ("pls forgot my address"; "you forgot" is the past),
  a negation without its apostrophe ("shouldnt"), "pleas" starting a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from memcore.language.english.tables import CHAT_WORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_MIN_TYPO = 4  # shorter words are too often other words one edit away
_DETERMINERS = frozenset({"my", "your", "the", "a", "an", "his", "her", "their", "our",
                          "this", "that"})
_ASKERS = frozenset({"please", "pls", "plz", "pleas", "kindly"})  # not "you": "you forgot"
_PAST_AS_BASE = {"forgot": "forget"}
# Auxiliaries whose negation is written without its apostrophe ("shouldnt").
_NEGATED_AUX = frozenset({"should", "would", "could", "was", "were", "are", "have", "has",
                          "had", "must", "need", "does", "did", "is", "might"})
# Words that are words, but at a sentence's start a casual spelling ("pleas delete ...").
_START_WORDS = {"pleas": "please"}


def one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one letter dropped, added, changed, or two neighbours
    swapped (not equal)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1:]


@dataclass(frozen=True)
class Respelled:
    """A respelled text and its replacements ``(new_start, new_end, old_start, old_end)``."""

    text: str
    replaced: tuple[tuple[int, int, int, int], ...] = ()

    def original(self, offset: int) -> int:
        """The turn's own offset for ``offset`` of :attr:`text` (a word boundary maps to
        the replaced word's boundary)."""
        shift = 0
        for new_start, new_end, old_start, old_end in self.replaced:
            if offset < new_start:
                break
            if offset < new_end:
                return old_start if offset == new_start else old_end
            shift = old_end - new_end
        return offset + shift


def respelled(text: str, is_word: Callable[[str], bool], vocabulary: Collection[str]
              ) -> Respelled:
    """``text`` with chat words, typos of ``vocabulary`` words the pipeline does not know
    (``is_word``) and "please forgot" written out (see the module's docstring)."""
    out: list[str] = []
    replaced: list[tuple[int, int, int, int]] = []
    last = 0
    new_len = 0
    previous = ""
    last_word = 0
    for match in _WORD.finditer(text):
        word = match.group(0)
        start = not previous or any(c in ".!?" for c in text[last_word:match.start()])
        better = _better(word, "" if start else previous, is_word, vocabulary)
        previous, last_word = word.lower(), match.end()
        if better is None or better == word:
            continue
        between = text[last:match.start()]
        out.append(between)
        new_len += len(between)
        replaced.append((new_len, new_len + len(better), match.start(), match.end()))
        out.append(better)
        new_len += len(better)
        last = match.end()
    if not replaced:
        return Respelled(text)
    out.append(text[last:])
    return Respelled("".join(out), tuple(replaced))


def _written_form(word: str, previous: str) -> str | None:
    """A casual spelling written out by rule: "forgot" after an asker, "shouldnt", a
    sentence-initial "pleas"; None: no rule applies."""
    lower = word.lower()
    if lower in _PAST_AS_BASE and previous in _ASKERS:
        return _PAST_AS_BASE[lower]
    if lower.endswith("nt") and lower[:-2] in _NEGATED_AUX:
        return word[:-2] + "n't"  # "shouldnt", "wouldnt"
    if lower in _START_WORDS and not previous:
        return _START_WORDS[lower] if word.islower() else _START_WORDS[lower].capitalize()
    return None


def _typo_fix(word: str, previous: str, is_word: Callable[[str], bool],
              vocabulary: Collection[str]) -> str | None:
    """The one vocabulary word one edit from an unknown lower-case word (or a
    sentence-initial capitalised one; a name inside a sentence is kept), else None."""
    lower = word.lower()
    if len(lower) < _MIN_TYPO or lower in vocabulary or is_word(lower) or "'" in lower:
        return None
    if not (word.islower() or (word[0].isupper() and word[1:].islower()
                               and not previous)):  # not a name inside a sentence
        return None
    near = [v for v in vocabulary if one_edit(lower, v)]
    if len(near) != 1:
        return None
    return near[0] if word.islower() else near[0].capitalize()


def _better(word: str, previous: str, is_word: Callable[[str], bool],
            vocabulary: Collection[str]) -> str | None:
    """What ``word`` is written out as (None: kept); ``previous`` is the word before
    it in its sentence ("" at a sentence's start)."""
    if word in CHAT_WORDS:
        return None if previous in _DETERMINERS else CHAT_WORDS[word]
    written = _written_form(word, previous)
    if written is not None:
        return written
    return _typo_fix(word, previous, is_word, vocabulary)
