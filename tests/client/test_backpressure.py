"""Back-pressure: the ingest backlog has a limit per namespace and in all.

Seen before: 20 clients added 125 turns/s while the workers stored 57/s, the backlog
reached 11,755 tasks and every add still answered 202. Here the workers are stopped so
the backlog builds: adds past the limit are refused (HTTP 429 with Retry-After,
``memcore.Backpressure`` in Python, from the remote client too) while another namespace
is still accepted; the depth shows in ``/metrics`` and ``stats``; ``memcore ingest``
waits and retries instead of failing. Then a real worker starts: the backlog drains and
every accepted turn is stored, none lost.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import memcore
from memcore.client.backoff import patiently
from memcore.client.client import Client
from memcore.client.remote import RemoteClient
from memcore.store import MemoryStore
from tests.ingest.test_erase_fence import ingest_worker, stop
from tests.support.api_helpers import Api, serve
from tests.support.test_reliability_common import T0, cluster

LIMIT = 4
TIMEOUT = 120
REPO = Path(__file__).resolve().parents[2]


def turn(tag: str, i: int) -> dict[str, Any]:
    """One user turn with an id of its own and one fact riding on it."""
    return {"id": f"{tag}-{i}", "role": "user", "content": f"{tag} turn {i}",
            "timestamp": (T0 + timedelta(seconds=i)).isoformat(),
            "metadata": {"facts": [f"Sam's {tag} number {i} is {uuid.uuid4().hex[:8]}"]}}


def stored_turns(store: MemoryStore, ns: str) -> set[str]:
    return {e.id for e in store.episodes.iter_episodes(ns)}


def gauge(text: str, name: str, labels: str = "") -> float:
    """A sample's value in Prometheus text (``labels`` as written, e.g. queue="ingest")."""
    pattern = rf"^{name}{{{labels}}} (\S+)$" if labels else rf"^{name} (\S+)$"
    found = re.search(pattern, text, re.MULTILINE)
    assert found, f"{name}{{{labels}}} not in /metrics"
    return float(found.group(1))


# -- the store's count (fast: no workers) -------------------------------------------------

def test_the_backlog_counts_each_task_once_and_refuses_past_either_limit(redis_url: str
                                                                          ) -> None:
    store = MemoryStore.from_url(redis_url)
    try:
        args = {"namespace_limit": 3, "total_limit": 5, "stale_seconds": 3600}
        assert store.backlog.reserve("a", ["t1", "t2"], **args) is None
        # All or none: two more would make 4 > 3 in "a"; neither is counted.
        refused = store.backlog.reserve("a", ["t3", "t4"], **args)
        assert refused is not None and (refused.namespace, refused.total) == (2, 2)
        assert store.backlog.depth("a").namespace == 2
        assert store.backlog.reserve("a", ["t3"], **args) is None
        assert store.backlog.reserve("b", ["u1", "u2"], **args) is None
        refused = store.backlog.reserve("c", ["v1"], **args)  # 6 > 5 in all
        assert refused is not None and (refused.namespace, refused.total) == (0, 5)
        # A redelivered task releases itself twice: counted down once.
        store.backlog.release("a", ["t1"])
        store.backlog.release("a", ["t1"])
        depth = store.backlog.depth("a")
        assert (depth.namespace, depth.total) == (2, 4)
        assert store.backlog.reserve("c", ["v1"], **args) is None
        # An entry nobody finished (its broker lost the task) ages out.
        time.sleep(1.1)
        assert store.backlog.reserve("c", ["v2"], **{**args, "stale_seconds": 1}) is None
        assert store.backlog.depth("c").total == 1
        # Limits of 0: none.
        assert store.backlog.reserve("d", [f"w{i}" for i in range(50)], namespace_limit=0,
                                     total_limit=0, stale_seconds=3600) is None
    finally:
        store.close()


def test_patiently_waits_what_the_refusal_asks_and_gives_up_at_the_deadline() -> None:
    refusals = [memcore.Backpressure("full", retry_after=0.2)] * 2
    waits: list[float] = []

    def send() -> str:
        if refusals:
            raise refusals.pop()
        return "sent"

    assert patiently(send, give_up_after=10, sleep=waits.append) == "sent"
    assert waits == [pytest.approx(0.2), pytest.approx(0.3)]

    def never() -> str:
        raise memcore.Backpressure("full", retry_after=1.0)

    started = time.monotonic()
    with pytest.raises(memcore.Backpressure):
        patiently(never, give_up_after=2.0)
    assert time.monotonic() - started < 2.0


# -- end to end: real API, real worker, real Redis ---------------------------------------

