"""kombu's Redis transport with one fix: a worker survives losing the broker.

Why: on a lost broker connection Celery 5.7 ``collect()``s the connection (which
drops the transport's ``client``) and then ``close()``s it. Closing the channel
restores the unacked messages, which builds a new Redis pool from
``self.connection.client`` -- now ``None`` -- and raises ``AttributeError``. That is
not a connection error, so it escapes ``ignore_errors`` and the worker dies with
"Unrecoverable error: AttributeError('NoneType' object has no attribute 'hostname')"
instead of reconnecting (seen with a Redis restart during ingest). Here the channel
raises a connection error instead, which the close path ignores; the messages stay
in Redis' unacked set and come back after the visibility timeout.
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    """The Redis channel, with a connection error when its connection is already closed."""

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection.client is None:
            raise redis.exceptions.ConnectionError("broker connection already closed")
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)
        return params


class Transport(kombu_redis.Transport):
    """kombu's Redis transport using :class:`Channel`."""

    Channel = Channel


def install() -> None:
    """Make ``redis://`` and ``rediss://`` broker URLs use this transport (idempotent)."""
    here = f"{__name__}:Transport"
    TRANSPORT_ALIASES["redis"] = TRANSPORT_ALIASES["rediss"] = here
