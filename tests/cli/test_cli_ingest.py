"""Conversation files (JSONL turns, LoCoMo) into Client.add batches, and `memcore ingest`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from memcore.client.client import Client
from memcore.client.conversation_files import (
    file_id,
    is_locomo,
    locomo_batches,
    locomo_episode_id,
    parse_locomo_time,
    read_batches,
    validate,
)
from memcore.local.stack import LocalStack
from memcore.store import MemoryStore
from tests.support.cli_helpers import run
from tests.support.docs_text import doc, section

LOCOMO = Path("/work/shared/data/locomo")
LOCOMO_FILES = sorted(LOCOMO.glob("conv-*.json"))
needs_locomo = pytest.mark.skipif(not LOCOMO_FILES, reason="LoCoMo files not present")


def test_episode_id_mapping() -> None:
    assert locomo_episode_id("D1:3") == "D1-3"
    assert locomo_episode_id("D12:104") == "D12-104"
    assert locomo_episode_id(" a b/c ") == "a-b-c"
    with pytest.raises(ValueError, match="dia_id"):
        locomo_episode_id("")


def test_locomo_time() -> None:
    assert parse_locomo_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56,
                                                                   tzinfo=UTC)
    assert parse_locomo_time("10:37 am on 27 June, 2023").hour == 10
    with pytest.raises(ValueError, match="date_time"):
        parse_locomo_time("yesterday")


@needs_locomo
@pytest.mark.parametrize("path", LOCOMO_FILES, ids=lambda p: p.name)
def test_real_locomo_files_parse_into_valid_episodes(path: Path) -> None:
    data = json.loads(path.read_text())
    batches = read_batches(path)
    sessions = sorted(int(k.split("_")[1]) for k in data
                      if k.startswith("session_") and k.split("_")[-1].isdigit()
                      and data[k])
    assert [b.label for b in batches] == [f"session {n}" for n in sessions]
    episodes = [e for batch in validate("locomo-test", batches) for e in batch]
    turns = [t for n in sessions for t in data[f"session_{n}"]]
    assert len(episodes) == len(turns)
    assert len({e.id for e in episodes}) == len(episodes)  # dia_ids are unique
    speakers = {data["speaker_a"], data["speaker_b"]}
    assert {e.speaker for e in episodes} == speakers
    assert {e.role.value for e in episodes} == {"user"}
    first = episodes[0]
    assert first.id == locomo_episode_id(turns[0]["dia_id"])
    assert first.timestamp == parse_locomo_time(data["session_1_date_time"])
    assert first.metadata["dia_id"] == turns[0]["dia_id"]
    # Sessions are in time order.
    times = [batch[0].timestamp for batch in validate("locomo-test", batches)]
    assert times == sorted(times)


@needs_locomo
def test_locomo_captions_and_wrapped_formats() -> None:
    data = json.loads(LOCOMO_FILES[0].read_text())
    turn = next(t for n in range(1, 40) for t in data.get(f"session_{n}", [])
                if t.get("blip_caption"))
    with_caps = {m["id"]: m for b in locomo_batches(data) for m in b.messages}
    without = {m["id"]: m for b in locomo_batches(data, captions=False) for m in b.messages}
    key = locomo_episode_id(turn["dia_id"])
    assert turn["blip_caption"] in with_caps[key]["content"]
    assert without[key]["content"] == turn["text"]
    # The original locomo10.json shape: a list of samples with a "conversation" object.
    wrapped = [{"sample_id": "x", "conversation": data}]
    assert is_locomo(wrapped) and is_locomo({"conversation": data})
    assert len(locomo_batches(wrapped[0])) == len(locomo_batches(data))


def test_jsonl_turns_grouped_by_session(tmp_path: Path) -> None:
    path = tmp_path / "turns.jsonl"
    rows = [
        {"session": 1, "role": "user", "speaker": "Sam", "content": "I live in Paris.",
         "timestamp": "2026-09-01T09:00:00Z", "id": "t1"},
        {"session": 2, "role": "assistant", "text": "Noted.", "timestamp": "2026-09-08T09:00:00Z"},
        {"session": 1, "content": "I like tea."},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    batches = read_batches(path)
    assert [b.label for b in batches] == ["session 1", "session 2"]
    assert [len(b.messages) for b in batches] == [2, 1]
    (one, two) = validate("ns", batches)
    assert one[0].id == "t1" and one[0].metadata == {"session": 1}
    assert one[1].role.value == "user"  # role defaults to user
    assert two[0].text == "Noted."


def test_bad_files_name_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "ok"}\n{"role": "user"}\n')
    with pytest.raises(ValueError, match="line 2: content"):
        read_batches(bad)
    bad.write_text('{"role": "user", "content": "ok"}\nnot json\n')
    with pytest.raises(ValueError, match="line 2: not JSON"):
        read_batches(bad)
    bad.write_text('{"role": "robot", "content": "hi"}\n')
    with pytest.raises(ValueError, match=r"^the turn: role"):
        validate("ns", read_batches(bad))
    # Errors found on validation name the file's line, also inside a session group.
    bad.write_text('{"content": "a", "session": 1}\n{"content": "b", "session": 2}\n'
                   '{"content": "", "session": 1}\n')
    with pytest.raises(ValueError, match=r"^line 3: content"):
        validate("ns", read_batches(bad))
    result = run("redis://127.0.0.1:1/0", "ingest", str(bad), "--namespace", "ns")
    assert result.exit_code == 2 and "line 3: content" in result.output  # before connecting


def test_ingest_command_through_real_workers(celery_stack: LocalStack,
                                             tmp_path: Path) -> None:
    ns = f"cli-{uuid.uuid4().hex[:10]}"
    path = tmp_path / "turns.jsonl"
    rows = [{"session": s, "role": "user", "speaker": "Sam", "id": f"s{s}",
             "timestamp": f"2026-09-0{s}T09:00:00Z", "content": text}
            for s, text in ((1, "I live in Paris."), (2, "I prefer tea over coffee."))]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    result = run(celery_stack.redis_url, "ingest", str(path), "--namespace", ns, "--json",
                 "--timeout", "120")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["turns"] == 2 and summary["batches"] == 2 and len(summary["tasks"]) == 2
    client = Client(celery_stack.redis_url)
    try:
        assert client.store.episodes.get_episode(ns, "s1") is not None
        assert client.store.episodes.get_episode(ns, "s2") is not None
    finally:
        client.close()
    # A pass on the same workers, through the CLI.
    done = run(celery_stack.redis_url, "consolidate", ns, "--now", "2026-09-10T00:00:00Z",
               "--timeout", "120", "--json")
    assert done.exit_code == 0, done.output
    assert isinstance(json.loads(done.stdout), dict)


def test_ingest_without_a_worker_stops_in_seconds_and_says_why(
        redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No worker on this Redis: `memcore ingest` used to wait out --timeout (600 s per
    session by default) and then blame the time. It stops once the workers were asked."""
    from memcore.client import client as client_module

    monkeypatch.setattr(client_module, "NO_WORKER_CHECK_SECONDS", 0.5)
    path = tmp_path / "turns.jsonl"
    path.write_text('{"role": "user", "content": "I relocated to Porto last spring."}\n')
    result = run(redis_url, "ingest", str(path), "--namespace", "lonely")
    assert result.exit_code == 1, result.output
    assert "ingest stopped" in result.output and "no Celery worker answered" in result.output


