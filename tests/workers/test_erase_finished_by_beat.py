"""Beat's tick finishes an erase whose process died mid-way (memcore.store.unfinished).

The kill is real (a child SIGKILLs itself between dropping the turn and erasing its
fact, tests/store/test_erase_unfinished.py); the tick is the real task on a real worker,
once the note is older than the visibility timeout.
"""

from __future__ import annotations

import time
from pathlib import Path

from memcore.client.client import Client
from memcore.messaging import task_names
from memcore.store import keys
from tests.store.test_erase_unfinished import _killed_mid_erase, _seed
from tests.support.test_reliability_common import SHORT_VISIBILITY, cluster


def test_beats_tick_finishes_a_turn_erase_cut_short(tmp_path: Path) -> None:
    with cluster(tmp_path / "logs") as c:
        client = Client(c.url)
        secret, keep = _seed(client.store)
        _killed_mid_erase(c.url, "e-secret")
        assert client.store.records.get("u", secret) is not None  # half done
        c.spawn("ingest", "ingest", concurrency=1)
        c.wait_ready({"ingest"})

        time.sleep(SHORT_VISIBILITY + 0.5)
        tick = client.celery.send_task(task_names.SCHEDULE, queue=task_names.INGEST_QUEUE)
        tick.get(timeout=60)
        assert client.store.records.get("u", secret) is None
        assert client.store.records.get("u", keep) is not None
        assert client.store.client.zcard(keys.ERASE_UNFINISHED) == 0
        assert "erase in u that was cut short" in c.logs()
        client.close()
