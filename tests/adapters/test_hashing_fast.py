"""The fast hashing embedder gives the very vectors of the implementation it replaced.

The reference below is a frozen copy of ``features`` / ``embed_one`` (memcore/adapters/
hashing.py), ``content_terms`` (memcore/core/lexicon.py) and ``_clean`` / ``_subject`` /
``_slots`` (memcore/core/compare.py) as they were before the speed-up (main at 59a2161).
Vectors are compared with ``np.array_equal``: not one bit may differ.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import sys
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from memcore.adapters.hashing import HashingEmbedder, features
from memcore.language.english import compare
from memcore.language.english.compare import Slot, slot_of, slots_of
from memcore.language.english.lexicon import (
    ANTONYMS,
    NEGATIONS,
    STOPWORDS,
    content_terms,
    fold,
    stem,
    tokens,
)
from memcore_bench.api import _QUERIES
from memcore_bench.footprint import _FACTS, _SUBJECTS, _W, _X, _Y, _Z, fact_text

DATA = Path(__file__).resolve().parents[2] / "memcore" / "data"

# --- the frozen reference ----------------------------------------------------------


def _ref_content_terms(text: str) -> list[str]:
    out = []
    for tok in tokens(text):
        if tok in STOPWORDS or tok in NEGATIONS:
            continue
        out.append(stem(tok))
    return out


def _ref_clean(text: str) -> str:
    text = unicodedata.normalize("NFKD", fold(text).strip().rstrip(".!"))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = compare._ABBREVIATION_DOT.sub(lambda m: m.group(1) or "", text)
    return compare._FRONTED.sub("", re.sub(r"\s+", " ", text))


def _ref_subject(raw: str) -> str:
    subject = re.sub(r"'s$", "", " ".join(raw.split()))
    kin = compare._NAMED_KIN.match(subject)
    return kin.group("name") if kin else subject


def _ref_slots(text: str) -> Iterator[Slot]:
    clean = _ref_clean(text)
    for name, pattern in compare._SLOTS:
        match = pattern.search(clean)
        if match:
            key = name + (":" + match.group("k") if "k" in pattern.groupindex else "")
            raw = compare._VALUE_END.sub("", " " + match.group("v")).strip() or match.group("v")
            value = " ".join(stem(w) for w in raw.split() if w not in {"the", "a", "an"})
            if name == "age" and raw in compare._AGES:
                value = str(compare._AGES.index(raw) + 1)
            if name == "job" and raw.split()[-1:] and raw.split()[-1] in compare._NOT_JOB:
                continue
            # Added after the freeze, in both: "moved to another project" is no home.
            if name == "residence" and not compare._homelike(raw):
                continue
            if (name == "job" and raw.split()[0].endswith("ing")
                    and not re.search(rf"\b(?:a|an|as) {re.escape(raw)}", clean)):
                continue
            yield Slot(key, _ref_subject(match.group("s")), value.strip(), raw.strip())


def _ref_slot_of(text: str) -> Slot | None:
    return next(_ref_slots(text), None)


@lru_cache(maxsize=262144)
def _ref_slot(feature: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


def _ref_features(text: str) -> dict[str, float]:
    terms = [ANTONYMS.get(t, t) for t in _ref_content_terms(text)]
    if not terms:
        terms = [stem(t) for t in tokens(text) if t not in STOPWORDS] or tokens(text)
    feats: dict[str, float] = {}
    for term in terms:
        feats["w:" + term] = feats.get("w:" + term, 0.0) + 1.0
        padded = f"<{term}>"
        grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        for gram in grams:
            key = "c:" + gram
            feats[key] = feats.get(key, 0.0) + 0.35 / max(1, len(grams)) * 3
    for left, right in pairwise(terms):
        key = f"b:{left} {right}"
        feats[key] = feats.get(key, 0.0) + 0.5
    slot = _ref_slot_of(text)
    if slot is not None:
        feats[f"s:{slot.name}:{slot.subject}"] = 2.0
    if not feats:
        feats["e:<empty>"] = 1.0
    return feats


def _ref_embed_one(text: str, dim: int) -> np.ndarray:
    vec = np.zeros(dim, dtype=np.float64)
    for feature, weight in _ref_features(text).items():
        index, sign = _ref_slot(feature, dim)
        vec[index] += sign * (1.0 + np.log(weight)) if weight >= 1.0 else sign * weight
    norm = float(np.linalg.norm(vec))
    if norm < 1e-12:
        vec[_ref_slot("e:<empty>", dim)[0]] = 1.0
        norm = 1.0
    return (vec / norm).astype(np.float32)


# --- the texts ---------------------------------------------------------------------

# At least one text per pattern of compare._SLOTS (and some near misses).
_SLOTTED = [
    "Sam asks the assistant to always answer in German.",
    "Sam asks the assistant to reply to him in Spanish",
    "Ann lives in Lisbon.", "Ann moved to Porto.", "Ann relocated to Porto.",
    "Ann has now settled in Berlin", "Ann is based in Oslo", "Ann is moving back to Rome",
    "We are no longer living at the old flat.", "Ann's home town is Leeds",
    "Ann's hometown is in Kent", "Priya works at Bosch.", "Priya is employed at Siemens",
    "Priya started working for Acme", "Priya started at Google on Monday.",
    "Priya started at 9", "Priya starts at the gym", "Tom is now at a new startup in Oslo",
    "Tom's employer is Lumen", "Tom's new company is now Nokia", "Tom's job is as a nurse",
    "Tom's profession is an architect", "Tom works as a tax advisor for Deloitte",
    "Tom got a job as a chef", "Tom started a new job as a barista at Blue Bottle",
    "Tom is a nurse", "Tom is now a senior architect at Arup", "Tom is a vegetarian",
    "Tom is visiting her", "Tom is a member", "Jo accepted a lectureship at Leeds",
    "Jo took a job at Ikea", "Jo has been offered a fellowship at MIT",
    "Jo landed a position with Google", "Jo was hired as a data engineer",
    "Jo joined Bosch as an intern", "Jo is joining Acme as a manager",
    "Jo joined Bosch last year", "Jo joined the choir", "Jo will join Siemens",
    "My name is Alex.", "Sam's sister's name is Anna", "Budget went up to 6000",
    "Sam's rent is now 950", "my salary was raised to £45k",
    "The price dropped to about $12.50", "Leo is 7", "Leo turned 8 years old",
    "Leo is turning seven", "Leo is seven now", "She has now 5 years",
    "Mia celebrated her 7th birthday", "Ann is married to Bob", "Ann is dating Chris",
    "Ann is engaged to Dana.", "Ann's favourite colour is green",
    "Ann's favorite band is now Muse", "Ann's favorite is pizza",
    "Mia studies at Uni Heidelberg", "Mia is studying at the Sorbonne",
    "Mia goes to school at Lycee Victor Hugo", "Mia has become a strict vegan",
    "Mia is now fully pescatarian", "Mia went keto", "Mia is an omnivore again",
    "Sam wants shorter answers", "Sam asks the assistant to keep answers short",
    "Now Sam works at Bosch", "Currently, Sam lives in Lisbon",
    "Dr. Smith works at St. Mary's Hospital.", "Sam moved to the U.S. last year",
    "Ann's son Leo is 7", "ann's dog biscuit is 3", "Tomás's degree is in physics",
    "ZOË LIVES IN ZÜRICH", "Sam\tlives\n\nin   Paris", "Sam  works   as a nurse",
    "Mr. and Mrs. Lee moved to Oslo.", "She is 5.", "it's Anne, not Anna",
]

_ODD = [
    "", " ", "\n\t", ".", "!!!", "?", "...", "'", "'s", "a", "the", "the and of",
    "how are you", "is it", "not never no", "don't", "yes no maybe", "0", "3.5", "42 42",
    "日本語のテキスト", "🙂🙂🙂", "Σίσυφος ζει στην Αθήνα", "İstanbul", "Straße",
    "ﬁancé", "e\u0301te\u0301", "\uff34\uff2f\uff2d\uff21\uff33 lives in Z\u00fcrich",
    "Tomás lives in São Paulo",
    "naïve café résumé", "\u00a0Sam\u00a0lives\u00a0in\u00a0Oslo\u00a0",
    "Sam\u2019s favourite is tea", "Sam\u2028works\u2029at Bosch", "x" * 10000,
    "banana banana banana", "lol " * 1000, "love hate enjoy like adore dislike",
    "going going gone", "hiking hike hikes hiked", "a.b.c. u.s.a. e.g. i.e.",
    "is is is is", "Who lives in Lisbon??", "WHO LIVES IN LISBON",
]


def _scenario_texts() -> list[str]:
    """Turns and truth facts of the dev and quick scenarios (not the held-out ones)."""
    out = []
    for path in sorted((DATA / "scenarios").glob("*.json")):
        scenario = json.loads(path.read_text())
        if scenario.get("held_out") or path.name.startswith("held_out"):
            continue
        out += [turn["text"] for turn in scenario["turns"]]
        for items in scenario.get("truth", {}).values():
            out += [f"{scenario['speaker']} {item['fact']}" for item in items]
    return out


def _data_texts() -> list[str]:
    out = [json.loads(line)["content"]
           for line in (DATA / "sample_conversation.jsonl").read_text().splitlines() if line]
    search = json.loads((DATA / "paraphrase_search.json").read_text())
    out += list(search["memories"].values())
    out += [question["query"] for question in search["questions"]]
    for line in (DATA / "calibration_pairs.jsonl").read_text().splitlines():
        if line:
            pair = json.loads(line)
            out += [pair["a"], pair["b"]]
    return out


def _bench_texts() -> list[str]:
    rng = random.Random(7)
    facts = [fact_text(rng, i) for i in range(600)]
    facts += [f"{s} {t.format(x=x, y=y, z=z, w=w)}" for s, t, x, y, z, w in
              itertools.islice(itertools.product(_SUBJECTS, _FACTS, _X, _Y, _Z, _W), 0, None, 37)]
    queries = sorted({q.format(x=x, y=y, z=z, w=w)
                      for q in _QUERIES for x, y, z, w in itertools.product(_X, _Y, _Z, _W)})
    return facts + queries


def _variants(texts: list[str], rng: random.Random) -> list[str]:
    """Sentences cut out of ``texts``, recased, fronted, padded and recombined."""
    out = []
    for text in texts:
        out += [part for part in re.split(r"(?<=[.!?])\s+", text) if part != text]
    for text in rng.sample(texts, min(400, len(texts))):
        out += [text.upper(), "Now " + text, f"  {text}!! ", text.replace(" ", "\t", 2)]
    words = sorted({w for t in texts for w in t.split()})
    for _ in range(600):
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 14))))
    return out


@lru_cache(maxsize=1)
def corpus() -> tuple[str, ...]:
    base = _bench_texts() + _scenario_texts() + _data_texts() + _SLOTTED + _ODD
    texts = base + _variants(base, random.Random(3))
    texts.append(" ".join(base[:300]))  # very long
    return tuple(dict.fromkeys(texts))


# --- the tests ---------------------------------------------------------------------


def test_corpus_is_large_and_varied() -> None:
    texts = corpus()
    assert len(texts) >= 2000
    assert sum(_ref_slot_of(t) is not None for t in texts) >= 200  # slots well exercised
    # Texts whose terms share a feature take the embedder's general path: exercised too.
    assert sum(_terms_share_a_feature(t) for t in texts) >= 200


def _terms_share_a_feature(text: str) -> bool:
    seen: set[str] = set()
    for term in (ANTONYMS.get(t, t) for t in _ref_content_terms(text)):
        padded = f"<{term}>"
        keys = {"w:" + term} | {"c:" + padded[i : i + 3] for i in range(len(padded) - 2)}
        if keys & seen:
            return True
        seen |= keys
    return False


@pytest.mark.parametrize(("dim", "step"), [(384, 1), (64, 3), (16, 1), (8, 1)])
def test_vectors_identical_to_the_reference(dim: int, step: int) -> None:
    """At small dims more features share a bucket, so a change in the order their values
    are summed in shows (reversing the order within a term differs on some 20 texts at
    dim 16 and 8, on none at 384)."""
    texts = corpus()[::step]
    embedder = HashingEmbedder(dim=dim)
    got = embedder.embed(texts)
    want = np.stack([_ref_embed_one(t, dim) for t in texts])
    differ = [t for t, a, b in zip(texts, got, want, strict=True) if not np.array_equal(a, b)]
    assert not differ, f"{len(differ)} vectors differ, e.g. {differ[:3]!r}"
    assert np.array_equal(got, want)
    for text in texts[::7]:  # one at a time, and through embed_one
        assert np.array_equal(embedder.embed([text])[0], want[texts.index(text)])
        assert np.array_equal(embedder.embed_one(text), want[texts.index(text)])


def test_features_identical_to_the_reference() -> None:
    for text in corpus():
        # Same features, same weights, same order (the order sums the buckets).
        assert list(features(text).items()) == list(_ref_features(text).items()), text


def test_slots_clean_and_terms_identical_to_the_reference() -> None:
    for text in corpus():
        assert compare._clean(text) == _ref_clean(text), text
        assert list(compare._slots(text)) == list(_ref_slots(text)), text
        assert slot_of(text) == _ref_slot_of(text), text
        assert content_terms(text) == _ref_content_terms(text), text
    assert slots_of("Tom is a nurse at St Mary's")[1].name == "employer"


def test_every_slot_pattern_needs_its_cues() -> None:
    """compare._SLOT_CUES: a pattern matches only texts holding one of its cues."""
    assert len(compare._SLOT_CUES) == len(compare._SLOTS)
    matched = [0] * len(compare._SLOTS)
    for text in corpus():
        clean = _ref_clean(text)
        for i, ((name, pattern), cues) in enumerate(zip(compare._SLOTS, compare._SLOT_CUES,
                                                        strict=True)):
            if pattern.search(clean):
                matched[i] += 1
                assert any(cue in clean for cue in cues), (name, i, clean)
    assert all(matched), matched  # every pattern met at least once


def test_clean_shortcuts_rest_on_facts() -> None:
    """compare._clean skips the squeeze of a printable text without "  " (every
    whitespace character but " " is unprintable) and _FRONTED when the text starts with
    none of _FRONT_WORDS (its alternatives)."""
    spaces = [c for c in map(chr, range(sys.maxunicode + 1)) if compare._SPACES.fullmatch(c)]
    assert " " in spaces and "\t" in spaces and "\u3000" in spaces
    assert not [c for c in spaces if c != " " and c.isprintable()]
    words = re.search(r"\(\?:\(\?:([^()]*)\)", compare._FRONTED.pattern)
    assert words and set(words.group(1).split("|")) == set(compare._FRONT_WORDS)


def test_a_changed_vector_is_caught() -> None:
    """The comparison is exact: one flipped bit in the last place is a difference."""
    want = _ref_embed_one("Who lives in Lisbon?", 384)
    got = HashingEmbedder().embed(["Who lives in Lisbon?"])[0]
    assert np.array_equal(got, want)
    nudged = got.copy()
    index = int(np.flatnonzero(nudged)[0])
    nudged[index] = np.nextafter(nudged[index], np.float32(2.0))
    assert not np.array_equal(nudged, want)
