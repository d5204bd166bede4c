"""Shared fixtures: a real redis-server per test session, flushed around each test, and
the real Celery stack of :mod:`tests.celery_stack`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from memcore.devtools.redis_server import RedisServer, running_redis

# Registered here, once: a session fixture imported into each test module would be one
# fixture per module, so every such module started (and kept until the end) a stack.
from tests.celery_stack import celery_stack, stack_client  # noqa: F401 - fixtures


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the larger runs")
    parser.addoption("--models", action="store_true", default=False,
                     help="collect tests/models (a real llama.cpp server; `make test-models`)")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/models needs a real model and minutes per test: only with ``--models``."""
    if collection_path.name == "models" and collection_path.parent == Path(__file__).parent:
        return not config.getoption("--models")
    return None


@pytest.fixture(scope="session")
def long_mode(request: pytest.FixtureRequest) -> bool:
    """True when pytest was given ``--long``."""
    return bool(request.config.getoption("--long"))


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private redis-server for the whole test session."""
    with running_redis() as server:
        yield server


@pytest.fixture()
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """URL of the session's server, flushed before and after each test."""
    client = redis_server.client()
    client.flushall()
    yield redis_server.url
    client.flushall()
    client.close()


@pytest.fixture()
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """A client on the flushed test server."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()
