"""A deterministic, dependency-free embedder based on signed feature hashing."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import chain, pairwise
from typing import cast

import numpy as np

from memcore.language.english.compare import slot_of
from memcore.language.english.lexicon import ANTONYMS, STOPWORDS, content_stem, stem, tokens
from memcore.observability.usage import Metered

# Feature-group weights: whole words carry the meaning, bigrams the word order,
# character trigrams catch spelling variants and stems the stemmer misses.
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.5
_TRIGRAM_WEIGHT = 0.35
# "lives in Paris" and "moved to Berlin" share no words but fill the same
# single-valued slot; a shared feature brings them close enough to be compared.
_SLOT_WEIGHT = 2.0

# Floating point: a vector is the same to the last bit only if every weight and every
# bucket is summed in the same order. Weights are summed per feature in the order the
# features occur, the features' values per bucket in the order of :func:`features`.


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """Bucket and sign of a feature: blake2b, so stable across processes (unlike hash())."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


@lru_cache(maxsize=65536)
def _tf(weight: float) -> float:
    """Sub-linear term frequency of a summed weight >= 1 (cached: few distinct sums)."""
    return float(1.0 + np.log(weight))


def _value(sign: float, weight: float) -> float:
    """What a feature adds to its bucket. Sub-linear term frequency: a repeated word
    should not dominate."""
    return sign * _tf(weight) if weight >= 1.0 else sign * weight


@lru_cache(maxsize=65536)
def _term_features(term: str) -> tuple[tuple[str, float], ...]:
    """The (feature, weight) pairs one term adds, in order: its unigram, then its trigrams."""
    padded = f"<{term}>"
    grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
    share = _TRIGRAM_WEIGHT / max(1, len(grams)) * 3
    return (("w:" + term, _UNIGRAM_WEIGHT), *(("c:" + gram, share) for gram in grams))


@lru_cache(maxsize=65536)
def _term(token: str) -> str | None:
    """The term of a token: its content stem, antonym verbs mapped to the positive one."""
    # love/enjoy/hate all map to one stem: polarity is the decider's job, not the index's.
    term = content_stem(token)
    return term if term is None else ANTONYMS.get(term, term)


def _terms(text: str) -> list[str]:
    """The terms features are made of (:func:`content_terms`, through :func:`_term`)."""
    terms = [term for term in map(_term, tokens(text)) if term is not None]
    if not terms:  # all stopwords ("how are you"): fall back to the raw words
        terms = [stem(t) for t in tokens(text) if t not in STOPWORDS] or tokens(text)
    return terms


def _summed(pairs: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Weights summed per feature, in the order the features first occur."""
    feats: dict[str, float] = {}
    get = feats.get
    for key, weight in pairs:
        feats[key] = get(key, 0.0) + weight
    return feats


def _extras(text: str, terms: Sequence[str]) -> dict[str, float]:
    """The features that follow the terms' own: bigrams, the slot, else the empty one."""
    feats: dict[str, float] = {}
    for left, right in pairwise(terms):
        key = f"b:{left} {right}"
        feats[key] = feats.get(key, 0.0) + _BIGRAM_WEIGHT
    slot = slot_of(text)
    if slot is not None:
        feats[f"s:{slot.name}:{slot.subject}"] = _SLOT_WEIGHT
    if not terms and not feats:
        feats["e:<empty>"] = 1.0
    return feats


def features(text: str) -> dict[str, float]:
    """Weighted features of ``text``: stemmed unigrams, bigrams and char trigrams."""
    terms = _terms(text)
    # No bigram, slot or empty feature is also a term's (their prefixes differ).
    feats = _summed(chain.from_iterable(_term_features(term) for term in terms))
    feats.update(_extras(text, terms))
    return feats


_Plan = tuple[frozenset[str], tuple[tuple[int, float], ...]]


@lru_cache(maxsize=16)
def _coders(dim: int) -> tuple[Callable[[str], tuple[int, float]], Callable[[str], _Plan]]:
    """For one ``dim``: :func:`_bucket` cached by the feature alone, and the cached plan
    of a term: its features and the (bucket, value) each adds when no other term of the
    text shares them."""

    @lru_cache(maxsize=262144)
    def bucket(feature: str) -> tuple[int, float]:
        return _bucket(feature, dim)

    @lru_cache(maxsize=65536)
    def plan(term: str) -> _Plan:
        feats = _summed(_term_features(term))
        return frozenset(feats), tuple(
            (index, _value(sign, weight))
            for (index, sign), weight in ((bucket(key), weight) for key, weight in feats.items()))

    return bucket, plan


class HashingEmbedder(Metered):
    """Deterministic bag-of-features embedder (the zero-dependency default).

    Paraphrases that share stems land close; negations and changed numbers
    stay close too, on purpose, so such pairs reach the decider.
    """

    name = "hash"

    def __init__(self, dim: int = 384) -> None:
        super().__init__()
        if dim < 8:
            raise ValueError(f"dim must be at least 8, got {dim}")
        self.dim = dim

    def embed_one(self, text: str) -> np.ndarray:
        """The unit vector of one text."""
        vec = np.zeros(self.dim, dtype=np.float64)
        self._fill(vec, text)
        return vec.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dim) float32 array of unit rows, one per text."""
        self.count_call()
        vecs = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            self._fill(vecs[row], text)
        return vecs.astype(np.float32)

    def _fill(self, vec: np.ndarray, text: str) -> None:
        """Write the unit vector of :func:`features` of ``text`` into the zeroed ``vec``
        (float64, contiguous): their values added to their buckets in feature order,
        then divided by the norm."""
        bucket, plan = _coders(self.dim)
        terms = _terms(text)
        plans = [plan(term) for term in terms]
        seen: set[str] = set()
        count = 0
        for keys, _ in plans:
            seen.update(keys)
            count += len(keys)
        # Its float items, written without the overhead of numpy's item assignment.
        buckets = cast("memoryview[float]", vec.data)
        if len(seen) == count:
            # No feature shared by two terms (the usual case): every term's own weights
            # are the text's, so its cached values are too.
            for _, values in plans:
                for index, value in values:
                    buckets[index] += value
            feats = _extras(text, terms)
        else:
            feats = features(text)
        for key, weight in feats.items():
            index, sign = bucket(key)
            buckets[index] += sign * _tf(weight) if weight >= 1.0 else sign * weight
        norm = math.sqrt(vec.dot(vec))  # np.linalg.norm's own sum: the same float
        if norm < 1e-12:  # every feature cancelled out (astronomically rare)
            vec[bucket("e:<empty>")[0]] = 1.0
            norm = 1.0
        vec /= norm
