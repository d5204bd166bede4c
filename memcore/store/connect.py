"""A Redis client for a data URL: a single server, or a Redis Cluster.

Cluster URLs list seed nodes: ``redis+cluster://[user:password@]host:port[,host:port...]``
(``rediss+cluster://`` for TLS). Every key of a namespace carries the ``{ns}`` hash tag,
so each script and transaction of the store touches one slot; namespaces spread over
the slots.

Client timeout: redis-py >= 8 gives a client built from a URL a 5 s socket timeout
(earlier versions none). A reply can legitimately take longer than that: a pass's swap
at 10^6 memories ran 5+ s on a loaded machine before it was split (see
``snapshots.COMMIT_RECORDS``), a blocking read or a big MGET behind it waits as long, and
the 5 s timeout turned that wait into "Timeout reading from socket". So data clients wait
up to :data:`SOCKET_TIMEOUT` seconds; a URL query (``?socket_timeout=10``) overrides it,
as redis-py's query arguments always do. Nothing is retried (as before).
"""

from __future__ import annotations

from typing import cast
from urllib.parse import unquote, urlsplit

import redis
from redis.cluster import ClusterNode, RedisCluster

from memcore.core.config import is_cluster_url


def cluster_nodes(url: str) -> tuple[list[ClusterNode], str | None, str | None, bool]:
    """Seed nodes, username, password and TLS flag of a cluster URL."""
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    nodes = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"redis_url: cluster node {item!r} is not host:port "
                             "(expected redis+cluster://host:port[,host:port...])")
        nodes.append(ClusterNode(host, int(port)))
    return (nodes, unquote(user) or None, unquote(password) or None,
            parts.scheme.lower().startswith("rediss"))


SOCKET_TIMEOUT = 120.0
"""Seconds a data client waits for one reply, as Celery's result backend waits (its
``redis_socket_timeout``, 120 s): a dead server is still noticed, a slow reply is not
taken for one."""


def connect(url: str) -> redis.Redis:
    """A client for ``url``; a cluster client for ``redis+cluster://`` URLs."""
    if not is_cluster_url(url):
        return redis.Redis.from_url(url, socket_timeout=SOCKET_TIMEOUT)
    nodes, user, password, tls = cluster_nodes(url)
    client: RedisCluster = RedisCluster(startup_nodes=nodes, username=user, password=password,
                                        ssl=tls, socket_timeout=SOCKET_TIMEOUT)
    # The store calls only commands a cluster client routes by key (one slot per
    # namespace) or that it sends per node (see Gateway.nodes).
    return cast(redis.Redis, client)


def primaries(client: redis.Redis) -> list[redis.Redis]:
    """One plain client per primary of a cluster; the client itself otherwise."""
    if isinstance(client, RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]
