"""Text normalization, content hashes and MinHash for near-verbatim repeats."""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np

_WORD = re.compile(r"[\w']+", re.UNICODE)
_MERSENNE = (1 << 61) - 1


def normalize_text(text: str) -> str:
    """Lower-case, NFKC, punctuation dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_WORD.findall(text))


def content_hash(text: str, scope: str = "") -> str:
    """Hash of the normalized text: equal for exact duplicates up to case/punctuation.

    ``scope`` (``Memory.scope``) is hashed with the text, so the same sentence of two
    users is two memories, never one deduplicated across them."""
    body = normalize_text(text)
    if scope:
        body = scope + "\x1e" + body
    return hashlib.blake2b(body.encode("utf-8"), digest_size=16).hexdigest()


def shingles(text: str, size: int = 3) -> set[str]:
    """Word ``size``-grams of the normalized text (the whole text if shorter)."""
    words = normalize_text(text).split()
    if len(words) <= size:
        return {" ".join(words)}
    return {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}


class MinHasher:
    """MinHash signatures estimating Jaccard similarity of word shingles."""

    def __init__(self, num_perm: int = 64, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.a = rng.integers(1, _MERSENNE, size=num_perm, dtype=np.uint64)
        self.b = rng.integers(0, _MERSENNE, size=num_perm, dtype=np.uint64)
        self.num_perm = num_perm

    def signature(self, text: str) -> np.ndarray:
        """The MinHash signature of ``text``."""
        grams = shingles(text)
        hashes = np.array(
            [int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "little")
             % _MERSENNE for g in grams],
            dtype=np.uint64,
        )
        # (a*h + b) mod p in exact integer arithmetic via Python objects for small sets.
        perms = (np.outer(hashes.astype(object), self.a.astype(object)) + self.b.astype(object))
        perms = np.mod(perms, _MERSENNE)
        return np.asarray(perms.min(axis=0), dtype=np.uint64)

    @staticmethod
    def jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
        """Estimated Jaccard similarity of two signatures."""
        return float(np.mean(sig_a == sig_b))
