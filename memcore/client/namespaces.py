"""One sentence for "this namespace has no data", said the same way everywhere
(docs/design.md, unknown namespaces): as a Python warning by ``Client.search``/``profile``,
in the ``warning`` field of the HTTP search and profile answers and the MCP tools, as the
error of the CLI and of ``consolidate``."""

from __future__ import annotations

from collections.abc import Callable

from memcore.core.suggest import closest
from memcore.store import MemoryStore

Visible = Callable[[str], bool]


def no_data_message(store: MemoryStore, namespace: str,
                    visible: Visible | None = None) -> str | None:
    """None if ``namespace`` has data; else why it has none: its turns are still queued
    (the ingest backlog), or the name is unknown, with the closest stored name
    ``visible`` allows (a key's scopes: no other tenant's name is suggested)."""
    if store.records.has_namespace(namespace):
        return None
    queued = store.backlog.depth(namespace).namespace
    if queued:
        return (f"namespace {namespace!r} has no data yet: {queued} ingest task(s) of it "
                "are still queued (wait for them, then retry)")
    near = closest(namespace, (n for n in store.records.namespaces()
                               if visible is None or visible(n)))
    hint = f"did you mean {near!r}?" if near else "check the name"
    return f"namespace {namespace!r} has no data ({hint})"
