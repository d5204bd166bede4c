"""The HTTP API page's curl quick start (docs/http-api.md), run as written (bash, the real
memcore and curl) against real Redis and workers; only the Redis URL and the port are
swapped for free ones."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from memcore.local.redis_server import free_port
from memcore.local.stack import LocalStack
from tests.support.docs_text import doc

ROOT = Path(__file__).resolve().parents[2]


def quick_start() -> str:
    blocks = re.findall(r"```sh\n(.*?)```", doc("http-api.md"), re.S)
    assert len(blocks) == 1, "one shell block on the HTTP API page"
    return str(blocks[0])


def test_readme_curl_quick_start(celery_stack: LocalStack) -> None:
    script = quick_start()
    for needed in ("memcore serve", "memcore keys create", "/messages", "/search", "kill %1"):
        assert needed in script, needed
    assert celery_stack.redis_url
    port = free_port()
    script = script.replace("redis://localhost:6379/0", celery_stack.redis_url)
    script = script.replace("8080", str(port))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.Popen(["bash", "-e", "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the quick start hung:\n{out}\n{err}")
    finally:
        with contextlib.suppress(ProcessLookupError):  # the server, if kill %1 missed
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, f"{out}\n{err}"
    # curl's answers, among the server's access log lines on the same terminal.
    decoder = json.JSONDecoder()
    added = decoder.raw_decode(out, out.index('{"memory_ids"'))[0]
    found = decoder.raw_decode(out, out.index('{"results"'))[0]
    assert added["memory_ids"], added
    assert "Berlin" in found["results"][0]["memory"]["text"], found
    print(out)  # the transcript, for the report
