"""A hybrid search stops reading its ranked candidates once the rest cannot make the top
k (memcore.client.search, ``Searcher.prune``): the answers must be the ones a search
reading whole chunks gives, for every k, with pinned memories (a floor above 1 lifts
them most), relations, old and new memories, tombstones, a negative retention weight
and filters."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from memcore.client.client import Client
from memcore.client.search import retention_lift
from memcore.core.config import ConsolidationConfig, Settings
from memcore.core.models import Kind, Relation, Status
from tests.support.cli_helpers import T0, memory, put

NS = "prune-1"
_WORDS = ["tea", "coffee", "Berlin", "Paris", "chess", "dog", "cat", "guitar", "nurse",
          "teacher", "hiking", "marathon", "garden", "piano", "Lisbon", "sister", "brother",
          "job", "allergy", "peanuts"]


def _fill(url: str, rng: random.Random, n: int) -> None:
    mems = []
    for i in range(n):
        text = f"user {' '.join(rng.sample(_WORDS, 3))} number {i}"
        extra: dict[str, object] = {"importance": rng.random()}
        if i % 7 == 0:
            extra["pinned"] = True
        if i % 11 == 0:
            extra["relation"] = Relation(subject="user", predicate="likes",
                                         object=rng.choice(_WORDS), weight=rng.random())
        status = Status.TOMBSTONED if i % 13 == 0 else Status.ACTIVE
        mems.append(memory(text, ns=NS, days_ago=rng.uniform(0, 400), status=status,
                           kind=rng.choice([Kind.KNOWLEDGE, Kind.PREFERENCE]), **extra))
    put(url, *mems)


def _answers(client: Client, query: str, k: int, **kw: object) -> list[tuple[str, float, float]]:
    hits = client.search(NS, query, k, touch=False, now=T0 + timedelta(days=1), **kw)  # type: ignore[arg-type]
    return [(h.memory.id, h.score, h.similarity) for h in hits]


@pytest.mark.parametrize("floor", [0.01, 3.0])
def test_pruned_search_answers_as_the_whole_chunk_does(redis_url: str, floor: float) -> None:
    rng = random.Random(7)
    _fill(redis_url, rng, 150)
    settings = Settings(redis_url=redis_url,
                        consolidation=ConsolidationConfig(floor=floor))
    pruned, whole = Client(settings=settings), Client(settings=settings)
    whole._searcher.prune = False
    reads = {"pruned": 0, "whole": 0}
    for name, client in (("pruned", pruned), ("whole", whole)):
        # Records read: the first ones come with the namespace's state, the rest after.
        for method in ("get_many", "search_read"):
            real = getattr(client.store.records, method)

            def counted(*args: object, _name: str = name, _real: object = real,
                        **kw: object) -> object:
                reads[_name] += len(args[1])  # type: ignore[arg-type]
                return _real(*args, **kw)  # type: ignore[operator]

            setattr(client._searcher.store.records, method, counted)
    try:
        cases = 0
        for _ in range(40):
            query = " ".join(rng.sample(_WORDS, rng.randint(1, 3)))
            for k in (1, 3, 10, 25):
                for kw in ({}, {"retention_weight": 0.5}, {"retention_weight": -0.3},
                           {"include_inactive": True}, {"filters": {"kind": "preference"}},
                           {"max_chars": 60}):
                    assert _answers(pruned, query, k, **kw) == _answers(whole, query, k, **kw), \
                        (query, k, kw)
                    cases += 1
        assert cases == 40 * 4 * 6
        assert reads["pruned"] < 0.8 * reads["whole"], reads  # it does read less
    finally:
        pruned.close()
        whole.close()


def test_retention_lift_bounds_every_keep() -> None:
    config = ConsolidationConfig(floor=2.5)
    assert retention_lift(0.05, config) == pytest.approx(1.0 + 0.05 * 2.5)
    assert retention_lift(0.05, ConsolidationConfig()) == pytest.approx(1.05)
    assert retention_lift(-1.0, config) == 1.0
    assert retention_lift(0.0, config) == 1.0
