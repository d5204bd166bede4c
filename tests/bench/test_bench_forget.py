"""`bench forget`: the case format, the key scan and a run of three small cases of its own
through real Celery workers and Redis (the JSON contract and the Markdown)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis

from memcore_bench.common import missing_keys
from memcore_bench.forget import (
    CONTRACT_KEYS,
    has_secret,
    load_cases,
    run_forget,
    scan_keys,
)

CASES: list[dict[str, Any]] = [
    {"name": "address_next_turn", "kind": "request",
     "turns": [{"role": "user", "text": "I live in Leeds and I have a cat called Tom."},
               {"role": "assistant", "text": "Nice, Tom is a good name."},
               {"role": "user", "text": "My home address is 14 Larkspur Lane, Bristol."},
               {"role": "assistant", "text": "Noted."},
               {"role": "user", "text": "Can you forget my address?"}],
     "secret": ["Larkspur"], "keep": ["Leeds"]},
    {"name": "keys_negative", "kind": "negative",
     "turns": [{"role": "user", "text": "I work at Acme."},
               {"role": "user", "text": "I always forget my keys."}],
     "secret": [], "keep": ["Acme", "keys"]},
    {"name": "ex_everything", "kind": "request",
     "turns": [{"role": "user", "text": "My ex Daniel Okafor cheated on me last month."},
               {"role": "user", "text": "I play the piano."},
               {"role": "user", "text": "Forget everything about my ex."}],
     "secret": ["Okafor"], "keep": ["piano"], "notes": "kept in the row"},
]
CONTROL = {"name": "control_no_request", "kind": "request",
           "turns": [{"role": "user", "text": "My cat is called Pickle."}],
           "secret": ["Pickle"], "keep": []}
"""A 'request' that never asks: the judge must see the secret (live, searched, in keys)."""


def test_case_format_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    for bad, match in (([{**CASES[0], "kind": "maybe"}], r"\[0\]\.kind"),
                       ([{**CASES[0], "secret": []}], r"secret: a request case"),
                       ([{**CASES[0], "turns": [{"role": "user", "text": ""}]}],
                        r"turns\[0\]\.text"),
                       ([CASES[0], CASES[0]], "share a name"), ({}, "non-empty JSON list")):
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=match):
            load_cases(path)
    path.write_text(json.dumps(CASES))
    assert [c.extra for c in load_cases(path)] == [{}, {}, {"notes": "kept in the row"}]


def test_scan_reads_every_type(redis_client: redis.Redis) -> None:
    redis_client.set("mc:{scan}:s", "a Larkspur b")
    redis_client.hset("mc:{scan}:h", "f", "LARKSPUR")
    redis_client.rpush("mc:{scan}:l", "x", "larkspur")
    redis_client.sadd("mc:{scan}:set", "Larkspur Lane")
    redis_client.zadd("mc:{scan}:z", {"14 Larkspur": 1})
    redis_client.xadd("mc:{scan}:x", {"text": "larkspur"})
    redis_client.set("mc:{other}:s", "Larkspur")
    hits = scan_keys(redis_client, "mc:{scan}:*", ["larkspur", "absent"])
    assert sorted(hits["larkspur"]) == sorted(f"mc:{{scan}}:{k}"
                                              for k in ("s", "h", "l", "set", "z", "x"))
    assert hits["absent"] == []
    redis_client.set("mc:{scan}:id", "ae6ec118-556f-4ef3-bd58-547c39fe0b65 a43b")
    assert "mc:{scan}:id" not in scan_keys(redis_client, "mc:{scan}:*", ["43"])["43"]
    assert has_secret("Sam is 43.", "43") and not has_secret("2043", "43")
    # a run of a task id's UUID that equals a short code by chance is no hit
    task = '{"task_id": "cbf06589-4471-4f48-a3b8-ca4f4630e8bc"}'
    assert not has_secret(task, "4471") and has_secret(task + " code 4471", "4471")


def test_run_through_the_stack(tmp_path: Path, redis_url: str) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([*CASES, CONTROL]))
    out = tmp_path / "forget.json"
    run_forget(cases_path=cases, out=out, redis_url=redis_url)
    data = json.loads(out.read_text())
    print("\n" + out.with_suffix(".md").read_text())
    assert missing_keys(data, CONTRACT_KEYS) == []
    assert (data["cases"], data["requests"], data["negatives"]) == (4, 3, 1)
    assert set(data["per_case"]) == {c["name"] for c in [*CASES, CONTROL]}
    per = data["per_case"]
    control = per["control_no_request"]
    assert control["honoured"] is False and control["secret_live"] == ["Pickle"]
    assert control["secret_in_search"] == ["Pickle"] and control["key_scan_hits"] > 0
    assert control["forget_audits"] == 0
    assert data["requests_honoured"] == sum(1 for p in per.values() if p["honoured"]) <= 2
    assert data["recall"] == data["requests_honoured"] / 3
    assert data["negatives_kept"] == int(per["keys_negative"]["kept"])
    assert data["over_deletions"] == sum(len(p["keep_missing"]) for p in per.values())
    assert data["key_scan_hits"] == sum(p["key_scan_hits"] for p in per.values())
    assert 0.0 <= data["precision"] <= 1.0
    assert all(p["live"] for p in per.values()), per  # something was remembered
    assert per["keys_negative"]["honoured"] is None
    assert per["ex_everything"]["extra"] == {"notes": "kept in the row"}
    md = out.with_suffix(".md").read_text()
    assert "requests honoured" in md and "address_next_turn" in md
    assert data["machine"]["cores"]


OWN_CASES = Path(__file__).parents[1] / "data" / "forget_own_cases.json"
"""The developers' own forget cases (not the held-out memcore/data/forget_cases.json):
48 requests of varied phrasing (removing verbs with particles, "get rid of", questions,
indirect asks, typos and chat spellings), 0-3 turns after the secret or in its own turn,
with distractors, and 24 turns that only use the word or ask to remove a thing of the
world ("delete the email from my boss", "remove my name from the mailing list")."""


def test_own_cases_through_the_stack(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "own.json"
    run_forget(cases_path=OWN_CASES, out=out, redis_url=redis_url)
    data = json.loads(out.read_text())
    failed = {n: p for n, p in data["per_case"].items()
              if p["honoured"] is False or not p["kept"]}
    print(f"\n[own forget cases] requests honoured {data['requests_honoured']}/"
          f"{data['requests']}, negatives kept {data['negatives_kept']}/{data['negatives']}, "
          f"over-deletions {data['over_deletions']}, key-scan hits {data['key_scan_hits']}")
    assert (data["requests"], data["negatives"]) == (48, 24)
    assert data["recall"] == 1.0 and data["precision"] == 1.0, failed
    assert data["requests_stored_as_facts"] == 0 and data["key_scan_hits"] == 0


def test_the_model_path_needs_its_endpoint(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    # `--models openai` runs the cases with the configured model extracting (make
    # test-models runs it on a real one); without a key it says what to set, before any
    # worker starts
    monkeypatch.delenv("MEMCORE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="MEMCORE_OPENAI_API_KEY"):
        run_forget(models="openai", out=tmp_path / "f.json")
    with pytest.raises(ValueError, match="--models"):
        run_forget(models="gpt", out=tmp_path / "f.json")
