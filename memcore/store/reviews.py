"""Precision reviews (``memcore review``): one JSON line per review, ids and labels only."""

from __future__ import annotations

from memcore.core.models import validate_namespace
from memcore.store import keys
from memcore.store.gateway import Gateway


class Reviews:
    """Append and list the stored reviews of a namespace."""

    def __init__(self, gateway: Gateway) -> None:
        self._r = gateway.client

    def add_review(self, ns: str, line: str) -> None:
        """Append one review record (JSON) to the history of ``ns``."""
        validate_namespace(ns)
        self._r.rpush(keys.reviews(ns), line)

    def reviews(self, ns: str) -> list[str]:
        """Every stored review record of ``ns``, oldest first."""
        validate_namespace(ns)
        return [raw.decode() for raw in self._r.lrange(keys.reviews(ns), 0, -1)]
