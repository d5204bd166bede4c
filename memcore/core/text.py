"""Text normalization, content hashes and the word shingles MinHash is taken over."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WORD = re.compile(r"[\w']+", re.UNICODE)


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
