"""Precision reviews (``memcore review``): one JSON line per review, ids and labels only."""

from __future__ import annotations

from memcore.core.models import validate_namespace
from memcore.store import keys
from memcore.store.gateway import Gateway


class Reviews:
    """Append and list the stored reviews of a namespace."""

    def __init__(self, gateway: Gateway) -> None:
        self._r = gateway.client

    def add_review(self, namespace: str, line: str) -> None:
        """Append one review record (JSON) to the history of ``namespace``."""
        validate_namespace(namespace)
        self._r.rpush(keys.reviews(namespace), line)

    def reviews(self, namespace: str) -> list[str]:
        """Every stored review record of ``namespace``, oldest first."""
        validate_namespace(namespace)
        return [raw.decode() for raw in self._r.lrange(keys.reviews(namespace), 0, -1)]
