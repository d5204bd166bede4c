"""Celery configuration for the workers: memcore's shared settings plus the transport fix.

Workers must survive a lost broker: see :mod:`memcore.messaging.transport`.
"""

from __future__ import annotations

from memcore.messaging.celery_config import celery_config, celery_urls, ssl_options
from memcore.messaging.transport import install as install_transport

install_transport()

__all__ = ["celery_config", "celery_urls", "ssl_options"]
