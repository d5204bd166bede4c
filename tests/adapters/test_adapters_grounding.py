"""The model extractor's grounding check against a local OpenAI-compatible server: a fact
whose content words mostly occur in no turn of its call (a copy of the prompt's worked
example, an invention) is not stored and is audited with its text; third-person rewrites
of what the user said are kept."""

from __future__ import annotations

import json
from typing import Any

from memcore.adapters import build_models
from memcore.adapters.grounding import ungrounded_words
from memcore.adapters.openai_client import OpenAIConfig
from memcore.adapters.openai_models import EXTRACT_PROMPT, OpenAIExtractor
from memcore.client.client import to_episodes
from memcore.core.config import Settings
from memcore.core.models import AuditAction, Episode, Role
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from tests.support.test_reliability_common import T0
from tests.workers.test_reliability_models import Answer, completion, model_server


def answering(facts: list[dict[str, Any]]) -> Any:
    """A server answer: ``facts`` for every extraction call, ADD for every decision."""
    def answer(body: dict[str, Any]) -> Answer:
        data = json.loads(body["messages"][-1]["content"])
        if "turns" in data:
            return 200, completion(json.dumps({"facts": facts})), 0.0
        return 200, completion(json.dumps({"decisions": [
            {"fact": f["id"], "op": "ADD", "target": None} for f in data["facts"]]})), 0.0
    return answer


def turn(text: str, speaker: str = "Caroline", role: Role = Role.USER) -> Episode:
    return Episode(namespace="g", role=role, speaker=speaker, text=text, timestamp=T0)


def extract(turns: list[Episode], texts: list[tuple[int, str]]) -> tuple[list[str], list[str]]:
    """Stored fact texts and the extractor's errors for the model answering ``texts``."""
    facts = [{"turn": i, "text": t, "kind": "knowledge", "explicit": True} for i, t in texts]
    with model_server(answering(facts)) as url:
        extractor = OpenAIExtractor(OpenAIConfig(base_url=url, api_key="k", chat_model="m",
                                                 max_retries=0))
        kept = [f.text for f in extractor.extract(turns)]
    return kept, extractor.errors


def test_the_worked_example_copied_into_an_unrelated_turn_is_rejected() -> None:
    turns = [turn("I started a pottery class on Tuesdays, it is so relaxing.", "Omar")]
    assert "Ines is vegetarian" in EXTRACT_PROMPT  # what a small model copies
    kept, errors = extract(turns, [(0, "Omar is vegetarian"),
                                   (0, "Ines moved to Lisbon in February 2024"),
                                   (0, "Omar enjoys hiking in Lisbon"),
                                   (0, "Omar started a pottery class on Tuesdays")])
    assert kept == ["Omar started a pottery class on Tuesdays"]
    assert len(errors) == 3 and all("rejected-ungrounded" in e for e in errors), errors
    for text in ("Omar is vegetarian", "Ines moved to Lisbon in February 2024",
                 "Omar enjoys hiking in Lisbon"):
        assert any(repr(text) in e for e in errors), (text, errors)


def test_the_example_verbatim_is_rejected_even_when_its_words_are_in_the_turn() -> None:
    # Omar is vegetarian; the model wrote the example's own sentence about Ines.
    kept, errors = extract([turn("I'm vegetarian.", "Omar")], [(0, "Ines is vegetarian"),
                                                              (0, "Omar is vegetarian")])
    assert kept == ["Omar is vegetarian"]
    assert len(errors) == 1 and "worked example" in errors[0], errors
    # An Ines who says it keeps it.
    kept, errors = extract([turn("I'm vegetarian.", "Ines")], [(0, "Ines is vegetarian")])
    assert (kept, errors) == (["Ines is vegetarian"], [])


def test_third_person_rewrites_of_the_turns_are_kept() -> None:
    turns = [turn("Hi! I'm vegetarian and my sister lives in Oslo."),
             turn("Nice. Shall I book the Hotel Lux in Rome for your trip?", "assistant",
                  Role.ASSISTANT),
             turn("Yes please, book it. I moved to Berlin last month, I'm 34 now."),
             turn("My kids love hiking with our dog Max.")]
    rewrites = [(0, "Caroline is vegetarian"),
                (0, "Caroline's sister lives in Oslo"),
                (2, "Caroline wants the Hotel Lux in Rome booked for her trip"),  # context turn
                (2, "Caroline moved to Berlin in April 2024"),  # a resolved relative date
                (2, "Caroline is 34 years old"),
                (3, "Caroline's children love to hike with their dog, Max"),
                (3, "The user has a dog named Max")]
    kept, errors = extract(turns, rewrites)
    assert errors == [] and kept == [t for _, t in rewrites]


def test_what_the_words_compare_and_a_synonym_it_does_not_know() -> None:
    sources = ["I love hiking and I moved to Lisbon."]
    assert ungrounded_words("Caroline loves hikes; Caroline is moving to Lisbon", sources,
                            ["Caroline"]) == ([], 4)
    assert ungrounded_words("Caroline is vegetarian", ["I'm veggie."], ["Caroline"]) == (
        ["veget"], 1)  # not recognised: rejected and audited, see below
    kept, errors = extract([turn("I'm veggie.")], [(0, "Caroline is vegetarian")])
    assert kept == [] and "'Caroline is vegetarian'" in errors[0]
    assert ungrounded_words("Caroline", [], ["Caroline"]) == ([], 0)  # nothing to judge: kept


def test_a_rejected_fact_is_in_the_audit_log_with_its_text(redis_url: str) -> None:
    facts = [{"turn": 0, "text": "Sam is vegetarian", "kind": "preference", "explicit": True},
             {"turn": 0, "text": "Sam keeps bees in the garden", "kind": "knowledge",
              "explicit": True}]
    with model_server(answering(facts)) as url:
        settings = Settings(redis_url=redis_url, openai_api_key="sk-test",
                            openai_base_url=url, model_max_retries=0)
        store = MemoryStore.from_url(redis_url)
        pipeline = IngestPipeline(store, build_models(settings), settings)
        ns = "grounding"
        report = pipeline.ingest(ns, to_episodes(ns, [
            {"role": "user", "id": "t1", "speaker": "Sam",
             "content": "I keep bees in the garden."}], T0, None))
    assert [m.text for m in store.records.iter_memories(ns)] == ["Sam keeps bees in the garden"]
    assert report.facts == 1
    reasons = [e.reason for e in store.audit.tail(ns, 50)
               if e.action is AuditAction.MODEL_ERROR]
    assert len(reasons) == 1, reasons
    assert reasons[0].startswith("extractor: extract: rejected-ungrounded")
    assert "'Sam is vegetarian'" in reasons[0]
