"""English rules over raw fact texts: :class:`memcore.core.text_rules.TextRules` for
the core (search terms with stemming and a table of broader words, the merge guard,
the pass's text rules for facts no frame reads).

Search: terms are the lexicon's stemmed content words, so "moved"/"moving" and
"jobs"/"job" meet. A query is also expanded with a small table of broader words
("pets" -> cat, dog, ...; "job" -> work, career, ...): the everyday categories a person
asks about by their general name while the memory names the instance.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memcore.core.text_rules import Supersession
from memcore.language.english import compare
from memcore.language.english.lexicon import (
    canonical_terms,
    content_terms,
    fold,
    numbers,
    polarity,
    stem,
    tokens,
    word_set,
)

# Broader word -> narrower words a memory may use instead. Kept to everyday categories
# a profile is asked about; each side is stemmed at import.
_BROADER: dict[str, str] = {
    "pet": "cat cats dog dogs puppy kitten hamster rabbit parrot bird fish turtle guinea "
           "pig pony horse snake lizard",
    "animal": "cat dog puppy kitten hamster rabbit parrot bird fish turtle horse snake",
    "job": "work works worked working career profession occupation employed employer "
           "hired role position engineer nurse teacher designer developer manager doctor "
           "counselor lawyer",
    "work": "job career profession occupation employed employer office",
    "career": "job work profession occupation",
    "profession": "job work career occupation",
    "occupation": "job work career profession",
    "live": "lives living moved move relocated based home city apartment house settled "
            "resides residence address flat town",
    "home": "live lives house apartment moved settled flat",
    "hobby": "hobbies enjoy enjoys likes love loves play plays painting hiking reading "
             "running cooking gardening photography pottery",
    "hobbies": "hobby enjoy enjoys likes love loves play plays painting hiking reading",
    "family": "mother father mom dad sister brother son daughter wife husband kids children "
              "parents grandma grandmother grandfather",
    "kid": "son daughter children child kids",
    "children": "son daughter kids child",
    "partner": "wife husband girlfriend boyfriend spouse fiance",
    "spouse": "wife husband partner",
    "sport": "football soccer basketball tennis running swimming hiking cycling yoga",
    "music": "song songs guitar piano violin concert band sing singing",
    "instrument": "guitar piano violin drums flute cello saxophone",
    "food": "eat eats cook cooking dish meal restaurant",
    "allergy": "allergic allergies",
    "allergic": "allergy allergies",
    "study": "studying school university college degree course exam class",
    "school": "study university college degree course class",
    "book": "books read reading novel author",
    "read": "book books novel reading",
    "travel": "trip trips traveled visited visit vacation journey",
    "trip": "travel traveled visited vacation journey",
    "car": "drive drives vehicle",
    "friend": "friends buddy pal",
    "math": "mathematics algebra calculus geometry statistics arithmetic",
}

# Idioms whose words mislead term matching ("do for a living" is not about where one
# lives): when the phrase occurs, its words are replaced by these terms.
_PHRASES: dict[str, str] = {
    "for a living": "job work career",
    "line of work": "job work career",
    "where is she from": "born grew hometown",
    "where is he from": "born grew hometown",
    "where are you from": "born grew hometown",
}


def _stems(words: str) -> frozenset[str]:
    return frozenset(stem(w) for w in word_set(words))


EXPANSIONS: Mapping[str, frozenset[str]] = {stem(k): _stems(v) for k, v in _BROADER.items()}
"""Stemmed broader term -> the stemmed narrower terms it also matches."""

EXPANSION_WEIGHT = 0.5
"""An expanded term counts half as much as a term the query said."""


def terms(text: str) -> list[str]:
    """The index terms of ``text``: stemmed content words, in order."""
    return content_terms(text)


def query_terms(query: str, expand: bool = True) -> dict[str, float]:
    """Query term -> weight (1 for said terms, :data:`EXPANSION_WEIGHT` for expansions)."""
    weights: dict[str, float] = {}
    if expand:
        folded = " ".join(tokens(query))
        for phrase, meaning in _PHRASES.items():
            if phrase in folded:
                folded = folded.replace(phrase, " ")
                for term in terms(meaning):
                    weights[term] = 1.0
        query = folded
    for term in terms(query):
        weights[term] = 1.0
    if expand:
        for term in list(weights):
            for extra in EXPANSIONS.get(term, ()):
                weights.setdefault(extra, EXPANSION_WEIGHT)
    return weights


def texts_conflict(a: str, b: str) -> bool:
    """True if two near-identical texts differ in negation or in the numbers they state,
    or name different things ("a dog called Luna" and "a dog called Coco"), or one says
    the other's thing has ended or been replaced ("uses Firefox" and "uses Chrome
    instead of Firefox").

    Such pairs stay close in embedding space, so they are never auto-merged; the
    model (or the offline rules) judges them instead.
    """
    if polarity(a) != polarity(b) or numbers(a) != numbers(b) or compare.names_differ(a, b):
        return True
    for new, old in ((a, b), (b, a)):
        change = compare.change_of(new)
        if change is not None and compare.ends(change, old):
            return True
    return False


# Prepositions that attach a place or organization to what a fact says ("a nurse *at*
# St Mary's", "a teacher *in* Leeds").
_ATTACHING = frozenset({"at", "in", "for", "with", "from", "of", "near"})
_WORD_SPAN = re.compile(r"[\w'\u2019.-]+")
# A comma or semicolon, or the text's last stop (a full stop inside is an abbreviation's:
# "St. Anne's").
_CLAUSE_END = re.compile(r"[,;](?:\s|$)|[.!?]\s*$")


def reduced(text: str, value: str) -> str | None:
    """``text`` cut down to its own value (a frame's normalized value): the phrase
    attached after the value, to the end of its clause, left out ("Ann works as a
    pharmacist at St. Anne's clinic in Bath." with "pharmacist": "Ann works as a
    pharmacist."); None when the value is not found or nothing is attached after it."""
    last = value.split()[-1] if value.split() else ""
    words = [(m.start(), m.end(), fold(m.group(0)).strip("'.")) for m in _WORD_SPAN.finditer(text)]
    at = next((i for i, (_, _, w) in enumerate(words)
               if w == last or (stem(w) == stem(last) and len(last) >= 3)), None)
    if at is None or at + 1 >= len(words) or words[at + 1][2] not in _ATTACHING:
        return None
    end_match = _CLAUSE_END.search(text, words[at + 1][1])
    end = end_match.start() if end_match else len(text)
    rest = (text[:words[at][1]] + text[end:]).strip()
    return rest if rest.endswith((".", "!", "?")) else rest + "."


class EnglishText:
    """The English :class:`~memcore.core.text_rules.TextRules` (no parser needed)."""

    name = "english"

    def terms(self, text: str) -> list[str]:
        """Stemmed content words, in order."""
        return terms(text)

    def query_terms(self, query: str, expand: bool = True) -> dict[str, float]:
        """See :func:`query_terms`."""
        return query_terms(query, expand)

    def canonical_terms(self, text: str) -> frozenset[str]:
        """Content stems, antonym verbs mapped to their positive form, no numbers."""
        return canonical_terms(text)

    def conflict(self, a: str, b: str) -> bool:
        """See :func:`texts_conflict`."""
        return texts_conflict(a, b)

    def may_change(self, text: str) -> bool:
        """See :func:`memcore.language.english.compare.may_change`."""
        return compare.may_change(text)

    def supersessions(self, ids: Sequence[str], texts: Sequence[str],
                      times: Sequence[float], slotted: Sequence[bool] | None = None, *,
                      hints: Sequence[bool] | None = None,
                      ended: Sequence[tuple[str, str, str] | None] | None = None
                      ) -> list[Supersession]:
        """See :func:`memcore.language.english.compare.supersessions`."""
        return compare.supersessions(ids, texts, times, slotted, hints=hints, ended=ended)

    def reduced(self, text: str, value: str) -> str | None:
        """See :func:`reduced`."""
        return reduced(text, value)


ENGLISH_TEXT = EnglishText()
