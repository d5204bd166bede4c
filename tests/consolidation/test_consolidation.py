"""The pure consolidation core: seed 004's test with its numbers, seed 000's rules,
and properties that must hold for any input."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcore.consolidation import consolidate, profile
from memcore.core.config import ConsolidationConfig
from memcore.core.interfaces import Verdict
from memcore.core.models import AuditAction, Frame, Kind, Memory, Status
from memcore.language.english.text_rules import ENGLISH_TEXT
from tests.support.helpers import EPOCH, JoinMerger, hours, make_memory


def seed_config(**kw: object) -> ConsolidationConfig:
    base: dict[str, object] = dict(tau_hours=72.0, merge_threshold=0.95,
                                   borderline_threshold=0.95, floor=0.05, cap=10,
                                   min_confidence=0.0)
    base.update(kw)
    return ConsolidationConfig.model_validate(base)


def test_seed_004_consolidates() -> None:
    mems = [
        make_memory("uses vim", [1.0, 0.0], 0.6, 100.0),
        make_memory("prefers vim keybindings", [0.99, 0.1], 0.8, 90.0),
        make_memory("lunch was soup", [0.0, 1.0], 0.1, 0.0),
    ]
    merger = JoinMerger()
    result = consolidate(mems, hours(200.0), seed_config(), merger)
    live = result.live()
    merged = [e for e in result.events if e.action is AuditAction.MERGE]
    dropped = [e for e in result.events if e.action is AuditAction.TOMBSTONE]
    assert (len(merged), len(dropped), len(live)) == (1, 1, 1)
    assert (live[0].strength, live[0].importance) == (2.0, 0.8)
    assert live[0].text == "prefers vim keybindings; uses vim"  # oldest original first
    # Nothing is deleted: the absorbed and the forgotten memory remain as tombstones.
    assert len(result.memories) == 3
    soup = next(m for m in result.memories if m.text == "lunch was soup")
    assert soup.status is Status.TOMBSTONED and soup.superseded_by is None
    absorbed = next(m for m in result.memories if m.text == "uses vim")
    assert absorbed.status is Status.TOMBSTONED and absorbed.superseded_by == live[0].id
    assert np.isclose(np.linalg.norm(live[0].array), 1.0, atol=1e-5)
    assert merger.calls == 1


def test_exact_duplicates_merge_without_model_call() -> None:
    mems = [make_memory("Likes green tea.", [1, 0], sources=["e1"]),
            make_memory("likes green tea", [1, 0], sources=["e2"])]
    merger = JoinMerger()
    result = consolidate(mems, hours(1), seed_config(), merger)
    assert merger.calls == 0
    (kept,) = result.live()
    assert sorted(kept.sources) == ["e1", "e2"] and kept.support == 2


def test_merge_uses_original_texts_never_merged_text() -> None:
    a = make_memory("uses vim", [1.0, 0.0], 0.6, 100.0)
    b = make_memory("prefers vim keybindings", [0.99, 0.1], 0.8, 90.0)
    merger = JoinMerger()
    first = consolidate([a, b], hours(120), seed_config(), merger).memories
    c = make_memory("vim user for years", [0.995, 0.05], 0.5, 110.0)
    second = consolidate([*first, c], hours(130), seed_config(), merger)
    (kept,) = second.live()
    assert merger.seen[-1].texts == ["prefers vim keybindings", "uses vim", "vim user for years"]
    assert kept.text == "prefers vim keybindings; uses vim; vim user for years"


def test_no_chaining_across_the_centroid() -> None:
    # A-B and B-C are above the threshold, A-C is not: A and C never share a cluster.
    ang = np.deg2rad([0.0, 14.0, 28.0])
    vecs = [[float(np.cos(t)), float(np.sin(t))] for t in ang]
    mems = [make_memory(f"m{i}", v, 0.9, 10.0) for i, v in enumerate(vecs)]
    cfg = seed_config(merge_threshold=0.96, borderline_threshold=0.96)
    result = consolidate(mems, hours(11), cfg, JoinMerger())
    for m in result.live():
        assert not {"m0", "m2"} <= set(m.member_texts)


def test_contradiction_keeps_newer_and_closes_older() -> None:
    old = make_memory("lives in Paris", [1.0, 0.0], 0.7, 10.0, valid_from=hours(10))
    new = make_memory("lives in Berlin", [0.9, 0.436], 0.7, 20.0, valid_from=hours(20))
    cfg = seed_config(merge_threshold=0.97, borderline_threshold=0.8)
    result = consolidate([old, new], hours(21), cfg, JoinMerger(Verdict.CONTRADICTS))
    by_text = {m.text: m for m in result.memories}
    assert by_text["lives in Berlin"].live
    closed = by_text["lives in Paris"]
    assert closed.status is Status.SUPERSEDED and closed.superseded_by == new.id
    assert closed.valid_until == hours(20)
    assert any(e.action is AuditAction.SUPERSEDE for e in result.events)


def test_borderline_distinct_is_left_alone() -> None:
    a = make_memory("likes tea", [1.0, 0.0], 0.7, 10.0)
    b = make_memory("likes coffee", [0.9, 0.436], 0.7, 20.0)
    cfg = seed_config(merge_threshold=0.97, borderline_threshold=0.8)
    result = consolidate([a, b], hours(21), cfg, JoinMerger(Verdict.DISTINCT))
    assert len(result.live()) == 2


# Seed 000: one test per rule.

def s000(**kw: object) -> ConsolidationConfig:
    base: dict[str, object] = dict(tau_hours=24 * 365.0, floor=0.0, min_confidence=0.3,
                                   merge_threshold=0.99, borderline_threshold=0.99)
    base.update(kw)
    return ConsolidationConfig.model_validate(base)


def test_support_rule_candidate_until_two_episodes_or_explicit() -> None:
    one = make_memory("likes jazz", [1, 0], sources=["e1"])
    two = make_memory("likes chess", [0, 1], sources=["e1", "e2"])
    said = make_memory("is vegetarian", [0.7, 0.7], sources=["e3"], explicit=True)
    result = consolidate([one, two, said], hours(1), s000(), JoinMerger())
    status = {m.text: m.status for m in result.memories}
    assert status == {"likes jazz": Status.CANDIDATE, "likes chess": Status.ACTIVE,
                      "is vegetarian": Status.ACTIVE}


def test_reinforcement_raises_confidence_by_a_quarter() -> None:
    a = make_memory("likes jazz", [1, 0], sources=["e1"], confidence=0.5)
    b = make_memory("Likes jazz!", [1, 0], sources=["e2"], confidence=0.5)
    (kept,) = consolidate([a, b], hours(1), s000(), JoinMerger()).live()
    assert kept.confidence == 0.75 and kept.status is Status.ACTIVE


def test_confidence_floor_tombstones_decayed_facts() -> None:
    # temporary: half-life 14 d; 0.5 -> 0.25 after 14 days, below the 0.3 floor.
    temp = make_memory("is at the airport", [1, 0], kind=Kind.TEMPORARY, explicit=True)
    pref = make_memory("likes jazz", [0, 1], kind=Kind.PREFERENCE, explicit=True)
    result = consolidate([temp, pref], hours(14 * 24), s000(), JoinMerger())
    status = {m.text: m.status for m in result.memories}
    assert status == {"is at the airport": Status.TOMBSTONED, "likes jazz": Status.ACTIVE}


def test_half_lives_order_what_survives() -> None:
    days = 100  # goal (90 d) falls to 0.5*0.46 = 0.23; knowledge (365 d) stays at 0.41
    goal = make_memory("wants to run a marathon", [1, 0], kind=Kind.GOAL, explicit=True)
    know = make_memory("knows linear algebra", [0, 1], kind=Kind.KNOWLEDGE, explicit=True)
    result = consolidate([goal, know], hours(days * 24), s000(), JoinMerger())
    assert {m.text for m in result.live()} == {"knows linear algebra"}


def test_profile_ceiling_of_fifty() -> None:
    rng = np.random.default_rng(1)
    mems = [make_memory(f"fact {i}", rng.normal(size=8).tolist(), explicit=True,
                        confidence=float(rng.uniform(0.4, 1.0))) for i in range(80)]
    result = consolidate(mems, hours(1), s000(), JoinMerger())
    prof = profile(result.memories, hours(1), s000())
    assert len(prof) == 50
    confs = [m.confidence for m in prof]
    assert confs == sorted(confs, reverse=True)


def test_expiry_closes_not_deletes() -> None:
    exam = make_memory("is revising for the May exam", [1, 0], explicit=True,
                       expires_at=EPOCH + timedelta(days=30))
    result = consolidate([exam], EPOCH + timedelta(days=31), s000(), JoinMerger())
    (m,) = result.memories
    assert m.status is Status.SUPERSEDED and m.valid_until == EPOCH + timedelta(days=30)
    assert [e.action for e in result.events] == [AuditAction.EXPIRE]


def test_a_dated_event_whose_date_passed_stays_searchable_history() -> None:
    # "The launch tomorrow (20 June 2023)" happened once its date passed: history, not a
    # stale state. It stays live (search finds it) but leaves the profile. A fact of
    # another kind expires as before (test_expiry_closes_not_deletes).
    ends = EPOCH + timedelta(days=30)
    launch = make_memory("Jon's launch is on 20 June 2023", [1, 0], explicit=True,
                         kind=Kind.EVENT, valid_until=ends, expires_at=ends)
    before = consolidate([launch], EPOCH + timedelta(days=29), s000(), JoinMerger())
    assert [m.text for m in profile(before.memories, EPOCH + timedelta(days=29), s000())
            ] == [launch.text]
    now = EPOCH + timedelta(days=31)
    result = consolidate(before.memories, now, s000(), JoinMerger())
    (kept,) = result.memories
    assert kept.status is Status.ACTIVE and kept.expires_at is None and kept.valid_until == ends
    assert [e.action for e in result.events] == [AuditAction.EXPIRE]
    assert profile(result.memories, now, s000()) == []
    # A second pass leaves the history alone (no event every pass).
    assert consolidate(result.memories, now, s000(), JoinMerger()).events == []


def test_history_is_held_to_retention_and_cap_not_to_the_confidence_floor() -> None:
    # A dated plan whose date passed is history ("Gina lost her job at Door Dash this
    # month (by 31 January 2023)"): the confidence floor (is it still true now?) does not
    # forget it, unlike the undated goal of test_half_lives_order_what_survives; it stays
    # out of the profile. Retention decay and the cap still forget it.
    ends = EPOCH + timedelta(days=10)
    plan = make_memory("Gina lost Gina's job this month (by 31 January 2023)", [1, 0],
                       kind=Kind.GOAL, explicit=True, valid_until=ends, expires_at=ends)
    goal = make_memory("Gina wants to open a store", [0, 1], kind=Kind.GOAL, explicit=True)
    now = EPOCH + timedelta(days=150)  # goal half-life 90 d: 0.5 -> 0.16, below 0.3
    result = consolidate([plan, goal], now, s000(), JoinMerger())
    status = {m.text: m.status for m in result.memories}
    assert status == {plan.text: Status.ACTIVE, goal.text: Status.TOMBSTONED}
    assert profile(result.memories, now, s000()) == []
    # The retention floor still applies (importance 0.5 decays below 0.2 after ~330 d).
    late = consolidate(result.memories, EPOCH + timedelta(days=400), s000(floor=0.2),
                       JoinMerger())
    assert all(m.status is Status.TOMBSTONED for m in late.memories)
    # So does the cap: of two history facts, the weaker one goes.
    old = make_memory("Jon's launch was on 20 June 2023", [0.6, 0.8], importance=0.2,
                      kind=Kind.EVENT, explicit=True, valid_until=ends, expires_at=ends)
    capped = consolidate([plan, old], now, s000(cap=1), JoinMerger())
    assert [m.text for m in capped.live()] == [plan.text]


def test_an_important_explicit_statement_whose_confidence_faded_stays_searchable() -> None:
    # After 150 days an explicit goal (half-life 90 d: 0.5 -> 0.16) is no longer believed
    # current and leaves the profile (seed 000). What the user said about a life fact
    # (importance >= consolidation.history_min_importance, the extractor's important
    # cue) is not forgotten for that: it stays live, itself, not folded into a digest.
    # Plain goals fading alike are summarized as before, and a plain one alone is
    # forgotten (test_half_lives_order_what_survives).
    now = EPOCH + timedelta(days=150)
    career = make_memory("Priya is applying to nursing school to change careers", [1, 0, 0],
                         importance=0.9, kind=Kind.GOAL, explicit=True, sources=["c"])
    breads = [make_memory(f"Priya wants to bake rye bread, loaf {i}", [0, 1, 0.01 * i],
                          importance=0.7, kind=Kind.GOAL, explicit=True, sources=[f"b{i}"])
              for i in range(3)]
    cfg = s000(merge_threshold=1.0, borderline_threshold=1.0, summary_threshold=0.9)
    result = consolidate([career, *breads], now, cfg, JoinMerger())
    by_text = {m.text: m for m in result.memories}
    kept = by_text[career.text]
    assert kept.status is Status.ACTIVE and kept.derived_level == 0
    assert all(by_text[m.text].status is Status.TOMBSTONED for m in breads)
    (summary,) = [m for m in result.live() if m.kind is Kind.SUMMARY]
    assert sorted(summary.sources) == ["b0", "b1", "b2"]
    assert profile(result.memories, now, cfg) == []
    # A second pass at the same time changes nothing.
    again = consolidate(result.memories, now, cfg, JoinMerger())
    assert again.events == []
    # An unsupported candidate of the same importance, or the setting above 1: forgotten.
    unsaid = career.model_copy(update={"explicit": False, "sources": ["x", "y"]})
    for memory, config in ((unsaid, cfg), (career, s000(history_min_importance=1.01))):
        (gone,) = consolidate([memory], now, config, JoinMerger()).memories
        assert gone.status is Status.TOMBSTONED
    # The retention floor still forgets it (0.9 * e^(-150/365) = 0.60 < 0.7).
    (late,) = consolidate([career], now, s000(floor=0.7), JoinMerger()).memories
    assert late.status is Status.TOMBSTONED


def test_a_standing_order_or_name_said_long_ago_stays_in_the_profile() -> None:
    # A newcomer's run: "always use metric units", "please call me Lena" and "no
    # strawberry recipes" said in February were tombstoned by a pass in December
    # (preference half-life 180 d: 0.75 -> 0.23, below the 0.3 floor). A value of a known
    # attribute said explicitly is retired by a later value or a withdrawal, not by age:
    # kept; a standing order or name also stays in the profile. An unframed preference
    # of the same age leaves the profile and stays searchable only if important.
    now = EPOCH + timedelta(days=300)
    units = make_memory("Lena asks the assistant to use metric units", [1, 0, 0],
                        importance=0.7, kind=Kind.PREFERENCE, explicit=True, confidence=0.75,
                        frame=Frame(subject="lena", attribute="instruction:unit",
                                    value="metric unit"), frame_read=True)
    name = make_memory("Lena wants to be called Lena", [0, 1, 0], importance=0.6,
                       kind=Kind.PREFERENCE, explicit=True, confidence=0.75,
                       frame=Frame(subject="lena", attribute="name", value="lena"),
                       frame_read=True)
    home = make_memory("Lena lives in Munich", [0, 0, 1], importance=0.6,
                       kind=Kind.PREFERENCE, explicit=True, confidence=0.75,
                       frame=Frame(subject="lena", attribute="residence", value="munich"),
                       frame_read=True)
    remark = make_memory("Lena finds walls of text tiring", [1, 1, 0], importance=0.6,
                         kind=Kind.PREFERENCE, explicit=True, confidence=0.75, frame_read=True)
    cfg = s000(merge_threshold=1.0, borderline_threshold=1.0)
    result = consolidate([units, name, home, remark], now, cfg, JoinMerger())
    status = {m.text: m.status for m in result.memories}
    assert status == {units.text: Status.ACTIVE, name.text: Status.ACTIVE,
                      home.text: Status.ACTIVE, remark.text: Status.TOMBSTONED}
    shown = [m.text for m in profile(result.memories, now, cfg)]
    assert sorted(shown) == sorted([units.text, name.text])  # the home faded from it


def test_cap_keeps_the_best_and_spares_pinned() -> None:
    mems = [make_memory(f"f{i}", [np.cos(i), np.sin(i)], importance=0.1 * (i + 1),
                        explicit=True) for i in range(6)]
    mems[0].pinned = True
    result = consolidate(mems, hours(1), s000(cap=3, merge_threshold=1.0,
                                              borderline_threshold=1.0), JoinMerger())
    live = {m.text for m in result.live()}
    assert live == {"f0", "f5", "f4"}


def test_summarize_before_forgetting() -> None:
    lunches = [make_memory(f"had lunch with Alice at Cafe Zinc, week {i}",
                           [1.0, 0.05 * i, 0.0], importance=0.02, last_used_h=0.0,
                           kind=Kind.EVENT, sources=[f"e{i}"]) for i in range(4)]
    cfg = seed_config(merge_threshold=1.0, borderline_threshold=1.0, floor=0.05,
                      summary_threshold=0.9)
    cfg.half_lives_days["summary"] = 365
    result = consolidate(lunches, hours(200), cfg, JoinMerger())
    summaries = [m for m in result.memories if m.kind is Kind.SUMMARY]
    assert len(summaries) == 1 and summaries[0].derived_level == 1
    assert sorted(summaries[0].sources) == ["e0", "e1", "e2", "e3"]
    originals = [m for m in result.memories if m.kind is Kind.EVENT]
    assert len(originals) == 4
    assert all(m.status is Status.TOMBSTONED and m.superseded_by == summaries[0].id
               for m in originals)


# Properties.

vec2 = st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1)).filter(
    lambda v: sum(x * x for x in v) > 0.01)
mem_strategy = st.builds(
    lambda text, v, imp, h, pinned, n: make_memory(
        text, list(v), imp, h, pinned=pinned, sources=[f"s{n}-{text}"]),
    st.sampled_from(["a", "b", "c", "d", "a b", "tea", "Tea!"]), vec2,
    st.floats(0.0, 1.0), st.floats(0, 500), st.booleans(), st.integers(0, 50))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mem_strategy, min_size=0, max_size=12), st.integers(1, 6),
       st.sampled_from(list(Verdict)))
def test_properties(mems: list, cap: int, verdict: Verdict) -> None:
    cfg = ConsolidationConfig(tau_hours=72, merge_threshold=0.95, borderline_threshold=0.85,
                              floor=0.05, cap=cap)
    now = hours(600)
    first = consolidate(mems, now, cfg, JoinMerger(verdict))
    # Pinned memories always survive.
    assert all(m.live for m in first.memories if m.pinned)
    # No source id is lost: each survives on a memory or a tombstone.
    before = {s for m in mems for s in m.sources}
    after = {s for m in first.memories for s in m.sources}
    assert before <= after
    # The non-pinned live count never exceeds the cap.
    assert sum(1 for m in first.live() if not m.pinned) <= cap
    # Consolidating the result again at the same now changes nothing.
    second = consolidate(first.memories, now, cfg, JoinMerger(verdict))
    dump = [m.model_dump() for m in first.memories]
    assert [m.model_dump() for m in second.memories] == dump
    assert second.events == []


def test_relations_lose_weight_instead_of_being_dropped() -> None:
    from memcore.core.models import Relation

    edge = make_memory("Alice works at Acme", [1, 0], importance=0.01, explicit=True,
                       relation=Relation(subject="alice", predicate="works_at", object="acme"))
    plain = make_memory("Alice had soup", [0, 1], importance=0.01, explicit=True)
    result = consolidate([edge, plain], hours(5000), seed_config(), JoinMerger())
    status = {m.text: m.status for m in result.memories}
    assert status == {"Alice works at Acme": Status.ACTIVE, "Alice had soup": Status.TOMBSTONED}


def test_a_pair_judged_the_same_keeps_the_more_informative_text() -> None:
    short = make_memory("Jon is excited too.", [1.0, 0.0], 0.9, 10.0, strength=3.0)
    full = make_memory("Jon is excited to mentor young dancers at his studio.", [0.9, 0.436],
                       0.5, 20.0)
    cfg = seed_config(merge_threshold=0.97, borderline_threshold=0.8)
    result = consolidate([short, full], hours(21), cfg, JoinMerger(Verdict.SAME))
    (kept,) = result.live()
    assert kept.id == short.id, "the strongest record survives (stable id)"
    assert kept.text == "Jon is excited to mentor young dancers at his studio."


def _idle_store() -> list:  # type: ignore[type-arg]
    def mem(text: str, vec: list[float], **kw: object) -> object:
        return make_memory(text, vec, **kw)

    old = [mem(f"Melanie went to a pottery class number {i}", [1.0, 0.02 * i, 0.0],
               importance=0.5, last_used_h=0.0, status=Status.CANDIDATE) for i in range(4)]
    keep = [mem("Melanie values her pottery teacher", [1.0, 0.1, 0.0], importance=0.8,
                last_used_h=0.0, status=Status.CANDIDATE),
            mem("Melanie bought pottery clay", [1.0, 0.12, 0.0], importance=0.5,
                last_used_h=24 * 50.0, status=Status.CANDIDATE),
            mem("Melanie teaches pottery", [1.0, 0.14, 0.0], importance=0.5,
                last_used_h=0.0, status=Status.ACTIVE, explicit=True)]
    return [*old, *keep]


def test_idle_low_importance_candidates_are_forgotten_not_summarized() -> None:
    # A summary's text is a digest that answers little (strict recall gives it no credit)
    # and costs words: an unsupported low-value candidate idle for a month is dropped.
    cfg = s000(summary_idle_days=30, summary_threshold=0.9, min_confidence=0.0,
               merge_threshold=1.0, borderline_threshold=1.0)
    now = hours(24 * 60.0)
    result = consolidate(_idle_store(), now, cfg, JoinMerger(), rules=ENGLISH_TEXT)
    assert not [m for m in result.memories if m.kind is Kind.SUMMARY]
    gone = sorted(m.text for m in result.memories if m.status is Status.TOMBSTONED)
    assert gone == [f"Melanie went to a pottery class number {i}" for i in range(4)]
    assert {e.reason for e in result.events if e.action is AuditAction.TOMBSTONE} == {
        "unsupported candidate unused for 30 days"}
    # Important, recently used and active memories are left as they were.
    untouched = {m.text: m.status for m in result.memories if m.text not in gone}
    assert untouched == {"Melanie values her pottery teacher": Status.CANDIDATE,
                         "Melanie bought pottery clay": Status.CANDIDATE,
                         "Melanie teaches pottery": Status.ACTIVE}
    off = consolidate(_idle_store(), now, cfg.model_copy(update={"summary_idle_days": 0.0}),
                      JoinMerger())
    assert all(m.live for m in off.memories)


def test_an_idle_remark_that_says_something_specific_is_kept() -> None:
    # The idle rule forgets short remarks ("Glad it helped ya, Melanie."); one with more
    # than summary_idle_max_terms content terms says something specific and is kept.
    cfg = s000(summary_idle_days=30, min_confidence=0.0, merge_threshold=1.0,
               borderline_threshold=1.0)
    chat = make_memory("Glad it helped ya, Melanie.", [1.0, 0.0], status=Status.CANDIDATE)
    said = make_memory("Dance floors help avoid injuries and make dancing more enjoyable.",
                       [0.0, 1.0], status=Status.CANDIDATE)
    now = hours(24 * 60.0)
    result = consolidate([chat, said], now, cfg, JoinMerger())
    status = {m.text: m.status for m in result.memories}
    assert status == {chat.text: Status.TOMBSTONED, said.text: Status.CANDIDATE}
    # The retention floor still forgets it (0.5 * e^(-400/365) = 0.17 < 0.2).
    late = consolidate(result.memories, hours(24 * 400.0),
                       cfg.model_copy(update={"floor": 0.2}), JoinMerger())
    assert {m.text: m.status for m in late.memories}[said.text] is Status.TOMBSTONED


def test_fading_memories_are_summarized_in_groups_of_bounded_size() -> None:
    # Below the floor (importance 0.04 after 60 days): summarized before forgetting.
    mems = [make_memory(f"Jon visited museum {i}", [1.0, 0.001 * i], importance=0.04,
                        status=Status.CANDIDATE, sources=[f"e{i}"]) for i in range(20)]
    cfg = s000(summary_idle_days=0, summary_threshold=0.9, summary_max_group=8, floor=0.05,
               min_confidence=0.0, merge_threshold=1.0, borderline_threshold=1.0)
    now = hours(24 * 60.0)
    result = consolidate(mems, now, cfg, JoinMerger())
    summaries = [m for m in result.memories if m.kind is Kind.SUMMARY]
    assert sorted(len(m.sources) for m in summaries) == [6, 7, 7]
    members = [m for m in result.memories if m.superseded_by in {s.id for s in summaries}]
    assert len(members) == 20 and all(m.status is Status.TOMBSTONED for m in members)
    # Summaries are found by search, never listed as profile facts.
    assert all(m.status is Status.ACTIVE for m in summaries)
    assert not {m.id for m in summaries} & {m.id for m in profile(result.memories, now, cfg)}


def test_a_short_fact_does_not_chain_distinct_facts_into_one() -> None:
    """"Rui likes hiking" is subsumed by each longer hiking fact, which are not the same as
    one another: the pass merges the short fact into one of them and keeps the others."""
    from memcore.adapters.offline import OfflineMerger

    short = make_memory("Rui likes hiking.", [1.0, 0.0, 0.0, 0.0], sources=["e0"])
    longer = [
        make_memory("Rui likes hiking in the Alps with Rui's sister.", [0.8, 0.6, 0.0, 0.0],
                    sources=["e1"]),
        make_memory("Rui likes hiking at dawn before work.", [0.8, 0.0, 0.6, 0.0],
                    sources=["e2"]),
        make_memory("Rui likes hiking and bought new boots in Lyon.", [0.8, 0.0, 0.0, 0.6],
                    sources=["e3"]),
    ]
    # Every pair is borderline (cosine 0.8 short-long, 0.64 long-long), none auto-merges.
    cfg = seed_config(merge_threshold=0.9, borderline_threshold=0.5, cap=100, floor=0.0)
    result = consolidate([short, *longer], hours(1), cfg, OfflineMerger())
    live = sorted(m.text for m in result.live())
    assert len(live) == 3, live  # the short one went into one of them
    assert {m.text for m in longer} == set(live)
    assert sorted(s for m in result.live() for s in m.sources) == ["e0", "e1", "e2", "e3"]


def _plan_and_purchase(plan_h: float, bought_h: float) -> list[Memory]:
    return [make_memory("Sam is thinking about buying a road bike.", [1.0, 0.0], 0.6, plan_h,
                        kind=Kind.GOAL),
            make_memory("Sam bought a road bike.", [1.0, 0.0], 0.6, bought_h, kind=Kind.EVENT)]


def test_a_plan_merged_with_its_fulfilment_keeps_the_fulfilment() -> None:
    result = consolidate(_plan_and_purchase(0.0, 48.0), hours(72), seed_config(), JoinMerger())
    (kept,) = result.live()
    assert (kept.kind, kept.text) == (Kind.EVENT, "Sam bought a road bike.")
    merge = next(e for e in result.events if e.action is AuditAction.MERGE)
    assert "plan fulfilled" in merge.reason
    # Bought first, then planning another: no fulfilment, the merger's text stands.
    (later,) = consolidate(_plan_and_purchase(96.0, 48.0), hours(120), seed_config(),
                           JoinMerger()).live()
    assert later.text == "Sam bought a road bike.; Sam is thinking about buying a road bike."
