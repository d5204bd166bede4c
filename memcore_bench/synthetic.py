"""Synthetic data for the scale benches: clustered unit vectors with planted
near-duplicates, and neutral texts distinct for every row."""

from __future__ import annotations

import numpy as np

_CHUNK = 65_536


def synthetic_vectors(n: int, d: int, *, seed: int = 0, dup_frac: float = 0.1) -> np.ndarray:
    """``n`` clustered unit vectors (float32) with planted near-duplicates.

    Topics of ~200 rows whose members have cosine ~0.4 to each other; a ``dup_frac``
    share of rows is a noisy copy of an earlier row with cosine uniform in
    [0.82, 0.995], so both merge pairs (>= 0.92) and borderline pairs exist.
    Generated in chunks so 10^6 x 384 needs no temporaries of that size.
    """
    if n < 2 or d < 2:
        raise ValueError(f"n and d must be >= 2, got n={n}, d={d}")
    rng = np.random.default_rng(seed)
    n_topics = max(8, n // 200)
    centers = rng.standard_normal((n_topics, d), dtype=np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    spread = np.float32(np.sqrt(1.5 / d))  # |noise|^2 = 1.5 -> cosine ~ 1 / 2.5
    x = np.empty((n, d), dtype=np.float32)
    for a in range(0, n, _CHUNK):
        b = min(n, a + _CHUNK)
        x[a:b] = centers[rng.integers(0, n_topics, b - a)]
        x[a:b] += spread * rng.standard_normal((b - a, d), dtype=np.float32)
        x[a:b] /= np.linalg.norm(x[a:b], axis=1, keepdims=True)
    n_dup = int(n * dup_frac)
    dup_rows = np.sort(rng.choice(np.arange(1, n), n_dup, replace=False))
    sources = (rng.random(n_dup) * dup_rows).astype(np.int64)  # always an earlier row
    cos = rng.uniform(0.82, 0.995, n_dup)
    scale = np.sqrt((1.0 / cos**2 - 1.0) / d).astype(np.float32)
    for a in range(0, n_dup, _CHUNK):
        rows = dup_rows[a : a + _CHUNK]
        noise = rng.standard_normal((rows.size, d), dtype=np.float32) * scale[a : a + _CHUNK, None]
        x[rows] = x[sources[a : a + _CHUNK]] + noise
        x[rows] /= np.linalg.norm(x[rows], axis=1, keepdims=True)
    return x


_CONSONANTS = "bdfgklmnprstv"
_VOWELS = "aeiou"


def word(i: int) -> str:
    """A made-up name for ``i``: consonant-vowel syllables ending in ``q`` ("baq",
    "kediq"). No English word of the extraction or change rules looks like that: plain
    letter runs spelled "died", "not" or "quit" and one such text retired every older
    fact that shared a word with it; digits would read as changed numbers."""
    out = ""
    while True:
        i, r = divmod(i, len(_CONSONANTS) * len(_VOWELS))
        out = _CONSONANTS[r // len(_VOWELS)] + _VOWELS[r % len(_VOWELS)] + out
        if i == 0:
            return out + "q"


TOPICS = 997
_TOPIC_BASE = 10**8  # topic names never equal an item's name (ids stay below this)


def synthetic_text(i: int) -> str:
    """The text of synthetic memory ``i``: distinct for every ``i``, neutral (no slot,
    no change phrase, no negation, no number), so that what a pass does with it comes
    from the vectors, not from the wording."""
    return f"Item {word(i)} belongs with {word(_TOPIC_BASE + i % TOPICS)}."
