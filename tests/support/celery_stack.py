"""A real Redis plus real Celery worker subprocesses, shared by the end-to-end tests.

The broker's Redis is never flushed while workers run (kombu keeps its queue
bindings there); tests isolate themselves by namespace instead.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator

import pytest

from memcore.client.client import Client
from memcore.local.redis_server import free_port, start_redis
from memcore.local.stack import LocalStack

HOOK_SETTINGS = {"MEMCORE_HOOKS__BACKOFF_SECONDS": "0.25",
                 "MEMCORE_HOOKS__BACKOFF_MAX_SECONDS": "1",
                 "MEMCORE_HOOKS__MAX_ATTEMPTS": "8",
                 "MEMCORE_HOOKS__TIMEOUT_SECONDS": "3"}
"""The stack's webhook settings (tests/hooks/test_hooks_delivery.py times its outage by them)."""


@pytest.fixture(scope="session")
def celery_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """Redis and one ingest, one consolidate and one hooks worker for the whole session.

    The workers serve their Prometheus metrics as in production (prefork children summed
    through one multiprocess directory) on ``stack.extra_env["MEMCORE_METRICS_PORT"]``.
    """
    server = start_redis()
    env = {"MEMCORE_METRICS_PORT": str(free_port()),
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path_factory.mktemp("prometheus")),
           # Webhook retries in a test's time: 0.25 s doubling to 1 s, 8 attempts (~6 s).
           **HOOK_SETTINGS}
    stack = LocalStack(server.url, ingest_concurrency=2, consolidate_concurrency=2,
                       log_dir=tmp_path_factory.mktemp("celery-logs"), env=env)
    try:
        stack.start()
        stack.wait_ready(timeout=90)
        yield stack
    finally:
        stack.stop()
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)


def fresh_ns(prefix: str = "t") -> str:
    """A namespace no other test uses (the stack's Redis is shared by the session)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture()
def stack_client(celery_stack: LocalStack) -> Iterator[Client]:
    """A Client on the shared stack's Redis and broker."""
    client = Client(celery_stack.redis_url)
    yield client
    client.close()
