"""Per-namespace model usage: calls and tokens by operation, for ``stats`` and ``/metrics``.

Each operation that made model calls (an ingest task, a pass's merge batch and reduce, a
context block) adds what it spent to its namespace's counters hash
(``mc:{ns}:counters``, fields ``usage.<operation>.<field>``, shown by ``stats`` with the
other counters; erased with the namespace) and to the all-namespaces hash ``mc:usage``
(fields ``<operation>.<field>``; kept), in one pipeline. ``<field>`` is one of
:data:`~memcore.observability.usage.USAGE_FIELDS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from memcore.core.models import validate_namespace
from memcore.observability.usage import USAGE_FIELDS, CallUsage
from memcore.store import keys
from memcore.store.gateway import Gateway

OPERATIONS = ("ingest", "consolidate", "context")
"""The operations whose model calls are counted."""
PREFIX = "usage."

Usage = dict[str, dict[str, int]]
"""operation -> field -> count."""


def _parse(fields: Mapping[bytes | str, bytes | str | float], prefix: str = "") -> Usage:
    out: Usage = {}
    for raw, value in fields.items():
        name = raw.decode() if isinstance(raw, bytes) else str(raw)
        if not name.startswith(prefix):
            continue
        operation, _, field = name[len(prefix):].rpartition(".")
        if operation and field in USAGE_FIELDS:
            out.setdefault(operation, dict.fromkeys(USAGE_FIELDS, 0))[field] = int(float(value))
    return out


class UsageCounters:
    """Add to and read the usage counters."""

    def __init__(self, gateway: Gateway) -> None:
        self._gw = gateway

    def record(self, namespace: str, operation: str, usage: CallUsage) -> None:
        """Add ``usage`` (one operation's calls and tokens) to ``namespace``'s counters
        and to the all-namespaces totals; nothing when it made no call."""
        validate_namespace(namespace)
        if operation not in OPERATIONS:
            raise ValueError(f"operation: expected one of {', '.join(OPERATIONS)}, "
                             f"got {operation!r}")
        counts = {f: getattr(usage, f) for f in USAGE_FIELDS}
        if not any(counts.values()):
            return
        pipe = self._gw.client.pipeline(transaction=False)
        for field, value in counts.items():
            if value:
                pipe.hincrby(keys.counters(namespace), f"{PREFIX}{operation}.{field}", value)
                pipe.hincrby(keys.USAGE, f"{operation}.{field}", value)
        pipe.execute()

    def of(self, namespace: str) -> Usage:
        """``namespace``'s usage by operation (operations that made no call left out)."""
        validate_namespace(namespace)
        return _parse(self._gw.client.hgetall(keys.counters(namespace)), PREFIX)

    def totals(self) -> Usage:
        """All namespaces' usage by operation (erased namespaces included)."""
        return _parse(self._gw.client.hgetall(keys.USAGE))

    def by_namespace(self) -> dict[str, Usage]:
        """Every namespace with data and its usage (one pipeline; none left out)."""
        namespaces = sorted(m.decode() for m in self._gw.client.smembers(keys.REGISTRY))
        pipe = self._gw.client.pipeline(transaction=False)
        for ns in namespaces:
            pipe.hgetall(keys.counters(ns))
        return {ns: _parse(fields, PREFIX)
                for ns, fields in zip(namespaces, pipe.execute(), strict=True)}
