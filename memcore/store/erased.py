"""What single erases removed, without text, so a turn accepted before cannot restore it.

A memory erase, a turn erase and a forget request each count one more single erase of
the namespace (``mc:erasures:{ns}``) and note, under that count, what they remove:
``e:<turn id>`` for each turn erased and ``h:<content hash>`` (memcore.core.text,
scope included) for each text removed (the memory's, those merged into it, the turn's).
Hashes and ids only: no text is kept. A producer stamps every ingest task with the
count when it accepted the turns; the write path leaves out the turns and facts an
erase noted after that (:meth:`Erased.since`), and writes fenced on the count
(memcore.store.guard) so an erase between that read and a write is seen too
(docs/design.md, Erase wins over the queue). Erasing the namespace deletes the notes
with everything else: its own fence drops the tasks accepted before it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from memcore.core.models import validate_identifier, validate_namespace
from memcore.store import keys, scripts
from memcore.store.gateway import Gateway, LuaScript


@dataclass(frozen=True)
class ErasedSince:
    """What single erases after some count removed."""

    turns: frozenset[str] = field(default_factory=frozenset)
    """Turn (episode) ids erased."""
    hashes: frozenset[str] = field(default_factory=frozenset)
    """Content hashes (text with scope) of the texts erased."""

    def __bool__(self) -> bool:
        return bool(self.turns or self.hashes)


class Erased:
    """Note what a single erase removes; read what erases after a count removed."""

    def __init__(self, gateway: Gateway) -> None:
        self._r = gateway.client
        self._record = LuaScript(gateway.client, scripts.RECORD_ERASED)

    def count(self, namespace: str) -> int:
        """How many single erases ``namespace`` had (0: none)."""
        raw = self._r.get(keys.erasures(namespace))
        return int(raw) if raw is not None else 0

    def record(self, namespace: str, *, turns: Iterable[str], hashes: Iterable[str]) -> int:
        """Count one more single erase and note its turn ids and content hashes under the
        new count (one script); returns the new count. Called before the erase removes
        anything, so a fenced write racing it is refused (memcore.store.guard)."""
        validate_namespace(namespace)
        fields = sorted({f"e:{validate_identifier(t)}" for t in turns}
                        | {f"h:{keys.check_hash(h)}" for h in hashes})
        return int(self._record(keys=[keys.erasures(namespace), keys.erased(namespace)],
                                args=fields))

    def since(self, namespace: str, count: int) -> ErasedSince:
        """What the single erases of ``namespace`` after erase count ``count`` removed."""
        validate_namespace(namespace)
        turns: set[str] = set()
        hashes: set[str] = set()
        for name, at in self._r.hscan_iter(keys.erased(namespace), count=1000):
            if int(at) <= count:
                continue
            kind, _, value = name.decode().partition(":")
            (turns if kind == "e" else hashes).add(value)
        return ErasedSince(frozenset(turns), frozenset(hashes))
