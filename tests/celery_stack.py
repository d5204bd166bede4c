"""A real Redis plus real Celery worker subprocesses, shared by the end-to-end tests.

The broker's Redis is never flushed while workers run (kombu keeps its queue
bindings there); tests isolate themselves by namespace instead.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from memcore.devtools.redis_server import start_redis
from memcore.devtools.stack import LocalStack


@pytest.fixture(scope="session")
def celery_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """Redis and one ingest plus one consolidate worker for the whole session."""
    server = start_redis()
    stack = LocalStack(server.url, ingest_concurrency=2, consolidate_concurrency=2,
                       log_dir=tmp_path_factory.mktemp("celery-logs"))
    try:
        stack.start()
        stack.wait_ready(timeout=90)
        yield stack
    finally:
        stack.stop()
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)
