"""`bench locomo --quick` through real Celery workers and Redis: the JSON contract,
the observation facts path, and the LoCoMo parsing it relies on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore_bench.common import missing_keys
from memcore_bench.locomo import (
    CONTRACT_KEYS,
    STAGE_KEYS,
    STAGES,
    chunks,
    evidence_ids,
    load_conversation,
    load_conversations,
    main,
    parse_sets,
    raw_text,
    run_locomo,
    settings_with,
    split_names,
)

SHARED = Path("/work/shared/data/locomo")


def tiny_locomo(directory: Path) -> Path:
    """A LoCoMo-format conversation of four short sessions with questions and observations."""
    sessions = {
        1: ("1:56 pm on 8 May, 2023", [
            ("Caroline", "Hey Mel! How have you been?"),
            ("Melanie", "I'm swamped with the kids and work, but I painted a lake sunrise."),
            ("Caroline", "I went to an LGBTQ support group yesterday and it was inspiring."),
            ("Melanie", "I love swimming with my kids at the lake every weekend.")]),
        2: ("10:00 am on 25 May, 2023", [
            ("Caroline", "I'm planning to study counseling and mental health next year."),
            ("Melanie", "My daughter just started piano lessons on Tuesdays.")]),
        3: ("4:30 pm on 9 June, 2023", [
            ("Caroline", "I adopted a beagle named Biscuit from the shelter."),
            ("Melanie", "We took the kids camping in the mountains last weekend.")]),
        4: ("9:00 am on 1 July, 2023", [
            ("Caroline", "Biscuit loves the beach, we go there every Sunday."),
            ("Melanie", "I finished a new painting of the mountains we camped in.")]),
    }
    conv: dict[str, object] = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    for n, (when, turns) in sessions.items():
        conv[f"session_{n}_date_time"] = when
        conv[f"session_{n}"] = [{"speaker": s, "dia_id": f"D{n}:{i + 1}", "text": t}
                                for i, (s, t) in enumerate(turns)]
    conv["session_1_observation"] = {
        "Caroline": [["Caroline attended an LGBTQ support group.", "D1:3"]],
        "Melanie": [["Melanie painted a lake sunrise.", "D1:2"],
                    ["Melanie swims with her kids at the lake.", ["D1:4", "D1:2"]],
                    ["A fact citing a turn that does not exist.", "D9:9"]]}
    conv["session_3_observation"] = {"Caroline": [["Caroline adopted a beagle named Biscuit.",
                                                   "D3:1"]]}
    qa = [
        {"question": "When did Caroline go to the LGBTQ support group?", "answer": "7 May 2023",
         "evidence": ["D1:3"], "category": 2},
        {"question": "What does Melanie paint?", "answer": "sunrise, mountains",
         "evidence": ["D1:2", "D4:2"], "category": 1},
        {"question": "What is the name of Caroline's dog?", "answer": "Biscuit",
         "evidence": ["D3:1; D4:1"], "category": 4},
        {"question": "What did Caroline realize?", "evidence": ["D1:3"], "category": 5},
    ]
    path = directory / "conv-1.json"
    path.write_text(json.dumps({**conv, "qa": qa}))
    return path


def check_contract(data: dict[str, object]) -> None:
    assert not missing_keys(data, CONTRACT_KEYS)
    assert not missing_keys(data, [f"{s}.{k}" for s in STAGES for k in STAGE_KEYS])
    for stage in STAGES:
        stage_data = data[stage]
        assert isinstance(stage_data, dict)
        assert 0.0 <= stage_data["recall_at_10"] <= 1.0
    assert isinstance(data["per_conversation"], dict) and data["per_conversation"]


def test_quick_run_extracted(tmp_path: Path, redis_url: str) -> None:
    tiny_locomo(tmp_path)
    out = tmp_path / "out" / "locomo.json"
    run_locomo(tmp_path, embedder="hash", facts="extracted", quick=True, out=out,
               redis_url=redis_url)
    data = json.loads(out.read_text())
    check_contract(data)
    assert data["conversations"] == 1 and data["embedder"] == "hash"
    assert data["facts"] == "extracted" and data["quick"] is True
    assert data["questions"] == 1  # category 5 left out; quick keeps sessions 1-3 only
    assert data["raw"]["memories"] == 8  # every turn of the 3 sessions, nothing else
    assert data["ingested"]["memories"] > 0
    assert data["model_calls_per_turn"] > 0
    assert data["models"] == "offline"
    assert sum(data["decisions"].values()) > 0 and set(data["decisions"]) <= {
        "ADD", "UPDATE", "DELETE", "NOOP"}
    assert "| raw |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_quick_run_observations_feed_the_write_path(tmp_path: Path, redis_url: str) -> None:
    tiny_locomo(tmp_path)
    out = tmp_path / "obs.json"
    main(["--data", str(tmp_path), "--facts", "observations", "--quick", "--out", str(out),
          "--redis-url", redis_url, "--set", 'consolidation={"tau_hours": 2160}'])
    data = json.loads(out.read_text())
    check_contract(data)
    assert data["facts"] == "observations"
    assert data["settings"] == {"consolidation": '{"tau_hours": 2160}'}
    conv = data["per_conversation"]["conv-1"]
    assert conv["observations"] == 5 and conv["unmatched_observations"] == 1
    # Four facts, one of them cited by two turns (one memory with both sources);
    # no model call: the facts were given.
    assert data["ingested"]["memories"] == 4
    assert data["model_calls_per_turn"] == 0.0
    assert data["ingested"]["recall_at_10"] == 1.0  # each question's evidence is a fact


def test_loading_and_parsing(tmp_path: Path) -> None:
    path = tiny_locomo(tmp_path)
    conv = load_conversation(path, facts="observations")
    assert conv.turns == 10 and conv.namespace == "locomo-conv-1"
    assert [q.category for q in conv.questions] == [2, 1, 4]
    turns = {m["id"]: m for s in conv.sessions for m in s}
    assert turns["D1-2"]["metadata"]["facts"] == ["Melanie painted a lake sunrise.",
                                                  "Melanie swims with her kids at the lake."]
    assert turns["D1-2"]["timestamp"].isoformat() == "2023-05-08T13:56:00+00:00"
    assert conv.last_time.isoformat() == "2023-07-01T09:00:00+00:00"
    assert evidence_ids(["D8:6; D9:17", "D1:3"]) == {"D8-6", "D9-17", "D1-3"}
    assert raw_text(turns["D1-1"]) == "Caroline: Hey Mel! How have you been?"
    # Batches never cross a session: 4 + 2 + 2 + 2 turns in pairs.
    assert [len(b) for b in chunks(conv, 2)] == [2, 2, 2, 2, 2]
    assert [len(b) for b in chunks(conv, 3)] == [3, 1, 2, 2, 2]
    with pytest.raises(ValueError, match="turns_per_add"):
        chunks(conv, 0)
    with pytest.raises(ValueError, match="facts"):
        load_conversations(tmp_path, facts="summaries")
    with pytest.raises(ValueError, match="--data"):
        load_conversations(tmp_path / "missing")


def test_settings_overrides() -> None:
    assert parse_sets(["add_threshold=0.6"]) == {"add_threshold": "0.6"}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_sets(["add_threshold"])
    s = settings_with({"add_threshold": "0.6", "consolidation": '{"floor": 0.001}'})
    assert s.add_threshold == 0.6 and s.consolidation.floor == 0.001
    with pytest.raises(ValueError, match="unknown setting"):
        settings_with({"no_such": "1"})


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared LoCoMo data is not here")
def test_shared_data_loads() -> None:
    convs = load_conversations(SHARED, facts="observations")
    assert len(convs) == 5
    assert sum(c.turns for c in convs) > 2000
    assert all(c.questions for c in convs)
    tune = load_conversations(SHARED, only=split_names("conv-26, conv-30"))
    assert [c.name for c in tune] == ["conv-26", "conv-30"]
    with pytest.raises(ValueError, match="--conversations: no conv-99"):
        load_conversations(SHARED, only=["conv-99"])


def test_carried_credit_needs_the_members_words_and_numbers() -> None:
    from memcore_bench.locomo import carries

    member = "Melanie ran a charity race for mental health on 20 May 2023."
    digest = ("Recurring (2 memories): Melanie - ran charity race mental health 20 May 2023; "
              "signed pottery class July.")
    assert carries(digest, member)
    assert not carries("Recurring (2 memories): Melanie - ran charity race mental health May.",
                       member)  # the date's numbers are gone
    assert not carries("Recurring (2 memories): Melanie, race 20 2023.", member)  # words gone


def test_models_option_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_locomo(tmp_path)
    with pytest.raises(ValueError, match="--models"):
        run_locomo(tmp_path, quick=True, models="gpt")
    monkeypatch.delenv("MEMCORE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="MEMCORE_OPENAI_API_KEY"):
        run_locomo(tmp_path, quick=True, models="openai")


def test_quick_run_measures_the_context_block_next_to_raw_turns(tmp_path: Path,
                                                                redis_url: str) -> None:
    from memcore_bench.locomo_context import METHODS, cut, parse_budgets

    tiny_locomo(tmp_path)
    out = tmp_path / "ctx.json"
    main(["--data", str(tmp_path), "--facts", "observations", "--out", str(out),
          "--redis-url", redis_url, "--context-tokens", "60,2000"])
    data = json.loads(out.read_text())
    check_contract(data)
    context = data["context"]
    assert context["tokenizer"] == "cl100k_base" and context["budgets"] == [60, 2000]
    small, large = context["by_budget"]["60"], context["by_budget"]["2000"]
    for method in METHODS:
        assert small[method]["questions"] == large[method]["questions"] == 3
        assert small[method]["tokens"] <= 60 and large[method]["tokens"] <= 2000
        assert small[method]["inside"] <= large[method]["inside"]
    # 12 short turns fit in 2,000 tokens whole: every question's evidence is inside.
    assert large["raw_recent"]["inside"] == large["raw_search"]["inside"] == 1.0
    # A few live memories: the 2,000-token block holds them all, as search's top 10 do.
    assert large["memcore"]["evidence"] == data["consolidated"]["recall_at_10"] > 0
    assert small["raw_recent"]["inside"] < 1.0  # the last turns only
    assert "| 2000 | memcore |" in out.with_suffix(".md").read_text()
    assert parse_budgets("2000, 1000,1000") == [1000, 2000]
    for bad in ("abc", "10", "40000"):
        with pytest.raises(ValueError, match="--context-tokens"):
            parse_budgets(bad)
    assert cut([("a b c", frozenset({"x"})), ("d", frozenset({"y"}))], 4) == ({"x"}, 4)
