"""Export and import: the file format and its schema, a round trip between two Redis
servers through real workers, a kill mid-import then --resume, bad files."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memcore.adapters import build_embedder
from memcore.client.client import Client
from memcore.client.portability import export_lines
from memcore.core.config import Settings
from memcore.core.models import Actor, AuditEvent, Episode, Memory, Role, Status
from memcore.local.redis_server import running_redis
from memcore.local.stack import LocalStack
from memcore.store import MemoryStore
from tests.support.celery_stack import fresh_ns
from tests.support.cli_helpers import memory, put, run
from tests.support.docs_text import doc, section

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
NS = "cli-test"


def schema() -> dict[str, Any]:
    text = resources.files("memcore").joinpath("data/export.schema.json").read_text()
    return dict(json.loads(text))


def comparable(store: MemoryStore, namespace: str) -> dict[str, dict[str, Any]]:
    """Every record of ``namespace`` (vectors included) without the namespace."""
    return {m.id: m.model_dump(exclude={"namespace"})
            for m in store.records.iter_memories(namespace)}


def audit_of(store: MemoryStore, namespace: str) -> list[dict[str, Any]]:
    return [e.model_dump(exclude={"namespace"}) for _, e in store.audit.scan(namespace)]


def rich_namespace(url: str) -> MemoryStore:
    """A namespace with every kind of state: pinned, scoped, metadata, superseded (with
    validity), tombstoned, episodes."""
    store = MemoryStore.from_url(url)
    a, b, c = put(url, memory("Sam lives in Paris", user_id="sam", metadata={"src": "chat"}),
                  memory("Sam likes green tea", pinned=True),
                  memory("Sam drives a red car", agent_id="bot", run_id="r1"))
    later = T0 + timedelta(days=3)
    berlin = memory("Sam lives in Berlin", user_id="sam", sources=("e3",))
    store.writes.supersede(NS, a.id, berlin.model_copy(update={"created_at": later,
                                                        "updated_at": later,
                                                        "last_used": later}),
                    now=later, reason="moved")
    store.writes.tombstone(NS, c.id, later, "deleted by the user")
    store.writes.pin(NS, b.id, later)
    store.episodes.add_episodes([Episode(id="e1", namespace=NS, role=Role.USER, speaker="Sam",
                                text="I live in Paris.", timestamp=T0, user_id="sam",
                                metadata={"k": "v"})])
    return store


def test_export_lines_follow_the_schema_and_cover_the_model(redis_url: str) -> None:
    store = rich_namespace(redis_url)
    lines = list(export_lines(store, NS, with_episodes=True))
    validator = jsonschema.Draft202012Validator(schema())
    kinds = []
    for number, line in enumerate(lines, 1):
        data = json.loads(line)
        errors = list(validator.iter_errors(data))
        assert not errors, f"line {number}: {errors[0].message}"
        kinds.append(data.get("type", "header"))
    assert kinds[0] == "header" and kinds[-1] == "end"
    assert kinds.count("memory") == 4 and kinds.count("episode") == 1
    assert kinds.count("audit") == len(audit_of(store, NS)) > 4
    statuses = {json.loads(x)["status"] for x in lines if '"type":"memory"' in x}
    assert statuses == {"active", "superseded", "tombstoned"}
    defs = schema()["$defs"]
    # The schema names exactly the fields of the models (a new field must be added to it).
    for name, model, extra in (("memory", Memory, {"vector_q8"}), ("episode", Episode, set()),
                               ("audit", AuditEvent, set())):
        assert set(defs[name]["properties"]) == \
            set(model.model_fields) - {"namespace", "vector", "capped"} | {"type"} | extra, name
    # A line the schema refuses: unknown field, importance out of range.
    bad = json.loads(lines[1]) | {"importance": 7}
    assert list(validator.iter_errors(bad))


def test_round_trip_between_two_redis_servers(celery_stack: LocalStack,
                                              redis_url: str, tmp_path: Path) -> None:
    """Turns through the real ingest workers on one deployment; export; erase there;
    import into another Redis under another name: same search results and profile."""
    ns = fresh_ns("port")
    source = Client(celery_stack.redis_url)
    target = Client(redis_url)
    try:
        for day, batch in enumerate([
                [{"role": "user", "speaker": "Sam", "content": "I live in Paris.", "id": "a1"},
                 {"role": "user", "speaker": "Sam", "content": "I prefer tea over coffee.",
                  "id": "a2"},
                 {"role": "user", "speaker": "Sam", "content": "I work as a data engineer.",
                  "id": "a3"}],
                [{"role": "user", "speaker": "Sam", "content": "I live in Paris.", "id": "b1"}],
                [{"role": "user", "speaker": "Sam", "content": "I moved to Berlin.",
                  "id": "c1"}]]):
            source.wait(source.add(ns, batch, timestamp=T0 + timedelta(days=10 * day)),
                        timeout=60)
        memories = list(source.store.records.iter_memories(ns))
        tea = next(m for m in memories if "tea" in m.text)
        source.pin(ns, tea.id)
        assert Status.SUPERSEDED in {m.status for m in memories}
        queries = ["Where does Sam live?", "What does Sam drink?", "Sam's job", "Paris"]
        now = T0 + timedelta(days=40)

        def searches(client: Client, namespace: str) -> list[list[tuple[str, str, float]]]:
            return [[(h.memory.id, h.memory.text, round(h.score, 9))
                     for h in client.search(namespace, q, k=5, now=now, touch=False,
                                            include_inactive=True)] for q in queries]

        before = searches(source, ns)
        assert before[0] and any("Berlin" in t for _, t, _ in before[0])
        profile = [m.model_dump(exclude={"namespace"}) for m in source.profile(ns, now)]
        records = comparable(source.store, ns)
        audit = audit_of(source.store, ns)
        episodes = [e.model_dump(exclude={"namespace"})
                    for e in source.store.episodes.iter_episodes(ns)]

        out = tmp_path / "export.jsonl"
        result = run(celery_stack.redis_url, "export", ns, "--out", str(out), "--with-episodes")
        assert result.exit_code == 0, result.output
        assert run(celery_stack.redis_url, "erase", ns, "--all", "--yes").exit_code == 0
        assert not list(source.store.records.iter_memories(ns)), "erased at the source"

        result = run(redis_url, "import", str(out), "--namespace", "moved", "--json")
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["added"] == len(records) and report["audit"] == len(audit)
        assert report["source_namespace"] == ns and report["episodes"] == len(episodes)

        assert comparable(target.store, "moved") == records
        assert audit_of(target.store, "moved") == audit
        assert [e.model_dump(exclude={"namespace"})
                for e in target.store.episodes.iter_episodes("moved")] == episodes
        assert searches(target, "moved") == before
        assert [m.model_dump(exclude={"namespace"}) for m in target.profile("moved", now)] \
            == profile
        assert target.store.records.namespaces() == ["moved"], "nothing written under the old name"

        again = run(redis_url, "import", str(out), "--namespace", "moved", "--json")
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout)["added"] == 0
        assert comparable(target.store, "moved") == records
        assert len(audit_of(target.store, "moved")) == len(audit)
    finally:
        source.close()
        target.close()


def big_export(path: Path, n: int) -> tuple[dict[str, dict[str, Any]], int]:
    """``n`` memories written in another Redis and exported to ``path``; their records
    and the export's audit length."""
    embedder = build_embedder(Settings())
    texts = [f"fact number {i} about topic {i % 37}" for i in range(n)]
    vectors = embedder.embed(texts)
    mems = [Memory(namespace="src", text=t, vector=[float(x) for x in v], last_used=T0,
                   created_at=T0, updated_at=T0, status=Status.ACTIVE, sources=[f"e{i}"])
            for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]
    with running_redis() as other:
        store = MemoryStore.from_url(other.url)
        for start in range(0, n, 500):
            store.writes.add_new("src", mems[start:start + 500], actor=Actor.USER, reason="load")
        path.write_text("\n".join(export_lines(store, "src")) + "\n")
        records, audit = comparable(store, "src"), len(audit_of(store, "src"))
        store.close()
    return records, audit


