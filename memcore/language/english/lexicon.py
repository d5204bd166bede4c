"""Small English word rules shared by the hashing embedder and the offline models.

Deliberately tiny: a stopword list, a light suffix stemmer, negation and number
detection. Good enough to make paraphrases share terms and to spot flipped
polarity or changed numbers; not a linguistic toolkit.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


def word_set(text: str) -> frozenset[str]:
    """A word set from a whitespace-separated literal (keeps long lists readable)."""
    return frozenset(text.split())

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")

STOPWORDS = word_set(
    """
    a an the and or but if then so of to in on at by for with from into onto about as is
    am are was were be been being do does did doing have has had having i me my mine
    myself we us our ours you your yours he him his she her hers it its they them their
    theirs this that these those there here what which who whom whose when where why how
    all any both each few more most other some such only own same than too very can will
    just would should could might must shall may also really quite pretty s t d ll m re ve
    up out over again further once now still even much many lot lots gonna wanna gotta
    kinda sorta thing things stuff yeah yes ok okay oh um uh well anymore longer actually
    basically literally totally definitely
    """
)

# Words that flip a statement's polarity.
NEGATIONS = word_set(
    """
    not no never none nothing nobody neither nor cannot without don't doesn't didn't isn't
    aren't wasn't weren't won't wouldn't can't couldn't shouldn't haven't hasn't hadn't
    ain't dont doesnt didnt isnt arent wasnt cant wont
    """
)

# Verbs that are negative counterparts of a positive verb: "hates X" contradicts
# "loves X". Both sides map to one canonical stem; the negative ones also flip polarity.
_POSITIVE_VERBS = ("like", "love", "enjoy", "adore", "prefer")
_NEGATIVE_VERBS = ("hate", "dislike", "detest", "loathe", "despise")

_IRREGULAR = {
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "went": "go",
    "gone": "go",
    "goes": "go",
    "has": "have",
    "had": "have",
    "was": "be",
    "were": "be",
    "is": "be",
    "am": "be",
    "are": "be",
    "did": "do",
    "does": "do",
    "made": "make",
    "took": "take",
    "got": "get",
    "bought": "buy",
    "saw": "see",
    "ran": "run",
    "began": "begin",
    "kids": "kid",
    "moved": "mov",
    "lives": "live",
    "living": "live",
    "lived": "live",
}


def fold(text: str) -> str:
    """NFKC, case-folded, curly apostrophes straightened."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.replace("\u2019", "'").replace("\u2018", "'")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (contractions kept whole: ``don't``)."""
    return _TOKEN.findall(fold(text))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix-stripping stemmer (plural, -ing, -ed, -ly, -ies)."""
    if word in _IRREGULAR:
        return stem(_IRREGULAR[word])
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) <= 3 or _NUMBER.match(word):
        return word
    for suffix, repl in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("ly", ""),
                         ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + repl
            break
    # "hiking" -> "hik", "hike" -> "hik": drop a final e and a doubled consonant.
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


_LIKE = "lik"
ANTONYMS: dict[str, str] = {stem(w): _LIKE for w in _POSITIVE_VERBS + _NEGATIVE_VERBS}
NEGATIVE_VERBS = frozenset(stem(w) for w in _NEGATIVE_VERBS)


def is_number(token: str) -> bool:
    """True for digit tokens such as ``3`` or ``2.5``."""
    return bool(_NUMBER.match(token))


@lru_cache(maxsize=65536)
def content_stem(token: str) -> str | None:
    """The stem of a content word token; None for a stopword or a negation."""
    return None if token in STOPWORDS or token in NEGATIONS else stem(token)


def content_terms(text: str) -> list[str]:
    """Stemmed content words (no stopwords, no negations), in order."""
    return [term for term in map(content_stem, tokens(text)) if term is not None]


def numbers(text: str) -> frozenset[str]:
    """The numbers mentioned in ``text`` (digits only)."""
    return frozenset(t for t in tokens(text) if is_number(t))


def polarity(text: str) -> int:
    """+1 for an affirmative statement, -1 when negated (odd number of flips)."""
    flips = 0
    toks = tokens(text)
    for i, tok in enumerate(toks):
        if tok in NEGATIONS or stem(tok) in NEGATIVE_VERBS:
            flips += 1
        elif tok == "longer" and i and toks[i - 1] == "no":
            continue  # "no longer" already counted by "no"
    return -1 if flips % 2 else 1


def canonical_terms(text: str) -> frozenset[str]:
    """Content stems with antonym verbs mapped to their positive form, numbers removed."""
    return frozenset(ANTONYMS.get(t, t) for t in content_terms(text) if not is_number(t))
