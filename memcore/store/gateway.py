"""The one Redis connection of a store, its scripts, shared reads and the commit primitive.

Every repository of the store (records, writes, episodes, audit, snapshots, erase,
coordination, reviews) holds the same :class:`Gateway`; none keeps a client of its own.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import redis
from redis.cluster import RedisCluster

from memcore.core.models import Memory, new_id, validate_identifier, validate_namespace
from memcore.store import guard, keys, scripts
from memcore.store.base import BATCH, DurabilityError, NamespaceState
from memcore.store.codec import unpack_memory
from memcore.store.commit import ANY, ScriptBatch
from memcore.store.connect import primaries
from memcore.store.errors import ErasedMeanwhile
from memcore.store.guard import Guard

log = logging.getLogger(__name__)


class LuaScript:
    """A Lua script run by its SHA-1, sent whole (EVAL) where the server lacks it.

    Unlike redis-py's ``Script``, a missing script is not loaded on every node first (a
    cluster would send SCRIPT LOAD to every primary, and fail while any one is down):
    EVAL goes to the node of the keys and caches the script there."""

    def __init__(self, client: redis.Redis, source: str) -> None:
        self.client = client
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()

    def __call__(self, keys: Sequence[str] = (), args: Sequence[Any] = ()) -> Any:
        """Run with ``keys`` (all in one slot) and ``args``; returns the script's reply."""
        try:
            return self.client.evalsha(self.sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            return self.client.eval(self.source, len(keys), *keys, *args)


class Gateway:
    """Connection, registered scripts, version reads and :meth:`commit`."""

    def __init__(self, client: redis.Redis, *, check_durability: bool = True,
                 strength_cap: float = 10.0, pass_ttl_seconds: int = 6 * 3600) -> None:
        """Wrap ``client``; refuse a server whose eviction policy could drop keys."""
        self.client = client
        self.strength_cap = strength_cap
        self.pass_ttl_seconds = pass_ttl_seconds
        self._known: set[str] = set()
        self._cluster = isinstance(client, RedisCluster)
        if check_durability:
            self.check_durability()
        self.mget_current = LuaScript(client, scripts.MGET_CURRENT)
        self.search_script = LuaScript(client, scripts.SEARCH_READ)
        self.touch = LuaScript(client, scripts.TOUCH)
        self.begin_pass = LuaScript(client, scripts.BEGIN_PASS)
        self.cas_commit = LuaScript(client, scripts.PASS_SWAP)
        self.rewrite_stream = LuaScript(client, scripts.REWRITE_STREAM)
        self.add_episodes = LuaScript(client, scripts.ADD_EPISODES)
        self.read_for_write = LuaScript(client, scripts.READ_FOR_WRITE)
        self.commit_write = LuaScript(client, scripts.COMMIT_WRITE)
        self.order_since = LuaScript(client, scripts.ORDER_SINCE)

    def nodes(self) -> list[redis.Redis]:
        """A plain client per server: each primary of a cluster, else the one server."""
        return primaries(self.client)

    def check_durability(self) -> None:
        """Raise DurabilityError unless ``maxmemory-policy`` is ``noeviction`` (on every
        primary of a cluster)."""
        for node in self.nodes():
            info = node.info("memory")
            policy = str(info.get("maxmemory_policy", "noeviction"))
            if policy != "noeviction":
                raise DurabilityError(
                    f"Redis maxmemory-policy is {policy!r}: the server may evict memcore's keys "
                    "and lose memories silently. Set 'maxmemory-policy noeviction' "
                    "(see notes/store.md).")
            if not node.info("persistence").get("aof_enabled"):
                log.warning("Redis AOF is off: acknowledged writes can be lost on a crash "
                            "(set appendonly yes, appendfsync everysec or always)")

    # --- the commit primitive ---------------------------------------------------------
    def commit(self, namespace: str, batch: ScriptBatch, *, version: int | str = ANY,
               token: bytes | str | None = ANY) -> bool:
        """Run ``batch`` atomically if the pointer of ``namespace`` still is ``version``, the pass
        token still is ``token`` (None: no pass running) and every checked key still holds
        what was read; False (nothing written) otherwise. :data:`ANY` skips a check."""
        if not batch.writes and not batch.checks:
            return True
        if batch.keys[:2] != [keys.current(namespace), keys.pass_token(namespace)]:
            raise ValueError(f"namespace: batch was built for another namespace than {namespace!r}")
        fence = guard.active(namespace)
        if fence is not None:  # fenced: the erase counts are checked in the same script
            for key, raw in fence.expected():
                batch.check(key, raw)
        if self.commit_write(keys=batch.keys, args=batch.args(version, token)):
            return True
        if fence is not None:
            self.check_guard(fence)
        return False

    # --- erase fences (memcore.store.guard) ---------------------------------------------
    def read_guard(self, namespace: str) -> Guard:
        """The namespace's erase counts now (one MGET: one slot)."""
        whole, single = self.client.mget([keys.erase_fence(namespace), keys.erasures(namespace)])
        return Guard(namespace, whole, single)

    def check_guard(self, fence: Guard) -> None:
        """Raise ErasedMeanwhile if an erase changed ``fence``'s counts."""
        if self.read_guard(fence.namespace) != fence:
            raise ErasedMeanwhile(
                f"namespace {fence.namespace!r}: erased since this write read its erase "
                f"counts (whole {fence.fence}, single {fence.erasures}); nothing written")

    @contextmanager
    def fenced(self, fence: Guard) -> Iterator[None]:
        """Inside the block, every commit and episode append of ``fence.namespace`` made
        by this thread (context) is refused with ErasedMeanwhile once an erase changed
        the counts ``fence`` read; the check runs in the write's own script."""
        with guard.scoped(fence.namespace, fence):
            yield

    @contextmanager
    def unfenced(self, namespace: str) -> Iterator[None]:
        """Lift :meth:`fenced` inside the block (an erase the writer itself makes)."""
        with guard.scoped(namespace, None):
            yield

    def batch(self, namespace: str) -> ScriptBatch:
        """An empty batch for namespace ``namespace``."""
        return ScriptBatch(keys.current(namespace), keys.pass_token(namespace))

    # --- shared reads -------------------------------------------------------------------
    def register(self, namespace: str) -> None:
        """Add ``namespace`` to the registry (once per process; SADD is idempotent)."""
        if namespace not in self._known:
            self.client.sadd(keys.REGISTRY, namespace)
            self._known.add(namespace)

    def forget(self, namespace: str) -> None:
        """Remove ``namespace`` from the registry."""
        self.client.srem(keys.REGISTRY, namespace)
        self._known.discard(namespace)

    def new_generation(self, namespace: str) -> None:
        """Replace the namespace's generation token (see :meth:`generation`)."""
        self.client.set(keys.generation(namespace), new_id())

    def generation(self, namespace: str) -> str:
        """The namespace's generation token, created when missing (a namespace erased and
        written again gets a new one, so a table cached before the erase never matches)."""
        self.client.set(keys.generation(namespace), new_id(), nx=True)
        raw = self.client.get(keys.generation(namespace))
        return raw.decode() if raw is not None else ""

    def namespace_state(self, namespace: str) -> NamespaceState:
        """Version pointer, generation token, order-log length and record-change count
        (one MGET: one slot).
        The token is '' while missing: a never-erased namespace, or one whose erase is
        still in progress (its log length then shows it)."""
        return self.namespace_state_and(namespace, ())[0]

    def namespace_state_and(self, namespace: str, extra: Sequence[str]
                            ) -> tuple[NamespaceState, list[bytes | None]]:
        """:meth:`namespace_state` and the values of the ``extra`` string keys (None:
        missing), in the same round trip on a standalone Redis (one MGET: a search
        confirms its API key there). On a cluster the extra keys live in other slots:
        one GET each, after the namespace's MGET (still one slot, one atomic read)."""
        names = _state_keys(namespace)
        if extra and self._cluster:
            values = [*self.client.mget(names), *(self.client.get(key) for key in extra)]
        else:
            values = self.client.mget([*names, *extra])
        return _state(values[:4]), list(values[4:])

    def search_read(self, namespace: str, ids: Sequence[str], extra: str | None
                    ) -> tuple[NamespaceState, bytes | None, list[bytes | None]]:
        """:meth:`namespace_state`, the value of the string key ``extra`` (None: missing
        or not asked) and the packed records of ``ids``, in one round trip on a
        standalone Redis (one script; on a cluster ``extra`` is a GET after it)."""
        validate_namespace(namespace)
        for memory_id in ids:
            validate_identifier(memory_id)
        names = _state_keys(namespace)
        if extra is not None and not self._cluster:
            names.append(extra)
        res = self.search_script(keys=names, args=[keys.prefix(namespace), *ids])
        guarded = res[4]
        if extra is not None and self._cluster:
            guarded = self.client.get(extra)
        return _state(res[:4]), guarded, list(res[5:])

    def current_version(self, namespace: str) -> int:
        """The current snapshot version (0 before any pass)."""
        raw = self.client.get(keys.current(namespace))
        return int(raw) if raw is not None else 0

    def load_raw(self, namespace: str, ids: Sequence[str]) -> list[bytes | None]:
        """Packed records of ``ids`` (MGET in batches; not one atomic read)."""
        out: list[bytes | None] = []
        for start in range(0, len(ids), BATCH):
            chunk = ids[start : start + BATCH]
            out.extend(self.client.mget([keys.memory(namespace, i) for i in chunk]))
        return out

    def load(self, namespace: str, version: int, ids: Sequence[str], *, vectors: bool = True
             ) -> list[Memory | None]:
        """Records of ``ids`` as of committed ``version``: the live records, with the undo
        hashes of the later versions applied newest first (nothing to apply for the
        current version; ``vectors=False``: vectors left undecoded)."""
        raws = self.load_raw(namespace, ids)
        current = self.current_version(namespace)
        later = sorted((int(v) for v in self.client.zrange(keys.versions(namespace), 0, -1)
                        if version < int(v) <= current), reverse=True)
        for u in later:
            olds = self.client.hmget(keys.undo(namespace, u), list(ids)) if ids else []
            raws = [raw if old is None else (old or None)
                    for raw, old in zip(raws, olds, strict=True)]
        return [None if raw is None else unpack_memory(raw, namespace, i, vector=vectors)
                for i, raw in zip(ids, raws, strict=True)]

    def read_current(self, namespace: str, ids: Sequence[str], *, vectors: bool = True
                     ) -> tuple[int, list[Memory | None]]:
        """Pointer and records in one atomic round trip (never a mix of versions)."""
        version, raws = self.read_current_raw(namespace, ids)
        recs = [None if raw is None else unpack_memory(raw, namespace, i, vector=vectors)
                for i, raw in zip(ids, raws, strict=True)]
        return version, recs

    def read_current_raw(self, namespace: str, ids: Sequence[str]
                         ) -> tuple[int, list[bytes | None]]:
        """:meth:`read_current` with the records still packed."""
        validate_namespace(namespace)
        for memory_id in ids:
            validate_identifier(memory_id)
        res = self.mget_current(keys=[keys.current(namespace)], args=[keys.prefix(namespace), *ids])
        return int(res[0]), list(res[1:])

    def order_ids(self, namespace: str, offset: int, limit: int | None = None) -> list[str]:
        """Ids of the insertion-order log from ``offset``."""
        total = int(self.client.get(keys.order_len(namespace)) or 0)
        end = total if limit is None else min(total, offset + limit)
        ids: list[str] = []
        pos = offset
        while pos < end:
            chunk, start = divmod(pos, keys.ORDER_CHUNK)
            stop = min(keys.ORDER_CHUNK - 1, start + (end - pos) - 1)
            got = self.client.lrange(keys.order_chunk(namespace, chunk), start, stop)
            if not got:
                break
            ids.extend(g.decode() for g in got)
            pos += len(got)
        return ids

    def live_ids(self, namespace: str) -> list[str]:
        """Distinct ids of the order log, first appearance order (erased ids included)."""
        seen: dict[str, None] = {}
        for memory_id in self.order_ids(namespace, 0):
            seen.setdefault(memory_id, None)
        return list(seen)

    def live_memories(self, namespace: str) -> list[Memory]:
        """Every record of the namespace (read in batches, not one atomic read)."""
        ids = self.live_ids(namespace)
        return [unpack_memory(raw, namespace, i) for i, raw in zip(ids, self.load_raw(namespace,
                                                                                      ids),
                                                           strict=True) if raw is not None]


def _state_keys(namespace: str) -> list[str]:
    """The keys :class:`NamespaceState` is read from, in :func:`_state`'s order."""
    return [keys.current(namespace), keys.generation(namespace), keys.order_len(namespace),
            keys.writes(namespace)]


def _state(values: Sequence[bytes | None]) -> NamespaceState:
    current, epoch, length, writes = values
    return NamespaceState(version=int(current) if current is not None else 0,
                          epoch=epoch.decode() if epoch is not None else "",
                          order_length=int(length) if length is not None else 0,
                          writes=writes.decode() if writes is not None else "")
