"""An opening "it" (and "that"/"this" that "is the one ...") names the one thing the
sentence or turn just before introduced (memcore/language/english/things.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.adapters import build_models
from memcore.core.config import Settings
from memcore.core.models import Episode, Role
from memcore.ingest.write_path import IngestPipeline
from memcore.language import NoLanguage, language_pack
from memcore.store import MemoryStore

T0 = datetime(2026, 2, 2, 9, tzinfo=UTC)


@pytest.mark.parametrize(("before", "turn", "read"), [
    # A contact value goes with the thing it is the value of.
    ("My personal address is rosa.finch@meadow.example.", "That's the one I read every day.",
     "My personal address rosa.finch@meadow.example is the one I read every day."),
    ("My work mobile is 07911 123456.", "This is the one I answer.",
     "My work mobile 07911 123456 is the one I answer."),
    # What the speaker got is the speaker's; what another got is "the" one.
    ("We rescued a lurcher last spring.", "It still hides under the table.",
     "Our lurcher still hides under the table."),
    ("We rescued a lurcher named Pip.", "And it still hides under the table.",
     "And our lurcher Pip still hides under the table."),
    ("My neighbour bought a trampoline.", "It's enormous.", "The trampoline is enormous."),
    ("I picked up a secondhand Brompton on Saturday.", "It folds in ten seconds.",
     "The secondhand Brompton folds in ten seconds."),
    # Liking said of it, last in the sentence.
    ("I ordered a standing desk.", "I like it already.", "I like my standing desk already."),
    ("I ordered a standing desk.", "I hate it when the phone rings.",
     "I hate it when the phone rings."),
    # Expletive "it": weather, time, a clause said later.
    ("I got a new kettle.", "It's freezing today.", "It's freezing today."),
    ("I got a new kettle.", "It's been a rough month.", "It's been a rough month."),
    ("I got a new kettle.", "It seems the shop sent the wrong colour.",
     "It seems the shop sent the wrong colour."),
    ("I got a new kettle.", "It's good to finally have one.", "It's good to finally have one."),
    ("I need a proper holiday.", "It's been hectic.", "It's been hectic."),
    ("My landlord replaced the boiler.", "It had been broken since October.",
     "The boiler had been broken since October."),
    # "That" as a reply.
    ("I got a new kettle.", "That's lovely!", "That's lovely!"),
    ("I got a new kettle.", "That's true.", "That's true."),
    # No candidate (a trip, a person), or two: the pronoun stays.
    ("We drove to Cornwall for the weekend.", "It was fun.", "It was fun."),
    ("My cousin Dev visited.", "It was lovely.", "It was lovely."),
    ("I bought a kettle and a toaster.", "It's too loud.", "It's too loud."),
    # A question offers no referent: what "it" answers is the question's.
    ("Should I get the grey sofa or the blue one?", "It has to fit the alcove.",
     "It has to fit the alcove."),
    ("Would a checklist for the move help?", "It would be most useful.",
     "It would be most useful."),
])
def test_an_opening_it_names_the_one_thing_the_turn_before_introduced(
        before: str, turn: str, read: str) -> None:
    assert language_pack("english").referents([turn], [before], [before]) == [read]
    assert NoLanguage().referents([turn], [before], [before]) == [turn]


@pytest.mark.parametrize(("assistant", "turn", "read"), [
    # The assistant's "your" is the speaker's; the assistant's own "my" is no one's.
    ("Congratulations, and enjoy your new e-bike!", "It's amazing.",
     "My new e-bike is amazing."),
    ("I reread my earlier summary.", "It was too long.", "It was too long."),
    # The speaker's previous turn is not read past the assistant's question.
    ("Would a beginner plan be handy?", "It would, thanks.", "It would, thanks."),
])
def test_the_assistants_turn_just_before_is_read_from_the_speakers_side(
        assistant: str, turn: str, read: str) -> None:
    previous = "I bought a rowing machine."
    assert language_pack("english").referents([turn], [previous], [assistant]) == [read]


@pytest.mark.parametrize(("turn", "read"), [
    ("My flatmate left her bike in the hall. It blocks the door.",
     "My flatmate left her bike in the hall. Her bike blocks the door."),
    ("I sold my old Vespa. It kept stalling anyway.",
     "I sold my old Vespa. My old Vespa kept stalling anyway."),
    # A resolved "it" is the thing of its sentence for the next one.
    ("I bought a drone. It crashed on day one. It's in bits now.",
     "I bought a drone. My drone crashed on day one. My drone is in bits now."),
    # A new thing after a preposition may be "it" too: with two, "it" stays
    ("I put my name down for a cookery class. It is on Tuesdays.",
     "I put my name down for a cookery class. It is on Tuesdays."),
    ("I signed up for a pottery class. It is on Tuesdays.",
     "I signed up for a pottery class. The pottery class is on Tuesdays."),
    # Only the sentence just before counts.
    ("I bought a drone. My week was awful. It's in bits now.",
     "I bought a drone. My week was awful. It's in bits now."),
])
def test_within_a_turn_it_names_the_thing_of_the_sentence_before(turn: str, read: str) -> None:
    assert language_pack("english").referents([turn]) == [read]


def _turn(ns: str, i: int, text: str, role: Role = Role.USER) -> Episode:
    return Episode(id=f"{ns}-{i}", namespace=ns, role=role,
                   speaker="Noor" if role is Role.USER else "assistant", text=text,
                   timestamp=T0 + timedelta(minutes=i))


def test_the_one_in_use_keeps_its_address_and_is_no_fact_alone(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("th", [_turn("th", 0, "My uni e-mail is noor.h@campus.example.")])
    pipeline.ingest("th", [_turn("th", 1, "That's the one I actually read.")])
    facts = [m.text for m in store.records.iter_memories("th")]
    assert any("noor.h@campus.example" in f for f in facts), facts
    assert all("noor.h@campus.example" in f for f in facts if "the one" in f), facts
    assert next(e.text for e in store.episodes.recent("th", 5)).startswith("That's")


def test_an_assistant_question_between_leaves_it_unresolved(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("tq", [_turn("tq", 0, "I bought a rowing machine."),
                           _turn("tq", 1, "Would a beginner plan be handy?", Role.ASSISTANT),
                           _turn("tq", 2, "It would, thanks.")])
    facts = [m.text for m in store.records.iter_memories("tq")]
    assert not any("machine would" in f for f in facts), facts


def test_after_the_assistants_thanks_that_is_the_speakers_own_last_thing() -> None:
    """The assistant's "Thanks!" introduces nothing: "that's the one I check" is the
    address the speaker gave the turn before."""
    pack = language_pack()
    assert pack.referents(["that's the one I read, the old hotmail is dead"],
                          ["ola.b@posteo.net"], ["Thanks, noted!"]) == \
        ["ola.b@posteo.net is the one I read, the old hotmail is dead"]
    # A question of the assistant's in between still blocks it.
    assert pack.referents(["that's the one I read"], ["ola.b@posteo.net"],
                          ["Is that your work address?"]) == ["that's the one I read"]
