"""Seed 000's precision review: the pure advice functions and `memcore review`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.core.config import ConsolidationConfig
from memcore.core.models import Kind
from memcore.core.review import (
    Label,
    LabelledFact,
    ReviewRecord,
    advise,
    counts,
    describe,
    parse_label,
    parse_labels,
    precision,
    sample_facts,
)
from tests.support.cli_helpers import NS, T0, memory, put, run, run_json

CFG = ConsolidationConfig()


def fact(label: Label, *, support: int = 5, kind: str = "knowledge", merged: bool = False,
         days: float = 1.0, base: float = 0.75, i: int = 0) -> LabelledFact:
    conf = base * 0.5 ** (days / CFG.half_lives_days[kind])
    return LabelledFact(id=f"{label.value}-{i}-{support}-{days}", label=label, kind=kind,
                        support=support, confidence=conf, base_confidence=base,
                        days_since_support=days, merged=merged)


def many(label: Label, n: int, **kw: object) -> list[LabelledFact]:
    return [fact(label, i=i, **kw) for i in range(n)]  # type: ignore[arg-type]


# ---------------------------------------------------------------- pure functions


def test_precision_ignores_skips() -> None:
    facts = many(Label.CORRECT, 6) + many(Label.INCORRECT, 1) + many(Label.OUT_OF_DATE, 1) \
        + many(Label.SKIP, 5)
    assert precision(facts) == pytest.approx(6 / 8)
    assert counts(facts) == {"correct": 6, "incorrect": 1, "out_of_date": 1, "skip": 5}
    assert precision(many(Label.SKIP, 3)) is None
    assert precision([]) is None


def test_no_advice_at_or_above_90_percent() -> None:
    facts = many(Label.CORRECT, 9) + many(Label.INCORRECT, 1, support=2)
    assert precision(facts) == pytest.approx(0.9)
    assert advise(facts, CFG) == []


def test_low_support_errors_raise_min_support_by_the_needed_step() -> None:
    facts = many(Label.CORRECT, 20, support=4) + many(Label.INCORRECT, 6, support=2)
    (advice,) = advise(facts, CFG)
    assert (advice.setting, advice.current, advice.suggested) == ("min_support", 2, 3)
    assert advice.precision_after == 1.0
    assert "6 of 6 incorrect facts had support < 3" in advice.reason

    # Errors at support 3 too: the step must be 2 -> 4.
    facts = many(Label.CORRECT, 20, support=5) + many(Label.INCORRECT, 3, support=2) \
        + many(Label.INCORRECT, 3, support=3)
    (advice,) = advise(facts, CFG)
    assert advice.suggested == 4


def test_well_supported_errors_do_not_blame_min_support() -> None:
    facts = many(Label.CORRECT, 10, support=2) + many(Label.INCORRECT, 5, support=9)
    assert [a.setting for a in advise(facts, CFG)] == []


def test_merged_mush_raises_merge_and_borderline_thresholds() -> None:
    facts = many(Label.CORRECT, 10) + many(Label.INCORRECT, 4, merged=True, support=8)
    advice = {a.setting: a for a in advise(facts, CFG)}
    assert set(advice) == {"merge_threshold", "borderline_threshold"}
    assert advice["merge_threshold"].suggested == pytest.approx(CFG.merge_threshold + 0.02)
    assert advice["borderline_threshold"].suggested == pytest.approx(
        CFG.borderline_threshold + 0.05)
    assert "4 of 4 incorrect facts are merged" in advice["merge_threshold"].reason


def test_out_of_date_facts_shorten_that_kinds_half_life() -> None:
    # Goals last supported 60 days ago are stale; recent goals are right.
    stale = many(Label.OUT_OF_DATE, 4, kind="goal", days=60, base=0.75)
    fresh = many(Label.CORRECT, 10, kind="goal", days=5, base=0.75)
    advice = {a.setting: a for a in advise(stale + fresh, CFG)}
    hl = advice["half_lives_days.goal"]
    assert hl.current == 90 and hl.suggested < 90
    # With the suggested half-life, a 60-day-old goal at 0.75 decays below min_confidence.
    assert 0.75 * 0.5 ** (60 / hl.suggested) < CFG.min_confidence
    assert "would also drop" not in hl.reason  # the recent goals survive
    conf = advice["min_confidence"]
    assert conf.suggested > max(f.confidence for f in stale) and conf.precision_after == 1.0


def test_parse_labels_json_mapping_and_jsonl() -> None:
    assert parse_labels('{"a": "c", "b": "incorrect", "c": "out of date", "d": "s"}') == {
        "a": Label.CORRECT, "b": Label.INCORRECT, "c": Label.OUT_OF_DATE, "d": Label.SKIP}
    jsonl = '{"id": "a", "label": "o"}\n\n{"memory_id": "b", "label": "correct"}\n'
    assert parse_labels(jsonl) == {"a": Label.OUT_OF_DATE, "b": Label.CORRECT}
    with pytest.raises(ValueError, match="label"):
        parse_labels('{"a": "maybe"}')
    with pytest.raises(ValueError, match="line 1"):
        parse_labels('{"id": "a"}')
    assert parse_label(" I ") is Label.INCORRECT


def test_sample_is_active_only_and_reproducible() -> None:
    from memcore.core.models import Status

    mems = [memory(f"fact {i}") for i in range(10)] + [
        memory("a candidate", status=Status.CANDIDATE)]
    one = sample_facts(mems, 5, seed=1)
    assert [m.id for m in one] == [m.id for m in sample_facts(reversed(mems), 5, seed=1)]
    assert all(m.status is Status.ACTIVE for m in sample_facts(mems, 50, seed=2))
    assert len(sample_facts(mems, 50)) == 10
    old = memory("an old temporary fact", kind=Kind.TEMPORARY, days_ago=60)
    assert sample_facts([old], 5) == [old]
    assert sample_facts([old], 5, now=T0, config=CFG) == []  # decayed off the list


def test_describe_reads_support_merge_and_age() -> None:
    m = memory("Sam likes tea", sources=["a", "b", "b", "c"], days_ago=10,
               member_texts=["Sam likes tea", "Sam enjoys tea"], kind=Kind.PREFERENCE)
    f = describe(m, Label.CORRECT, T0, CFG)
    assert (f.support, f.merged, f.kind) == (3, True, "preference")
    assert f.days_since_support == pytest.approx(10)
    assert f.confidence == pytest.approx(0.75 * 0.5 ** (10 / 180))


# ---------------------------------------------------------------- the command


def _labelled_store(url: str) -> tuple[list[str], list[str]]:
    good = put(url, *[memory(f"Sam fact number {i}", sources=["a", "b", "c", "d"])
                      for i in range(7)])
    bad = put(url, *[memory(f"Sam coincidence {i}", sources=[f"x{i}", f"y{i}"])
                     for i in range(3)])
    return [m.id for m in good], [m.id for m in bad]


def test_review_with_labels_file_computes_precision_advice_and_saves(
        redis_url: str, tmp_path: Path) -> None:
    good, bad = _labelled_store(redis_url)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({**{i: "c" for i in good}, **{i: "i" for i in bad},
                                  "unknown-id": "c"}))
    saved = tmp_path / "reviews.jsonl"
    result = run(redis_url, "review", NS, "--labels", str(labels), "--save", str(saved),
                 "--now", T0.isoformat())
    assert result.exit_code == 1, result.output  # 70 % < 90 %: a failed check
    assert "precision 70.0%" in result.output
    assert "min_support: 2 -> 3" in result.output
    assert "1 labelled ids not found" in result.output

    out = run(redis_url, "review", NS, "--labels", str(labels), "--json", "--no-store")
    data = json.loads(out.stdout)
    assert data["precision"] == pytest.approx(0.7)
    assert data["advice"][0]["setting"] == "min_support"

    # Saved: one record in Redis (the --json run used --no-store) and one in the file.
    record = ReviewRecord.from_json(saved.read_text().splitlines()[0])
    assert record.labels[bad[0]] == "incorrect" and record.precision == pytest.approx(0.7)
    assert "Sam" not in saved.read_text()  # no fact texts are kept
    history = run_json(redis_url, "review", NS, "--history")
    assert [r["precision"] for r in history] == [pytest.approx(0.7)]


def test_review_all_correct_exits_0(redis_url: str, tmp_path: Path) -> None:
    good, _ = _labelled_store(redis_url)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps({"id": i, "label": "correct"}) for i in good))
    result = run(redis_url, "review", NS, "--labels", str(labels))
    assert result.exit_code == 0, result.output
    assert "precision 100.0%" in result.output


def test_review_interactive_one_key_per_fact(redis_url: str) -> None:
    _labelled_store(redis_url)
    # 3 facts shown: a typo is asked again, then c, i, s; q is not needed at the end.
    result = run(redis_url, "review", NS, "--sample", "3", "--seed", "7",
                 "--now", T0.isoformat(), input="x\nc\ni\ns\n")
    assert "fact 1/3" in result.output and "fact 3/3" in result.output
    assert "answer with one of c, i, o, s" in result.output
    assert "precision 50.0%" in result.output
    assert result.exit_code == 1
    # q stops early and keeps what was labelled.
    early = run(redis_url, "review", NS, "--sample", "5", "--seed", "7",
                "--now", T0.isoformat(), input="c\nq\n")
    assert early.exit_code == 0 and "precision 100.0%" in early.output
    assert len(run_json(redis_url, "review", NS, "--history")) == 2


def test_review_empty_namespace_and_no_history_exit_1(redis_url: str) -> None:
    assert run(redis_url, "review", "empty-ns").exit_code == 1
    assert run(redis_url, "review", "empty-ns", "--history").exit_code == 1
