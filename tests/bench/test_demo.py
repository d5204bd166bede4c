"""`make demo` end to end: exits 0, shows every section, leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import psutil


def _children_of(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _demo_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env["COLUMNS"] = "120"
    return env


def test_demo_runs_the_pipeline_and_cleans_up() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "memcore_bench.demo"], env=_demo_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: set[int] = set()
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        seen |= {p.pid for p in _children_of(proc.pid)}
        time.sleep(0.2)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    for section in ("Redis: embedded (", "Profile of demo-sam", "Memories by status",
                    "Merged memories (4 merges)", "Superseded facts", "Audit tail"):
        assert section in out, section
    # Said twice in other words ("on the side" / "in my spare time"; a preference and a
    # request for the same thing): one memory each in the profile, not two.
    profile = out.split("Profile of demo-sam", 1)[1].split("Memories by status", 1)[0]
    assert profile.count("learning Rust") == 1, profile
    assert profile.count("code examples") == 1, profile
    # the profile says how many of the active facts it shows (the newcomer read "active
    # 13" beside 11 rows as facts gone missing)
    shown = re.search(r"(\d+) of (\d+) active facts", out)
    assert shown and int(shown.group(1)) <= int(shown.group(2)), out
    assert f"active {shown.group(2)}" in out, out
    assert "Sam lives in Paris." in out and "-> Sam lives in Berlin now." in out
    assert "hunter2" not in out, "a tool turn never becomes a fact"
    time.sleep(1.0)
    alive = [pid for pid in seen if psutil.pid_exists(pid)
             and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"left behind: {alive}"
    # The embedded server runs in its own session: find it by the directory of its socket.
    match = re.search(r"unix://(\S+)/redis\.sock", out)
    assert match, out
    servers = [p for p in psutil.process_iter(["name", "cmdline"])
               if "redis" in (p.info["name"] or "")
               and match.group(1) in " ".join(p.info["cmdline"] or [])]
    assert servers == [], "the embedded Redis is still running"


def test_demo_ctrl_c_stops_everything() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "memcore_bench.demo"], env=_demo_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(seen) < 3:
        seen |= {p.pid for p in _children_of(proc.pid)}
        time.sleep(0.1)
    assert seen, "the demo started no process"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    time.sleep(1.0)
    alive = [pid for pid in seen if psutil.pid_exists(pid)
             and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"left behind: {alive}"
