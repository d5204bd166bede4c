"""Per-process state of a worker: the store, the models and the FAISS index cache.

Built lazily in the child process that first needs it, never in the Celery
master (FAISS must not be touched before the fork).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

from memcore.adapters import Models, build_models
from memcore.core.config import Settings, get_settings
from memcore.ingest.write_path import IngestPipeline
from memcore.messaging.celery_config import celery_urls
from memcore.observability.metrics import QueueLagCollector
from memcore.store import MemoryStore


@dataclass
class Runtime:
    """Everything a task needs, one per worker process."""

    settings: Settings
    store: MemoryStore
    models: Models
    pipeline: IngestPipeline
    _queues: QueueLagCollector | None = field(default=None, repr=False)

    def broker_holding(self, task_ids: Sequence[str]) -> set[str]:
        """Which of ``task_ids`` the broker holds (queued, or taken and not acknowledged)."""
        if self._queues is None:
            self._queues = QueueLagCollector(celery_urls(self.settings,
                                                         self.settings.data_url())[0])
        return self._queues.holding(task_ids)


_lock = threading.Lock()

ModelsWrapper = Callable[[Models, Settings], Models]
_wrappers: list[ModelsWrapper] = []


def wrap_models(wrapper: ModelsWrapper) -> None:
    """Have this process's runtime pass its models through ``wrapper`` when it builds
    them (register before the first task). memcore registers none; a benchmark's own
    Celery app does (``memcore_bench.worker_app``: a simulated model latency)."""
    _wrappers.append(wrapper)


@cache
def runtime() -> Runtime:
    """This process's runtime, built on first use."""
    with _lock:
        settings = get_settings()
        store = MemoryStore.from_url(settings.data_url())
        models = build_models(settings)
        for wrapper in _wrappers:
            models = wrapper(models, settings)
        return Runtime(settings, store, models, IngestPipeline(store, models, settings))
