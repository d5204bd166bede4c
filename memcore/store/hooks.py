"""Webhooks in Redis: the hooks, each namespace's dispatch position, the delivery lanes
and the dead-letter list (docs/design.md, Webhooks).

Keys. The hooks and the dead letters are global; everything of one namespace's
deliveries shares the hash tag ``{ns}`` (one cluster slot, so the dispatch commit is one
script) and lives outside ``mc:{ns}:*``, so erasing the namespace keeps the sequence
numbering going (queued events hold no text: nothing there to erase)::

    mc:hooks                       HASH   hook id -> JSON {id, url, events, scopes,
                                          created_at, secret}
    mc:hooks:dead                  LIST   dead letters, oldest first (JSON, no text)
    mc:hooks:namespaces            SET    namespaces that have a dispatch position
    mc:hooks:{ns}:pos              HASH   cursor (last audit entry dispatched), seq
    mc:hooks:{ns}:kick             STRING a dispatch task is queued and not started (TTL)
    mc:hooks:{ns}:lanes            SET    lanes with queued events
    mc:hooks:{ns}:lane:<lane>      LIST   queued events of one hook and one memory, in order
    mc:hooks:{ns}:att:<lane>       STRING failed attempts of the lane's first event
    mc:hooks:{ns}:lease:<lane>     STRING token of the one task delivering the lane (TTL)

A lane is ``<hook id>/<memory id>`` (``~`` for events about no single memory). The
secret is stored as given out: signing needs it (an API key, by contrast, is only
checked, so only its hash is kept).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis

from memcore.core.hooks import (
    HookEventType,
    in_scope,
    validate_events,
    validate_scopes,
    validate_url,
)
from memcore.core.models import as_utc, utcnow, validate_namespace

HOOKS = "mc:hooks"
DEAD = "mc:hooks:dead"
NAMESPACES = "mc:hooks:namespaces"
SECRET_PREFIX = "whsec_"

# Append a dispatched chunk if the cursor is still what the dispatcher read.
# KEYS: pos, lanes set, lane keys... ARGV: expected cursor, new cursor, new seq, (lane)...
_COMMIT = """
local cur = redis.call('HGET', KEYS[1], 'cursor')
if not cur then cur = '' end
if cur ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'cursor', ARGV[2], 'seq', ARGV[3])
for j = 1, #KEYS - 2 do
  redis.call('RPUSH', KEYS[2 + j], ARGV[2 + 2 * j])
  redis.call('SADD', KEYS[2], ARGV[3 + 2 * j])
end
return 1
"""
# Take or keep a lane's lease. KEYS: lease. ARGV: token, ttl ms -> 1 if ours.
_LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
# KEYS: lease. ARGV: token.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
# Drop the lane's first event if it is still ``raw``. KEYS: lane, attempts, lanes set.
# ARGV: raw, lane name -> 1 if dropped.
_POP = """
if redis.call('LINDEX', KEYS[1], 0) ~= ARGV[1] then return 0 end
redis.call('LPOP', KEYS[1])
redis.call('DEL', KEYS[2])
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[3], ARGV[2]) end
return 1
"""


@dataclass(frozen=True)
class Hook:
    """A registered webhook (everything but its secret)."""

    id: str
    url: str
    events: tuple[HookEventType, ...]
    scopes: tuple[str, ...]
    created_at: datetime

    def wants(self, kind: HookEventType | str, namespace: str) -> bool:
        """True if events of ``kind`` in ``namespace`` go to this hook."""
        return HookEventType(kind) in self.events and in_scope(namespace, self.scopes)

    def public(self) -> dict[str, Any]:
        """JSON-able view (no secret)."""
        return {"id": self.id, "url": self.url, "events": [e.value for e in self.events],
                "scopes": list(self.scopes), "created_at": self.created_at.isoformat()}


def _ns(namespace: str) -> str:
    return f"mc:hooks:{{{validate_namespace(namespace)}}}:"


def lane_name(hook_id: str, memory_id: str | None) -> str:
    """The lane of one hook's events about one memory (``~``: about none)."""
    return f"{hook_id}/{memory_id or '~'}"


