"""`bench profile --models openai` runs the stack against an OpenAI-compatible endpoint.

The endpoint is a small local HTTP server speaking /v1/chat/completions: it answers each
task from the request itself (every source turn becomes one explicit fact; ADD; no
merge), so the test checks the plumbing (workers use the endpoint, the bench judges
what they stored), not a model's quality.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from memcore_bench.common import task_timeout
from memcore_bench.profile import run_profile


def answer(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The task a request asks for and a well-formed answer to it."""
    if "turns" in payload:
        return "extract", {"facts": [
            {"turn": t["id"], "text": f"{t['speaker']} said: {t['text']}", "kind": "knowledge",
             "importance": 5, "explicit": True}
            for t in payload["turns"] if t.get("source")]}
    if "clusters" in payload:
        return "merge", {"clusters": [
            {"cluster": c["id"], "merged_text": None,
             "verdicts": ["distinct"] * len(c.get("pairs", []))}
            for c in payload["clusters"]]}
    if "groups" in payload:
        return "summarize", {"summaries": [{"group": g["id"], "summary": g["texts"][0]}
                                           for g in payload["groups"]]}
    return "decide", {"decisions": [{"fact": f["id"], "op": "ADD"}
                                    for f in payload.get("facts", [])]}


@pytest.fixture()
def endpoint() -> Iterator[tuple[str, Counter[str]]]:
    seen: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            messages = body["messages"]
            payload = json.loads(messages[-1]["content"])
            task, content = answer(payload)
            seen[task] += 1
            if task == "decide":
                seen["decided_facts"] += len(payload["facts"])
            reply = json.dumps({
                "id": "x", "object": "chat.completion", "created": 0, "model": "local",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": json.dumps(content)}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.encode())))
            self.end_headers()
            self.wfile.write(reply.encode())

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_quick_run_against_an_openai_compatible_endpoint(
        tmp_path: Path, redis_url: str, endpoint: tuple[str, Counter[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, seen = endpoint
    monkeypatch.setenv("MEMCORE_OPENAI_API_KEY", "local-key")  # workers inherit the environment
    monkeypatch.setenv("MEMCORE_OPENAI_BASE_URL", url)
    out = tmp_path / "profile-openai.json"
    result = run_profile(models="openai", quick=True, out=out, redis_url=redis_url)
    assert result["models"] == "openai" and result["scenarios"] == 2
    assert seen["extract"] > 0, "the workers extracted through the endpoint"
    texts = [j["text"] for p in result["per_scenario"].values() for j in p["profile"]]
    assert texts and all(" said: " in t for t in texts)  # the endpoint's facts, judged
    assert json.loads(out.read_text())["per_scenario"]
    # The rules shadowed every decision the endpoint made (it always answers ADD).
    agree = result["agreement"]
    assert agree["compared"] == seen["decided_facts"] > 0
    assert agree["agree"] == sum(n for k, n in agree["matrix"].items() if k == "ADD->ADD")
    assert sum(agree["matrix"].values()) == agree["compared"]


def test_a_bench_waits_for_a_task_as_long_as_its_model_calls_may_take(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A small local model on a shared CPU took > 600 s for one extraction call: the
    # bench's wait must follow MEMCORE_MODEL_TIMEOUT, not a fixed 600 s.
    monkeypatch.setenv("MEMCORE_MODEL_TIMEOUT", "1800")
    assert task_timeout("offline", 600.0) == 600.0  # the rules: no model call
    assert task_timeout("openai", 600.0) == 4 * 1800.0  # extraction + decision, each repaired
    monkeypatch.setenv("MEMCORE_MODEL_TIMEOUT", "30")
    assert task_timeout("openai", 900.0) == 900.0  # never below the floor
