"""The producers' Celery app: sends tasks by name, never waits on its pools for good.

Imported lazily by :attr:`memcore.Client.celery` (importing Celery is slow).
"""

from __future__ import annotations

from celery import Celery
from celery.app.amqp import AMQP

from memcore.core.config import Settings
from memcore.messaging.broker import BoundedProducerPool
from memcore.messaging.celery_config import celery_config, celery_urls
from memcore.messaging.transport import install as install_transport


class BoundedAMQP(AMQP):
    """Celery's AMQP with a producer pool of this app whose waits all end
    (:class:`~memcore.messaging.broker.BoundedProducerPool`, waits of
    ``broker_pool_acquire_timeout``) instead of kombu's process-wide one, which waits for
    a connection forever and grows by ``broker_pool_limit`` producers with every app
    made on the same broker."""

    _producer_pool: BoundedProducerPool | None = None

    @property
    def producer_pool(self) -> BoundedProducerPool:
        if self._producer_pool is None:  # again after a fork (Celery resets it)
            connections = self.app.pool
            self._producer_pool = BoundedProducerPool(
                connections, limit=connections.limit,
                timeout=float(self.app.conf.broker_pool_acquire_timeout))
        return self._producer_pool

    publisher_pool = producer_pool


def build_app(settings: Settings, pool_timeout: float) -> Celery:
    """A bare Celery producer app on the broker of ``settings`` (no task code imported):
    every wait for a broker connection or producer of its pools ends after
    ``pool_timeout`` seconds."""
    install_transport()  # survive a lost broker, as the workers do
    broker, backend = celery_urls(settings, settings.data_url())
    app = Celery("memcore-client", amqp=BoundedAMQP)
    app.conf.update(celery_config(settings, broker, backend))
    app.conf.broker_pool_acquire_timeout = pool_timeout
    return app