def lane_hook(lane: str) -> str:
    """The hook id of a lane."""
    return lane.split("/", 1)[0]


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


class HookRepository:
    """Hooks, dispatch positions, delivery lanes, leases and dead letters."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._commit = client.register_script(_COMMIT)
        self._lease = client.register_script(_LEASE)
        self._release = client.register_script(_RELEASE)
        self._pop = client.register_script(_POP)

    # --- hooks --------------------------------------------------------------------------
    def add(self, url: str, events: Sequence[str], scopes: Sequence[str],
            now: datetime | None = None) -> tuple[Hook, str]:
        """Register a hook; returns it and its signing secret (shown once)."""
        hook = Hook(secrets.token_hex(6), validate_url(url), validate_events(events),
                    validate_scopes(scopes), as_utc(now) if now else utcnow())
        secret = SECRET_PREFIX + secrets.token_hex(24)
        if not self._r.hsetnx(HOOKS, hook.id, json.dumps({**hook.public(), "secret": secret})):
            raise RuntimeError("hook id collision; try again")  # 48 bits: never in practice
        return hook, secret

    def registered(self) -> list[Hook]:
        """Every hook, oldest first."""
        found = [self._decode(raw)[0] for raw in self._r.hvals(HOOKS)]
        return sorted(found, key=lambda h: (h.created_at, h.id))

    def get(self, hook_id: str) -> tuple[Hook, str] | None:
        """A hook and its secret (None: no such hook)."""
        raw = self._r.hget(HOOKS, hook_id)
        return None if raw is None else self._decode(raw)

    def remove(self, hook_id: str) -> bool:
        """Delete a hook; its queued events are dropped as its lanes are next drained."""
        return bool(self._r.hdel(HOOKS, hook_id))

    def exist(self) -> bool:
        """True if any hook is registered (one round trip: callers skip the rest if not)."""
        return bool(self._r.exists(HOOKS))

    @staticmethod
    def _decode(raw: bytes | str) -> tuple[Hook, str]:
        data = json.loads(raw)
        hook = Hook(data["id"], data["url"], tuple(HookEventType(e) for e in data["events"]),
                    tuple(data["scopes"]), as_utc(datetime.fromisoformat(data["created_at"])))
        return hook, str(data["secret"])

    # --- dispatch -----------------------------------------------------------------------
    def position(self, namespace: str) -> tuple[str, int]:
        """The last audit entry dispatched ('' = none yet) and the last sequence number."""
        cursor, seq = self._r.hmget(_ns(namespace) + "pos", ["cursor", "seq"])
        return (_text(cursor) if cursor else "", int(seq) if seq else 0)

    def claim_dispatch(self, namespace: str, ttl: float = 10.0) -> bool:
        """True if the caller should queue a dispatch task for ``namespace``: none is
        queued and not yet started (one queued reads every entry committed before it
        starts, so a second adds nothing). Expires after ``ttl`` s in case it is lost."""
        return bool(self._r.set(_ns(namespace) + "kick", "1", nx=True,
                                px=max(1, int(ttl * 1000))))

    def dispatch_started(self, namespace: str) -> None:
        """A dispatch task starts reading: changes committed after this need a new one."""
        self._r.delete(_ns(namespace) + "kick")

    def commit(self, namespace: str, expected: str, cursor: str, seq: int,
               entries: Sequence[tuple[str, str]]) -> bool:
        """Queue ``entries`` ((lane, event JSON), in order) and move the position to
        ``cursor``/``seq``, atomically, if the cursor is still ``expected`` (False: another
        dispatcher moved it; read again)."""
        p = _ns(namespace)
        self._r.sadd(NAMESPACES, namespace)
        args: list[str | int] = [expected, cursor, seq]
        for lane, event in entries:
            args += [event, lane]
        lane_keys = [p + "lane:" + lane for lane, _ in entries]
        return bool(self._commit(keys=[p + "pos", p + "lanes", *lane_keys], args=args))

    def namespaces(self) -> list[str]:
        """Namespaces with a dispatch position."""
        return sorted(_text(n) for n in self._r.smembers(NAMESPACES))

    def lanes(self, namespace: str) -> list[str]:
        """Lanes of ``namespace`` with queued events."""
        return sorted(_text(n) for n in self._r.smembers(_ns(namespace) + "lanes"))

    def queued(self, namespace: str, lane: str) -> int:
        """Events waiting in a lane."""
        return int(self._r.llen(_ns(namespace) + "lane:" + lane))

    # --- delivery -----------------------------------------------------------------------
    def lease(self, namespace: str, lane: str, token: str, ttl: float) -> bool:
        """Take (or keep, for ``ttl`` more seconds) the lane's lease: one delivering task
        per lane keeps its events in order. False: another task holds it."""
        key = _ns(namespace) + "lease:" + lane
        return bool(self._lease(keys=[key], args=[token, max(1, int(ttl * 1000))]))

    def release(self, namespace: str, lane: str, token: str) -> None:
        """Give the lease back if it is still ``token``'s."""
        self._release(keys=[_ns(namespace) + "lease:" + lane], args=[token])

    def head(self, namespace: str, lane: str) -> str | None:
        """The lane's first event (JSON), None when empty."""
        raw = self._r.lindex(_ns(namespace) + "lane:" + lane, 0)
        return None if raw is None else _text(raw)

    def pop(self, namespace: str, lane: str, raw: str) -> bool:
        """Drop the lane's first event if it is ``raw`` (and reset its attempts)."""
        p = _ns(namespace)
        return bool(self._pop(keys=[p + "lane:" + lane, p + "att:" + lane, p + "lanes"],
                              args=[raw, lane]))

    def failed(self, namespace: str, lane: str) -> int:
        """Count a failed attempt of the lane's first event; returns the attempts so far."""
        return int(self._r.incr(_ns(namespace) + "att:" + lane))

    def attempts(self, namespace: str, lane: str) -> int:
        """Failed attempts of the lane's first event."""
        raw = self._r.get(_ns(namespace) + "att:" + lane)
        return int(raw) if raw else 0

    def dead_letter(self, namespace: str, lane: str, raw: str, record: dict[str, Any],
                    keep: int) -> None:
        """Move the lane's first event ``raw`` to the dead-letter list with ``record``
        (why, when, attempts); the list keeps the newest ``keep``. Listed first, then
        dropped from the lane: a crash in between leaves it in both (at least once)."""
        entry = {"id": secrets.token_hex(6), "namespace": namespace, "lane": lane,
                 "event": json.loads(raw), **record}
        pipe = self._r.pipeline(transaction=False)
        pipe.rpush(DEAD, json.dumps(entry))
        pipe.ltrim(DEAD, -keep, -1)
        pipe.execute()
        self.pop(namespace, lane, raw)

    def dead(self) -> list[dict[str, Any]]:
        """Every dead letter, oldest first."""
        return [json.loads(raw) for raw in self._r.lrange(DEAD, 0, -1)]

    def requeue_dead(self, ids: Sequence[str] | None = None, hook_id: str | None = None
                     ) -> list[tuple[str, str]]:
        """Put dead letters (all, those of ``ids`` or of ``hook_id``) back at the end of
        their lanes; returns the (namespace, lane) pairs to deliver. A letter is queued
        before it leaves the list, so a crash may retry it twice, never lose it."""
        wanted = set(ids or ())
        moved: list[tuple[str, str]] = []
        for raw in self._r.lrange(DEAD, 0, -1):
            entry = json.loads(raw)
            if wanted and entry["id"] not in wanted:
                continue
            if hook_id and lane_hook(entry["lane"]) != hook_id:
                continue
            p = _ns(entry["namespace"])
            pipe = self._r.pipeline(transaction=False)
            pipe.rpush(p + "lane:" + entry["lane"], json.dumps(entry["event"]))
            pipe.sadd(p + "lanes", entry["lane"])
            pipe.execute()
            self._r.lrem(DEAD, 1, raw)
            moved.append((entry["namespace"], entry["lane"]))
        return moved
