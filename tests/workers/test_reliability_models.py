"""Model failures through the real write path: timeouts, 429 storms, 500s, malformed JSON,
hallucinated ids, empty and very slow answers against a local OpenAI-compatible server.

Every failure ends in retries with backoff, then the safe default; what is stored is
never corrupted and the audit log says what happened.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memcore.adapters import build_models
from memcore.client.client import to_episodes
from memcore.core.config import Settings
from memcore.core.models import AuditAction
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from tests.support.test_reliability_common import T0

Answer = tuple[int, str, float]  # HTTP status, body, delay in seconds


def completion(content: str) -> str:
    return json.dumps({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def good_answer(body: dict[str, Any]) -> str:
    """A correct answer to any of memcore's prompts (echo facts, ADD, join clusters)."""
    data = json.loads(body["messages"][-1]["content"])
    if "turns" in data:
        return json.dumps({"facts": [{"turn": t["id"], "text": t["text"], "kind": "knowledge",
                                      "importance": 6, "explicit": True}
                                     for t in data["turns"] if t["source"]]})
    if "facts" in data:
        return json.dumps({"decisions": [{"fact": f["id"], "op": "ADD", "target": None}
                                         for f in data["facts"]]})
    if "clusters" in data:
        return json.dumps({"clusters": [{"cluster": c["id"], "merged_text": c["texts"][0],
                                         "verdicts": ["same"] * len(c["pairs"])}
                                        for c in data["clusters"]]})
    return json.dumps({"summaries": [{"group": g["id"], "summary": " / ".join(g["texts"])}
                                     for g in data["groups"]]})


@contextlib.contextmanager
def model_server(answer: Callable[[dict[str, Any]], Answer]) -> Iterator[str]:
    """A local /v1/chat/completions server; ``answer`` decides each reply."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            status, payload, delay = answer(body)
            time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload.encode())))
                self.end_headers()
                self.wfile.write(payload.encode())
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextlib.contextmanager
def merge_server(fail_marker: str) -> Iterator[str]:
    """Answers every prompt correctly, except a 500 for any request mentioning the marker."""
    def answer(body: dict[str, Any]) -> Answer:
        if fail_marker in body["messages"][-1]["content"]:
            return 500, json.dumps({"error": {"message": "scripted failure"}}), 0.0
        return 200, completion(good_answer(body)), 0.0
    with model_server(answer) as url:
        yield url


SCENARIOS: dict[str, list[Answer | None]] = {
    # None = a correct answer; each list is replayed per request, then correct answers.
    "timeouts": [(200, "", 3.0)] * 3,
    "429 storm": [(429, '{"error": {"message": "slow down"}}', 0.0)] * 2,
    "500s": [(500, '{"error": {"message": "boom"}}', 0.0)] * 3,
    "malformed JSON": [(200, completion('{"facts": [ {"turn": 0,'), 0.0)] * 2,
    "hallucinated ids": [(200, completion(json.dumps({"facts": [
        {"turn": 41, "text": "invented fact about turn 41"}]})), 0.0)],
    "empty answer": [(200, completion(""), 0.0)] * 2,
    "very slow answer": [None],  # answered after 1.2 s, inside the 2 s timeout
}
STORED = {"429 storm", "very slow answer"}  # retries succeed: the facts land


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_model_failure_gives_safe_default_and_audit(redis_url: str, scenario: str) -> None:
    script: deque[Answer | None] = deque(SCENARIOS[scenario])
    calls = {"n": 0}

    def answer(body: dict[str, Any]) -> Answer:
        calls["n"] += 1
        step = script.popleft() if script else None
        if step is not None:
            return step
        delay = 1.2 if scenario == "very slow answer" else 0.0
        return 200, completion(good_answer(body)), delay

    with model_server(answer) as url:
        settings = Settings(redis_url=redis_url, openai_api_key="sk-test", openai_base_url=url,
                            model_timeout=2.0, model_max_retries=2)
        store = MemoryStore.from_url(redis_url)
        pipeline = IngestPipeline(store, build_models(settings), settings)
        ns = "models"
        chat = pipeline.models.extractor.chat  # type: ignore[attr-defined]
        chat.config = _fast(chat.config)
        # A memory already stored must come through every failure byte-identical.
        script_backup = list(script)
        script.clear()
        pipeline.ingest(ns, to_episodes(ns, [{"role": "user", "id": "old",
                                              "content": "Sam keeps bees in the garden"}],
                                        T0, None))
        before = {m.id: m.model_dump_json() for m in store.records.iter_memories(ns)}
        script.extend(script_backup)
        calls["n"] = 0
        t0 = time.monotonic()
        report = pipeline.ingest(ns, to_episodes(ns, [{"role": "user", "id": "new",
                                                       "content": "Sam moved to Porto"}],
                                                 T0, None))
        seconds = time.monotonic() - t0
        after = {m.id: m.model_dump_json() for m in store.records.iter_memories(ns)}
        errors = [e for e in store.audit.tail(ns, 100) if e.action is AuditAction.MODEL_ERROR]
        new_texts = ({m.text for m in store.records.iter_memories(ns)}
                     - {"Sam keeps bees in the garden"})
        print(f"\n[model: {scenario}] {calls['n']} requests in {seconds:.1f} s, "
              f"{report.facts} facts, stored {sorted(new_texts)}, "
              f"{len(errors)} MODEL_ERROR audit entries: {[e.reason[:60] for e in errors]}")
        assert {k: v for k, v in after.items() if k in before} == before, "nothing corrupted"
        assert store.episodes.get_episode(ns, "new") is not None, "the turn itself is kept"
        if scenario in STORED:
            assert new_texts == {"Sam moved to Porto"}
        else:
            assert new_texts == set(), "the safe default stores nothing invented"
            assert errors, "the audit log says what happened"
        if scenario != "very slow answer" and scenario != "hallucinated ids":
            assert calls["n"] >= 2, "retried"


def _fast(config: Any) -> Any:
    """Shorter backoff for the test (the retry count stays)."""
    import dataclasses

    return dataclasses.replace(config, base_delay=0.05, max_delay=0.1)
