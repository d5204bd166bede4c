"""Back-pressure under load: 20 HTTP clients adding as fast as they are let, one slow
worker. The ingest backlog never passes ``MEMCORE_QUEUE_LIMIT``, refused clients wait and
retry (``memcore.client.backoff.patiently``), and once the worker drains the backlog every
accepted turn is stored and no refused one is.

``pytest --long`` runs it for two minutes (the figures of the closing note); ``make test``
for 10 s. Run it alone: ``pytest -s --long tests/client/test_backpressure_load.py``.
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from pathlib import Path

from memcore.client.backoff import patiently
from memcore.client.client import Client
from memcore.client.errors import Backpressure
from memcore.client.remote import RemoteClient
from tests.client.test_backpressure import stored_turns, turn
from tests.ingest.test_erase_fence import ingest_worker, stop
from tests.support.api_helpers import Api, serve
from tests.support.test_reliability_common import cluster

CLIENTS = 20
LIMIT = 100


def test_twenty_clients_keep_the_backlog_under_the_limit(tmp_path: Path,
                                                        long_mode: bool) -> None:
    seconds = 120.0 if long_mode else 10.0
    tag = uuid.uuid4().hex[:6]
    names = [f"bpl-{tag}-{i}" for i in range(CLIENTS)]
    with cluster(tmp_path / "logs", env={"MEMCORE_QUEUE_LIMIT": str(LIMIT)}) as c:
        gen = serve(c.url)
        api: Api = next(gen)
        client = Client(c.url)
        key = api.key(f"bpl-{tag}-*", role="write")
        accepted: dict[str, list[str]] = {ns: [] for ns in names}
        refusals = [0] * CLIENTS
        errors: list[BaseException] = []
        depths: list[int] = []  # the backlog set, reservations being checked included
        queued: list[int] = []  # messages waiting in the broker's ingest queue
        stop_at = float("inf")  # set once the worker is up
        try:
            with ingest_worker(c, "slow"):
                def produce(i: int) -> None:
                    ns = names[i]

                    def waited(_: Backpressure, __: float) -> None:
                        refusals[i] += 1

                    try:
                        with RemoteClient(api.url, key) as remote:
                            n = 0
                            while time.monotonic() < stop_at:
                                message = turn(f"c{i}", n)
                                patiently(functools.partial(remote.add, ns, [message]),
                                          give_up_after=120, on_wait=waited)
                                accepted[ns].append(message["id"])
                                n += 1
                    except BaseException as exc:  # reported by the main thread
                        errors.append(exc)

                def sample() -> None:
                    while time.monotonic() < stop_at:
                        depths.append(client.store.backlog.depth().total)
                        queued.append(client.queue_lengths()["ingest"])
                        time.sleep(0.1)

                threads = [threading.Thread(target=produce, args=(i,)) for i in range(CLIENTS)]
                threads.append(threading.Thread(target=sample))
                started = time.monotonic()
                stop_at = started + seconds
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(timeout=seconds + 180)
                produced = time.monotonic() - started
                total = sum(len(v) for v in accepted.values())
                deadline = time.monotonic() + 600
                while client.store.backlog.depth().total:
                    assert time.monotonic() < deadline, "the backlog did not drain"
                    time.sleep(0.2)
                drained = time.monotonic() - started
            stored = {ns: stored_turns(client.store, ns) for ns in names}
            print(f"\n[backpressure load] {CLIENTS} clients for {seconds:g} s, queue_limit "
                  f"{LIMIT}, 1 ingest worker: {total} turns accepted ({total / produced:.1f}/s), "
                  f"{sum(refusals)} refusals (429) waited out; ingest queue max {max(queued)}, "
                  f"mean {sum(queued) / len(queued):.1f}; backlog set max {max(depths)} (with "
                  f"reservations being checked) over {len(depths)} samples; drained "
                  f"{drained - produced:.1f} s after the clients stopped; stored "
                  f"{sum(len(s) for s in stored.values())} turns, lost "
                  f"{sum(len(set(accepted[ns]) - stored[ns]) for ns in names)}")
            assert errors == []
            assert max(queued) <= LIMIT
            # A reservation is counted before it is checked (and taken back if refused):
            # at most one per client shows above the limit, for one round trip.
            assert max(depths) <= LIMIT + CLIENTS
            assert sum(refusals) > 0, "the clients were never held back: no test of the limit"
            assert all(stored[ns] == set(accepted[ns]) for ns in names)
        finally:
            client.close()
            stop(gen)
