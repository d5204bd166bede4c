"""Is a model-extracted fact grounded in the turns it was extracted from?

Small local models copy the extraction prompt's worked example into the facts of
unrelated turns ("Omar is vegetarian" from a turn about pottery; notes/benchmarks.md,
fourth round: 13 of Qwen 0.5B's 31 wrong profile facts). A fact whose content words
mostly do not occur in the turns of its extraction call is such a copy (or an
invention), not a rewrite of what the user said.

The test is lexical on purpose: content words (the lexicon's stopwords removed), compared
by the first 5 characters of their stem, so "hiking" / "hikes" / "hiked" and "moved" /
"moving" match. Words a faithful third-person rewrite adds are not counted: the speakers'
names ("I" -> "Caroline", "my" -> "Caroline's"), month and weekday names (relative dates
resolved: "last month" -> "in February 2024"), "years old", numbers and "user". A synonym
the turn does not contain ("veggie" -> "vegetarian") is not recognised: such a fact is
rejected too (and audited with its text, so it is not silently lost).
"""

from __future__ import annotations

from collections.abc import Iterable

from memcore.language.english.lexicon import canonical_terms, word_set

_PREFIX = 5
# Words a faithful rewrite of a turn adds: dates resolved against the turn's time, ages
# ("I'm 34" -> "is 34 years old"), the generic subject. Compared as keys like any word.
_REWRITE_WORDS = word_set(
    """
    january february march april june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday years old age aged user speaker
    """
)


def _keys(text: str) -> set[str]:
    """The 5-character stem prefixes of ``text``'s content words (numbers excluded)."""
    return {term[:_PREFIX] for term in canonical_terms(text)}


_NEUTRAL = frozenset(k for word in _REWRITE_WORDS for k in _keys(word))


def ungrounded_words(fact: str, sources: Iterable[str],
                     names: Iterable[str]) -> tuple[list[str], int]:
    """The content-word keys of ``fact`` found in none of ``sources`` (the texts of the
    extraction call's turns), and how many keys were compared (the ``names`` of the
    speakers and the rewrite words left out)."""
    left_out = set(_NEUTRAL)
    for name in names:
        left_out |= _keys(name)
    words = _keys(fact) - left_out
    seen: set[str] = set()
    for text in sources:
        seen |= _keys(text)
    return sorted(words - seen), len(words)

