"""Episodes: a Redis Stream of ids per namespace plus one packed body per episode.

The body lives outside the stream so an erase really removes the text (XDEL only
flags a stream entry; its bytes stay in the stream's node).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from memcore.core.models import Episode, validate_identifier, validate_namespace
from memcore.store import guard, keys
from memcore.store.base import BATCH
from memcore.store.codec import pack_episode, unpack_episode
from memcore.store.errors import ErasedMeanwhile
from memcore.store.gateway import Gateway


def _split(raw: bytes) -> tuple[str, bytes]:
    sid, _, body = raw.partition(b"|")
    return sid.decode(), body


class Episodes:
    """Idempotent episode storage."""

    def __init__(self, gateway: Gateway) -> None:
        self._gw = gateway
        self._r = gateway.client

    def add_episodes(self, episodes: Sequence[Episode]) -> list[bool]:
        """Store episodes; True = newly stored, False = that id was already there.
        Under :meth:`Gateway.fenced` the append checks the erase counts in its script and
        raises ErasedMeanwhile (nothing stored) when an erase changed them."""
        by_ns: dict[str, list[int]] = {}
        for pos, ep in enumerate(episodes):
            by_ns.setdefault(ep.namespace, []).append(pos)
        out = [False] * len(episodes)
        for ns, positions in by_ns.items():
            validate_namespace(ns)
            self._gw.register(ns)
            fence = guard.active(ns)
            expected = fence.expected() if fence is not None else []
            args: list[str | bytes] = [keys.prefix(ns), str(len(expected)),
                                       *(raw or b"" for _, raw in expected)]
            for pos in positions:
                args += [validate_identifier(episodes[pos].id), pack_episode(episodes[pos])]
            res = self._gw.add_episodes(keys=[keys.episodes(ns), *(k for k, _ in expected)],
                                        args=args)
            if res == -1 and fence is not None:
                self._gw.check_guard(fence)
                raise ErasedMeanwhile(f"namespace {ns!r}: erased meanwhile; no turn stored")
            for pos, flag in zip(positions, res, strict=True):
                out[pos] = bool(flag)
        return out

    def get_episode(self, namespace: str, episode_id: str) -> Episode | None:
        """One episode by id, or None."""
        raw = self._r.get(keys.episode(namespace, episode_id))
        return None if raw is None else unpack_episode(_split(raw)[1], namespace, episode_id)

    def iter_episodes(self, namespace: str) -> Iterator[Episode]:
        """Every stored episode in arrival order."""
        validate_namespace(namespace)
        start = "-"
        while True:
            entries = self._r.xrange(keys.episodes(namespace), start, "+", count=BATCH)
            if not entries:
                return
            ids = [f[b"i"].decode() for _, f in entries]
            raws = self._r.mget([keys.episode(namespace, i) for i in ids])
            for episode_id, raw in zip(ids, raws, strict=True):
                if raw is not None:  # erased
                    yield unpack_episode(_split(raw)[1], namespace, episode_id)
            if len(entries) < BATCH:
                return
            start = "(" + entries[-1][0].decode()

    def recent(self, namespace: str, count: int) -> list[Episode]:
        """The namespace's last ``count`` stored episodes, newest first (erased ones
        left out): what a turn is read with (the assistant's question before it)."""
        validate_namespace(namespace)
        entries = self._r.xrevrange(keys.episodes(namespace), "+", "-", count=count)
        ids = [f[b"i"].decode() for _, f in entries]
        if not ids:
            return []
        raws = self._r.mget([keys.episode(namespace, i) for i in ids])
        return [unpack_episode(_split(raw)[1], namespace, episode_id)
                for episode_id, raw in zip(ids, raws, strict=True) if raw is not None]

    def drop(self, namespace: str, episode_id: str) -> bool:
        """Delete an episode's body and stream entry; True if it existed."""
        key = keys.episode(namespace, episode_id)
        raw = self._r.get(key)
        if raw is None:
            return False
        sid, _ = _split(raw)
        pipe = self._r.pipeline()
        pipe.delete(key)
        pipe.xdel(keys.episodes(namespace), sid)
        pipe.execute()
        return True
