"""Errors of memory operations that callers (the CLI, the HTTP API) map to answers."""

from __future__ import annotations


class MemoryNotFound(KeyError):
    """No memory with that id in that namespace (HTTP 404).

    A KeyError for the callers that already catch one; ``str()`` is the plain message.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "memory not found"


class EpisodeNotFound(KeyError):
    """No turn with that id (and no memory citing it) in that namespace (HTTP 404)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "episode not found"


class NamespaceNotFound(KeyError):
    """The namespace has no data, for an operation that would otherwise create some
    (e.g. a consolidation pass of a typo'd name writing a snapshot) (HTTP 404)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "namespace not found"


class MemoryStateError(ValueError):
    """The memory exists but its status forbids the operation, e.g. pinning a deleted
    memory or deleting it twice (HTTP 409)."""


class UnknownNamespaceWarning(UserWarning):
    """A read (search, profile) of a namespace that has no data: the answer is empty
    because of the name, not because nothing matched. Its text is the same sentence the
    HTTP API puts in its answer's ``warning`` field and the CLI prints as its error."""
