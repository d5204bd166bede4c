"""Celery configuration shared by producers and workers, built from memcore's settings.

Side-effect free: importing this module changes nothing. Whoever builds a Celery app
calls :func:`memcore.messaging.transport.install` first (workers and the Client do).
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kombu import Queue

from memcore.core.config import Settings, celery_url, is_cluster_url
from memcore.messaging.task_names import (
    CONSOLIDATE,
    CONSOLIDATE_BATCH,
    CONSOLIDATE_QUEUE,
    CONSOLIDATE_REDUCE,
    HOOKS_DELIVER,
    HOOKS_DISPATCH,
    HOOKS_QUEUE,
    HOOKS_SWEEP,
    INGEST,
    INGEST_QUEUE,
    MAINTAIN,
    SCHEDULE,
)

_CERT_REQS = {"required": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL,
              "none": ssl.CERT_NONE}
_SSL_FILES = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile")


def ssl_options(url: str) -> dict[str, Any] | None:
    """TLS options for a ``rediss://`` URL from its query (None for other URLs).

    ``ssl_cert_reqs`` (required | optional | none) defaults to ``required``: a TLS
    URL that does not say otherwise verifies the server against ``ssl_ca_certs``
    (or the system CAs).
    """
    parts = urlsplit(url)
    if parts.scheme != "rediss":
        return None
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    reqs = query.get("ssl_cert_reqs", "required").lower().removeprefix("cert_")
    if reqs not in _CERT_REQS:
        raise ValueError(f"redis_url: ssl_cert_reqs must be one of {sorted(_CERT_REQS)}, "
                         f"got {reqs!r}")
    out: dict[str, Any] = {"ssl_cert_reqs": _CERT_REQS[reqs]}
    out.update({k: query[k] for k in _SSL_FILES if query.get(k)})
    return out


def celery_urls(settings: Settings, data_url: str) -> tuple[str, str]:
    """Celery's broker and result backend: their own settings, else the data Redis.

    Celery needs a standalone Redis: with a Redis Cluster as the data store both must be
    set (a clear error names the field otherwise)."""
    broker = settings.broker_url or data_url
    backend = settings.result_backend or data_url
    for name, url in (("broker_url", broker), ("result_backend", backend)):
        if is_cluster_url(url):
            raise ValueError(
                f"{name}: Celery needs a standalone Redis, not a Redis Cluster; with "
                "MEMCORE_REDIS_URL on a cluster set MEMCORE_BROKER_URL and "
                "MEMCORE_RESULT_BACKEND to a standalone Redis")
    return broker, backend


def celery_config(settings: Settings, broker_url: str, backend_url: str) -> dict[str, Any]:
    """The Celery options memcore relies on.

    ``visibility_timeout`` is set alike in broker, result backend and app options: a
    task still running past it is delivered again, so every task is idempotent.
    """
    # kombu sweeps the unacked set only every interval x throttle seconds (default
    # 10 x 10 = 100 s): a SIGKILLed worker's messages would then wait well past the
    # visibility timeout. Sweep every min(10 s, timeout / 2) instead.
    # The sweep holds a Redis lock (kombu's unacked mutex, 300 s by default): a worker
    # SIGKILLed while sweeping left it held, and no other worker restored anything for
    # five minutes, well past the visibility timeout (a flaky recovery test found it).
    # A sweep takes milliseconds: let the lock lapse within the sweep interval.
    sweep = max(1, min(10, settings.visibility_timeout // 2))
    transport = {"visibility_timeout": settings.visibility_timeout,
                 "unacked_restore_interval": sweep,
                 "unacked_restore_throttle": 1,
                 "unacked_mutex_expire": max(2, sweep)}
    tls = {k: v for k, v in (("broker_use_ssl", ssl_options(broker_url)),
                             ("redis_backend_use_ssl", ssl_options(backend_url))) if v}
    return {
        **tls,
        "broker_url": celery_url(broker_url),
        "result_backend": celery_url(backend_url),
        "broker_transport_options": transport,
        "result_backend_transport_options": transport,
        "visibility_timeout": settings.visibility_timeout,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_queues": (Queue(INGEST_QUEUE), Queue(CONSOLIDATE_QUEUE), Queue(HOOKS_QUEUE)),
        "task_default_queue": INGEST_QUEUE,
        "task_routes": {
            INGEST: {"queue": INGEST_QUEUE},
            CONSOLIDATE: {"queue": CONSOLIDATE_QUEUE},
            CONSOLIDATE_BATCH: {"queue": CONSOLIDATE_QUEUE},
            CONSOLIDATE_REDUCE: {"queue": CONSOLIDATE_QUEUE},
            SCHEDULE: {"queue": INGEST_QUEUE},  # light; must not wait behind a long pass
            MAINTAIN: {"queue": CONSOLIDATE_QUEUE},  # scans whole namespaces, like a pass
            HOOKS_DISPATCH: {"queue": HOOKS_QUEUE},
            HOOKS_DELIVER: {"queue": HOOKS_QUEUE},
            HOOKS_SWEEP: {"queue": HOOKS_QUEUE},
        },
        "result_expires": 3600,
        # Task events feed Flower's /api/tasks and its Prometheus metrics.
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "worker_hijack_root_logger": False,
        "broker_connection_retry_on_startup": True,
        "beat_schedule": {
            "memcore-schedule-due": {"task": SCHEDULE, "schedule": settings.beat_interval_seconds},
            "memcore-maintenance": {"task": MAINTAIN,
                                    "schedule": settings.maintenance_interval_seconds},
            # Catches events no task kicked (a producer that lost its broker) and lanes
            # whose delivering task was lost.
            "memcore-hooks-sweep": {"task": HOOKS_SWEEP,
                                    "schedule": settings.beat_interval_seconds},
        },
        "timezone": "UTC",
    }