def test_kill_mid_import_then_resume_loses_and_duplicates_nothing(
        redis_url: str, tmp_path: Path) -> None:
    out = tmp_path / "big.jsonl"
    records, audit = big_export(out, 3000)
    total = len(out.read_text().splitlines())
    store = MemoryStore.from_url(redis_url)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore.cli", "--redis-url", redis_url, "import", str(out),
         "--namespace", "dst", "--chunk", "40", "--json"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    export_id = json.loads(out.read_text().split("\n", 1)[0])["export_id"]
    deadline = time.monotonic() + 120
    while store.imports.progress("dst", export_id) < 400:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stopped = store.imports.progress("dst", export_id)
    assert 0 < stopped < total, "killed midway"
    partial = comparable(store, "dst")
    assert 0 < len(partial) < len(records)
    assert all(partial[i] == records[i] for i in partial)

    refused = run(redis_url, "import", str(out), "--namespace", "dst")
    assert refused.exit_code == 2 and "--resume" in refused.output

    resumed = run(redis_url, "import", str(out), "--namespace", "dst", "--resume", "--json")
    assert resumed.exit_code == 0, resumed.output
    report = json.loads(resumed.stdout)
    assert report["resumed_after"] == stopped
    assert report["added"] + len(partial) == len(records)
    assert comparable(store, "dst") == records
    assert len(audit_of(store, "dst")) == audit, "no audit event lost or doubled"
    assert store.records.count_by_status("dst")["active"] == len(records)
    ids, _, _ = store.records.vectors_since("dst", 0, 0)
    assert sorted(ids) == sorted(records), "each memory once in the search order log"
    store.close()


def inserted(at: int, text: str) -> Any:
    """A change of an export's lines: ``text`` inserted as line ``at + 1``."""
    return lambda lines: [*lines[:at], text, *lines[at:]]


