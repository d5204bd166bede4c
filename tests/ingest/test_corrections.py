"""Corrections through the real write path (offline rules, real Redis): a correction
replaces the value it names in the fact it corrects, keeps that fact's interval, and
never fails the turn that carries it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memcore.adapters import build_models
from memcore.core.config import Settings
from memcore.core.models import Episode, Role, Status
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)


def _said(pipeline: IngestPipeline, ns: str, texts: list[tuple[int, str]]) -> None:
    for i, (day, text) in enumerate(texts):
        pipeline.ingest(ns, [Episode(id=f"{ns}-{i}", namespace=ns, role=Role.USER,
                                     speaker="Ola", text=text,
                                     timestamp=T0 + timedelta(days=day))])


def _pipeline(redis_url: str) -> tuple[IngestPipeline, MemoryStore]:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    return IngestPipeline(store, build_models(settings), settings), store


def test_a_dated_fact_corrected_after_its_date_keeps_its_interval(redis_url: str) -> None:
    """The corrected fact's dates are the wrong one's: a correction made after the date
    passed once failed the turn (valid_until before valid_from)."""
    pipeline, store = _pipeline(redis_url)
    _said(pipeline, "dates", [
        (0, "My viva is on 12 January."),
        (20, "Oops, my mistake, the viva was on 14 January, not 12 January.")])
    memories = list(store.records.iter_memories("dates"))
    live = [m for m in memories if m.live]
    assert [m.text for m in live] == ["Ola's viva is on 14 January."]
    old = next(m for m in memories if m.status is Status.SUPERSEDED)
    assert live[0].valid_from == old.valid_from
    assert live[0].valid_until is not None and live[0].valid_until >= live[0].valid_from


def test_a_correction_typed_without_its_comma_replaces_the_job_it_names(redis_url: str
                                                                       ) -> None:
    pipeline, store = _pipeline(redis_url)
    _said(pipeline, "job", [(0, "my brother Kofi is a plumber"),
                            (1, "I had a long chat with the plumber next door today"),
                            (2, "sorry I told u wrong, Kofi's an electrician not a plumber")])
    live = {m.text for m in store.records.iter_memories("job") if m.live}
    assert any("Kofi is an electrician" in t for t in live), live
    assert not any("Kofi is a plumber" in t for t in live), live
    # "not a plumber" names the role, never "the plumber" someone talked to.
    assert any("the plumber next door" in t for t in live), live


def test_a_corrected_weekday_moves_its_date_and_a_cued_value_may_come_with_words(
        redis_url: str) -> None:
    # T0 is Monday 5 January 2026. "Thursday, not Tuesday" had kept Tuesday's date;
    # "it's on Saturday actually" had been no correction at all.
    pipeline, store = _pipeline(redis_url)
    _said(pipeline, "wd", [(0, "My physio session is on Tuesday at 10am."),
                           (0, "Sorry, I meant Thursday, not Tuesday.")])
    _said(pipeline, "wd2", [(0, "We're hosting a barbecue on Friday."),
                            (0, "oops, it's on Saturday actually")])
    live = {m.text for ns in ("wd", "wd2") for m in store.records.iter_memories(ns) if m.live}
    assert "Ola's physio session is on Thursday (8 January 2026) at 10am." in live, live
    assert any("barbecue on Saturday (10 January 2026)" in t for t in live), live
    assert not any("Tuesday" in t or "Friday" in t for t in live), live
