"""Memories that stay right in plain language, fourth round (issue 12): what a user says
about the people and pets they name ("... and she's obsessed with dinosaurs"), a change of
someone else's interest, a recovery that ends an injury, and asks for help that are no
facts. Each class is tested on sentences of its own, not only the ones a newcomer typed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.adapters import build_models
from memcore.adapters.extract import OfflineExtractor
from memcore.consolidate.passes import run_pass
from memcore.core.models import Episode, Role, Status
from memcore.language.english.compare import Relation, relate, supersessions
from tests.language.test_plain_language import _pipeline

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)


def texts(text: str) -> list[str]:
    """What the offline extractor keeps of one user turn by "Ann"."""
    ep = Episode(id="e", namespace="n", role=Role.USER, speaker="Ann", text=text, timestamp=T0)
    return [f.text for f in OfflineExtractor().extract_turn(ep)]


# --- a clause about the person the clause before named ------------------------------------

@pytest.mark.parametrize(("turn", "kept"), [
    ("Our daughter Maya just turned 7 and she's obsessed with dinosaurs.",
     ["Ann's daughter Maya just turned 7.", "Maya is obsessed with dinosaurs."]),
    ("My son Leo is 12 and he plays the cello.",
     ["Ann's son Leo is 12.", "Leo plays the cello."]),
    ("My sister lives in Dublin, she's a doctor.",
     ["Ann's sister lives in Dublin.", "Ann's sister is a doctor."]),
    ("My parents live in Cork and they're retired.",
     ["Ann's parents live in Cork.", "Ann's parents are retired."]),
    ("My best friend is Karim, he's a pilot.",
     ["Ann's best friend is Karim.", "Karim is a pilot."]),
    ("My niece's name is Zoe and she's been learning Welsh.",
     ["Ann's niece's name is Zoe.", "Zoe has been learning Welsh."]),
    ("Priya got a new job and she loves the team.",
     ["Priya got a new job.", "Priya loves the team."]),
    ("I met Anna at the gym and she's a physio.",
     ["Ann met Anna at the gym.", "Anna is a physio."]),
    ("My son Noah joined a choir and he sang a solo.",
     ["Ann's son Noah joined a choir.", "Noah sang a solo."]),
    ("Ravi's restaurant closed, he's now teaching cooking classes.",
     ["Ravi's restaurant closed.", "Ravi is now teaching cooking classes."]),
])
def test_a_pronoun_clause_is_about_whom_the_clause_before_named(turn: str, kept: list[str]
                                                                ) -> None:
    assert texts(turn) == kept


@pytest.mark.parametrize(("turn", "kept"), [
    # the speaker is no antecedent, and "it" still leans on the clause before
    ("I bought new shoes and they're great.", ["Ann bought new shoes."]),
    ("Tom works at Google and he loves it.", ["Tom works at Google."]),
    ("So I asked and she's not sure.", []),
])
def test_without_someone_named_the_pronoun_clause_is_no_fact(turn: str, kept: list[str]
                                                            ) -> None:
    assert texts(turn) == kept


@pytest.mark.parametrize(("turn", "kept"), [
    # "these"/"those" before a noun are determiners: the clause says what it is about
    # (a LOCOMO turn's "I've known these friends for 4 years" was dropped)
    ("They've been there through everything, I've known these friends for 4 years.",
     ["Ann has known these friends for 4 years."]),
    ("I met Ana and Ben, I've known those two since school.",
     ["Ann met Ana and Ben.", "Ann has known those two since school."]),
    # alone they still lean on the clause before
    ("I bought new boots, I love these.", ["Ann bought new boots."]),
])
def test_a_demonstrative_before_a_noun_leans_on_nothing(turn: str, kept: list[str]) -> None:
    assert texts(turn) == kept


# --- someone named is a subject; a statement is no bare correction ------------------------

@pytest.mark.parametrize(("turn", "kept"), [
    ("Biscuit hates the rain.", ["Biscuit hates the rain."]),
    ("Mateo loves football.", ["Mateo loves football."]),
    ("Actually, Maya's into space now, not dinosaurs anymore.",
     ["Maya's into space now, not dinosaurs anymore."]),
    ("Sorry, Tom is at Google now, not Meta.", ["Tom is at Google now, not Meta."]),
    # a bare corrected value stays a correction
    ("Sorry, Tom's birthday, not Ana's.", ["It's Tom's birthday, not Ana's."]),
    ("Actually, it's Anne, not Anna.", ["It's Anne, not Anna."]),
])
def test_a_named_subject_is_kept_and_a_statement_is_no_bare_correction(turn: str,
                                                                        kept: list[str]) -> None:
    assert texts(turn) == kept


@pytest.mark.parametrize("turn", ["The weather is nice today.", "Weather was nice.",
                                  "It was great."])
def test_chatter_without_a_named_subject_stays_out(turn: str) -> None:
    assert texts(turn) == []


# --- asks for help are no facts ------------------------------------------------------------

@pytest.mark.parametrize(("turn", "kept"), [
    ("Tom's birthday is on March 3rd, I need gift ideas.", ["Tom's birthday is on March 3rd."]),
    ("I need some advice on houseplants.", []),
    ("I could use a few tips for my interview.", []),
    ("I'm looking for recommendations for a good thriller.", []),
    ("I need a new laptop for work.", ["Ann needs a new laptop for work."]),
])
def test_an_ask_for_help_is_no_fact(turn: str, kept: list[str]) -> None:
    assert texts(turn) == kept


# --- a recovery ends the injury or illness, nothing else ----------------------------------

@pytest.mark.parametrize(("old", "new"), [
    ("Ann hurt Ann's wrist.", "Ann's wrist is fine now."),
    ("Ann has terrible back pain.", "Ann's back is much better now."),
    ("Ann sprained Ann's ankle playing netball.", "Ann's ankle has healed."),
    ("Ann has the flu.", "Ann recovered from the flu."),
    ("Ann broke Ann's arm skiing.", "Ann's arm is fine again."),
])
def test_a_recovery_retires_the_ailment(old: str, new: str) -> None:
    assert [o for o, _, _ in supersessions(["old", "new"], [old, new], [1.0, 2.0])] == ["old"]


@pytest.mark.parametrize(("old", "new"), [
    ("Ann came back from Paris.", "Ann's back is better now."),
    ("Ann wears a watch on Ann's wrist.", "Ann's wrist is fine now."),
    ("Ann's back garden is full of roses.", "Ann's back is better now."),
    ("Tom hurt Tom's wrist.", "Ann's wrist is fine now."),  # someone else's wrist
])
def test_a_recovery_leaves_other_facts(old: str, new: str) -> None:
    assert supersessions(["old", "new"], [old, new], [1.0, 2.0]) == []


@pytest.mark.parametrize(("turn", "kept"), [
    ("Wrist is fine now, back to throwing!", ["Ann's wrist is fine now, back to throwing."]),
    ("Knee feels much better now.", ["Ann's knee feels much better now."]),
])
def test_chat_about_a_body_part_is_the_speakers(turn: str, kept: list[str]) -> None:
    assert texts(turn) == kept


# --- through the write path ----------------------------------------------------------------

def test_someone_elses_change_and_a_recovery_through_the_write_path(redis_url: str) -> None:
    store, pipeline, settings = _pipeline(redis_url)
    turns = ["Our daughter Maya just turned 7 and she's obsessed with dinosaurs.",
             "I hurt my wrist so I can't throw on the wheel for a few weeks.",
             "Actually, Maya's into space now, not dinosaurs anymore.",
             "Wrist is fine now, back to throwing!"]
    for i, text in enumerate(turns):
        pipeline.ingest("potter", [Episode(id=f"p-{i}", namespace="potter", role=Role.USER,
                                           speaker="Dana", text=text,
                                           timestamp=T0 + timedelta(days=7 * i))])
    status = {m.text: m.status for m in store.records.iter_memories("potter", vectors=False)}
    # the interest changed at once (the write path compares it with Maya's memories)
    assert status["Maya is obsessed with dinosaurs."] is Status.SUPERSEDED, status
    # the recovery shares few words with the injury: the pass retires it
    run_pass(store, "potter", settings.consolidation, build_models(settings).merger,
             now=T0 + timedelta(days=30))
    status = {m.text: m.status for m in store.records.iter_memories("potter", vectors=False)}
    assert status["Dana hurt Dana's wrist."] is Status.SUPERSEDED, status
    assert status["Dana's daughter Maya just turned 7."] is not Status.SUPERSEDED, status
    assert status["Maya's into space now, not dinosaurs anymore."] is not Status.SUPERSEDED


# --- something done in a period still running is no deadline ------------------------------

@pytest.mark.parametrize(("turn", "kept", "happened"), [
    ("I started a new job this week.", "Ann started a new job in the week of 2 March 2026.",
     datetime(2026, 3, 2, tzinfo=UTC)),
    ("I finished the report this morning.", "Ann finished the report on 2 March 2026.",
     datetime(2026, 3, 2, tzinfo=UTC)),
    ("We moved house this month.", "Ann moved house in March 2026.",
     datetime(2026, 3, 1, tzinfo=UTC)),
    ("We got married this year.", "Ann got married in 2026.", datetime(2026, 1, 1, tzinfo=UTC)),
])
def test_done_this_week_or_month_happened_then(turn: str, kept: str, happened: datetime
                                               ) -> None:
    ep = Episode(id="e", namespace="n", role=Role.USER, speaker="Ann", text=turn, timestamp=T0)
    [fact] = OfflineExtractor().extract_turn(ep)
    assert (fact.text, fact.valid_from, fact.valid_until) == (kept, happened, None)


@pytest.mark.parametrize("turn", ["I have an exam this week.", "I have a deadline this month."])
def test_still_to_come_this_week_keeps_its_deadline(turn: str) -> None:
    ep = Episode(id="e", namespace="n", role=Role.USER, speaker="Ann", text=turn, timestamp=T0)
    [fact] = OfflineExtractor().extract_turn(ep)
    assert fact.valid_until is not None and fact.valid_until > T0


# --- a note to self is a reminder ---------------------------------------------------------

@pytest.mark.parametrize(("turn", "kept"), [
    ("Note to self: dentist on the 12th at 3pm.",
     ["Ann wants to be reminded of this: dentist on the 12th at 3pm."]),
    ("Reminder - renew the car insurance.",
     ["Ann wants to be reminded of this: renew the car insurance."]),
    ("Note that I am left-handed.", ["Ann is left-handed."]),
])
def test_a_note_to_self_is_a_reminder(turn: str, kept: list[str]) -> None:
    assert texts(turn) == kept


# --- what a user tells about their people is not swept away as an idle remark ---------

def test_a_plain_statement_about_someone_named_is_explicit(redis_url: str) -> None:
    """The user's own word about their dog is a statement, not a guess: it is active at
    once and outlives the idle rule; a hedged one about it stays a candidate; the small
    talk beside them is forgotten."""
    store, pipeline, settings = _pipeline(redis_url)
    texts = ["Biscuit hates the rain.", "Maybe Biscuit is scared of the hoover.",
             "Bit of a slow one here lately."]
    for i, text in enumerate(texts):
        pipeline.ingest("dog", [Episode(id=f"d-{i}", namespace="dog", role=Role.USER,
                                        speaker="Dana", text=text, timestamp=T0)])
    before = {m.text: m for m in store.records.iter_memories("dog", vectors=False)}
    assert before["Biscuit hates the rain."].status is Status.ACTIVE, before
    hedged = [m for t, m in before.items() if "hoover" in t]
    assert all(m.status is Status.CANDIDATE for m in hedged), hedged
    run_pass(store, "dog", settings.consolidation, build_models(settings).merger,
             now=T0 + timedelta(days=60))
    after = {m.text: m.status for m in store.records.iter_memories("dog", vectors=False)}
    assert after["Biscuit hates the rain."] is Status.ACTIVE, after
    assert [s for t, s in after.items() if "slow one" in t] in ([], [Status.TOMBSTONED]), after


# --- everyday paraphrases are the same fact -------------------------------------------------

@pytest.mark.parametrize(("a", "b"), [
    ("Ann is learning Rust on the side.", "Ann is learning Rust in Ann's spare time."),
    ("Ann paints in her free time.", "Ann paints as a side hobby."),
    ("Ann prefers code examples in Python over long explanations.",
     "Ann asks the assistant to keep giving Ann code examples in Python rather than long "
     "explanations."),
    ("Ann prefers metric units.", "Ann asks the assistant to always use metric units."),
])
def test_everyday_paraphrases_are_the_same_fact(a: str, b: str) -> None:
    assert relate(a, b)[0] is Relation.SAME


@pytest.mark.parametrize(("a", "b"), [
    ("Ann plays guitar in Ann's spare time.", "Ann plays piano on the side."),
    ("Ann prefers tea over coffee.", "Ann asks the assistant to use bullet points."),
])
def test_different_facts_in_the_same_words_stay_apart(a: str, b: str) -> None:
    assert relate(a, b)[0] is not Relation.SAME


# --- a new amount, an opener, a greeting ------------------------------------------------

@pytest.mark.parametrize(("turn", "kept"), [
    ("Also budget went up to 6000.", ["Budget went up to 6000."]),
    ("Rent dropped to 900 after the renovation.", ["Rent dropped to 900 after the renovation."]),
    ("Change of plans: we're going in May instead, Ama's work got busy.",
     ["Ann is going in May instead, Ama's work got busy."]),
    ("We're back!", []),
    ("I'm finally back home.", []),
    ("I'm back in London now.", ["Ann is back in London now."]),
])
def test_a_new_amount_is_kept_and_a_return_greeting_is_not(turn: str, kept: list[str]) -> None:
    assert texts(turn) == kept


@pytest.mark.parametrize(("old", "new"), [
    ("Budget is around 5000 pounds for the whole thing.", "Budget went up to 6000."),
    ("Ann's rent is 900 a month.", "Ann's rent is now 950 a month."),
    ("Ann's salary is 42000.", "Ann's salary was raised to 45000."),
])
def test_a_new_amount_retires_the_old_one(old: str, new: str) -> None:
    assert [o for o, _, _ in supersessions(["old", "new"], [old, new], [1.0, 2.0])] == ["old"]


@pytest.mark.parametrize(("old", "new"), [
    ("Ann's rent is 900 a month.", "Ann's budget went up to 6000."),  # another amount
    ("Tom's rent is 700.", "Ann's rent is now 950."),  # someone else's
])
def test_other_amounts_stay(old: str, new: str) -> None:
    assert supersessions(["old", "new"], [old, new], [1.0, 2.0]) == []