def chat_rows(conversations: int, turns: int) -> list[dict[str, object]]:
    """A chat history export: ``conversations`` of ``turns`` turns each, no ids, and a
    repeated "ok" in each (identical turns that must stay two)."""
    rows: list[dict[str, object]] = []
    for c in range(conversations):
        for t in range(turns):
            text = "ok" if t in (3, 4) else f"In chat {c} I said thing number {t}."
            rows.append({"conversation": f"c{c}", "role": "user" if t % 2 == 0 else
                         "assistant", "content": text,
                         "timestamp": f"2026-05-{c + 1:02d}T10:{t:02d}:00Z"})
    return rows


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_turn_ids_are_derived_from_the_file_content(tmp_path: Path) -> None:
    schema = json.loads(resources.files("memcore").joinpath("data/turns.schema.json")
                        .read_text())
    rows = chat_rows(2, 6)
    rows[0]["id"] = "given-1"
    rows[1]["session"] = 7
    for row in rows:
        jsonschema.validate(row, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"role": "user"}, schema)
    first = read_batches(write_jsonl(tmp_path / "a.jsonl", rows))
    ids = [m["id"] for b in first for m in b.messages]
    assert ids[0] == "given-1" and len(set(ids)) == len(ids) == 12, "two 'ok's stay two"
    assert ids == [m["id"] for b in read_batches(tmp_path / "a.jsonl") for m in b.messages]
    assert [b.label for b in first] == ["conversation c0", "conversation c0 session 7",
                                        "conversation c1"]
    assert first[1].messages[0]["metadata"] == {"conversation": "c0", "session": 7}
    # Another turn inserted earlier in the file leaves every other turn's id as it was.
    edited = read_batches(write_jsonl(tmp_path / "b.jsonl", [
        {"conversation": "c0", "content": "a new first line"}, *rows]))
    assert set(ids) < {m["id"] for b in edited for m in b.messages}
    assert file_id(tmp_path / "a.jsonl") != file_id(tmp_path / "b.jsonl")
    episodes = validate("ns", first)
    assert episodes[0][0].metadata == {"conversation": "c0"}
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"content": "x", "conversation": [1]}])
    with pytest.raises(ValueError, match="line 1: conversation"):
        read_batches(bad)


