"""A deterministic, dependency-free embedder based on signed feature hashing."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

import numpy as np

from memcore.core.compare import slot_of
from memcore.core.lexicon import ANTONYMS, STOPWORDS, content_terms, stem, tokens
from memcore.observability.usage import Metered

# Feature-group weights: whole words carry the meaning, bigrams the word order,
# character trigrams catch spelling variants and stems the stemmer misses.
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.5
_TRIGRAM_WEIGHT = 0.35
# "lives in Paris" and "moved to Berlin" share no words but fill the same
# single-valued slot; a shared feature brings them close enough to be compared.
_SLOT_WEIGHT = 2.0


@lru_cache(maxsize=262144)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """Bucket and sign of a feature: blake2b, so stable across processes (unlike hash())."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


def features(text: str) -> dict[str, float]:
    """Weighted features of ``text``: stemmed unigrams, bigrams and char trigrams."""
    # love/enjoy/hate all map to one stem: polarity is the decider's job, not the index's.
    terms = [ANTONYMS.get(t, t) for t in content_terms(text)]
    if not terms:  # all stopwords ("how are you"): fall back to the raw words
        terms = [stem(t) for t in tokens(text) if t not in STOPWORDS] or tokens(text)
    feats: dict[str, float] = {}
    for term in terms:
        feats["w:" + term] = feats.get("w:" + term, 0.0) + _UNIGRAM_WEIGHT
        padded = f"<{term}>"
        grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        for gram in grams:
            key = "c:" + gram
            feats[key] = feats.get(key, 0.0) + _TRIGRAM_WEIGHT / max(1, len(grams)) * 3
    for left, right in pairwise(terms):
        key = f"b:{left} {right}"
        feats[key] = feats.get(key, 0.0) + _BIGRAM_WEIGHT
    slot = slot_of(text)
    if slot is not None:
        feats[f"s:{slot.name}:{slot.subject}"] = _SLOT_WEIGHT
    if not feats:
        feats["e:<empty>"] = 1.0
    return feats


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
        for feature, weight in features(text).items():
            index, sign = _slot(feature, self.dim)
            # Sub-linear term frequency: a repeated word should not dominate.
            vec[index] += sign * (1.0 + np.log(weight)) if weight >= 1.0 else sign * weight
        norm = float(np.linalg.norm(vec))
        if norm < 1e-12:  # every feature cancelled out (astronomically rare)
            vec[_slot("e:<empty>", self.dim)[0]] = 1.0
            norm = 1.0
        return (vec / norm).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dim) float32 array of unit rows, one per text."""
        self.count_call()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self.embed_one(text)
        return out