@pytest.mark.parametrize(("change", "line", "field"), [
    (inserted(2, '{"type":"memory","id":"x1","text":"hi","importance":7}'), 3, "importance"),
    (inserted(1, '{"type":"memory","text":"no times"}'), 2, "last_used"),
    (lambda lines: lines[:-1], None, "type"),
    (lambda lines: ['{"format":"other","version":1}', *lines[1:]], 1, "format"),
    (inserted(2, "{not json"), 3, "(line)"),
    (inserted(2, '{"type":"memory","namespace":"cli-test"}'), 3, "namespace"),
])
def test_bad_file_names_the_line_and_field_and_writes_nothing(
        redis_url: str, tmp_path: Path, change: Any, line: int | None, field: str) -> None:
    store = rich_namespace(redis_url)
    lines = list(export_lines(store, NS))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(change(lines)) + "\n")
    result = run(redis_url, "import", str(bad), "--namespace", "dst")
    assert result.exit_code == 2, result.output
    if line is not None:
        assert f"line {line}: {field}" in result.output
    else:
        assert "truncated" in result.output and field in result.output
    assert not store.records.has_namespace("dst")
    store.close()


def readme_block() -> str:
    """The shell block of the "Export and import" section of docs/operations.md."""
    text = section(doc("operations.md"), "## Export and import")
    (block,) = re.findall(r"```sh\n(.*?)```", text, re.S)
    return str(block)


def test_readme_export_import_commands_run_as_written(redis_url: str, tmp_path: Path) -> None:
    """The documented commands, run by bash with the real `memcore`, between two Redis
    servers (only the two URLs are swapped for the test servers)."""
    put(redis_url, memory("Alice lives in Lyon", ns="alice"), memory("Alice plays chess",
                                                                     ns="alice", pinned=True))
    script = readme_block()
    assert "--resume" in script and "--with-episodes" in script
    with running_redis() as other:
        script = script.replace("redis://localhost:6379/0", redis_url)
        script = script.replace("redis://localhost:6380/0", other.url)
        bindir = Path(sys.executable).parent
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
        env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = str(Path(__file__).parents[2])
        done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        source, target = MemoryStore.from_url(redis_url), MemoryStore.from_url(other.url)
        assert comparable(target, "alice") == comparable(source, "alice")
        assert len(comparable(target, "alice")) == 2
        assert audit_of(target, "alice") == audit_of(source, "alice")
        source.close()
        target.close()


def test_an_id_holding_another_memory_is_a_conflict_not_an_overwrite(
        redis_url: str, tmp_path: Path) -> None:
    store = rich_namespace(redis_url)
    lines = list(export_lines(store, NS))
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert run(redis_url, "import", str(path), "--namespace", "dst").exit_code == 0
    before = comparable(store, "dst")
    first = json.loads(lines[1])
    changed = [lines[0].replace(json.loads(lines[0])["export_id"], "another1"),
               json.dumps(first | {"text": "something else entirely", "content_hash": ""}),
               *lines[2:]]
    path.write_text("\n".join(changed) + "\n")
    result = run(redis_url, "import", str(path), "--namespace", "dst")
    assert result.exit_code == 2
    assert f"memory {first['id']}: already stored with another text" in result.output
    assert comparable(store, "dst") == before
    bad_out = run(redis_url, "export", NS, "--out", str(tmp_path / "no" / "such" / "x.jsonl"))
    assert bad_out.exit_code == 1 and "--out: cannot write" in bad_out.output
    store.close()


def test_as_of_export_holds_what_was_valid_then(redis_url: str, tmp_path: Path) -> None:
    """Paris was superseded by Berlin at T0+3d: an export as of T0+1d holds Paris (its
    record as it is now, superseded since) and not Berlin, and as_of reads of the import
    answer as the source's do."""
    store = rich_namespace(redis_url)
    then = T0 + timedelta(days=1)
    path = tmp_path / "then.jsonl"
    result = run(redis_url, "export", NS, "--out", str(path), "--as-of", then.isoformat())
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["as_of"] == then.isoformat()
    texts = {x["text"] for x in lines if x.get("type") == "memory"}
    assert "Sam lives in Paris" in texts and "Sam lives in Berlin" not in texts
    assert "Sam drives a red car" not in texts, "tombstoned by the user: not in as_of reads"
    assert all(datetime.fromisoformat(x["at"]) <= then for x in lines if x.get("type") == "audit")
    assert run(redis_url, "import", str(path), "--namespace", "then").exit_code == 0
    client = Client(redis_url)
    try:
        for query in ("Where does Sam live?", "tea"):
            source = [(h.memory.id, round(h.score, 9)) for h in
                      client.search(NS, query, k=5, as_of=then, now=then, touch=False)]
            copy = [(h.memory.id, round(h.score, 9)) for h in
                    client.search("then", query, k=5, as_of=then, now=then, touch=False)]
            assert copy == source and source, query
    finally:
        client.close()
    bad = run(redis_url, "export", NS, "--as-of", "last tuesday")
    assert bad.exit_code == 2 and "--as-of" in bad.output
    store.close()
