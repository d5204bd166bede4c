"""Changes recognised as changes: moves, job changes, switches, endings and corrections
retire the right older fact; multi-valued facts (things owned, hobbies, friends, places)
never retire each other."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from memcore.adapters import build_models
from memcore.adapters.offline import OfflineDecider
from memcore.adapters.timephrases import resolve
from memcore.consolidate.passes import run_pass
from memcore.consolidation import profile
from memcore.core.config import Settings
from memcore.core.interfaces import DecisionRequest, Neighbour, Op
from memcore.core.models import Episode, Role, Status
from memcore.ingest.write_path import IngestPipeline
from memcore.language.english.compare import Relation, change_of, relate, slot_of, supersessions
from memcore.language.english.text_rules import texts_conflict
from memcore.store import MemoryStore

T0 = datetime(2026, 1, 5, tzinfo=UTC)

# (older fact, newer fact): the newer one makes the older one stale.
CHANGES = [
    ("Ann lives in Lisbon.", "Ann moved to Porto."),
    ("Ann lives in Lisbon.", "Ann relocated to Porto."),
    ("Ann lives in Lisbon.", "Ann is now based in Porto."),
    ("Ann lives in Lisbon.", "Ann no longer lives in Lisbon."),
    ("Ann lives in Lisbon.", "Ann has settled in Utrecht."),
    ("Ann works as a data engineer.", "Ann started a new job as a nurse."),
    ("Ann works as a data engineer.", "Ann is a machine learning engineer now."),
    ("Ann is a nurse at St Mary's.", "Ann is team lead now."),
    ("Ann uses PyCharm.", "Ann switched from PyCharm to VS Code."),
    ("Ann's phone is a Pixel 6.", "Ann replaced Ann's Pixel 6 with an iPhone 15."),
    ("Ann uses Firefox as Ann's main browser.", "Ann uses Chrome instead of Firefox now."),
    ("Ann uses Docker Desktop.", "Ann dropped Docker Desktop for Podman."),
    ("Ann plays guitar in a band called The Nods.", "Ann quit the band last week."),
    ("Ann is revising for the AWS exam.", "Ann finished the AWS exam."),
    ("Ann has a Nintendo Switch.", "Ann sold the Nintendo Switch."),
    ("Ann takes statins for cholesterol.", "Ann stopped taking the statins."),
    ("Ann sings in the village choir.", "Ann has given up the choir."),
    ("Ann's hobbies are salsa dancing.", "Ann doesn't do salsa anymore."),
    ("Ann is a waiter.", "Ann is not a waiter anymore."),
    ("Ann works at Deloitte as a tax advisor.", "Actually it's KPMG, not Deloitte."),
    ("Ann's laptop is a ThinkPad X1.", "It's a ThinkPad T14, not an X1."),
    ("Ann drives a Toyota Corolla.", "Ann drives a Toyota Corolla, no wait, it's a Yaris."),
    ("Ann has a hamster named Biscuit.", "Biscuit died last weekend."),
    ("Ann has a contract on the Lyon project.", "The Lyon project is over."),
    ("Ann's favourite cuisine is Thai.", "Ann's favourite is Vietnamese now."),
    ("Ann shares a flat with two roommates.", "Ann moved into Ann's own flat, no more roommates."),
    # Taking up a post is a job change, however the post is named.
    ("Ann is a postdoc researcher in physics at Uppsala University.",
     "Ann accepted a lectureship at Leeds, starting in March."),
    ("Ann works as a pharmacist.", "Ann took a job at a bakery."),
    ("Ann works as a nurse.", "Ann got hired as a paramedic."),
    ("Ann works as a tutor.", "Ann joined Spotify as a data analyst."),
    # Ages, said in several ways (a calque of "tiene 7 años" included).
    ("Ann's son Leo is 6.", "Ann's son Leo has now 7 years."),
    ("Ann's son Leo is 6.", "Ann's son Leo just turned seven."),
    ("Ann's daughter is four.", "Ann's daughter celebrated her 5th birthday."),
    # Stopping an activity ends the facts of it, however they name it.
    ("Ann cycles to work three days a week.", "Ann has stopped cycling."),
    ("Ann moved Ann's Tuesday swim to Thursdays.", "Ann quit swimming."),
    # A thing's value said to hold now ends the fact that names the thing and the value,
    # whoever's it was (an answer to the assistant's question included).
    ('Asked "How often do you send the invoices to clients?", Ann answered: weekly.',
     "Client invoices go out fortnightly from now on, not weekly."),
    ("Newsletters in sentence case, weekly.", "Newsletters: monthly now, not weekly."),
]

# (older fact, newer fact): both stay true.
KEEPS = [
    ("Ann owns a red bike called item1 that Ann bought in Paris in 2019.",
     "Ann owns a red bike called item2 that Ann bought in Paris in 2020."),
    ("Ann's hobbies are painting.", "Ann also started yoga on Tuesdays."),
    ("Ann's friend Carmen lives in Sevilla.", "Ann's friend Pablo lives in Madrid."),
    ("Ann has been to Japan.", "Ann has been to Peru."),
    ("Ann has a dog called Luna.", "Ann adopted another dog called Coco."),
    ("Ann lives in Porto.", "Ann's sister lives in Manchester."),
    ("Ann switched from PyCharm to VS Code.", "Ann no longer uses PyCharm."),
    ("Ann works as a nurse.", "Ann is a vegetarian."),
    ("Ann lives in Porto.", "Ann lives in Porto with Ann's partner."),
    # Conversation, not a change: the speaker's name is never what ended.
    ("Ann went to a support group and it was so powerful.", "Ann haven't done pottery yet."),
    ("Ann painted that lake sunrise in 2022.", "Ann has done an abstract painting too."),
    ("Ann's son Leo is 6.", "Ann's son Leo is six years old."),
    ("Ann works as a nurse.", "Ann got the role of Juliet in the school play."),
    ("Ann works as a nurse.", "Ann has 5 years of experience."),
    ("Ann works as a nurse.", "Ann took the job seriously."),
    ("Ann's son Leo lives in Oslo.", "Ann's daughter Mia lives in Rome."),
    # A thing's new value ends no fact that names only the value, not the thing.
    ("Ann swims on Mondays.", "Invoices go out on Fridays now, not Mondays."),
    # ... nor another thing of the same words (the invoices' reminders, not the invoices)
    ("Ann sends client reminders weekly.", "Client invoices go out fortnightly now, not weekly."),
    ("Ann cycles to work.", "Ann's son stopped cycling."),
    # "left" after a possessive is a side, not a leaving: the knee did not end
    ("Ann's knee hurts after long runs.", "Ann's left knee hurts when it rains."),
    ("Ann wears a wrist brace for climbing.", "Ann broke her left wrist brace."),
]


@pytest.mark.parametrize(("old", "new"), CHANGES)
def test_a_change_retires_the_older_fact(old: str, new: str) -> None:
    found = supersessions(["old", "new"], [old, new], [1.0, 2.0])
    assert [(o, n) for o, n, _ in found] == [("old", "new")], (old, new)
    # The same rule at ingest: the decider supersedes the neighbour.
    assert relate(new, old)[0] is Relation.CONTRADICTS
    decision = OfflineDecider().decide([DecisionRequest(new, [Neighbour("m", old, 0.6)])])[0]
    assert decision.op is Op.DELETE and decision.target == 0


@pytest.mark.parametrize(("old", "new"), KEEPS)
def test_multi_valued_and_unrelated_facts_stay(old: str, new: str) -> None:
    assert supersessions(["old", "new"], [old, new], [1.0, 2.0]) == []
    assert relate(new, old)[0] is not Relation.CONTRADICTS


def test_older_never_retires_newer_and_the_newest_wins() -> None:
    texts = ["Ann lives in Lisbon.", "Ann moved to Porto.", "Ann relocated to Berlin."]
    found = {o: n for o, n, _ in supersessions(["a", "b", "c"], texts, [1.0, 2.0, 3.0])}
    assert found == {"a": "c", "b": "c"}
    # Time decides, not the order given: a later "lives in Lisbon" retires "moved to Porto".
    later = supersessions(["a", "b"], texts[:2], [2.0, 1.0])
    assert [(o, n) for o, n, _ in later] == [("b", "a")]


def test_possessions_never_supersede_each_other() -> None:
    rng = random.Random(7)
    adjectives, things = ["red", "blue", "old", "new", "small"], ["bike", "lamp", "camera", "desk"]
    cities = ["Paris", "Rome", "Oslo"]
    texts = [f"Ann owns a {rng.choice(adjectives)} {rng.choice(things)} called item{i} that "
             f"Ann bought in {rng.choice(cities)} in {rng.choice(range(2010, 2024))}."
             for i in range(300)]
    assert supersessions([str(i) for i in range(300)], texts, [float(i) for i in range(300)]) == []
    for i in range(1, 300):
        assert relate(texts[i], texts[i - 1])[0] is not Relation.CONTRADICTS


def test_named_things_are_never_duplicates() -> None:
    a = "Ann owns a red bike called item1 that Ann bought in Paris in 2019."
    b = "Ann owns a red bike called item2 that Ann bought in Paris in 2019."
    assert texts_conflict(a, b)  # never auto-merged, however close the vectors
    assert relate(b, a)[0] is Relation.DISTINCT
    assert relate(a, a)[0] is Relation.SAME


def test_slots_and_changes_parse() -> None:
    slot = slot_of("Ann moved to Porto.")
    assert slot is not None and (slot.name, slot.subject, slot.raw) == ("residence", "ann", "porto")
    diet = slot_of("Ann is a vegetarian.")  # a diet, not a job
    assert diet is not None and (diet.name, diet.value) == ("diet", "vegetarian")
    change = change_of("Ann quit the band in the week before 23 March 2026, too much travel.")
    assert change is not None and change.ended == frozenset({"band"})


@pytest.mark.parametrize(("sentence", "last_day"), [
    ("Ann is hiking in Norway from 3 to 6 September.", (2026, 9, 6)),
    ("Ann is at a trade fair from the 3rd to the 6th of September.", (2026, 9, 6)),
    ("Ann is away 3-6 September.", (2026, 9, 6)),
    ("Ann is in Madrid September 3-6 for work.", (2026, 9, 6)),
    ("Ann skis from December 28 to January 3.", (2027, 1, 3)),
    ("Ann is off between 3 and 6 September.", (2026, 9, 6)),
])
def test_a_date_range_ends_when_the_range_ends(sentence: str, last_day: tuple[int, int, int]
                                               ) -> None:
    # A trip or a fair "from X to Y" is over after Y: the fact expires then.
    deadline = resolve(sentence, datetime(2026, 8, 1, tzinfo=UTC)).deadline
    assert deadline == datetime(*last_day, tzinfo=UTC) + timedelta(days=1), sentence


def test_numbers_alone_are_not_a_range() -> None:
    assert resolve("Ann has 2 cats and 6 dogs.", datetime(2026, 8, 1, tzinfo=UTC)).deadline is None


def _turn(ns: str, i: int, text: str) -> Episode:
    return Episode(id=f"{ns}-{i}", namespace=ns, role=Role.USER, speaker="Ann", text=text,
                   timestamp=T0 + timedelta(days=7 * i))


def test_write_path_and_pass_keep_the_profile_current(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    pipeline = IngestPipeline(store, models, settings)
    turns = ["I live in Lisbon and I work as a data engineer.", "I use PyCharm every day.",
             "My hobbies are painting and salsa dancing.", "I moved to Porto.",
             "I switched from PyCharm to VS Code.", "I don't do salsa anymore.",
             "I own a red bike called item1 that I bought in Paris in 2019.",
             "I own a red bike called item2 that I bought in Paris in 2020."]
    for i, text in enumerate(turns):
        pipeline.ingest("chg", [_turn("chg", i, text)])
    run_pass(store, "chg", settings.consolidation, models.merger,
             now=T0 + timedelta(days=7 * len(turns)))
    live = {m.text for m in store.records.iter_memories("chg") if m.live}
    stale = {m.text for m in store.records.iter_memories("chg") if m.status is Status.SUPERSEDED}
    assert "Ann moved to Porto." in live  # the move is the residence now
    assert "Ann works as a data engineer." in live  # the other half of the compound stays
    assert {"Ann lives in Lisbon.", "Ann uses PyCharm every day.",
            "Ann's hobbies are salsa dancing."} <= stale
    assert "Ann's hobbies are painting." in live
    assert sum("owns a red bike" in t for t in live) == 2


def test_templated_possessions_through_the_write_path_and_a_pass() -> None:
    from memcore_bench.phrasings import possessions

    result = possessions(60)
    assert result["write_path_decisions"] == {"ADD": 60}
    assert "SUPERSEDE" not in result["pass_events"] and "MERGE" not in result["pass_events"]
    assert result["statuses_after_pass"] == {"active": 60}


def test_jobs_ages_and_trips_through_the_write_path_and_a_pass(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    pipeline = IngestPipeline(store, models, settings)
    turns = ["I'm a research assistant in marine biology at the University of Bergen.",
             "My son Leo is 6.", "I'm flying to Lima for a workshop from 10 to 13 March.",
             "I accepted a lectureship at Tromsø, beginning in May.",
             "Leo has now 7 years, time flies."]
    for i, text in enumerate(turns):
        pipeline.ingest("jat", [_turn("jat", i, text)])
    # A pass well after the workshop's last day (turns are a week apart from 5 January).
    run_pass(store, "jat", settings.consolidation, models.merger, now=T0 + timedelta(days=120))
    now = T0 + timedelta(days=120)
    live = {m.text for m in store.records.iter_memories("jat") if m.live}
    assert not any("research assistant" in t or "is 6" in t for t in live), live
    assert any("lectureship" in t for t in live) and any("7 years" in t for t in live), live
    # The workshop trip is over: history (still found by search), not a current fact.
    (trip,) = [m for m in store.records.iter_memories("jat") if "Lima" in m.text]
    assert trip.live and trip.valid_until is not None and trip.valid_until < now
    current = {m.text for m in profile(store.records.iter_memories("jat"), now,
                                       settings.consolidation)}
    assert not any("Lima" in t for t in current), current


@pytest.mark.parametrize(("rule", "changed", "gone"), [
    ("please correct my English when I make mistakes",
     "you can stop correcting my English, I prefer to write fast", "correct Ann's English"),
    ("keep answers under 150 words", "ignore the 150 word limit from now on", "under 150"),
    ("don't recommend paid tools, zero budget", "you can suggest paid tools again",
     "not to recommend"),
    ("Always use bullet points in your answers.", "no need for bullet points anymore",
     "to use bullet points"),
    # the speaker as the object is whom the rule is for, not what it is about
    ("Please always answer me in Spanish.", "you can stop answering in Spanish now",
     "answer Ann in Spanish"),
    ("Always write to me in French please.", "you can stop writing in French now",
     "to Ann in French"),
])
def test_a_rule_lifted_or_withdrawn_in_other_words_is_no_longer_current(
        redis_url: str, rule: str, changed: str, gone: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    pipeline = IngestPipeline(store, models, settings)
    for i, text in enumerate([rule, changed]):
        pipeline.ingest("rl", [_turn("rl", i, text)])
    run_pass(store, "rl", settings.consolidation, models.merger, now=T0 + timedelta(days=30))
    live = {m.text for m in store.records.iter_memories("rl") if m.live}
    assert not any(gone in t for t in live), live
