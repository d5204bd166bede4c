"""What the routes share: settings, the Client (made on first use), key and task stores."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from fastapi import Request

from memcore.api.auth import KeyCache
from memcore.api.rate_limits import KeyLimits
from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.store.api_keys import ApiKeyRepository
from memcore.store.task_log import TaskLog

T = TypeVar("T")


class ApiState:
    """One per app. The Client connects lazily, so the process starts (and answers
    ``/healthz``) while Redis is still coming up; ``/readyz`` says when it is usable."""

    def __init__(self, settings: Settings, client: Client | None = None, *,
                 insecure_dev: bool = False) -> None:
        self.settings = settings
        self.insecure_dev = insecure_dev
        self._client = client
        self._owns_client = client is None
        self._lock = threading.Lock()
        self.key_cache = KeyCache(self.keys)
        self.key_limits = KeyLimits(settings.api, lambda: self.client.store.rate_limits)
        self._limiter: anyio.CapacityLimiter | None = None  # made in the serving loop

    @property
    def client(self) -> Client:
        """The shared :class:`memcore.Client` (thread-safe: routes run in worker threads)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    client = Client(settings=self.settings)
                    # Many searches a second: one recall-bookkeeping write per batch.
                    client.defer_touches(self.settings.api.touch_batch_seconds)
                    self._client = client
        return self._client

    async def run_search(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in anyio's thread pool, at most ``api.search_threads`` at once
        in this process (more wait their turn). A pool of its own threads on a C queue
        was measured against this and did not pay (notes/api_machinery.md)."""
        if self._limiter is None:  # made in the event loop it serves
            self._limiter = anyio.CapacityLimiter(self.settings.api.search_threads)
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    def keys(self) -> ApiKeyRepository:
        """The API key repository on the data Redis."""
        return self.client.store.api_keys

    def tasks(self) -> TaskLog:
        """Task ownership per namespace."""
        return self.client.store.task_log

    def close(self) -> None:
        """Release the Client if this state made it."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None


def api_state(request: Request) -> ApiState:
    """The app's :class:`ApiState`."""
    state: ApiState = request.app.state.memcore
    return state


async def current_state(request: Request) -> ApiState:
    """FastAPI dependency: the app's :class:`ApiState` (async, so FastAPI does not
    send it to a worker thread: a thread hop costs more than the lookup)."""
    return api_state(request)
