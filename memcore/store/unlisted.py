"""Source turn ids a memory no longer lists (docs/design.md, Bounded records).

A record lists its newest :data:`~memcore.core.bounds.MAX_SOURCES` sources; ``support``
counts them all. The ids it unlists go to one set per memory, outside the record::

    mc:{ns}:xs:<id>                SET    source ids memory <id> counted but unlisted

so a search never reads them, a repeat adds one id (SADD, O(1)) instead of rewriting a
growing list, and a redelivered old turn is still recognised as counted (the write path
asks only when the record is capped). The set is written in the same commit as the
record change that unlists its ids, so a record whose bytes did not change has an
unchanged set. Only the write path's repeats and updates fill it: ids a consolidation
merge drops (from its members' joined lists) stay counted in ``support`` but are not
kept. Erasing the namespace deletes it with every other key (same prefix, same slot).
"""

from __future__ import annotations

from collections.abc import Iterable

import redis

from memcore.core.models import validate_identifier
from memcore.store import keys


def unlisted_key(ns: str, memory_id: str) -> str:
    """The set of source ids memory ``memory_id`` counts but no longer lists."""
    return keys.prefix(ns) + "xs:" + validate_identifier(memory_id)


def unlisted_sources(client: redis.Redis, ns: str, memory_ids: Iterable[str]) -> set[str]:
    """Every source id the records of ``memory_ids`` unlisted (e.g. the turns an erase of
    those memories should reach beyond the ids the records list)."""
    pipe = client.pipeline(transaction=False)
    for memory_id in memory_ids:
        pipe.smembers(unlisted_key(ns, memory_id))
    return {s.decode() for members in pipe.execute() for s in members}
