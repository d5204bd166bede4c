"""memcore.Client, RemoteClient and AsyncRemoteClient offer every operation declared in
memcore.client.operations, with its parameters, defaults, annotations and result type;
the list of operations comes from that one definition."""

from __future__ import annotations

import inspect

import pytest

from memcore import AsyncRemoteClient, Client, RemoteClient
from memcore.client.operations import OPERATIONS, Calls, signature

# Local-only: they hand out the process' own machinery, or a report type the HTTP erase
# folds into its count. A new public Client method must be an operation or listed here.
LOCAL_ONLY = {"batched", "celery", "models", "store", "settings", "erase_memory",
              "forget_indexes", "wait_for_pass", "defer_touches",  # this process's caches, chords
              "publish_check",  # this process's broker pool (what its /readyz reports)
              "queue_lengths",  # read from the broker; over HTTP, in stats()["queues"]
              "no_data",  # over HTTP, the "warning" of search and profile (warned alike)
              "close", "worker_check"}  # lifecycle; this process's worker broadcast


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def _shape(param: inspect.Parameter) -> tuple[object, ...]:
    """What a caller relies on: name, kind, default and (normalised) annotation."""
    return (param.name, param.kind, param.default, " ".join(str(param.annotation).split()))


def test_operations_are_the_calls_methods() -> None:
    # The definition is not empty and names what the HTTP clients have always offered.
    assert {"add", "wait", "search", "get", "list", "erase", "rollback"} <= set(OPERATIONS)
    assert all(callable(getattr(Calls, name)) for name in OPERATIONS)


def test_every_client_method_is_an_operation_or_local() -> None:
    assert _public(Client) - set(OPERATIONS) - LOCAL_ONLY == set()
    assert LOCAL_ONLY.isdisjoint(OPERATIONS)


@pytest.mark.parametrize("name", OPERATIONS)
@pytest.mark.parametrize("cls", [RemoteClient, AsyncRemoteClient])
def test_remote_clients_have_the_operations_signature(cls: type, name: str) -> None:
    method = getattr(cls, name)
    assert inspect.signature(method) == signature(name), f"{cls.__name__}.{name}"
    assert method.__doc__ == getattr(Calls, name).__doc__
    assert inspect.iscoroutinefunction(method) == (cls is AsyncRemoteClient), name


@pytest.mark.parametrize("name", OPERATIONS)
def test_client_has_the_operations_signature(name: str) -> None:
    """Client takes the operation's parameters (same kinds, defaults, annotations, and
    positions for the positional ones) and returns its result type; its own extra options
    all have defaults, so a call that suits the remote client suits it."""
    ours = inspect.signature(getattr(Client, name))
    theirs = signature(name)
    assert " ".join(str(ours.return_annotation).split()) == theirs.return_annotation, name
    shared = [p for p in ours.parameters.values() if p.name in theirs.parameters]
    assert [_shape(p) for p in shared] == [_shape(p) for p in theirs.parameters.values()], name
    extra = [p for p in ours.parameters.values() if p.name not in theirs.parameters]
    assert all(p.default is not inspect.Parameter.empty for p in extra), name
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    mine = [p.name for p in ours.parameters.values() if p.kind in positional]
    defined = [p.name for p in theirs.parameters.values() if p.kind in positional]
    assert mine[:len(defined)] == defined, name


def test_a_changed_client_signature_is_caught() -> None:
    """The comparison above sees a default, a kind or an annotation that drifts."""
    theirs = signature("search")
    for change in ({"default": 5}, {"kind": inspect.Parameter.KEYWORD_ONLY},
                   {"annotation": "float"}):
        drifted = theirs.parameters["k"].replace(**change)  # type: ignore[arg-type]
        assert _shape(drifted) != _shape(theirs.parameters["k"])
