"""A bench stopped by ``kill`` (SIGTERM) stops its workers and Redis too: they had
outlived it, holding a core each, until found by hand."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

SCRIPT = """
import time
from memcore_bench.common import running_stack
with running_stack(None, ingest_concurrency=1) as stack:
    pids = [p.pid for p in stack.processes.values()]
    print(" ".join(map(str, pids)), flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie of an exited child counts as gone
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except FileNotFoundError:
        return False


def test_sigterm_stops_the_benchs_stack() -> None:
    bench = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert bench.stdout is not None
        pids = [int(p) for p in bench.stdout.readline().split()]
        assert pids and all(_alive(p) for p in pids)
        bench.send_signal(signal.SIGTERM)
        bench.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in pids if _alive(p)], "workers outlived the bench"
    finally:
        if bench.poll() is None:
            bench.kill()
