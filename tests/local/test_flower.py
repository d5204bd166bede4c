"""Flower against the test Redis and real workers: its HTTP API and Prometheus metrics."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from datetime import UTC, datetime

from memcore.client.client import Client
from memcore.local.redis_server import free_port
from memcore.local.stack import LocalStack

AUTH = "admin:s3cret"


def get(url: str, auth: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url)
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_flower_sees_memcore_tasks(celery_stack: LocalStack) -> None:
    port = free_port()
    # Flower's own metrics live in the default registry: no multiprocess directory for it.
    env = {k: v for k, v in celery_stack.env.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env["FLOWER_BASIC_AUTH"] = AUTH
    flower = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.app", "flower", f"--port={port}",
         "--address=127.0.0.1"], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    client = Client(celery_stack.redis_url)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if get(base + "/healthcheck")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        ns = f"flower-{uuid.uuid4().hex[:8]}"
        # Flower answers its healthcheck before its event consumer has subscribed (seconds
        # later on a loaded machine): events sent before that are never seen. Send probe
        # turns until Flower has seen one, then the tasks under test.
        deadline = time.monotonic() + 90
        seen = False
        while not seen and time.monotonic() < deadline:
            probe = client.add(ns, [{"role": "user", "content": "I like flowers."}],
                               timestamp=datetime(2026, 1, 1, tzinfo=UTC))
            client.wait(probe, timeout=60)
            time.sleep(0.5)
            status, body = get(base + "/api/tasks?taskname=memcore.ingest", AUTH)
            seen = status == 200 and probe[0] in json.loads(body)
        assert seen, "Flower never saw a task event"
        ids = client.add(ns, [{"role": "user", "content": f"I like flowers number {i}."}
                              for i in range(3)], timestamp=datetime(2026, 1, 1, tzinfo=UTC))
        ids += client.add(ns, [{"role": "user", "content": "I grow tulips."}],
                          timestamp=datetime(2026, 1, 2, tzinfo=UTC))
        client.wait(ids, timeout=60)

        assert get(base + "/api/workers")[0] == 401, "the API is behind basic auth"
        tasks: dict[str, dict[str, object]] = {}
        workers: dict[str, object] = {}
        deadline = time.monotonic() + 30
        # Flower gets each task's events a moment after the result is stored: wait for
        # every task's success event, not only for the task to be listed.
        while time.monotonic() < deadline and not (
                set(ids) <= set(tasks) and workers
                and all(tasks[i].get("state") == "SUCCESS" for i in ids)):
            status, body = get(base + "/api/tasks?taskname=memcore.ingest", AUTH)
            assert status == 200
            tasks = json.loads(body)
            status, body = get(base + "/api/workers?refresh=1", AUTH)
            workers = json.loads(body) if status == 200 else {}
            time.sleep(0.5)
        assert set(ids) <= set(tasks)
        assert all(tasks[i]["state"] == "SUCCESS" for i in ids)
        assert any(name.startswith("ingest@") for name in workers)
        status, body = get(base + "/metrics")  # not behind the auth: documented
        assert status == 200
        assert b'flower_events_total{task="memcore.ingest"' in body
    finally:
        client.close()
        os.killpg(flower.pid, 15)
        flower.wait(timeout=20)