def test_adds_past_the_limit_are_refused_until_workers_drain_the_backlog(tmp_path: Path
                                                                         ) -> None:
    ns, other = f"bp-{uuid.uuid4().hex[:8]}", f"bp-{uuid.uuid4().hex[:8]}"
    base = f"/v1/namespaces/{ns}"
    with cluster(tmp_path / "logs",
                 env={"MEMCORE_QUEUE_LIMIT_PER_NAMESPACE": str(LIMIT)}) as c:
        gen = serve(c.url)
        api: Api = next(gen)
        client = Client(c.url)
        try:
            writer = api.key(ns, other, role="write")
            accepted: list[str] = []
            for i in range(LIMIT):
                answer = api.call("POST", f"{base}/messages", writer,
                                  json={"messages": [turn("http", i)]})
                assert answer.status_code == 202, answer.text
                accepted += answer.json()["task_ids"]
            refused = api.call("POST", f"{base}/messages", writer,
                               json={"messages": [turn("http", LIMIT)]})
            assert refused.status_code == 429, refused.text
            assert refused.headers["Retry-After"] == "2"
            error = refused.json()["error"]
            assert error["code"] == "backpressure"
            assert "queue_limit_per_namespace 4" in error["message"], error
            # Python and the remote client say it the same way; nothing was accepted.
            with pytest.raises(memcore.Backpressure) as local:
                client.add(ns, [turn("python", 0)])
            assert local.value.retry_after == 2.0
            with RemoteClient(api.url, writer) as remote, \
                    pytest.raises(memcore.Backpressure) as far:
                remote.add(ns, [turn("remote", 0)])
            assert far.value.status == 429 and far.value.retry_after == 2.0
            # The limit is per namespace: another one is still accepted.
            elsewhere = api.call("POST", f"/v1/namespaces/{other}/messages", writer,
                                 json={"messages": [turn("other", 0)]})
            assert elsewhere.status_code == 202, elsewhere.text
            accepted_other = elsewhere.json()["task_ids"]
            # The depth, per queue, in /metrics and stats.
            scraped = api.http.get("/metrics").text
            assert gauge(scraped, "memcore_queue_lag", 'queue="ingest"') == LIMIT + 1
            assert gauge(scraped, "memcore_queue_lag", 'queue="consolidate"') == 0
            assert gauge(scraped, "memcore_ingest_backlog") == LIMIT + 1
            stats = api.call("GET", f"{base}/stats", writer).json()
            assert stats["backlog"] == {"namespace": LIMIT, "total": LIMIT + 1}
            assert stats["queues"] == {"ingest": LIMIT + 1, "consolidate": 0}
            assert client.stats(ns)["backlog"] == stats["backlog"]
            with ingest_worker(c, "drain"):
                client.wait(accepted + accepted_other, timeout=TIMEOUT)
                drained = client.stats(ns)
                late = api.call("POST", f"{base}/messages", writer,
                                json={"messages": [turn("http", LIMIT)], "wait": True})
            assert late.status_code == 200, late.text
            print(f"\n[backpressure, HTTP] limit {LIMIT}: {LIMIT} accepted, the next 429 "
                  f"(Retry-After {refused.headers['Retry-After']}); after the worker ran: "
                  f"backlog {drained['backlog']}, the refused turn accepted again")
            assert drained["backlog"] == {"namespace": 0, "total": 0}
            assert stored_turns(client.store, ns) == {f"http-{i}" for i in range(LIMIT + 1)}
            assert stored_turns(client.store, other) == {"other-0"}
        finally:
            client.close()
            stop(gen)


def test_cli_ingest_slows_down_under_the_limit_and_loses_nothing(tmp_path: Path) -> None:
    ns = f"bp-cli-{uuid.uuid4().hex[:8]}"
    sessions = 12
    file = tmp_path / "turns.jsonl"
    file.write_text("".join(json.dumps({**turn("cli", i), "session": i}) + "\n"
                            for i in range(sessions)))
    with cluster(tmp_path / "logs",
                 env={"MEMCORE_QUEUE_LIMIT_PER_NAMESPACE": str(LIMIT)}) as c:
        client = Client(c.url)
        cli = subprocess.Popen(
            [sys.executable, "-m", "memcore.cli", "--redis-url", c.url, "ingest", str(file),
             "-n", ns, "--no-wait", "--timeout", str(TIMEOUT), "--json"],
            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 60
            while client.store.backlog.depth(ns).namespace < LIMIT:
                assert time.monotonic() < deadline and cli.poll() is None, cli.poll()
                time.sleep(0.2)
            time.sleep(3)  # refused meanwhile: it waits instead of failing
            assert cli.poll() is None
            assert client.store.backlog.depth(ns).namespace == LIMIT
            with ingest_worker(c, "drain"):
                out, _ = cli.communicate(timeout=TIMEOUT)
                assert cli.returncode == 0, out
                deadline = time.monotonic() + TIMEOUT
                while client.store.backlog.depth(ns).namespace:
                    assert time.monotonic() < deadline
                    time.sleep(0.2)
            summary = json.loads(out[out.index("{"):])
            print(f"\n[backpressure, CLI] {sessions} batches with a limit of {LIMIT}: "
                  f"{out.count('backlog full')} waits, exit 0, {summary['turns']} turns; "
                  f"stored {len(stored_turns(client.store, ns))}")
            assert "backlog full, retrying" in out
            assert summary["turns"] == sessions and len(summary["tasks"]) == sessions
            assert stored_turns(client.store, ns) == {f"cli-{i}" for i in range(sessions)}
        finally:
            if cli.poll() is None:
                cli.kill()
                cli.wait()
            client.close()
