"""Facts attached to turns (``MEMCORE_EXTRACTOR=provided``), as bench locomo feeds them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memcore.adapters import OfflineExtractor, build_models
from memcore.adapters.provided import ProvidedFactsExtractor, provided_facts
from memcore.core.config import Settings
from memcore.core.models import Episode, Kind, Role


def episode(metadata: dict[str, object], eid: str = "D1-3") -> Episode:
    return Episode(id=eid, namespace="n", role=Role.USER, speaker="Caroline",
                   text="I went to a support group.", metadata=metadata,
                   timestamp=datetime(2023, 5, 8, tzinfo=UTC))


def test_strings_and_objects_become_facts_of_their_turn() -> None:
    facts = provided_facts(episode({"facts": [
        "Caroline attended an LGBTQ support group.",
        {"text": "Caroline likes hiking.", "kind": "preference", "importance": 7}]}))
    assert [f.text for f in facts] == ["Caroline attended an LGBTQ support group.",
                                       "Caroline likes hiking."]
    assert all(f.source == "D1-3" for f in facts)
    assert facts[1].kind is Kind.PREFERENCE and facts[1].importance == 7
    assert provided_facts(episode({})) == []


def test_bad_attachments_name_the_episode_and_item() -> None:
    with pytest.raises(ValueError, match=r"D1-3: metadata.facts must be a list"):
        provided_facts(episode({"facts": "one fact"}))
    with pytest.raises(ValueError, match=r"metadata.facts\[0\]"):
        provided_facts(episode({"facts": [{"text": ""}]}))
    extractor = ProvidedFactsExtractor()
    # A bad attachment loses that turn's facts only, recorded for the audit log.
    good = episode({"facts": ["Caroline likes tea."]}, "D1-4")
    assert [f.text for f in extractor.extract([episode({"facts": [3]}), good])] == [
        "Caroline likes tea."]
    assert extractor.usage.calls == 0 and len(extractor.drain_errors()) == 1


def test_selected_by_the_extractor_setting() -> None:
    assert isinstance(build_models(Settings(extractor="provided")).extractor,
                      ProvidedFactsExtractor)
    assert isinstance(build_models(Settings()).extractor, OfflineExtractor)
    with pytest.raises(ValueError, match="extractor"):
        build_models(Settings(extractor="magic"))
