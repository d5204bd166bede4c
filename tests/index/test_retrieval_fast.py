"""The cached, one-pass BM25 search and the table-driven RRF give exactly what the
implementations before them gave: same ids, same order, the same float bits.

``_OldTextIndex`` and ``_old_fuse`` are frozen copies of the code they replaced
(memcore/index/retrieval.py before the contribution cache): a term-by-term ``_dense``
with no cache, a Python sort of the hits, and the plain RRF loop. The old index keeps
its postings with the same (unchanged) add/remove/idf code and shares the unchanged
head of ``search`` (``_hits``) and ``fuse``'s argument checks, so only the scoring and
ranking differ between the two. Writes happen between queries, so a contribution kept
past a write would show.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from memcore.index import retrieval
from memcore.language.english import text_rules as en
from memcore.language.english.lexicon import stem
from memcore_bench.api import _QUERIES, _query
from memcore_bench.footprint import fact_text


class _OldTextIndex(retrieval.TextIndex):
    """TextIndex with the scoring and ranking of before the contribution cache."""

    def _dense(self, query: Mapping[str, float] | str) -> np.ndarray | None:
        weights = en.query_terms(query) if isinstance(query, str) else query
        if not self._docs:
            return None
        avg = self._total_length / len(self._docs) or 1.0
        out: np.ndarray | None = None
        for term, weight in weights.items():
            arrays = self._posting_arrays(term)
            if arrays is None:
                continue
            slots, tfs = arrays
            if out is None:
                out = np.zeros(len(self._names), dtype=np.float64)
            norm = self.k1 * (1 - self.b + self.b * self._lengths[slots] / avg)
            out[slots] += (self.idf(term) * weight) * tfs * (self.k1 + 1) / (tfs + norm)
        return out

    def search(self, query: Mapping[str, float] | str, k: int,
               exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
        # Before: the same k check, _dense (the one above), exclusion and hits.
        dense, hit = self._hits(query, k, exclude)
        tied: list[tuple[str, float]] = []
        if hit.size > k:
            kth = np.partition(dense[hit], hit.size - k)[hit.size - k]
            at_cut = hit[dense[hit] == kth]
            hit = hit[dense[hit] > kth]
            names = sorted([self._names[s] for s in at_cut.tolist()])[: k - hit.size]
            tied = [(name, float(kth)) for name in names]
        scored = [(self._names[s], float(dense[s])) for s in hit.tolist()]
        scored.sort(key=lambda x: (-x[1], x[0]))
        return (scored + tied)[:k]


def _old_fuse(rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None,
              k: int = retrieval.RRF_K) -> dict[str, float]:
    weights = retrieval._fuse_weights(rankings, weights, k)  # the unchanged checks
    out: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, ident in enumerate(ranking, start=1):
            out[ident] = out.get(ident, 0.0) + weight / (k + rank)
    return out


def _bits(value: Any) -> tuple[str, str]:
    """A value's type and exact bits (``==`` would equate 0.0 and -0.0)."""
    if type(value) is float:
        return "float", value.hex()
    return type(value).__name__, np.asarray(value).tobytes().hex()


def _exact(pairs: Iterable[tuple[str, Any]]) -> list[tuple[str, tuple[str, str]]]:
    return [(ident, _bits(value)) for ident, value in pairs]


# Words of the bench facts and queries, the expansion table's words and a few others.
_WORDS = sorted({w for text in (*_QUERIES, "Caroline Melanie Jon Gina Sam Priya Tomas Aiko",
                                "Lisbon Oslo Denver Kyoto Nairobi Lyon nurse teacher data "
                                "engineer carpenter chef pottery rock climbing baking bread "
                                "chess salsa dancing Biscuit Luna Pepper Milo",
                                *en._BROADER, *en._BROADER.values(),
                                "the a of and is was apple red green sky note 7 42 2024")
                 for w in text.replace("{", " ").replace("}", " ").replace("?", " ").split()})
_WEIGHTS: tuple[Any, ...] = (1.0, 1.0, 1.0, 0.5, 0.5, 0.25, 2.0, 1, 3, 0.0, -0.0, -0.5,
                             np.float64(0.5), np.float32(0.3), np.float32(0.5), 1e-300, 7.25)


def _id(rng: random.Random, i: int) -> str:
    """Ids of every kind the sort must order like str: hex, short, shared prefixes,
    non-ASCII (UTF-8 of several lengths), long ones that widen the key array."""
    kind = rng.randrange(8)
    if kind < 4:
        return f"{rng.getrandbits(128):032x}"
    if kind == 4:
        return f"m{i}"
    if kind == 5:
        return rng.choice(["é", "日本", "z", "Z", "😀", "a\u0301", "ß", "\ud800x"]) + str(i)
    if kind == 6:
        return "".join(rng.choices(string.ascii_letters, k=rng.randint(1, 4))) + f"-{i}"
    return "x" * rng.randint(33, 90) + str(i)


