"""Producer-side access to memcore (enqueue turns, search, manage memories)."""

from memcore.client.client import Client, SearchHit

__all__ = ["Client", "SearchHit"]
