"""Using the broker from a busy producer process without a pool deadlock.

A process that sends tasks shares one pool of broker connections (kombu's, limit
``broker_pool_limit``, 10 by default) and one pool of producers; each producer taken from
its pool takes a connection of the same connection pool. Celery's remote control
(``control.ping``, ``inspect().active_queues()``) holds a pooled connection *and then*
takes a producer: ten threads asking the workers at once held every connection while each
waited for a producer that needed one, with no timeout, and every later send of the
process hung with them. Here:

* :func:`ask_workers` asks the workers on a connection of its own with a producer of its
  own (no pool), so asking never holds a pooled connection while it waits for another;
* :class:`BoundedProducerPool` gives the producer's connection acquisition a timeout
  (kombu waits forever there), so every acquisition of the pools ends, and
  :func:`pool_exhausted` tells the error of a timed out acquisition from a broker outage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kombu import Connection
from kombu.exceptions import LimitExceeded
from kombu.pidbox import Mailbox
from kombu.pools import ProducerPool
from kombu.resource import Resource


def ask_workers(connection: Connection, command: str, reply_seconds: float, *,
                exchange: str = "celery", accept: Sequence[str] = ("json",),
                serializer: str = "json", queue_ttl: float | None = 300.0,
                queue_expires: float | None = 10.0,
                queue_exclusive: bool = True) -> dict[str, Any]:
    """Broadcast the remote-control ``command`` to every worker and collect the replies
    that arrive within ``reply_seconds``: ``{worker name: reply}`` (empty when none
    answered). ``connection`` (unpooled, e.g. ``app.connection_for_write()``) is used and
    closed; the mailbox options are the app's ``control_*`` settings, as Celery's
    ``app.control`` uses them. Raises the broker's errors (connecting is bounded by the
    connection's connect timeout)."""
    mailbox = Mailbox(exchange, type="fanout", accept=list(accept), serializer=serializer,
                      producer_pool=None, queue_ttl=queue_ttl, reply_queue_ttl=queue_ttl,
                      queue_expires=queue_expires, reply_queue_expires=queue_expires,
                      queue_exclusive=queue_exclusive)
    with connection:
        replies = mailbox(connection).multi_call(command, {}, timeout=reply_seconds) or []
    merged: dict[str, Any] = {}
    for reply in replies:
        if isinstance(reply, dict):
            merged.update(reply)
    return merged


class BoundedProducerPool(ProducerPool):
    """A producer pool whose every wait ends: for a producer (``acquire(timeout=...)``, as
    Celery passes ``broker_pool_acquire_timeout``) and for the connection each producer
    takes from ``connections`` (kombu's own pool waits forever there). A wait that runs
    out raises kombu's ``LimitExceeded``, which Celery reports as an ``OperationalError``
    (see :func:`pool_exhausted`).

    Also unlike kombu's: a producer whose connection could not be taken is put back
    without releasing the connection it had *before* (kombu releases that stale
    connection again, though another thread may hold it by then, and the connection
    pool then hands one connection to two threads)."""

    def __init__(self, connections: Resource, *, limit: int, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(connections, limit=limit)

    def _acquire_connection(self) -> Connection:
        connection: Connection = self.connections.acquire(block=True, timeout=self.timeout)
        return connection

    def prepare(self, p: Any) -> Any:
        if not callable(p) and p._channel is None:
            p.__connection__ = None  # released with the producer: no longer its own
        return super().prepare(p)


def pool_exhausted(exc: BaseException) -> bool:
    """True if ``exc`` (or what caused it) is a pool acquisition that timed out: every
    connection or producer of the process is in use (not: the broker is unreachable)."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, LimitExceeded):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
