"""Find which Redis keys still hold a piece of text (for erase and redaction tests)."""

from __future__ import annotations

import redis


def _values(client: redis.Redis, key: bytes) -> list[bytes]:
    """The key's DUMP plus its values read by type (a DUMP may be LZF-compressed)."""
    kind = client.type(key)
    out = [client.dump(key) or b""]
    if kind == b"string":
        out.append(client.get(key) or b"")
    elif kind == b"hash":
        out += [b for kv in client.hgetall(key).items() for b in kv]
    elif kind == b"list":
        out += client.lrange(key, 0, -1)
    elif kind == b"set":
        out += client.smembers(key)
    elif kind == b"zset":
        out += client.zrange(key, 0, -1)
    elif kind == b"stream":
        out += [b for _, fields in client.xrange(key) for kv in fields.items() for b in kv]
    return out


def keys_holding(client: redis.Redis, needle: str) -> set[bytes]:
    """Every key whose stored bytes hold ``needle``, in any letter case."""
    want = needle.lower().encode()
    return {key for key in client.scan_iter(count=1000)
            if any(want in blob.lower() for blob in _values(client, key))}
