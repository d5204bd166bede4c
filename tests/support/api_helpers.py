"""A real uvicorn server (in a thread, on a free port) over a real Redis, and key helpers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from memcore.api.server import ServerThread
from memcore.core.config import Settings
from memcore.local.redis_server import free_port
from memcore.store.api_keys import ApiKeyRepository


@dataclass
class Api:
    """A running API: its base URL, the Redis behind it, and a way to mint keys."""

    url: str
    redis_url: str
    server: ServerThread
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = httpx.Client(base_url=self.url, timeout=60)

    def key(self, *scopes: str, role: str = "write", name: str = "") -> str:
        """A new key with ``scopes`` and ``role`` (plain text)."""
        client = redis.Redis.from_url(self.redis_url)
        try:
            return ApiKeyRepository(client).create(list(scopes), role, name)[1]
        finally:
            client.close()

    def call(self, method: str, path: str, key: str | None = None,
             headers: dict[str, str] | None = None, **kw: Any) -> httpx.Response:
        """One request, with ``Authorization: Bearer key`` when a key is given."""
        headers = dict(headers or {})
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return self.http.request(method, path, headers=headers, **kw)


def serve(redis_url: str, **settings: object) -> Iterator[Api]:
    """Run the API on ``redis_url`` until the generator is closed."""
    server = ServerThread(Settings(redis_url=redis_url, **settings))  # type: ignore[arg-type]
    server.start()
    api = Api(server.url, redis_url, server)
    try:
        yield api
    finally:
        api.http.close()
        server.stop()


@pytest.fixture()
def api(redis_url: str) -> Iterator[Api]:
    """The API on the per-test flushed Redis."""
    yield from serve(redis_url)


@contextmanager
def serve_process(redis_url: str, env: dict[str, str] | None = None, *,
                  workers: int = 1) -> Iterator[str]:
    """``memcore serve`` as a real process (``workers`` server processes behind one
    port) on ``redis_url`` with the environment ``env`` added; yields its base URL once
    ``/readyz`` answers 200, stops it afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore.cli", "serve", "--host", "127.0.0.1", "--port",
         str(port), "--workers", str(workers), "--log-level", "warning"],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]),
             "MEMCORE_REDIS_URL": redis_url, **(env or {})},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError("memcore serve exited: " + (
                    proc.stderr.read().decode(errors="replace") if proc.stderr else ""))
            try:
                if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "memcore serve did not become ready"
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