def _text(rng: random.Random, i: int) -> str:
    kind = rng.randrange(10)
    if kind < 6:
        return fact_text(rng, i)
    if kind < 9:
        return " ".join(rng.choices(_WORDS, k=rng.randint(1, 14)))
    return rng.choice(["", "the and of", "Lisbon", "Luna the dog", "note 7"])


def _query_of(rng: random.Random) -> Mapping[str, float] | str:
    kind = rng.randrange(6)
    if kind < 2:
        return _query(rng)
    if kind == 2:
        return " ".join(rng.choices(_WORDS, k=rng.randint(1, 6)))
    if kind == 3:  # the API's path: expanded terms, in their order
        return en.query_terms(_query(rng))
    terms = [stem(w.lower()) for w in rng.choices(_WORDS, k=rng.randint(1, 25))]
    terms += rng.choices(["no-such-term", "zzz"], k=rng.randint(0, 2))
    return {t: rng.choice(_WEIGHTS) for t in terms}


def _same_search(old: _OldTextIndex, new: retrieval.TextIndex, query: Any, k: int,
                 exclude: Sequence[str]) -> list[tuple[str, float]]:
    expected = old.search(query, k, exclude=exclude)
    got = new.search(query, k, exclude=exclude)
    assert _exact(got) == _exact(expected), (query, k, exclude)
    return got


