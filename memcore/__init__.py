"""memcore: long-term memory for LLM agents.

``from memcore import Client`` is the producer entry point. It is resolved lazily, so
importing a submodule (``memcore.core.models``) does not load the client's stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from memcore.client import Client, SearchHit
    from memcore.client.errors import (
        AuthError,
        Backpressure,
        BrokerBusy,
        Invalid,
        NotFound,
        NoWorker,
        RateLimited,
        RemoteError,
        Unavailable,
        UnknownTask,
    )
    from memcore.client.remote import AsyncRemoteClient, RemoteClient
    from memcore.core.config import Settings
    from memcore.core.errors import UnknownNamespaceWarning

__all__ = ["AsyncRemoteClient", "AuthError", "Backpressure", "BrokerBusy", "Client", "Invalid",
           "NoWorker", "NotFound", "RateLimited",
           "RemoteClient", "RemoteError", "SearchHit", "Settings", "Unavailable",
           "UnknownNamespaceWarning", "UnknownTask", "__version__"]

_EXPORTS = {
    "Client": "memcore.client",
    "SearchHit": "memcore.client",
    "Settings": "memcore.core.config",
    "RemoteClient": "memcore.client.remote",
    "AsyncRemoteClient": "memcore.client.remote",
    "RemoteError": "memcore.client.errors",
    "AuthError": "memcore.client.errors",
    "NotFound": "memcore.client.errors",
    "Invalid": "memcore.client.errors",
    "Unavailable": "memcore.client.errors",
    "NoWorker": "memcore.client.errors",
    "BrokerBusy": "memcore.client.errors",
    "Backpressure": "memcore.client.errors",
    "RateLimited": "memcore.client.errors",
    "UnknownTask": "memcore.client.errors",
    "UnknownNamespaceWarning": "memcore.core.errors",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memcore' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
