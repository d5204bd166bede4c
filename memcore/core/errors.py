"""Errors of memory operations that callers (the CLI, the HTTP API) map to answers."""

from __future__ import annotations


class MemoryNotFound(KeyError):
    """No memory with that id in that namespace (HTTP 404).

    A KeyError for the callers that already catch one; ``str()`` is the plain message.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "memory not found"


class MemoryStateError(ValueError):
    """The memory exists but its status forbids the operation, e.g. pinning a deleted
    memory or deleting it twice (HTTP 409)."""
