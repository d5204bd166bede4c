"""The Celery application with its tasks: ``celery -A workers.app worker -Q ingest``.

The app is built in :mod:`workers.celery_app`, below the tasks that register on it, so
that neither module imports the other back.
"""

from __future__ import annotations

import workers.tasks  # noqa: F401  (registers the tasks on ``app``)
from workers.celery_app import app

__all__ = ["app"]
