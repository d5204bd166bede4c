"""Chaos: random SIGKILLs of workers, API processes and Redis while clients add, search,
erase and start passes (``tests/workers/chaos.py``). Afterwards every accepted turn (202) is
stored exactly once or erased, no erased text is in any key, the AOF or dump.rdb, and
every process answers.

``make test`` runs 45 s of it; ``pytest --long`` five minutes. Run it alone and see its
counts: ``pytest -s [--long] tests/workers/test_chaos.py``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memcore.store import MemoryStore
from tests.workers.chaos import Chaos, story, verdict


@pytest.mark.timeout(1800)  # --long: 5 minutes of chaos, then the backlog drains
def test_chaos_loses_duplicates_and_resurrects_nothing(tmp_path: Path, long_mode: bool) -> None:
    seconds = 300.0 if long_mode else 45.0
    kill_every = 4.0 if long_mode else 3.0
    seed = int(os.environ.get("MEMCORE_CHAOS_SEED", str(time.time_ns() % 10**9)))
    chaos = Chaos(tmp_path / "logs", seed)
    try:
        chaos.start()
        chaos.run(seconds, kill_every=kill_every)
        settled = chaos.settle(timeout=600)
        answers = chaos.answers()
        store = MemoryStore.from_url(chaos.cluster.url)
        try:
            result = verdict(chaos.log, store, chaos.cluster.server.directory)
        finally:
            store.close()
        log = chaos.log
        erases = [e for e in log.erases if e.status == 200]
        print(f"\n[chaos] seed {seed}, {seconds:g} s: kills {dict(sorted(log.kills.items()))}; "
              f"{len(log.accepted)} turns accepted (202), adds not accepted "
              f"{dict(log.refused)}; {sum(1 for e in erases if e.turn)} turns and "
              f"{sum(1 for e in erases if e.turn is None)} namespaces erased (200) of "
              f"{len(log.erases)} erase requests; searches {dict(log.searches)}; passes "
              f"{dict(log.passes)}; settled {settled:.0f} s after the load stopped. "
              f"Stored exactly once {result.stored_once}, erased {result.erased}, raced an "
              f"erase {result.either}; lost {len(result.lost)}, duplicated "
              f"{len(result.duplicated)}, resurrected {len(result.resurrected)}, erased text "
              f"found {len(result.leaked)}; lost messages sent again {chaos.resent()}; "
              f"processes answering {answers}")
        backend = chaos.celery_backend()
        assert result.lost == [], story(log, result.lost, backend, log.start)
        assert result.duplicated == [], story(log, result.duplicated, backend, log.start)
        assert result.resurrected == [], story(log, result.resurrected, backend, log.start)
        assert result.leaked == {}, (dict(list(result.leaked.items())[:10]), story(
            log, list(result.leaked), backend, log.start))
        assert all(answers.values()), answers
        # Each kill waits for its part to be back (10-20 s for a worker or the API on a
        # loaded machine): a short run gets through a few kinds, not all six.
        assert len(log.accepted) > 0 and len(log.kills) >= 3
    finally:
        chaos.close()
