"""Shared fixtures: a real redis-server per test session, flushed around each test, an
in-process client on it, and the real Celery stack of :mod:`tests.support.celery_stack`.
Fixtures only one folder's tests use live in that folder's conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from memcore.client.client import Client
from memcore.local.redis_server import RedisServer, running_redis

# Registered here, once: a session fixture imported into each test module would be one
# fixture per module, so every such module started (and kept until the end) a stack.
from tests.support.celery_stack import celery_stack, stack_client  # noqa: F401 - fixtures


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the larger runs")
    parser.addoption("--models", action="store_true", default=False,
                     help="collect tests/models (a real llama.cpp server; `make test-models`)")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/models needs a real model and minutes per test: only with ``--models``."""
    if collection_path.name == "models" and collection_path.parent == Path(__file__).parent:
        return not config.getoption("--models")
    return None


# Tests that SIGKILL workers or Redis, restart them, or assert wall-clock bounds: under
# pytest-xdist (``make test`` runs ``pytest -n 2``) they form one unit of work, so they
# run one after another on one worker, never two at once; every other file is a unit of
# its own (its module fixtures start once). The serial unit is the longest: it goes first.
SERIAL_FILES = frozenset({
    "test_reliability_concurrent.py", "test_reliability_ingest_kill.py",
    "test_reliability_models.py", "test_reliability_redelivery.py",
    "test_reliability_redis_restart.py", "test_consolidation_distributed.py",
    "test_store_restart.py", "test_api_pool_deadlock.py", "test_record_bounds_repeats.py",
    "test_reliability_recovery.py", "test_chaos.py",
})


def _work_unit(nodeid: str) -> str:
    """The unit of work an xdist worker takes whole: ``serial`` or the test's file."""
    path = nodeid.split("::", 1)[0]
    return "serial" if Path(path).name in SERIAL_FILES else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Schedule by :func:`_work_unit` (xdist's ``loadgroup`` does not group under
    pytest 9: it renames ``item._nodeid``, which pytest 9 no longer reads)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _work_unit(nodeid)

    config.option.loadscopereorder = False  # units in collection order: the serial one first
    return ByUnit(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, the serial unit first (every worker sorts alike)."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: _work_unit(item.nodeid) != "serial")  # stable


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


@pytest.fixture()
def client(redis_url: str) -> Iterator[Client]:
    """An in-process client on the flushed test server (a module that needs one on the
    Celery stack defines its own)."""
    c = Client(redis_url)
    yield c
    c.close()
