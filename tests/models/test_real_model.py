"""memcore's prompts and parsing against a real small model behind llama.cpp's server.

Assertions are on structure (every answer parsed into its shape, ids within range,
nothing dropped) and on clear-cut cases only.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from memcore.adapters.openai_client import OpenAIConfig
from memcore.adapters.openai_models import OpenAIDecider, OpenAIExtractor, OpenAIMerger
from memcore.core.interfaces import ClusterRequest, DecisionRequest, Neighbour, Op, Verdict
from memcore.core.models import Episode, Role
from memcore.local.models import LlamaServer

TS = datetime(2024, 5, 8, 13, 0, tzinfo=UTC)


def turn(text: str, role: Role = Role.USER) -> Episode:
    return Episode(namespace="t", role=role, text=text, timestamp=TS,
                   speaker="Caroline" if role is Role.USER else "assistant")


def one(config: OpenAIConfig, fact: str, memory: str) -> tuple[OpenAIDecider, Op]:
    decider = OpenAIDecider(config)
    (decision,) = decider.decide([DecisionRequest(fact, [Neighbour("m", memory, 0.8)])])
    return decider, decision.op


def test_llama_cpp_refuses_json_schema_and_the_adapter_falls_back(llm: OpenAIConfig) -> None:
    merger = OpenAIMerger(dataclasses.replace(llm, response_format="json_schema"))
    assert merger.summarize([["Caroline swims on Mondays", "Caroline swims on Fridays"]]) == [""]
    assert "HTTP 500" in merger.errors[0]  # this server's answer to the OpenAI form
    auto = OpenAIMerger(llm)
    (summary,) = auto.summarize([["Caroline swims on Mondays", "Caroline swims on Fridays"]])
    assert "swim" in summary.lower() and auto.errors == []


def test_extraction_from_a_short_conversation(llm: OpenAIConfig) -> None:
    turns = [turn("Hi! My dog Max loves the beach. I also started learning Spanish."),
             turn("That's great! How is it going?", Role.ASSISTANT),
             turn("Thanks, good.")]
    extractor = OpenAIExtractor(llm)
    facts = extractor.extract(turns)
    assert facts, extractor.errors
    assert all(f.source in (turns[0].id, turns[2].id) for f in facts)  # only user turns
    joined = " ".join(f.text for f in facts).lower()
    assert "max" in joined or "spanish" in joined
    # Errors allowed: a fact cited on the assistant's turn, or one not grounded in the
    # turns (a copy of the prompt's worked example); both are dropped and audited.
    assert all("may not yield" in e or "rejected-ungrounded" in e for e in extractor.errors)


def test_add_for_an_unrelated_fact(llm: OpenAIConfig) -> None:
    # Kept either way: the model's ADD, or its NOOP rejected (no shared content word) and
    # the fact ADDed as a candidate.
    decider, op = one(llm, "Caroline plays the violin", "Caroline works as a nurse")
    assert op is Op.ADD, decider.errors


def test_noop_for_the_same_fact(llm: OpenAIConfig) -> None:
    decider, op = one(llm, "Caroline is allergic to peanuts", "Caroline is allergic to peanuts")
    assert op is Op.NOOP, decider.errors


def test_delete_for_a_contradiction(llm: OpenAIConfig) -> None:
    decider, op = one(llm, "Caroline no longer lives in Madrid; she moved to Berlin",
                      "Caroline lives in Madrid")
    # The old memory must not stay as it is: retired (DELETE) or rewritten (UPDATE).
    assert op in (Op.DELETE, Op.UPDATE), decider.errors


def test_update_for_an_added_detail(llm: OpenAIConfig) -> None:
    decider = OpenAIDecider(llm)
    (decision,) = decider.decide([DecisionRequest(
        "Caroline's cat Luna is 5 years old", [Neighbour("m", "Caroline has a cat named Luna",
                                                         0.8)])])
    assert decision.op in (Op.UPDATE, Op.NOOP, Op.ADD) and decider.errors == []
    if decision.op is Op.UPDATE:
        assert decision.target == 0 and "luna" in (decision.text or "").lower()


def test_a_batch_of_decisions_keeps_one_per_fact(llm: OpenAIConfig) -> None:
    requests = [DecisionRequest("Caroline lives in Berlin",
                                [Neighbour("a", "Caroline lives in Madrid", 0.8)]),
                DecisionRequest("Caroline loves hiking",
                                [Neighbour("b", "Caroline loves hiking", 0.99)])]
    decider = OpenAIDecider(llm)
    decisions = decider.decide(requests)
    assert len(decisions) == 2
    for d in decisions:
        assert d.target is None or d.target == 0
        assert d.op is not Op.ADD or d.candidate or d.target is None


def test_merge_of_two_paraphrases(llm: OpenAIConfig) -> None:
    merger = OpenAIMerger(llm)
    a, b = "Caroline drinks coffee every morning", "Caroline has coffee each morning"
    (outcome,) = merger.merge([ClusterRequest([a, b], [(a, b)])])
    assert merger.errors == []
    assert len(outcome.verdicts) == 1 and outcome.verdicts[0] in tuple(Verdict)
    if outcome.merged_text is not None:
        assert "coffee" in outcome.merged_text.lower()


def test_summary_of_a_group(llm: OpenAIConfig) -> None:
    merger = OpenAIMerger(llm)
    (summary,) = merger.summarize([["Caroline ran 5 km on Monday", "Caroline ran 8 km on Friday",
                                    "Caroline is training for a marathon"]])
    assert summary and ("run" in summary.lower() or "ran" in summary.lower()
                        or "marathon" in summary.lower())


def test_malformed_output_is_recovered_or_kept_safe(llm_server: LlamaServer,
                                                    llm: OpenAIConfig) -> None:
    # No response format at all and a reply cut off after 20 tokens: the JSON cannot be
    # finished, the repair is cut off too, and the safe default keeps the facts.
    cramped = dataclasses.replace(llm, response_format="none", max_tokens=20)
    decider = OpenAIDecider(cramped)
    decisions = decider.decide([DecisionRequest("Caroline plays the violin",
                                                [Neighbour("a", "Caroline is a nurse", 0.7)])])
    assert [(d.op, d.candidate) for d in decisions] == [(Op.ADD, True)]
    assert decider.usage.repairs == 1 and "cut off" in decider.errors[0]
    # With room and the grammar, the same request parses at once (a NOOP the adapter then
    # rejects as unrelated is a decision, not a parse failure).
    fine = OpenAIDecider(llm)
    fine.decide([DecisionRequest("Caroline plays the violin",
                                 [Neighbour("a", "Caroline is a nurse", 0.7)])])
    assert fine.usage.repairs == 0
    assert not any("malformed" in e or "failed" in e for e in fine.errors), fine.errors
