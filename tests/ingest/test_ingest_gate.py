"""Which facts reach the decision call: only near-duplicates and cheap-rule conflicts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memcore.adapters import build_models
from memcore.core.config import Settings
from memcore.core.interfaces import Decision, Op
from memcore.core.models import Episode
from memcore.ingest.write_path import IngestPipeline, IngestReport, same_slot
from memcore.store import MemoryStore

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def turn(i: int, text: str) -> Episode:
    return Episode(id=f"g{i}", namespace="gate", role="user", speaker="Sam", text=text,
                   timestamp=T0 + timedelta(days=i))


def test_same_slot() -> None:
    assert same_slot("Sam lives in Paris.", "Sam lives in Berlin now.")
    assert not same_slot("Sam lives in Paris.", "Anna lives in Berlin.")
    assert not same_slot("Sam likes tea.", "Sam likes coffee.")


def test_only_conflicts_and_near_duplicates_reach_the_decider(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, add_threshold=0.2)
    models = build_models(settings)
    pipeline = IngestPipeline(MemoryStore.from_url(redis_url), models, settings)
    pipeline.ingest("gate", [turn(0, "I live in Paris and I love hiking in the Alps.")])
    report = pipeline.ingest("gate", [turn(1, "I love cooking Italian food in Paris.")])
    assert report.decision_facts == 0, "similar but clearly new: added with no call"
    assert report.decisions == {"ADD": 1}
    report = pipeline.ingest("gate", [turn(2, "I live in Berlin now.")])
    # Another value of the same single-valued frame: superseded by structure, no call.
    assert report.decision_facts == 0 and report.decisions == {"DELETE": 1}
    report = pipeline.ingest("gate", [turn(3, "I live in Berlin now, honestly.")])
    assert report.decisions == {"NOOP": 1}


def test_shadow_decisions_count_agreement_with_the_rules(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, add_threshold=0.2, shadow_decisions=True)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("shadow", [turn(0, "I live in Paris and I love hiking in the Alps.")])
    # (not "I really love ...": without its intensifier that is an exact duplicate)
    report = pipeline.ingest("shadow", [turn(1, "I love hiking in the Alps so much.")])
    # The offline decider against itself: every compared decision agrees.
    assert report.shadow == {"compared": 1, "NOOP.NOOP": 1, "agree": 1, "agree_target": 1}
    counters = store.coordination.counters("shadow")
    assert float(counters["shadow.compared"]) == float(counters["decision_facts"]) == 1


def test_compare_counts_disagreements_and_kept_facts() -> None:
    report = IngestReport()
    rules = [Decision(Op.DELETE, target=0), Decision(Op.NOOP, target=1), Decision(Op.ADD)]
    model = [Decision(Op.DELETE, target=1), Decision(Op.ADD, candidate=True),
             Decision(Op.ADD)]
    report.compare(rules, model)
    assert report.shadow == {"compared": 3, "DELETE.DELETE": 1, "agree": 2, "NOOP.KEPT": 1,
                             "ADD.ADD": 1, "agree_target": 1}
