"""schemathesis against the live OpenAPI schema (real server, Redis and Celery workers):
no 5xx, and every status code, content type, header and body matches the schema.

Bounded to ~45 s by default; ``pytest --long`` runs many more examples."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from memcore.local.redis_server import start_redis
from memcore.local.stack import LocalStack
from tests.support.api_helpers import serve

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_headers_conformance,response_schema_conformance")


def test_schemathesis_finds_nothing(long_mode: bool, tmp_path: Path) -> None:
    # Its own Redis and workers: the fuzzer enqueues hundreds of tasks, which must not
    # queue up in front of other tests' work on the shared stack.
    server = start_redis()
    stack = LocalStack(server.url, ingest_concurrency=1, consolidate_concurrency=1)
    gen = None
    try:
        stack.start()
        stack.wait_ready(timeout=120)
        gen = serve(server.url, api={"wait_timeout_seconds": 10})
        api = next(gen)
        key = api.key("*", role="admin", name="schemathesis")
        examples, budget = ("60", "600") if long_mode else ("8", "45")
        done = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "schemathesis"), "run", f"{api.url}/openapi.json",
             "-H", f"Authorization: Bearer {key}", "--checks", CHECKS, "-n", examples,
             "--max-time", budget, "--seed", "20261130", "--request-timeout", "30",
             "--report-dir", str(tmp_path)],
            cwd=tmp_path,  # schemathesis keeps a cache in its working directory
            capture_output=True, text=True, timeout=int(budget) + 120, check=False)
    finally:
        if gen is not None:
            gen.close()
        stack.stop()
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)
    out = done.stdout
    summary = out[out.rfind("SUMMARY"):] if "SUMMARY" in out else out[-3000:]
    assert done.returncode == 0, out[-12000:] + done.stderr[-2000:]
    tested = re.search(r"Tested:\s+(\d+)", summary)
    cases = re.search(r"(\d+) generated", summary)
    assert tested and int(tested.group(1)) >= 20, summary
    assert cases and int(cases.group(1)) > 100, summary
    print(summary)
