"""The workers' Celery app without its tasks: settings, task class, worker signals.

The tasks register on it in :mod:`workers.tasks`; :mod:`workers.app` is the module that
``celery -A`` loads, the two together.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_process_init, worker_process_shutdown

from memcore.core.config import get_settings
from memcore.language import language_pack
from memcore.messaging.task_names import INGEST_QUEUE
from memcore.observability import tracing
from memcore.observability.metrics import start_metrics_server
from workers.config import celery_config, celery_urls

# FAISS with OpenMP can hang in a forked child: bound its threads before anything loads it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def create_app() -> Celery:
    """Build the app from ``MEMCORE_*`` settings; broker and backend default to the data URL."""
    settings = get_settings()
    broker, backend = celery_urls(settings, settings.redis_url or "redis://127.0.0.1:6379/0")
    app = Celery("memcore", task_cls="workers.strategy:GuardedTask")
    app.conf.update(celery_config(settings, broker, backend))
    return app


app = create_app()


@worker_init.connect
def _load_language(sender: Any = None, **_: Any) -> None:
    """The language pack's parser loads once, in the worker's main process before the
    pool forks: the children share it (copy on write) instead of each loading its own
    on its first turn. Only a worker that consumes the ingest queue reads text: a
    consolidate-only worker never parses, so it skips the load (seconds and ~100 MB)."""
    if not _consumes_ingest(sender):
        return
    settings = get_settings()
    language_pack(settings.language, settings.spacy_pipeline).load()


def _consumes_ingest(worker: Any) -> bool:
    """True unless ``worker`` (the signal's WorkController) consumes only other queues."""
    queues = getattr(getattr(getattr(worker, "app", None), "amqp", None), "queues", None)
    if queues is None:
        return True  # unknown: load, as before
    return INGEST_QUEUE in queues.consume_from


@worker_process_init.connect
def _start_metrics(**_: Any) -> None:
    """Expose Prometheus metrics from each child (multiprocess mode sums them)."""
    settings = get_settings()
    if settings.metrics_port is not None:
        start_metrics_server(settings.metrics_port,
                             broker_url=celery_urls(settings, settings.data_url())[0])


@worker_init.connect
def _start_tracing_unforked(sender: Any = None, **_: Any) -> None:
    """A solo or threads pool runs tasks in this process: trace here (a prefork pool's
    children start their own, :func:`_start_tracing`)."""
    pool = getattr(sender, "pool_cls", None)
    if "prefork" not in str(getattr(pool, "__module__", pool)):
        tracing.setup_tracing(get_settings(), "memcore-worker")


@worker_process_init.connect
def _start_tracing(**_: Any) -> None:
    """Trace tasks in each child (after the fork: the exporter's thread is the child's);
    off unless ``MEMCORE_OTEL_ENDPOINT`` is set."""
    tracing.setup_tracing(get_settings(), "memcore-worker")


@worker_process_shutdown.connect
def _flush_traces(**_: Any) -> None:
    """Export the spans still batched before the child exits."""
    tracing.flush()

