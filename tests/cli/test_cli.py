"""The memcore CLI against a real Redis: help, JSON output, exit codes, erase, plot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.core.models import Kind, Status
from memcore.store import MemoryStore
from tests.support.cli_helpers import NS, T0, memory, put, run, run_json

COMMANDS = ["ingest", "search", "context", "profile", "show", "history", "stats", "versions",
            "consolidate", "rollback", "pin", "unpin", "restore", "erase", "review", "up",
            "demo", "plot", "bench", "bench scale", "serve", "keys", "keys create",
            "keys list", "keys revoke", "models", "models fetch"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str) -> None:
    result = run(None, *command.split(), "--help")
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_help_paragraphs_are_not_broken_at_the_docstrings_line_ends() -> None:
    """typer 0.29 kept each docstring line break after the first paragraph, so at any
    terminal width `--help` showed ragged half-lines ("...; turns" / "without a ...")."""
    wide = subprocess.run([sys.executable, "-m", "memcore.cli", "ingest", "--help"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "COLUMNS": "250"})
    assert "turns without a timestamp get the current time, turns without an id one derived" \
        in wide.stdout, wide.stdout


def test_main_exists_and_help_runs_as_a_process() -> None:
    from memcore.cli.app import main

    assert callable(main)
    done = subprocess.run([sys.executable, "-m", "memcore.cli", "--help"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and "review" in done.stdout


def test_no_redis_configured_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_REDIS_URL", raising=False)
    result = run(None, "stats", NS)
    assert result.exit_code == 3
    assert "MEMCORE_REDIS_URL" in result.output


def test_unreachable_redis_exits_3() -> None:
    result = run("redis://127.0.0.1:1/0", "profile", NS)
    assert result.exit_code == 3
    assert "cannot use Redis" in result.output


def test_usage_errors_exit_2(redis_url: str) -> None:
    assert run(redis_url, "search", NS).exit_code == 2  # missing QUERY
    assert run(redis_url, "stats", "bad:name").exit_code == 2  # namespace alphabet
    assert run(redis_url, "profile", NS, "--now", "yesterday").exit_code == 2
    both = run(redis_url, "erase", NS, "--memory", "a", "--all", "--yes")
    assert both.exit_code == 2 and "exactly one" in both.output


def test_read_commands_json(redis_url: str) -> None:
    tea, paris, _ = put(redis_url,
                        memory("Sam prefers green tea over coffee", kind=Kind.PREFERENCE),
                        memory("Sam lives in Paris"),
                        memory("Sam maybe likes opera", status=Status.CANDIDATE))
    hits = run_json(redis_url, "search", NS, "what does Sam drink, tea?", "-k", "2")
    assert hits and hits[0]["id"] == tea.id and "vector" not in hits[0]
    assert {"similarity", "score"} <= set(hits[0])

    profile = run_json(redis_url, "profile", NS, "--now", T0.isoformat())
    assert {m["id"] for m in profile} == {tea.id, paris.id}  # candidates are not in it

    shown = run_json(redis_url, "show", NS, paris.id)
    assert shown["text"] == "Sam lives in Paris" and shown["status"] == "active"

    history = run_json(redis_url, "history", NS, paris.id)
    assert [e["action"] for e in history] == ["ADD"]

    stats = run_json(redis_url, "stats", NS)
    assert stats["status"]["active"] == 2 and stats["status"]["candidate"] == 1
    assert stats["version"] == 0

    versions = run_json(redis_url, "versions", NS)
    assert versions["current"] == 0
    assert [(v["version"], v["memories"], v["current"]) for v in versions["versions"]] == [
        (0, 3, True)]

    # The tables render too.
    for args in (("search", NS, "tea"), ("profile", NS), ("show", NS, tea.id),
                 ("history", NS, tea.id), ("stats", NS), ("versions", NS)):
        result = run(redis_url, *args)
        assert result.exit_code == 0, (args, result.output)


def test_tables_show_brackets_in_memory_texts_as_written(redis_url: str) -> None:
    # Rich read "[redacted: pin]" as markup and dropped it ("Sam's PIN is , ...").
    (pin,) = put(redis_url, memory("Sam's bank PIN is [redacted: pin], [b]not[/b] shared"))
    for args in (("profile", NS, "--now", T0.isoformat()), ("search", NS, "bank PIN"),
                 ("show", NS, pin.id)):
        result = run(redis_url, *args)
        assert result.exit_code == 0, result.output
        assert "[redacted:" in result.output and "[b]not[/b]" in result.output, result.output


def test_not_found_exits_1(redis_url: str) -> None:
    put(redis_url, memory("Sam lives in Paris"))
    assert run(redis_url, "show", NS, "nope").exit_code == 1
    assert run(redis_url, "history", NS, "nope").exit_code == 1
    assert run(redis_url, "pin", NS, "nope").exit_code == 1
    assert run(redis_url, "stats", "no-such-ns").exit_code == 1
    missing = run(redis_url, "rollback", NS, "7")
    assert missing.exit_code == 1 and "not a committed version" in missing.output


def test_a_namespace_without_data_is_named_not_shown_empty(redis_url: str) -> None:
    """A typo'd namespace used to print an empty table and exit 0 (search, profile), or
    exit 0 after writing an ERASE audit event for it (erase --all)."""
    put(redis_url, memory("Sam lives in Paris"))
    for args in (("search", "no-such-ns", "Paris"), ("profile", "no-such-ns"),
                 ("erase", "no-such-ns", "--all", "--yes")):
        result = run(redis_url, *args)
        assert result.exit_code == 1, (args, result.output)
        assert "namespace 'no-such-ns' has no data" in result.output, result.output
    typo = run(redis_url, "search", NS.upper(), "Paris")
    assert typo.exit_code == 1 and f"did you mean {NS!r}" in typo.output, typo.output
    store = MemoryStore.from_url(redis_url)
    try:
        assert list(store.client.scan_iter(match="mc:{no-such-ns}*")) == []
    finally:
        store.client.close()
    assert run(redis_url, "search", NS, "Paris").exit_code == 0


def test_pin_unpin_restore(redis_url: str) -> None:
    (m,) = put(redis_url, memory("Sam lives in Paris"))
    assert run_json(redis_url, "pin", NS, m.id)["pinned"] is True
    assert run_json(redis_url, "unpin", NS, m.id)["pinned"] is False
    live = run(redis_url, "restore", NS, m.id)  # nothing to restore: said, not audited
    assert live.exit_code == 2 and "is active, not deleted" in live.output, live.output
    store = MemoryStore.from_url(redis_url)
    try:
        store.writes.tombstone(NS, m.id, T0)
    finally:
        store.client.close()
    restored = run_json(redis_url, "restore", NS, m.id)
    assert restored["status"] == "active"
    actions = [e["action"] for e in run_json(redis_url, "history", NS, m.id)]
    assert actions == ["ADD", "PIN", "UNPIN", "TOMBSTONE", "RESTORE"]


def test_rollback_to_a_committed_version(redis_url: str) -> None:
    (m,) = put(redis_url, memory("Sam lives in Paris"))
    store = MemoryStore.from_url(redis_url)
    view = store.snapshots.begin_pass(NS)
    v1 = store.snapshots.commit_pass(NS, view, view.memories, [], now=T0)
    view = store.snapshots.begin_pass(NS)
    v2 = store.snapshots.commit_pass(NS, view, [], [], now=T0)  # a pass that dropped everything
    assert run_json(redis_url, "stats", NS)["status"]["active"] == 0
    listed = run_json(redis_url, "versions", NS)
    assert listed["current"] == v2 and [v["version"] for v in listed["versions"]][-2:] == [v1, v2]
    assert run_json(redis_url, "rollback", NS, str(v1)) == {"namespace": NS, "from": v2, "to": v1}
    assert run_json(redis_url, "show", NS, m.id)["text"] == "Sam lives in Paris"
    store.client.close()


def test_erase_asks_for_confirmation(redis_url: str) -> None:
    (m,) = put(redis_url, memory("Sam lives in Paris"))
    declined = run(redis_url, "erase", NS, "--memory", m.id, input="n\n")
    assert declined.exit_code == 1 and "Erase memory" in declined.output
    assert run(redis_url, "show", NS, m.id).exit_code == 0  # still there

    accepted = run(redis_url, "erase", NS, "--memory", m.id, input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert run(redis_url, "show", NS, m.id).exit_code == 1


def test_erase_yes_episode_and_all(redis_url: str) -> None:
    a, b = put(redis_url, memory("Sam lives in Paris", sources=["ep1"]),
               memory("Sam works at Acme", sources=["ep2", "ep3"]))
    out = run_json(redis_url, "erase", NS, "--episode", "ep1", "--yes")
    assert out["removed"] >= 1
    assert run(redis_url, "show", NS, a.id).exit_code == 1
    assert run(redis_url, "show", NS, b.id).exit_code == 0
    assert run(redis_url, "erase", NS, "--memory", "nope", "--yes").exit_code == 1
    everything = run(redis_url, "erase", NS, "--all", "--yes")
    assert everything.exit_code == 0, everything.output
    assert run(redis_url, "show", NS, b.id).exit_code == 1


def test_plot_writes_pngs(redis_url: str, tmp_path: Path) -> None:
    put(redis_url, memory("Sam lives in Paris"), memory("Sam likes tea", days_ago=400))
    store = MemoryStore.from_url(redis_url)
    view = store.snapshots.begin_pass(NS)
    store.snapshots.commit_pass(NS, view, view.memories, [], now=T0)
    store.client.close()
    paths = run_json(redis_url, "plot", NS, "--out", str(tmp_path / "pics"),
                     "--now", T0.isoformat())
    assert [Path(p).name for p in paths] == ["retention.png", "scores.png", "versions.png"]
    for p in paths:
        assert Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_install(redis_url: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were missing
    result = run(redis_url, "plot", NS, "--out", str(tmp_path))
    assert result.exit_code == 1
    assert "memcore[plot]" in result.output


def test_bench_scale_quick_writes_its_outputs(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    result = run(None, "bench", "scale", "--quick", "--n", "3000", "--d", "32", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n"] == 3000
    assert out.is_file() and out.with_suffix(".md").is_file()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_up_runs_the_stack_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    import contextlib
    import os
    import signal
    import threading
    import time

    import psutil
    import redis

    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMCORE_") and k != "FLOWER_BASIC_AUTH"}
    api_port, flower_port = _free_port(), _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "memcore.cli", "up", "--flower-port",
                             str(flower_port), "--api-port", str(api_port),
                             "--log-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    lines: list[str] = []
    children: list[psutil.Process] = []
    url = ""
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("memcore is up"):
                break
        assert any(line.startswith("memcore is up") for line in lines), "".join(lines)
        url = next(line.split()[1] for line in lines if "(embedded" in line)
        assert redis.Redis.from_url(url).ping()  # the embedded server
        children = psutil.Process(proc.pid).children(recursive=True)
        names = " ".join(" ".join(c.cmdline()) for c in children)
        for part in ("-Q ingest", "-Q consolidate", " beat ", " flower ", " serve "):
            assert part in names, part
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{api_port}/readyz", timeout=10) as r:
            assert json.loads(r.read())["checks"] == {"redis": "ok", "broker": "ok",
                                                      "publish": "ok"}
        # Flower asks for the password `up` made and printed (docs/operations.md, Flower).
        printed = next(line for line in lines if "basic auth" in line)
        auth = printed.split("basic auth ", 1)[1].strip()
        assert auth.startswith("memcore:") and len(auth) > 16, printed
        flower = f"http://127.0.0.1:{flower_port}/"
        answers = _flower_answers(flower, auth)
        assert answers == (401, 200), answers
        # A second `up` on the same ports names the busy port, before starting anything.
        again = subprocess.run([sys.executable, "-m", "memcore.cli", "up", "--flower-port",
                                str(flower_port), "--api-port", "0"], env=env,
                               capture_output=True, text=True, timeout=60)
        assert again.returncode == 1, again.stdout + again.stderr
        assert f"port {flower_port} (Flower, --flower-port) already in use" in again.stderr, \
            again.stdout + again.stderr
        assert "exited" not in again.stdout + again.stderr
        proc.send_signal(signal.SIGINT)
        # Warm shutdown of four processes can take a while on a loaded 2-core machine.
        # Wait for the process itself, then read what it printed (a reader thread, so a
        # leftover process holding the pipe fails the assertions below, not the read).
        proc.wait(timeout=150)
        rest: list[str] = []
        reader = threading.Thread(target=lambda: rest.append(proc.stdout.read()),  # type: ignore[union-attr]
                                  daemon=True)
        reader.start()
        reader.join(timeout=20)
        out = "".join(lines) + "".join(rest)
        assert proc.returncode == 0, out
        assert "stopped" in out
        _gone, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, [c.cmdline() for c in alive]
        with pytest.raises(redis.ConnectionError):
            redis.Redis.from_url(url).ping()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for child in children:
            if child.is_running():
                child.kill()
        if url:
            with contextlib.suppress(redis.RedisError):
                redis.Redis.from_url(url).shutdown(nosave=True)


def _flower_answers(url: str, auth: str, wait: float = 60.0) -> tuple[int, int]:
    """(status without credentials, status with ``auth``) of Flower's page; Flower is not
    among what `up` waits for, so give it time to listen."""
    import time

    import httpx

    deadline = time.monotonic() + wait
    while True:
        try:
            bare = httpx.get(url, timeout=10).status_code
            user, password = auth.split(":", 1)
            return bare, httpx.get(url, auth=(user, password), timeout=10).status_code
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_up_names_a_busy_port_before_starting_anything() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "memcore.cli", "up", "--flower-port", "0",
                                 "--api-port", str(port)], capture_output=True, text=True,
                                timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"port {port} (the API, --api-port) already in use" in result.stderr, \
        result.stdout + result.stderr
    assert "Redis:" not in result.stdout, "nothing started"


def test_up_takes_the_llama_servers_thread_count() -> None:
    # --llm-threads reaches `up` (1 is faster on a busy CPU: notes/benchmarks.md); 0 is
    # refused before anything starts.
    helped = subprocess.run([sys.executable, "-m", "memcore.cli", "up", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "--llm-threads" in helped.stdout
    refused = subprocess.run([sys.executable, "-m", "memcore.cli", "up", "--llm",
                              "--llm-threads", "0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "llm-threads" in refused.stderr
