"""A writer's view of a namespace's erase counts, checked inside each of its writes.

An ingest task decides once, when it starts, whether an erase has run since its turns
were accepted (memcore.ingest.fence). Without more, an erase between that check and
the task's writes would lose to them: the task writes what the erase just removed.
So the task writes *fenced* (:meth:`memcore.store.gateway.Gateway.fenced`): every
commit and episode append of the namespace also checks, in the same script, that the
namespace's whole-erase count (``mc:fence:{ns}``) and single-erase count
(``mc:erasures:{ns}``) still hold what the task read; if not, nothing of that write is
stored and :class:`~memcore.store.errors.ErasedMeanwhile` is raised (docs/design.md,
Erase wins over the queue).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from memcore.store import keys


@dataclass(frozen=True)
class Guard:
    """A namespace's erase counts as read (raw values; None: the key was absent)."""

    namespace: str
    whole: bytes | None
    """``mc:fence:{ns}``: erases of the whole namespace."""
    single: bytes | None
    """``mc:erasures:{ns}``: erases of one memory, one turn, or by a forget request."""

    @property
    def fence(self) -> int:
        """How many times the namespace was erased whole."""
        return int(self.whole) if self.whole is not None else 0

    @property
    def erasures(self) -> int:
        """How many single erases the namespace had."""
        return int(self.single) if self.single is not None else 0

    def expected(self) -> list[tuple[str, bytes | None]]:
        """The guard keys and the values a fenced write requires them to hold."""
        return [(keys.erase_fence(self.namespace), self.whole),
                (keys.erasures(self.namespace), self.single)]


_ACTIVE: ContextVar[dict[str, Guard | None] | None] = ContextVar("memcore_store_guards",
                                                                default=None)


def active(namespace: str) -> Guard | None:
    """The guard the current context writes ``namespace`` under (None: unfenced)."""
    return (_ACTIVE.get() or {}).get(namespace)


@contextmanager
def scoped(namespace: str, guard: Guard | None) -> Iterator[None]:
    """Write ``namespace`` under ``guard`` (None: unfenced) inside the block."""
    token = _ACTIVE.set({**(_ACTIVE.get() or {}), namespace: guard})
    try:
        yield
    finally:
        _ACTIVE.reset(token)
