"""With appendfsync always, a SIGKILLed server loses no acknowledged write."""

from __future__ import annotations

import shutil

from memcore.core.models import Actor, Episode, Role
from memcore.local.redis_server import start_redis
from memcore.store import MemoryStore
from tests.store.test_store_support import later, mem


def test_sigkill_loses_no_acknowledged_write() -> None:
    server = start_redis(appendfsync="always")
    try:
        store = MemoryStore(server.client())
        acked = []
        for i in range(40):
            acked.append(store.writes.add("u", mem("u", f"fact {i}", seed=i), actor=Actor.INGEST,
                                   reason="").id)
            store.writes.reinforce("u", acked[-1], source=f"s{i}", now=later(i), reason="")
        store.episodes.add_episodes([Episode(id="last", namespace="u", role=Role.USER, text="bye",
                                    timestamp=later(50))])
        view = store.snapshots.begin_pass("u")
        store.snapshots.commit_pass("u", view, view.memories, [], now=later(51))
        store.writes.touch("u", acked[:3], later(52))
        server.kill()  # SIGKILL right after the last acknowledgement
        server.restart()
        after = MemoryStore(server.client())
        assert after.current_version("u") == 1
        got = after.records.get_many("u", acked)
        assert all(m is not None and m.support == 2 for m in got)
        assert [m.recall_count for m in got[:4] if m] == [1, 1, 1, 0]
        assert after.episodes.get_episode("u", "last") is not None
        assert len(after.audit.tail("u", 1000)) == 80
    finally:
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)
