"""Every fact the offline models write from the bundled scenarios reads as a sentence
(issue 26: no "ares", no "Richard cannots ...", no verbless scraps)."""

from __future__ import annotations

from memcore.adapters import build_models
from memcore.core.config import Settings
from memcore.core.models import Episode
from memcore.ingest.write_path import IngestPipeline
from memcore.language import language_pack
from memcore.store import MemoryStore
from memcore_bench.profile import load_scenarios


def test_every_fact_of_the_scenarios_passes_the_grammar_checker(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    scenarios = [s for s in load_scenarios() if not s.name.startswith("frozen_")]
    texts: list[tuple[str, str]] = []
    for scenario in scenarios:
        ns = "g-" + scenario.name.replace("_", "-")
        for i, turn in enumerate(scenario.turns):
            pipeline.ingest(ns, [Episode(id=f"{ns}-{i}", namespace=ns, role=turn["role"],
                                         speaker=scenario.speaker, text=turn["text"],
                                         timestamp=turn["at"])])
        texts += [(scenario.name, m.text) for m in store.records.iter_memories(ns)]
    assert len(texts) > 300
    problems = language_pack("english").problems([t for _, t in texts])
    broken = [(name, text, why) for (name, text), why in zip(texts, problems, strict=True)
              if why is not None]
    assert broken == []