@pytest.mark.parametrize(("seed", "cache_cap", "rank_min", "k1", "b"), [
    (1, None, None, 1.2, 0.75),
    (2, 3, 1, 1.2, 0.75),  # the cache fills up; ranks are redone at each new id met
    (3, None, 10**9, 0.9, 0.4),  # never ranked: the ids' bytes sort
])
def test_search_and_scores_match_the_old_implementation(
        seed: int, cache_cap: int | None, rank_min: int | None, k1: float, b: float,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if cache_cap is not None:
        monkeypatch.setattr(retrieval, "_CONTRIB_CACHE", cache_cap)
    if rank_min is not None:
        monkeypatch.setattr(retrieval, "_RANK_MIN", rank_min)
        monkeypatch.setattr(retrieval, "_RANK_SLACK", 10**9 if rank_min == 1 else 1)
    rng = random.Random(seed)
    old = _OldTextIndex(rules=en.ENGLISH_TEXT, k1=k1, b=b)
    new = retrieval.TextIndex(rules=en.ENGLISH_TEXT, k1=k1, b=b)
    assert new.search("Lisbon", 5) == old.search("Lisbon", 5) == []
    ids: list[str] = []
    texts: list[str] = []
    for i in range(2500):
        ids.append(_id(rng, i))
        texts.append(_text(rng, i))
    ids = list(dict.fromkeys(ids))
    texts = texts[: len(ids)]
    # First a small index that grows, then the rest in batches.
    for ident, text in zip(ids[:40], texts[:40], strict=True):
        old.add([ident], [text])
        new.add([ident], [text])
        _same_search(old, new, "Who lives in Lisbon?", rng.randint(1, 150), ())
    for lo in range(40, len(ids), 500):
        old.add(ids[lo: lo + 500], texts[lo: lo + 500])
        new.add(ids[lo: lo + 500], texts[lo: lo + 500])
    known = list(ids)
    ties = cut_ties = same_length = 0
    for step in range(1000):
        if rng.random() < 0.3:  # a write between queries
            op = rng.randrange(6)
            if op == 0:  # a new memory
                ident, text = _id(rng, 10_000 + step), _text(rng, step)
                old.add([ident], [text])
                new.add([ident], [text])
                known.append(ident)
            elif op == 1:  # a rewrite
                ident, text = rng.choice(known), _text(rng, step)
                old.add([ident], [text])
                new.add([ident], [text])
            elif op == 2:  # a rewrite to a text of the same length (same N, same total)
                ident = rng.choice(known)
                if ident in old:
                    length = sum(old._docs[ident].values())
                    for _ in range(50):
                        text = _text(rng, step)
                        if len(en.terms(text)) == length:
                            same_length += 1
                            old.add([ident], [text])
                            new.add([ident], [text])
                            break
            elif op == 3:  # a removal (maybe of one already gone, or unknown)
                ident = rng.choice([*known[-50:], rng.choice(known), "unknown"])
                old.remove(ident)
                new.remove(ident)
            elif op == 4:  # a batch with a repeated id
                batch = rng.sample(known, 3)
                batch_texts = [_text(rng, step) for _ in batch]
                batch.append(batch[0])
                batch_texts.append(_text(rng, step))
                old.add(batch, batch_texts)
                new.add(batch, batch_texts)
            else:  # removed, then back
                ident = rng.choice(known)
                old.remove(ident)
                new.remove(ident)
                _same_search(old, new, _query_of(rng), rng.randint(1, 150), ())
                old.add([ident], [texts[0]])
                new.add([ident], [texts[0]])
        query = _query_of(rng)
        k = rng.randint(1, 150)
        exclude = rng.sample(known, rng.randint(0, 4)) + ["unknown"] * rng.randint(0, 1)
        got = _same_search(old, new, query, k, exclude)
        _same_search(old, new, query, k, ())  # again: from the cache, nothing excluded
        if len({s for _, s in got}) < len(got):
            ties += 1
        more = old.search(query, k + 1, exclude=exclude) if step % 2 else []
        if len(more) == k + 1 and more[k][1] == got[-1][1]:
            cut_ties += 1  # the k-th score continues past k: ids decide who is in
        if step % 10 == 0:
            assert _exact(new.scores(query).items()) == _exact(old.scores(query).items())
    assert ties > 200 and cut_ties > 50  # the tie-breaking was exercised
    assert same_length > 10
    assert (new._rank[1] > 0) == (rank_min != 10**9)  # the ids' ranks served (or not)


def test_ids_ending_in_nul_sort_like_strings() -> None:
    """numpy's byte strings drop trailing NULs, so such ids are sorted in Python."""
    old, new = _OldTextIndex(rules=en.ENGLISH_TEXT), retrieval.TextIndex(rules=en.ENGLISH_TEXT)
    ids = ["a", "a\0", "a\0\0", "a\0b", "b", "\0", "", "ab", "a\x01"]
    for index in (old, new):
        index.add(ids, ["Luna the dog"] * len(ids))
        index.add(["c"], ["Luna"])
    for k in range(1, 12):
        _same_search(old, new, "Luna", k, ())
        _same_search(old, new, "dog named Luna", k, ["a"])


def test_ids_sort_by_code_point_like_str() -> None:
    rng = random.Random(5)
    alphabet = ["a", "b", "\x7f", "\x80", "é", "\u07ff", "\u0800", "\uffff", "\U00010000",
                "\U0010ffff", "\ud800", "\udfff", "\ue000", "0", "\x01"]
    ids = list(dict.fromkeys("".join(rng.choices(alphabet, k=rng.randint(1, 5)))
                             for _ in range(400)))
    # Ids that differ in their last character only, after jumps in the longest length
    # (the key array widens), added one by one: the first ones tie with the batch.
    jumps = ["a", "q" * 39 + "b", "q" * 39 + "a", "r" * 199 + "b", "r" * 199 + "a", "é" * 70]
    old, new = _OldTextIndex(rules=en.ENGLISH_TEXT), retrieval.TextIndex(rules=en.ENGLISH_TEXT)
    for index in (old, new):
        for ident in jumps:
            index.add([ident], ["Luna the dog"])
        index.add(ids, ["Luna the dog"] * len(ids))  # all tie
    for k in (1, 2, 3, 4, 5, 50, 399, 500):
        _same_search(old, new, "Luna", k, ())


def test_fuse_matches_the_old_implementation() -> None:
    rng = random.Random(11)
    pool = [f"{rng.getrandbits(64):016x}" for _ in range(300)]
    k_values: tuple[Any, ...] = (retrieval.RRF_K, 0, 1, 60, 10, 2.5, 10.0)
    for trial in range(3000):
        rankings: list[Sequence[str]] = []
        for _ in range(rng.choice([0, 1, 2, 2, 2, 3, 4])):
            length = rng.choice([0, 1, 5, 20, 99, 100, 101, 150])
            ranking = rng.sample(pool, min(length, len(pool)))
            if rng.random() < 0.1 and ranking:  # an id twice in one ranking
                ranking.insert(rng.randrange(len(ranking)), rng.choice(ranking))
            rankings.append(tuple(ranking) if rng.random() < 0.2 else ranking)
        weights: list[Any] | None = None
        if rng.random() < 0.5:
            weights = [rng.choice((*_WEIGHTS, rng.random(), -rng.random(), -1e-320))
                       for _ in rankings]
        k = rng.choice(k_values)
        expected = _old_fuse(rankings, weights, k)
        got = retrieval.fuse(rankings, weights, k)
        assert _exact(got.items()) == _exact(expected.items()), (trial, weights, k)
    with pytest.raises(ValueError, match="k must be >= 0"):
        retrieval.fuse([["a"]], k=-1)
    with pytest.raises(ValueError, match="weights has 2 entries for 1 rankings"):
        retrieval.fuse([["a"]], [1.0, 1.0])
