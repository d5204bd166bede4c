"""Hand-written vs library, in one process (notes/libraries.md): speed ratios and MinHash accuracy.

    git show f90fa90:memcore/core/text.py > /tmp/handwritten_text.py
    .venv/bin/pip install snowballstemmer
    .venv/bin/python notes/libraries_compare.py /tmp/handwritten_text.py

MinHash: the hand-written MinHasher (the file given) against memcore.ingest.near_repeats
(datasketch) on the dev2 scenarios' turns of 12+ words, each paired with four edited
copies (0 to ~12% of its words replaced) and one other turn: how often each estimate
falls on the same side of the write path's 0.9 as the exact Jaccard (seeds 1-8), the
mean error,
and the signature time ratio. Stemming: memcore's stem() against Snowball's English
stemmer wrapped the same way (notes/libraries_snowball.patch), over every token of the
dev2 turns and one LoCoMo conversation, caches cleared: the time ratio.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import random
import sys
import time
from functools import lru_cache
from pathlib import Path

import snowballstemmer

from memcore.core.text import shingles
from memcore.ingest.near_repeats import MinHasher
from memcore.language.english import lexicon

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "conv-26.json"


def _turns() -> list[str]:
    files = sorted(glob.glob(str(ROOT / "memcore" / "data" / "scenarios" / "dev2_*.json")))
    return [t["text"] for f in files for t in json.loads(Path(f).read_text())["turns"]]


def minhash(old_path: str) -> None:
    spec = importlib.util.spec_from_file_location("handwritten_text", old_path)
    assert spec and spec.loader
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    texts = [t for t in _turns() if len(t.split()) >= 12]
    rng = random.Random(1)
    pairs = []
    for text in texts:
        words = text.split()
        for k in range(4):
            edited = list(words)
            for _ in range(k * max(1, len(words) // 25)):
                edited[rng.randrange(len(edited))] = rng.choice(["foo", "bar", "the", "and"])
            pairs.append((text, " ".join(edited)))
        pairs.append((text, rng.choice(texts)))
    exact = []
    for a, b in pairs:
        x, y = shingles(a), shingles(b)
        exact.append(len(x & y) / len(x | y))
    for name, make in (("hand-written", old.MinHasher), ("datasketch", MinHasher)):
        agree, error = [], 0.0
        for seed in range(1, 9):  # the side of 0.9 near it is chance: several seeds
            hasher = make(seed=seed)
            hits = 0
            for (a, b), truth in zip(pairs, exact, strict=True):
                estimate = hasher.jaccard(hasher.signature(a), hasher.signature(b))
                hits += (estimate >= 0.9) == (truth >= 0.9)
                error += abs(estimate - truth)
            agree.append(hits)
        print(f"MinHash {name}, seeds 1-8: on the exact Jaccard's side of 0.9 in "
              f"{sum(agree) / len(agree):.1f} of {len(pairs)} pairs (min {min(agree)}, "
              f"max {max(agree)}), mean |error| {error / len(pairs) / 8:.4f}")
    hashers = {"hand-written": old.MinHasher(), "datasketch": MinHasher()}
    for rnd in range(3):
        took = {}
        for name, hasher in hashers.items():
            start = time.perf_counter()
            for a, _ in pairs:
                hasher.signature(a)
            took[name] = time.perf_counter() - start
        print(f"MinHash round {rnd}: signature time datasketch / hand-written = "
              f"{took['datasketch'] / took['hand-written']:.2f}")


def stemming() -> None:
    snowball = snowballstemmer.stemmer("english")

    @lru_cache(maxsize=65536)
    def snowball_stem(word: str) -> str:
        if word in lexicon._IRREGULAR:
            return snowball_stem(lexicon._IRREGULAR[word])
        word = word.removesuffix("'s")
        if len(word) <= 3 or lexicon.is_number(word):
            return word
        return str(snowball.stemWord(word))

    text = " ".join(_turns()) + (" " + LOCOMO.read_text() if LOCOMO.exists() else "")
    words = lexicon.tokens(text)
    print(f"stemming: {len(words)} tokens, {len(set(words))} distinct")
    for rnd in range(3):
        took = {}
        for name, fn in (("hand-written", lexicon.stem), ("snowball", snowball_stem)):
            fn.cache_clear()
            start = time.perf_counter()
            for word in words:
                fn(word)
            took[name] = time.perf_counter() - start
        print(f"stemming round {rnd}: cold-cache time snowball / hand-written = "
              f"{took['snowball'] / took['hand-written']:.2f}")


if __name__ == "__main__":
    minhash(sys.argv[1])
    stemming()
