"""The benchmarks' Celery app: ``workers.app`` whose offline models take
``MEMCORE_OFFLINE_LATENCY_MS`` longer per call (:mod:`memcore_bench.latency`).

``celery -A memcore_bench.worker_app worker ...``; the bench stacks
(:func:`memcore_bench.common.running_stack`) run their workers on it. Without the
variable the workers are exactly those of ``workers.app``.
"""

from __future__ import annotations

from memcore_bench.latency import delayed, latency_ms
from workers.app import app
from workers.runtime import wrap_models

latency_ms()  # a bad value stops the worker at start, naming the variable
wrap_models(delayed)

__all__ = ["app"]
