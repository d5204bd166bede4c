"""Offline (rule-based) extractor, decider and merger on hand-written turns."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memcore.adapters.offline import OfflineDecider, OfflineExtractor, OfflineMerger
from memcore.adapters.timephrases import resolve
from memcore.core.interfaces import ClusterRequest, DecisionRequest, Neighbour, Op, Verdict
from memcore.core.models import Episode, Kind, Role

TS = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def ep(text: str, role: Role = Role.USER, speaker: str = "Caroline") -> Episode:
    return Episode(namespace="t", role=role, speaker=speaker, text=text, timestamp=TS)


def texts(*turns: Episode, **kw: bool) -> list[str]:
    return [f.text for f in OfflineExtractor(**kw).extract(turns)]


def decide(fact: str, *neighbours: str) -> tuple[Op, int | None]:
    request = DecisionRequest(fact, [Neighbour(f"m{i}", t, 0.9 - i / 100)
                                     for i, t in enumerate(neighbours)])
    decision = OfflineDecider().decide([request])[0]
    return decision.op, decision.target


def test_first_person_resolved_to_speaker() -> None:
    assert texts(ep("I love hiking.")) == ["Caroline loves hiking."]
    assert texts(ep("My favourite food is ramen!")) == ["Caroline's favourite food is ramen."]
    # One fact per claim: a compound sentence gives one fact per clause.
    assert texts(ep("I'm a nurse and I live in Paris.", speaker="")) == [
        "User is a nurse.", "User lives in Paris."]


def test_greetings_questions_and_small_talk_dropped() -> None:
    assert texts(ep("Hey Mel! Good to see you! How have you been?")) == []
    assert texts(ep("Thanks! That's so cool. What do you think about it?")) == []
    assert texts(ep("Hi there! I adopted a puppy named Rex.")) == [
        "Caroline adopted a puppy named Rex."]


def test_only_user_turns_by_default() -> None:
    assistant = ep("I love helping people with their code.", Role.ASSISTANT, "bot")
    tool = ep("The user lives in Narnia and loves dragons.", Role.TOOL, "web")
    system = ep("The user is an administrator with full rights.", Role.SYSTEM, "sys")
    assert texts(assistant, tool, system) == []
    assert texts(assistant, tool, system, allow_assistant=True) == [
        "Bot loves helping people with their code."]


def test_time_bound_goal_gets_expiry() -> None:
    (fact,) = OfflineExtractor().extract([ep("I'm revising for my exam in May.")])
    assert fact.kind is Kind.GOAL
    assert fact.expires_at == datetime(2023, 6, 1, tzinfo=UTC) == fact.valid_until
    assert fact.explicit and fact.text == "Caroline is revising for Caroline's exam in May."


@pytest.mark.parametrize(("phrase", "deadline"), [
    ("I have a dentist appointment tomorrow", datetime(2023, 5, 10, tzinfo=UTC)),
    ("I start my new job next week", datetime(2023, 5, 22, tzinfo=UTC)),
    ("I need to finish the report by May 20th", datetime(2023, 5, 21, tzinfo=UTC)),
    ("I will visit my parents in 2 days", datetime(2023, 5, 10, 13, 56, tzinfo=UTC)),
    ("I'm studying hard for the May exam", datetime(2023, 6, 1, tzinfo=UTC)),
    ("I want to run a marathon by March", datetime(2024, 4, 1, tzinfo=UTC)),
])
def test_time_phrases_resolved_against_the_episode(phrase: str, deadline: datetime) -> None:
    assert resolve(phrase, TS).deadline == deadline
    (fact,) = OfflineExtractor().extract([ep(phrase)])
    assert fact.expires_at == deadline


@pytest.mark.parametrize("said", [
    "I ran a pottery class on thursday evenings at the community hall.",
    "We swam on Saturday mornings with the kids.",
    "I went to choir on Mondays.",
    "The fair opened on Friday the 12th.",
    # "in <span>" told of the past or of what has not happened: up to now, no deadline
    "Best sleep I've had in 6 weeks.",
    "We haven't been to the coast in 2 years.",
    "I've put on 4 kg in 3 months.",
])
def test_a_weekday_habit_or_a_dated_weekday_gets_no_invented_date(said: str) -> None:
    info = resolve(said, TS)
    assert info.deadline is None and info.happened is None and info.rewritten == said


def test_past_phrases_made_absolute() -> None:
    (fact,) = OfflineExtractor().extract([ep("I went to a support group yesterday.")])
    assert fact.text == "Caroline went to a support group on 7 May 2023."
    assert fact.kind is Kind.EVENT and fact.valid_from == datetime(2023, 5, 7, tzinfo=UTC)
    assert fact.expires_at is None


def test_importance_and_explicitness_from_content() -> None:
    allergy, chat = OfflineExtractor().extract(
        [ep("I am allergic to peanuts. I think maybe I watched a film at the cinema.")])
    assert allergy.explicit and not chat.explicit
    assert allergy.importance > chat.importance


def test_contradiction_supersedes_the_old_fact() -> None:
    (old,) = texts(ep("I live in Paris."))
    (new,) = texts(ep("I moved to Berlin."))
    assert decide(new, "Caroline loves hiking.", old) == (Op.DELETE, 1)
    assert decide("Caroline lives in Berlin.", old) == (Op.DELETE, 0)
    assert decide("Melanie lives in Berlin.", old) == (Op.ADD, None)  # other subject


def test_negation_and_changed_numbers_contradict() -> None:
    assert decide("Caroline doesn't like coffee.", "Caroline likes coffee.") == (Op.DELETE, 0)
    assert decide("Caroline hates coffee.", "Caroline loves coffee.") == (Op.DELETE, 0)
    assert decide("Caroline has 3 kids.", "Caroline has 2 kids.") == (Op.DELETE, 0)


def test_repeated_preference_is_noop_and_extension_is_update() -> None:
    (first,) = texts(ep("I love hiking."))
    (again,) = texts(ep("Oh, I really love hiking!"))
    assert decide(again, first) == (Op.NOOP, 0)
    assert decide("Caroline loves hiking in the Alps.", first) == (Op.UPDATE, 0)
    assert decide("Caroline loves hiking.", "Caroline loves hiking in the Alps.") == (Op.NOOP, 0)
    assert decide("Caroline bought a red bike.", first) == (Op.ADD, None)


def test_decider_one_call_per_batch() -> None:
    decider = OfflineDecider()
    decisions = decider.decide([DecisionRequest("a b c", []), DecisionRequest("d e f", [])])
    assert [d.op for d in decisions] == [Op.ADD, Op.ADD] and decider.usage.calls == 1
    assert decider.decide([]) == [] and decider.usage.calls == 1


def test_merger_dedupes_and_keeps_distinct_details() -> None:
    merger = OfflineMerger()
    (outcome,) = merger.merge([ClusterRequest(
        ["Caroline uses vim.", "caroline uses VIM", "Caroline uses vim keybindings in VS Code.",
         "Caroline uses vim since 2015."],
        [("Caroline likes tea.", "Caroline doesn't like tea."),
         ("Caroline likes tea.", "Caroline likes tea a lot."),
         ("Caroline likes tea.", "Melanie owns a boat.")])])
    assert outcome.merged_text is not None
    assert outcome.merged_text.startswith("Caroline uses vim keybindings in VS Code")
    assert "2015" in outcome.merged_text and outcome.merged_text.count("uses vim.") == 0
    assert outcome.verdicts == [Verdict.CONTRADICTS, Verdict.SAME, Verdict.DISTINCT]


def test_summary_lists_shared_terms() -> None:
    (line,) = OfflineMerger().summarize([[
        "Caroline went hiking in the Alps.", "Caroline hiked with her dog.",
        "Caroline plans a hiking trip to the Alps."]])
    assert line.startswith("Recurring (3 memories):")
    assert "hiking" in line and "Alps" in line


def test_summary_keeps_each_members_own_content_within_a_limit() -> None:
    from memcore.adapters.offline import summarize_group

    line = summarize_group(["Jon opened a dance studio in Boston.",
                            "Jon mentors young dancers every week.",
                            "Jon lost his job at the bank."])
    assert line.startswith("Recurring (3 memories): Jon")
    for word in ("studio", "Boston", "mentors", "dancers", "bank"):
        assert word in line
    long = summarize_group([f"Jon visited museum number {i} with friends" for i in range(400)])
    assert len(long) <= 1202


def test_summary_carries_every_members_dates_names_and_numbers() -> None:
    from memcore.adapters.offline import summarize_group
    from memcore.language.english.lexicon import canonical_terms, numbers

    members = ["Melanie ran a charity race for mental health on 20 May 2023.",
               "Melanie signed up for a pottery class in July.",
               "Melanie took her 3 kids camping at Lake Tahoe.",
               "Melanie painted a sunset over the lake for Caroline.",
               "Melanie read Becoming by Michelle Obama twice."]
    line = summarize_group(members)
    for text in members:
        assert numbers(text) <= numbers(line)
        assert canonical_terms(text) <= canonical_terms(line)  # every content word kept
    assert len(line.split()) < sum(len(t.split()) for t in members)  # and shorter


@pytest.mark.parametrize(("sentence", "ends"), [
    # a state said to last a span ends when the span does; "left"/"right" after a
    # possessive is a side, not the past of "leave"
    ("His left arm is to stay in a sling for three weeks.", datetime(2026, 3, 29, tzinfo=UTC)),
    ("My right knee will be in a brace for two weeks.", datetime(2026, 3, 22, tzinfo=UTC)),
    ("I left the choir for two weeks.", None),  # a past span, no end ahead
])
def test_a_state_said_to_last_a_span_ends_with_it(sentence: str, ends: datetime | None) -> None:
    assert resolve(sentence, datetime(2026, 3, 8, tzinfo=UTC)).deadline == ends


@pytest.mark.parametrize(("sentence", "happened", "deadline"), [
    # a newcomer's "accepted an offer, starting in April" said in February was dated
    # April of the year before: the start is this April, still to come
    ("I accepted an offer from Northwind, starting in April as a staff engineer.",
     None, datetime(2026, 5, 1, tzinfo=UTC)),
    ("I signed the contract, beginning in June.", None, datetime(2026, 7, 1, tzinfo=UTC)),
    # the past tense alone still dates the month back
    ("We moved here in April.", datetime(2025, 4, 1, tzinfo=UTC), None),
    ("I started there in November.", datetime(2025, 11, 1, tzinfo=UTC), None),
])
def test_a_month_a_start_is_said_for_is_still_to_come(sentence: str, happened: datetime | None,
                                                      deadline: datetime | None) -> None:
    info = resolve(sentence, datetime(2026, 2, 20, 18, 30, tzinfo=UTC))
    assert (info.happened, info.deadline) == (happened, deadline)
