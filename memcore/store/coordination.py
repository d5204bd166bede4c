"""Coordination state of consolidation: pass locks, stashed plans, done markers, schedule
claims, the pass triggers (pending importance, last pass time) and usage counters."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from memcore.core.models import validate_namespace
from memcore.store import keys
from memcore.store.gateway import Gateway
from memcore.store.locks import RenewedLock


class Coordination:
    """Who may run a pass on a namespace, and when one is due."""

    def __init__(self, gateway: Gateway) -> None:
        self._r = gateway.client

    # --- the pass lock and the pass's shared state -------------------------------------
    def pass_lock(self, namespace: str, pass_id: str, ttl: float) -> RenewedLock:
        """The lock of the one pass running on ``namespace`` (held by ``pass_id``, TTL renewed)."""
        return RenewedLock(self._r, keys.pass_lock(namespace), ttl, token=pass_id)

    def pass_lock_holder(self, namespace: str) -> str | None:
        """The pass id holding the pass lock of ``namespace``, or None."""
        raw = self._r.get(keys.pass_lock(namespace))
        return None if raw is None else raw.decode()

    def stash_pass_plan(self, namespace: str, pass_id: str, body: str, ttl_seconds: int) -> None:
        """Keep a running pass's plan (JSON) where every worker of the pass can read it."""
        self._r.set(keys.pass_plan(namespace, pass_id), body, ex=ttl_seconds)

    def pass_plan(self, namespace: str, pass_id: str) -> str | None:
        """The stashed plan of pass ``pass_id`` (None: expired or finished)."""
        raw = self._r.get(keys.pass_plan(namespace, pass_id))
        return None if raw is None else raw.decode() if isinstance(raw, bytes) else str(raw)

    def drop_pass_plan(self, namespace: str, pass_id: str) -> None:
        """Forget the stashed plan of a finished pass."""
        self._r.delete(keys.pass_plan(namespace, pass_id))

    def mark_pass_done(self, namespace: str, pass_id: str, ttl_seconds: int) -> None:
        """Remember for ``ttl_seconds`` that pass ``pass_id`` finished."""
        self._r.set(keys.pass_done(namespace, pass_id), "1", ex=max(1, int(ttl_seconds)))

    def pass_done(self, namespace: str, pass_id: str) -> bool:
        """True if pass ``pass_id`` finished (within the remembered time)."""
        return bool(self._r.exists(keys.pass_done(namespace, pass_id)))

    def claim_schedule(self, namespace: str, slot: int, ttl_seconds: int) -> bool:
        """True for the first caller claiming ``namespace`` in schedule interval ``slot``."""
        return bool(self._r.set(keys.schedule_claim(namespace, slot), b"1", nx=True,
                                ex=max(1, int(ttl_seconds))))

    # --- triggers and counters ---------------------------------------------------------
    def pending_importance(self, namespace: str) -> float:
        """Summed importance (1-10 scale) of memories written since the last pass."""
        validate_namespace(namespace)
        return float(self._r.get(keys.pending(namespace)) or 0.0)

    def last_pass_at(self, namespace: str) -> datetime | None:
        """When the last pass committed, or None."""
        validate_namespace(namespace)
        raw = self._r.get(keys.last_pass(namespace))
        return None if raw is None else datetime.fromtimestamp(float(raw), UTC)

    def incr_counters(self, namespace: str, counts: Mapping[str, float]) -> None:
        """Add to usage counters (model calls, tokens, embeddings, decisions...)."""
        validate_namespace(namespace)
        pipe = self._r.pipeline(transaction=False)
        for name, value in counts.items():
            pipe.hincrbyfloat(keys.counters(namespace), name, float(value))
        pipe.execute()

    def counters(self, namespace: str) -> dict[str, float]:
        """All usage counters of ``namespace``."""
        validate_namespace(namespace)
        return {k.decode(): float(v) for k, v in self._r.hgetall(keys.counters(namespace)).items()}
