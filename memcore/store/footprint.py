"""Redis bytes per memory, for the footprint benchmark."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.core.models import validate_identifier, validate_namespace
from memcore.store import keys

if TYPE_CHECKING:
    from memcore.store.memory_store import MemoryStore


def footprint(store: MemoryStore, ns: str, sample: int = 2000) -> dict[str, float]:
    """Redis bytes per memory of the current version, measured with MEMORY USAGE.

    Counts the record key, its content-hash key and its share of the order log.
    """
    validate_namespace(ns)
    client = store.gateway.client
    version = store.current_version(ns)
    ids = store.gateway.version_ids(ns, version)[:sample]
    if not ids:
        return {"memories": 0, "bytes_per_memory": 0.0, "text_bytes_per_memory": 0.0,
                "vector_bytes_per_memory": 0.0}
    memories = [m for m in store.gateway.load(ns, version, ids) if m is not None]
    pipe = client.pipeline(transaction=False)
    for m in memories:
        validate_identifier(m.id)
        pipe.memory_usage(keys.memory(ns, version, m.id), samples=0)
        pipe.memory_usage(keys.by_hash(ns, version, m.content_hash), samples=0)
    usage = [int(u or 0) for u in pipe.execute()]
    total_order = int(client.get(keys.order_len(ns, version)) or 0)
    order_bytes = sum(int(client.memory_usage(keys.order_chunk(ns, version, c), samples=0) or 0)
                      for c in range(-(-total_order // keys.ORDER_CHUNK)))
    n = len(memories)
    return {
        "memories": float(n),
        "bytes_per_memory": sum(usage) / n + order_bytes / max(1, total_order),
        "text_bytes_per_memory": sum(len(m.text.encode()) for m in memories) / n,
        "vector_bytes_per_memory": sum(len(m.vector) + 6 for m in memories if m.vector) / n,
    }
