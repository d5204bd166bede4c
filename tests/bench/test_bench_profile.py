"""`bench profile`: the scenario format, the benchmark's own matching rules and a quick
run through real Celery workers and Redis (the JSON contract, Markdown and PNG)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memcore.core.models import Role
from memcore_bench.common import missing_keys
from memcore_bench.profile import (
    CONTRACT_KEYS,
    FROZEN_PREFIX,
    classify,
    judge,
    load_scenarios,
    normalize,
    parse_scenario,
    run_profile,
)


def scenario(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "s", "as_of": "2026-03-01T00:00:00Z", "speaker": "Ann",
        "turns": [{"at": "2026-01-01T00:00:00Z", "role": "user", "text": "I live in Porto."}],
        "truth": {
            "true": [{"fact": "lives in Porto", "all": [["porto"], ["live*", "moved"]]},
                     {"fact": "has a cat", "all": [["cat"]]}],
            "acceptable": [{"fact": "left Lisbon", "all": [["lisbon"], ["left"]]}],
            "stale": [{"fact": "lives in Lisbon", "all": [["lisbon"]], "none": ["left"]}],
            "noise": [{"fact": "weather", "all": [["weather"]]}],
        },
    }
    data.update(changes)
    return data


def test_the_bundled_scenarios_meet_the_brief() -> None:
    scenarios = load_scenarios()
    assert len(scenarios) >= 12
    assert all(15 <= len(s.turns) <= 40 for s in scenarios)
    assert sum(s.held_out for s in scenarios) * 3 >= len(scenarios)
    assert sum(s.tags.get("change", 0) for s in scenarios) >= 40
    assert sum(s.tags.get("please", 0) for s in scenarios) >= 20
    frozen = [s for s in scenarios if s.name.startswith(FROZEN_PREFIX)]
    # Issue 26's frozen held-out set: 24+ conversations, 350+ user turns, all held out.
    assert len(frozen) >= 24 and all(s.held_out for s in frozen)
    assert sum(t["role"] is Role.USER for s in frozen for t in s.turns) >= 350
    assert len(load_scenarios(quick=True)) == 2


def test_matching_rules() -> None:
    truth = parse_scenario(scenario()).truth
    assert normalize("Lucía doesn't live in Cádiz!") == "lucia does not live in cadiz"
    assert classify("Ann lives in Porto.", truth) == ("correct", [0])
    assert classify("Ann moved to Porto.", truth) == ("correct", [0])
    assert classify("Ann's cat is called Nube.", truth) == ("correct", [1])
    assert classify("Ann catches trains.", truth) == ("unmatched", [])  # whole words only
    assert classify("Ann left Lisbon.", truth) == ("correct", [])  # acceptable, not required
    # A fact carrying a stale claim is stale even if it also says something true.
    assert classify("Ann lives in Lisbon and has a cat.", truth) == ("stale", [])
    assert classify("The weather in Porto is lovely.", truth) == ("noise", [])
    result = judge(parse_scenario(scenario()), ["Ann lives in Porto.", "Ann lives in Lisbon.",
                                                "Ann lives in Porto with a view."])
    assert (result["precision"], result["recall"]) == (2 / 3, 1 / 2)
    assert result["stale_in_profile"] == 1 and result["missed"] == ["has a cat"]


def test_a_keyword_star_is_a_word_not_a_wildcard() -> None:
    data = scenario()
    data["truth"]["noise"] = [{"fact": "thanks", "all": [["star"]], "none": []}]
    truth = parse_scenario(data).truth
    assert classify("You've been a star.", truth) == ("noise", [])
    assert classify("Ann lives in Porto.", truth) == ("correct", [0])  # "live*" still a prefix


@pytest.mark.parametrize(("change", "field"), [
    ({"as_of": "soon"}, "s.as_of"),
    ({"turns": [{"at": "2026-01-01", "role": "user", "text": " "}]}, "s.turns[0].text"),
    ({"turns": [{"at": "2027-01-01", "role": "user", "text": "hi"}]}, "s.turns[0].at"),
    ({"turns": [{"at": "2026-01-01", "role": "bot", "text": "hi"}]}, "s.turns[0].role"),
    ({"truth": {"true": []}}, "s.truth.true"),
    ({"truth": {"true": [{"all": "porto"}]}}, "s.truth.true[0].all"),
    ({"extra": 1}, "s.extra"),
])
def test_bad_scenarios_name_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(field)):
        parse_scenario(scenario(**change), "s")


def test_openai_models_need_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="MEMCORE_OPENAI_API_KEY"):
        run_profile(models="openai", quick=True)
    with pytest.raises(ValueError, match="--models"):
        run_profile(models="gpt", quick=True)


def test_quick_run_through_the_stack(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "profile.json"
    run_profile(quick=True, out=out, redis_url=redis_url)
    data = json.loads(out.read_text())
    assert missing_keys(data, CONTRACT_KEYS) == []
    assert data["scenarios"] == 2 and set(data["per_scenario"]) == {
        "quick_seed_style", "quick_switches"}
    assert data["facts"] == sum(p["facts"] for p in data["per_scenario"].values()) > 0
    assert 0.0 <= data["precision"] <= 1.0 and 0.0 < data["recall"] <= 1.0
    assert data["held_out"]["scenarios"] == 0 and data["quick"] is True
    for name, per in data["per_scenario"].items():
        assert per["facts"] == len(per["profile"]), name
        assert per["model_calls"] > 0
        # A first pass: every live memory counts as changed, and the calls stay bounded.
        assert per["changed"] > 0 and 0 <= per["merge_calls"] <= 0.2 * per["changed"], name
    assert data["merge_calls"] == sum(p["merge_calls"] for p in data["per_scenario"].values())
    assert data["merge_calls_per_pass"] == data["merge_calls"] / 2
    assert "merge calls per pass" in out.with_suffix(".md").read_text()
    assert "| all |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_a_run_resumed_in_parts_keeps_what_it_judged(tmp_path: Path, redis_url: str) -> None:
    """--max-scenarios 1, then --resume: the second sitting runs only the other scenario,
    keeps the first one's judgment as it was, and totals both (a slow model's run can be
    spread over sessions); a third sitting has nothing left to run."""
    out = tmp_path / "parts.json"
    first = run_profile(quick=True, out=out, redis_url=redis_url, max_scenarios=1)
    assert first["scenarios"] == 1
    (done,) = first["per_scenario"]
    second = run_profile(quick=True, out=out, redis_url=redis_url, resume=True)
    assert set(second["per_scenario"]) == {"quick_seed_style", "quick_switches"}
    assert json.loads(out.read_text())["per_scenario"][done] == json.loads(
        json.dumps(first["per_scenario"][done]))
    assert second["facts"] == sum(p["facts"] for p in second["per_scenario"].values())
    assert second["seconds"] >= first["seconds"]
    third = run_profile(quick=True, out=out, redis_url=redis_url, resume=True)
    assert third["per_scenario"] == json.loads(json.dumps(second["per_scenario"]))
    with pytest.raises(ValueError, match=r"--resume: .* embedder"):
        run_profile(quick=True, out=out, redis_url=redis_url, resume=True, embedder="local")
