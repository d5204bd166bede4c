"""The write path's MinHash (hand-written: docs/design.md, Hand-written, and why)
estimates the Jaccard similarity of shingles."""

from __future__ import annotations

import numpy as np

from memcore.core.text import MinHasher, shingles

LONG = ("every second saturday my brother and i drive out to the lake district to climb "
        "a fell before lunch and eat pies in keswick afterwards")


def _exact(a: str, b: str) -> float:
    x, y = shingles(a), shingles(b)
    return len(x & y) / len(x | y)


def test_signatures_are_fixed_by_the_seed_across_instances() -> None:
    first, second = MinHasher(), MinHasher()
    assert len(first.signature(LONG)) == 64
    assert np.array_equal(first.signature(LONG), second.signature(LONG))
    assert not np.array_equal(first.signature(LONG), MinHasher(seed=8).signature(LONG))


def test_case_and_punctuation_do_not_matter() -> None:
    hasher = MinHasher()
    shouted = LONG.upper().replace(" and ", ", and ") + "!"
    assert MinHasher.jaccard(hasher.signature(LONG), hasher.signature(shouted)) == 1.0


def test_estimates_follow_the_exact_jaccard() -> None:
    hasher = MinHasher()
    words = LONG.split()
    variants = [" ".join(words[:-1]), " ".join([*words[:10], "scafell", *words[11:]]),
                " ".join(reversed(words)),
                "my sister keeps bees on an allotment behind the station in leeds and sells honey"]
    for other in variants:
        estimate = MinHasher.jaccard(hasher.signature(LONG), hasher.signature(other))
        assert abs(estimate - _exact(LONG, other)) < 0.2, other
    # A repeat minus its last word clears the write path's 0.9; a different text does not.
    assert MinHasher.jaccard(hasher.signature(LONG), hasher.signature(variants[0])) >= 0.9
    assert MinHasher.jaccard(hasher.signature(LONG), hasher.signature(variants[3])) < 0.2
