"""RemoteClient and AsyncRemoteClient offer memcore.Client's methods, with the same
parameter names and defaults (a subset where an option has no meaning over HTTP)."""

from __future__ import annotations

import inspect

from memcore import AsyncRemoteClient, Client, RemoteClient

# Local-only: they hand out the process' own machinery, or a report type the HTTP erase
# folds into its count.
LOCAL_ONLY = {"batched", "celery", "models", "store", "settings", "erase_memory",
              "forget_indexes", "wait_for_pass", "defer_touches",  # this process's caches, chords
              "publish_check",  # this process's broker pool (what its /readyz reports)
              "queue_lengths",  # read from the broker; over HTTP, in stats()["queues"]
              "no_data"}  # over HTTP, the "warning" of search and profile (warned alike)


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(fn) for name, fn in inspect.getmembers(cls)
            if not name.startswith("_") and inspect.isfunction(fn)}


def test_every_client_method_exists_remotely() -> None:
    local = {n for n in _public(Client)} - LOCAL_ONLY
    assert local <= set(_public(RemoteClient))
    assert local - {"close"} <= set(_public(AsyncRemoteClient))
    assert "aclose" in _public(AsyncRemoteClient)


def test_parameters_match_client() -> None:
    local = _public(Client)
    for cls in (RemoteClient, AsyncRemoteClient):
        for name, sig in _public(cls).items():
            if name not in local:
                continue
            theirs = local[name].parameters
            for param in sig.parameters.values():
                assert param.name in theirs, f"{cls.__name__}.{name}({param.name})"
                assert param.default == theirs[param.name].default, \
                    f"{cls.__name__}.{name}({param.name}) default"
            if cls is AsyncRemoteClient:
                assert inspect.iscoroutinefunction(getattr(cls, name)), name
