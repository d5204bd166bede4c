"""Redis bytes per memory, for the footprint benchmark."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.core.models import validate_identifier, validate_namespace
from memcore.store import keys

if TYPE_CHECKING:
    from memcore.store.memory_store import MemoryStore


def footprint(store: MemoryStore, namespace: str, sample: int = 2000) -> dict[str, float]:
    """Redis bytes per memory of the current version, measured with MEMORY USAGE.

    Counts the record key, its content-hash key and its share of the order log.
    """
    validate_namespace(namespace)
    client = store.gateway.client
    ids = store.gateway.live_ids(namespace)[:sample]
    if not ids:
        return {"memories": 0, "bytes_per_memory": 0.0, "text_bytes_per_memory": 0.0,
                "vector_bytes_per_memory": 0.0}
    memories = [m for m in store.gateway.load(namespace, store.current_version(namespace),
                                              ids) if m is not None]
    pipe = client.pipeline(transaction=False)
    for m in memories:
        validate_identifier(m.id)
        pipe.memory_usage(keys.memory(namespace, m.id), samples=0)
        pipe.memory_usage(keys.by_hash(namespace, m.content_hash), samples=0)
    usage = [int(u or 0) for u in pipe.execute()]
    total_order = int(client.get(keys.order_len(namespace)) or 0)
    order_bytes = sum(int(client.memory_usage(keys.order_chunk(namespace, c), samples=0) or 0)
                      for c in range(-(-total_order // keys.ORDER_CHUNK)))
    n = len(memories)
    return {
        "memories": float(n),
        "bytes_per_memory": sum(usage) / n + order_bytes / max(1, total_order),
        "text_bytes_per_memory": sum(len(m.text.encode()) for m in memories) / n,
        "vector_bytes_per_memory": sum(len(m.vector) + 6 for m in memories if m.vector) / n,
    }


def namespace_usage(store: MemoryStore, namespace: str) -> dict[str, float]:
    """Every key of ``namespace``: how many, their bytes (MEMORY USAGE), and the server's used
    memory in MiB (``redis_mb``; the whole server, Celery's keys included)."""
    validate_namespace(namespace)
    client = store.gateway.client
    count = 0
    total = 0
    batch: list[bytes] = []

    def flush() -> int:
        pipe = client.pipeline(transaction=False)
        for key in batch:
            pipe.memory_usage(key, samples=0)
        return sum(int(u or 0) for u in pipe.execute())

    for key in client.scan_iter(match=keys.pattern(namespace), count=1000):
        batch.append(key)
        count += 1
        if len(batch) >= 1000:
            total += flush()
            batch = []
    if batch:
        total += flush()
    used = int(client.info("memory")["used_memory"])
    return {"redis_mb": used / 2**20, "namespace_mb": total / 2**20, "keys": float(count)}
