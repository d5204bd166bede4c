"""A fact the language pack read no frame in fades from the profile sooner than a framed
one, and stays searchable (``consolidation.unframed_profile_half_life_days``)."""

from __future__ import annotations

from datetime import timedelta

from memcore.adapters import build_models
from memcore.client.client import Client
from memcore.consolidate.passes import run_pass
from memcore.consolidation import profile
from memcore.core.config import ConsolidationConfig, Settings
from memcore.core.models import Episode, Frame, Memory, Role, Status
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from tests.support.helpers import hours, make_memory
from tests.support.test_reliability_common import T0

DAYS = 24.0
CONFIG = ConsolidationConfig()
JOB = Frame(subject="ann", attribute="job", value="nurse", polarity=1, event="")


def _fact(text: str, importance: float = 0.6, **fields: object) -> Memory:
    """An explicit statement made at hour 0 (confidence 0.75, as the write path gives)."""
    fields = {"last_supported": hours(0), "explicit": True, "confidence": 0.75,
              "status": Status.ACTIVE, "frame_read": True, **fields}
    return make_memory(text, None, importance, 0.0, **fields)


def _in_profile(memory: Memory, days: float, config: ConsolidationConfig = CONFIG) -> bool:
    return memory in profile([memory], hours(days * DAYS), config)


def test_an_unframed_remark_leaves_the_profile_a_framed_fact_stays() -> None:
    remark = _fact("The canteen did a curry night and it was packed.")
    job = _fact("Ann is a nurse.", frame=JOB)
    assert _in_profile(remark, 30) and _in_profile(job, 30)
    assert not _in_profile(remark, 150)
    assert _in_profile(job, 150)


def test_important_pinned_said_again_or_unread_frames_keep_their_standing() -> None:
    assert _in_profile(_fact("Ann is allergic to peanuts.", importance=0.7), 150)
    assert _in_profile(_fact("The canteen did a curry night.", pinned=True), 150)
    # said again at day 100: its standing counts from then
    assert _in_profile(_fact("The canteen does a curry night.",
                             last_supported=hours(100 * DAYS)), 150)
    # used (found by a search the agent read) at day 100: the same
    assert _in_profile(_fact("The canteen does a curry night.", last_used=hours(100 * DAYS)),
                       150)
    # what no pack read (a verbatim turn, a memory added as given): its kind's half-life
    assert _in_profile(_fact("The canteen did a curry night.", frame_read=False), 150)
    remark = _fact("The canteen did a curry night.")
    assert _in_profile(remark, 150, CONFIG.model_copy(
        update={"unframed_profile_half_life_days": None}))


def test_a_faded_remark_stays_active_and_searchable_after_a_pass(redis_url: str) -> None:
    # and a turn stored verbatim (infer=False: no pack reads it) keeps its standing
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    pipeline = IngestPipeline(store, models, settings)
    for i, text in enumerate(["I'm a nurse at St Mary's.",
                              "The canteen did a curry night on Friday and it was packed out.",
                              "Parking permit renewal is handled by the estates office."]):
        pipeline.ingest("fd", [Episode(id=f"fd-{i}", namespace="fd", role=Role.USER,
                                       speaker="Ann", text=text, timestamp=T0)],
                        infer=i < 2)
    later = T0 + timedelta(days=150)
    run_pass(store, "fd", settings.consolidation, models.merger, now=later)
    client = Client(settings=settings)
    try:
        shown = [m.text for m in client.profile("fd", now=later)]
        assert any("nurse" in t for t in shown) and not any("curry" in t for t in shown), shown
        assert any("Parking permit" in t for t in shown), shown  # verbatim: no pack read it
        canteen = [m for m in store.records.iter_memories("fd") if "curry" in m.text]
        assert canteen and all(m.status is Status.ACTIVE for m in canteen), canteen
        hits = client.search("fd", "curry night at the canteen", now=later, touch=False)
        assert any("curry" in h.memory.text for h in hits)
    finally:
        client.close()
