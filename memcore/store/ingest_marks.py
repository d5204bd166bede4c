"""Resume markers of ``memcore ingest``: how many turns of a chat file are in a namespace.

``mc:{ns}:ingest:<file id> = turns done`` (the file id is a hash of the file's bytes).
The marker only moves forward (one script: a slower twin run of the same file never
moves it back); an erase of the namespace removes it with the rest of the namespace.
"""

from __future__ import annotations

import redis

from memcore.core.models import validate_namespace
from memcore.store import keys
from memcore.store.gateway import LuaScript

# KEYS: marker. ARGV: turns done -> the marker after the call
ADVANCE = """
local before = tonumber(redis.call('GET', KEYS[1]) or '0')
local done = tonumber(ARGV[1])
if done > before then
  redis.call('SET', KEYS[1], ARGV[1])
  return done
end
return before
"""


class IngestMarks:
    """Read and advance the resume markers of chat-file ingests."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._advance = LuaScript(client, ADVANCE)

    def progress(self, namespace: str, file_id: str) -> int:
        """Turns of file ``file_id`` already put into ``namespace`` (0: none)."""
        raw = self._r.get(keys.ingest_marker(validate_namespace(namespace), file_id))
        return int(raw) if raw is not None else 0

    def advance(self, namespace: str, file_id: str, done: int) -> int:
        """Record that the first ``done`` turns are in; the marker after the call."""
        if done < 0:
            raise ValueError(f"done: must be >= 0, got {done}")
        return int(self._advance([keys.ingest_marker(validate_namespace(namespace), file_id)],
                                 [done]))
