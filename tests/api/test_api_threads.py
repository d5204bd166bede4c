"""The search threads of a server process (memcore.api.threads): results and errors
reach the caller, at most ``size`` calls run at once, a call whose caller gave up before
it started is not run, and a closed pool starts again on its next call."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from memcore.api.threads import SearchThreads
from tests.support.api_helpers import serve
from tests.support.cli_helpers import memory, put


def test_results_errors_and_at_most_size_at_once() -> None:
    pool = SearchThreads(2)
    lock = threading.Lock()
    running = 0
    peak = 0

    def work(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        if i == 3:
            raise ValueError("three")
        return i * i

    async def main() -> list[int | BaseException]:
        return await asyncio.gather(*(pool.run(work, i) for i in range(8)),
                                    return_exceptions=True)

    try:
        out = asyncio.run(main())
    finally:
        pool.close()
    assert [x for i, x in enumerate(out) if i != 3] == [i * i for i in range(8) if i != 3]
    assert isinstance(out[3], ValueError) and str(out[3]) == "three"
    assert peak == 2


def test_a_call_given_up_before_it_started_is_not_run() -> None:
    pool = SearchThreads(1)
    release = threading.Event()
    ran: list[str] = []

    def block() -> None:
        release.wait(5)
        ran.append("block")

    async def main() -> None:
        first = asyncio.ensure_future(pool.run(block))
        await asyncio.sleep(0.05)  # the one thread is busy with ``block``
        second = asyncio.ensure_future(pool.run(ran.append, "second"))
        await asyncio.sleep(0.01)
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        release.set()
        await first
        assert await pool.run(ran.append, "third") is None

    try:
        asyncio.run(main())
    finally:
        pool.close()
    assert ran == ["block", "third"]


def test_closed_pool_runs_again_and_size_is_checked() -> None:
    pool = SearchThreads(1)
    assert asyncio.run(pool.run(sum, [1, 2])) == 3
    threads = list(pool._threads)
    pool.close()
    assert threads and not any(t.is_alive() for t in threads)
    assert asyncio.run(pool.run(sum, [3, 4])) == 7
    pool.close()
    with pytest.raises(ValueError, match="size"):
        SearchThreads(0)


@pytest.mark.parametrize("pool", ["fixed", "anyio"])
def test_search_pool_setting_picks_where_searches_run(redis_url: str, pool: str) -> None:
    """``api.search_pool``: searches answered alike from this pool or from anyio's."""
    put(redis_url, memory("user likes green tea", ns="pool-1"))
    gen = serve(redis_url, api={"search_pool": pool})
    api = next(gen)
    try:
        key = api.key("pool-*", role="read")
        for _ in range(3):  # a new key (the stack), then a cached one (the shortcut)
            reply = api.call("POST", "/v1/namespaces/pool-1/search", key, json={"query": "tea"})
            assert reply.status_code == 200, reply.text
            assert reply.json()["results"][0]["memory"]["text"] == "user likes green tea"
        state = api.server.server.config.app.state.memcore
        assert bool(state._search_threads._threads) == (pool == "fixed")
    finally:
        gen.close()
