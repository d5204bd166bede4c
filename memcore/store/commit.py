"""The store's one commit primitive: a compare-and-write script (``COMMIT_WRITE``).

A :class:`ScriptBatch` collects the writes of one change (records, hash index, status
counts, order log, delta and audit entries) plus its checks: the keys the change read
and the SHA-1 of the bytes it saw. :meth:`Gateway.commit` runs it in one round trip:
the script writes only if the version pointer, the pass token and every checked key
are unchanged, else nothing is written and the caller reads again. The write path,
erase, rollback, the audit log and a pass's replay all commit this way; a check of the
pointer or token can be skipped (:data:`ANY`) by writers of a version nobody else sees.
The record logic stays in Python (``store/ops.py``); the script only compares and writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

Arg = bytes | str | int | float

EMPTY_STREAM = "xlen0"
"""A check's expected value meaning "this stream has no entries"."""

ANY = "*"
"""Skip the pointer or the token check (tokens are hex ids, versions integers)."""


def digest(raw: bytes | None) -> str:
    """What the commit script compares a read key against ('' = the key was absent)."""
    return "" if raw is None else hashlib.sha1(raw, usedforsecurity=False).hexdigest()


class ScriptBatch:
    """The checks and writes of one commit, encoded as the script's KEYS and ARGV."""

    def __init__(self, current_key: str, token_key: str) -> None:
        self.keys: list[str] = [current_key, token_key]
        self._index: dict[str, int] = {}
        self._checks: list[Arg] = []
        self._ops: list[Arg] = []
        self.writes = 0

    def _key(self, key: str) -> int:
        """1-based index of ``key`` in KEYS (added once)."""
        if key not in self._index:
            self.keys.append(key)
            self._index[key] = len(self.keys)
        return self._index[key]

    def check_empty(self, stream: str) -> None:
        """Commit only if stream ``stream`` is empty or absent."""
        self._checks += [self._key(stream), EMPTY_STREAM]

    def check(self, key: str, raw: bytes | None) -> None:
        """Commit only if ``key`` still holds ``raw`` (None = still absent)."""
        self._checks += [self._key(key), digest(raw)]

    @property
    def checks(self) -> int:
        """Number of checked keys."""
        return len(self._checks) // 2

    def _op(self, *args: Arg) -> None:
        self._ops.extend(args)
        self.writes += 1

    # --- the pipeline methods the store queues --------------------------------------
    def set(self, key: str, value: bytes | str) -> None:
        """SET."""
        self._op("SET", self._key(key), value)

    def delete(self, key: str) -> None:
        """DEL of one key."""
        self._op("DEL", self._key(key))

    def hincrby(self, key: str, field: str, amount: int) -> None:
        """HINCRBY."""
        self._op("HINCRBY", self._key(key), field, int(amount))

    def incrbyfloat(self, key: str, amount: float) -> None:
        """INCRBYFLOAT."""
        self._op("INCRBYFLOAT", self._key(key), repr(float(amount)))

    def hset(self, key: str, field: str, value: Arg) -> None:
        """HSET of one field."""
        self._op("HSET", self._key(key), field, value)

    def sadd(self, key: str, members: Sequence[str]) -> None:
        """SADD of ``members`` (nothing queued when there are none)."""
        if members:
            self._op("SADD", self._key(key), len(members), *members)

    def zadd(self, key: str, mapping: Mapping[str, float], nx: bool = False) -> None:
        """ZADD NX (the only form the write path uses)."""
        if not nx:
            raise ValueError("zadd: only nx=True is supported in a commit script")
        for member, score in mapping.items():
            self._op("ZADDNX", self._key(key), repr(float(score)), member)

    def xadd(self, key: str, fields: Mapping[str, Arg]) -> None:
        """XADD with an automatic id."""
        self._op("XADD", self._key(key), len(fields), *_flat(fields.items()))

    # --- what the store runs as separate scripts elsewhere --------------------------
    def audit(self, key: str, payload_prefix: str, payload: str, fields: Sequence[Arg]) -> None:
        """An audit entry (as ``AUDIT_APPEND``): XADD, then its payload in the day's hash."""
        self._op("AUDIT", self._key(key), payload_prefix, payload, len(fields) // 2, *fields)

    def order(self, len_key: str, chunk_prefix: str, chunk_size: int, ids: Sequence[str]) -> None:
        """Append ids to the insertion-order log (as ``ORDER_APPEND``)."""
        self._op("ORDER", self._key(len_key), chunk_prefix, chunk_size, len(ids), *ids)

    def undo(self, key: str, undo_key: str, field: str) -> None:
        """Keep ``key``'s current bytes ('' = absent) in hash ``undo_key`` under ``field``,
        unless the hash has that field already (the first write since the version)."""
        self._op("UNDO", self._key(key), self._key(undo_key), field)

    def args(self, version: int | str, token: bytes | str | None) -> list[Arg]:
        """ARGV for the script: expected pointer and token (:data:`ANY` = not checked;
        token None = no pass may be running), then the checks and the writes."""
        return [version, token or b"", self.checks, *self._checks, *self._ops]


def _flat(pairs: Any) -> list[Arg]:
    out: list[Arg] = []
    for k, v in pairs:
        out += [k, v]
    return out
