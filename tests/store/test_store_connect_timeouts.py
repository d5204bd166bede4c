"""The store's Redis clients wait for a reply longer than redis-py's default 5 s.

redis-py >= 8 gives a client built from a URL a 5 s socket timeout. While a full pass at
10^6 memories swapped its records in (one script, 5+ s), the bench's client waiting for
the pass failed with "Timeout reading from socket". Real redis-server, real clients from
:func:`memcore.store.connect`.
"""

from __future__ import annotations

import time

import pytest
import redis

from memcore.store.connect import SOCKET_TIMEOUT, connect


def test_a_data_client_waits_for_a_reply_longer_than_redis_py_default(redis_url: str) -> None:
    assert SOCKET_TIMEOUT >= 60
    client = connect(redis_url)
    client.delete("empty")
    t0 = time.monotonic()
    # The reply comes after 7 s, past redis-py 8's default timeout of 5 s (which raised).
    assert client.blpop(["empty"], timeout=7) is None
    assert time.monotonic() - t0 > 6
    client.close()


def test_a_url_query_sets_another_timeout(redis_url: str) -> None:
    sep = "&" if "?" in redis_url else "?"
    client = connect(f"{redis_url}{sep}socket_timeout=0.5")
    with pytest.raises(redis.TimeoutError):
        client.blpop(["empty"], timeout=2)
    client.close()