def test_ingest_killed_mid_file_then_resume_stores_every_turn_once(
        celery_stack: LocalStack, tmp_path: Path) -> None:
    ns = f"resume-{uuid.uuid4().hex[:10]}"
    path = write_jsonl(tmp_path / "history.jsonl", chat_rows(12, 10))
    expected = {m["id"]: m["content"] for b in read_batches(path) for m in b.messages}
    fid = file_id(path)
    store = MemoryStore.from_url(celery_stack.redis_url)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore.cli", "--redis-url", celery_stack.redis_url,
         "ingest", str(path), "--namespace", ns, "--chunk", "4", "--json",
         "--timeout", "120"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while store.ingest_marks.progress(ns, fid) < 40:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stopped = store.ingest_marks.progress(ns, fid)
    assert 40 <= stopped < 120, "killed midway"

    refused = run(celery_stack.redis_url, "ingest", str(path), "--namespace", ns)
    assert refused.exit_code == 2, refused.output
    assert f"stopped after turn {stopped} of 120" in refused.output
    assert "--resume" in refused.output

    resumed = run(celery_stack.redis_url, "ingest", str(path), "--namespace", ns,
                  "--resume", "--chunk", "4", "--json", "--timeout", "120")
    assert resumed.exit_code == 0, resumed.output
    report = json.loads(resumed.stdout)
    assert report["resumed_after"] == stopped and report["sent"] == 120 - stopped
    assert store.ingest_marks.progress(ns, fid) == 120
    # A task the killed run had sent may still run: wait until every turn is in (not
    # for the backlog count: a reservation the killed run made and never sent stays
    # counted until it ages out or beat's sweep finds it).
    settle = time.monotonic() + 120
    while len(list(store.episodes.iter_episodes(ns))) < 120:
        assert time.monotonic() < settle
        time.sleep(0.05)
    stored = list(store.episodes.iter_episodes(ns))
    assert len(stored) == 120, "every turn stored, none twice"
    assert {e.id: e.text for e in stored} == expected

    again = run(celery_stack.redis_url, "ingest", str(path), "--namespace", ns,
                "--resume", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["sent"] == 0
    store.close()


def test_readme_bulk_ingest_commands_run_as_written(celery_stack: LocalStack,
                                                     tmp_path: Path) -> None:
    """The "Bulk ingest of chat histories" block of docs/operations.md, run by bash with the real
    `memcore` on the real workers (only the Redis URL is swapped for the test's)."""
    text = section(doc("operations.md"), "## Bulk ingest of chat histories")
    (script,) = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert "--resume" in script and "redis://localhost:6379/0" in script
    script = script.replace("redis://localhost:6379/0", celery_stack.redis_url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(Path(__file__).parents[2])
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ingested 3 of 3 turns" in done.stdout
    assert "ingested 0 of 3 turns" in done.stdout, "the finished file: nothing sent again"
    store = MemoryStore.from_url(celery_stack.redis_url)
    try:
        stored = list(store.episodes.iter_episodes("alice-chats"))
        assert sorted(e.text for e in stored) == [
            "I am flying to Lisbon on 3 May.", "I stopped eating meat.",
            "Noted: Lisbon on 3 May."]
        meat = next(e for e in stored if "meat" in e.text)
        assert meat.metadata == {"conversation": "food", "session": 2}
        assert meat.speaker == "Alice"
        assert store.ingest_marks.progress("alice-chats",
                                           file_id(tmp_path / "history.jsonl")) == 3
    finally:
        store.close()
