"""Builders shared by the CLI tests: memories written straight into a real store."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from typer.testing import CliRunner, Result

from memcore.adapters import build_embedder
from memcore.cli.app import app
from memcore.core.config import Settings
from memcore.core.models import Actor, Kind, Memory, Status
from memcore.store import MemoryStore

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
NS = "cli-test"


def run(url: str | None, *args: str, input: str | None = None) -> Result:
    """Invoke ``memcore [--redis-url url] args`` in-process."""
    argv = (["--redis-url", url] if url else []) + list(args)
    return CliRunner().invoke(app, argv, input=input)


def run_json(url: str, *args: str) -> Any:
    """Invoke with ``--json`` and parse stdout (asserting exit 0)."""
    result = run(url, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def memory(text: str, *, sources: Sequence[str] = ("e1", "e2"), kind: Kind = Kind.KNOWLEDGE,
           status: Status = Status.ACTIVE, days_ago: float = 0.0, ns: str = NS,
           **fields: Any) -> Memory:
    """An active memory with a hashing-embedder vector, last supported ``days_ago`` before T0."""
    at = T0 - timedelta(days=days_ago)
    vector = build_embedder(Settings()).embed([text])[0]
    data: dict[str, Any] = dict(namespace=ns, text=text, vector=[float(x) for x in vector],
                                last_used=at, created_at=at, updated_at=at, kind=kind,
                                sources=list(sources), status=status, confidence=0.75)
    data.update(fields)
    return Memory.model_validate(data)


def put(url: str, *memories: Memory) -> list[Memory]:
    """ADD the memories to the store (as the user), returning the stored records."""
    store = MemoryStore.from_url(url)
    try:
        return [store.writes.add(m.namespace, m, actor=Actor.USER, reason="test") for m in memories]
    finally:
        store.client.close()
