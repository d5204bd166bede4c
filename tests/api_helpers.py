"""A real uvicorn server (in a thread, on a free port) over a real Redis, and key helpers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import redis

from memcore.api.server import ServerThread
from memcore.core.config import Settings
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
