"""The FastAPI application factory."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.middleware.body_limit import MAX_BODY_SIZE_SCOPE_KEY
from starlette.types import Receive, Scope, Send

import memcore
from memcore.api import errors
from memcore.api.auth import AuthMiddleware
from memcore.api.fastpath import SearchFastPath, SearchShortcut
from memcore.api.metrics import ApiMetrics, MetricsMiddleware
from memcore.api.routes import (
    context,
    health,
    hooks,
    memories,
    messages,
    namespaces,
    portability,
)
from memcore.api.state import ApiState
from memcore.api.ui import routes as ui
from memcore.client.client import Client
from memcore.core.config import Settings, get_settings
from memcore.observability import tracing

log = logging.getLogger(__name__)

INSECURE_BANNER = ("memcore API running with --insecure-dev: NO AUTHENTICATION, every "
                   "caller is admin over every namespace. Never expose this server.")

DESCRIPTION = """Long-term memory for LLM agents over HTTP.

Every `/v1` request needs `Authorization: Bearer <key>` (create keys with
`memcore keys create`). A key has a role (read < write < admin) and namespace scopes
(globs such as `acme-*`): a missing or unknown key is a 401, a namespace outside the
scopes or a role too low a 403, and neither says whether the namespace exists. Errors are
`{"error": {"code", "message", "field"?}}`; unknown body fields are rejected by name."""


class MemcoreAPI(FastAPI):
    """FastAPI, with searches handed straight to the search's shortcut.

    ``FastAPI.__call__`` asks, on every request, whether OpenTelemetry is configured
    (its native telemetry): under ``bench api`` that question cost about 4% of a server
    process's interpreter time per search. For ``.../search`` it is asked at most once
    a second here (unless ``api.fast_path`` is off: then this is FastAPI's own call);
    while telemetry is off the request goes to
    :class:`~memcore.api.fastpath.SearchShortcut` (set by :func:`create_app`), which
    answers a successful search itself and hands everything else to the same middleware
    stack ``Starlette.__call__`` would call."""

    _memcore_otel_at = float("-inf")
    _memcore_otel_on = True
    memcore_shortcut: SearchShortcut | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (self.memcore_shortcut is not None and scope["type"] == "http"
                and self.middleware_stack is not None and not self.root_path
                and scope["path"].endswith("/search")
                and not self._otel_enabled()):
            scope["app"] = self
            if not scope.get("root_path") \
                    and MAX_BODY_SIZE_SCOPE_KEY not in scope and self.max_body_size is None:
                await self.memcore_shortcut(scope, receive, send, self.middleware_stack)
            else:
                await self.middleware_stack(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    def _otel_enabled(self) -> bool:
        """Whether FastAPI's native telemetry is on (asked at most once a second)."""
        now = time.monotonic()
        if now - self._memcore_otel_at > 1.0:
            native = getattr(self, "_native_telemetry", None)  # absent: no such feature
            self._memcore_otel_on = native is not None and bool(native.enabled())
            self._memcore_otel_at = now
        return self._memcore_otel_on


def create_app(settings: Settings | None = None, *, client: Client | None = None,
               insecure_dev: bool = False) -> MemcoreAPI:
    """Build the app. ``client`` (optional) is shared instead of making one; with
    ``insecure_dev`` every request is treated as an admin over every namespace."""
    settings = settings or (client.settings if client is not None else get_settings())
    tracing.setup_tracing(settings, "memcore-api")  # off unless MEMCORE_OTEL_ENDPOINT
    state = ApiState(settings, client, insecure_dev=insecure_dev)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        # Routes block on Redis and the result backend: give them enough threads.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.api.threads
        if insecure_dev:
            log.warning(INSECURE_BANNER)
        try:
            yield
        finally:
            state.close()

    app = MemcoreAPI(title="memcore", version=memcore.__version__, description=DESCRIPTION,
                  lifespan=lifespan)
    app.state.memcore = state
    app.state.api_metrics = ApiMetrics()
    errors.install(app)
    for module in (health, messages, memories, namespaces, portability, context, hooks):
        app.include_router(module.router)
    ui.install(app)
    # Added last = outermost: metrics see every answer, including the middleware's own.
    routes = [r for m in (messages, memories, namespaces, portability, context, hooks)
              for r in m.router.routes]
    if settings.api.fast_path:
        # Inside authentication: successful searches are answered without the router.
        app.add_middleware(SearchFastPath, state=state)
    app.add_middleware(AuthMiddleware, routes=routes, keys=state.key_cache,
                       insecure_dev=insecure_dev, max_body_bytes=settings.api.max_body_bytes,
                       limits=state.key_limits)
    app.add_middleware(MetricsMiddleware, metrics=app.state.api_metrics)
    tracing.instrument_fastapi(app)  # server spans (searches the shortcut answers have none)
    if not settings.api.fast_path:  # FastAPI's own call and routes only
        return app
    # Instances of their own, on the same key cache and counters as the stack's.
    auth = AuthMiddleware(app.router, routes=routes, keys=state.key_cache,
                          insecure_dev=insecure_dev, max_body_bytes=settings.api.max_body_bytes,
                          limits=state.key_limits)
    app.memcore_shortcut = SearchShortcut(
        state=state, auth=auth, metrics=MetricsMiddleware(app.router,
                                                          metrics=app.state.api_metrics))
    return app
