"""With a threads pool, each task counts and audits only its own model calls."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from memcore.adapters.offline import OfflineExtractor
from memcore.core.models import Episode


def test_calls_and_errors_are_per_thread() -> None:
    extractor = OfflineExtractor()
    episode = Episode(namespace="n", role="user", speaker="Sam", text="I like tea.",
                      timestamp=datetime(2026, 1, 1, tzinfo=UTC))
    seen: dict[str, tuple[int, list[str]]] = {}

    def work(name: str, calls: int) -> None:
        before = extractor.thread_calls
        for _ in range(calls):
            extractor.extract([episode])
        extractor.record_error(f"error of {name}")
        seen[name] = (extractor.thread_calls - before, extractor.drain_errors())

    threads = [threading.Thread(target=work, args=(f"t{i}", i + 1)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {f"t{i}": (i + 1, [f"error of t{i}"]) for i in range(4)}
    assert extractor.usage.calls == 1 + 2 + 3 + 4
