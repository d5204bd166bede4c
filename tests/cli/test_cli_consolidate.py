"""`memcore consolidate` on real Celery workers: an incremental pass and `--full`."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from memcore.client.client import Client
from memcore.core.errors import NamespaceNotFound
from memcore.core.models import AuditAction, Status
from memcore.local.stack import LocalStack
from memcore.store import MemoryStore
from tests.support.cli_helpers import T0, memory, put, run, run_json


def test_full_pass_searches_memories_the_incremental_pass_skips(
        celery_stack: LocalStack) -> None:
    url = celery_stack.redis_url
    ns = f"full-{uuid.uuid4().hex[:8]}"
    put(url, memory("Sam plays chess on Sundays", ns=ns))
    first = run_json(url, "consolidate", ns, "--now", T0.isoformat())
    assert first["to_version"] == 1
    # Two near-duplicates (different text, cosine above the merge threshold) stamped as
    # written before that pass: an incremental pass only searches what changed since.
    tea, again = put(url, memory("Sam prefers green tea over coffee", ns=ns, days_ago=3),
                     memory("Sam really prefers green tea over coffee", ns=ns, days_ago=3))
    store = MemoryStore.from_url(url)
    try:
        later = (T0 + timedelta(hours=1)).isoformat()
        run_json(url, "consolidate", ns, "--now", later)
        live = {m.id for m in store.records.iter_memories(ns) if m.live}
        assert {tea.id, again.id} <= live, "the incremental pass must not see the pair"

        run_json(url, "consolidate", ns, "--now", later, "--full")
        records = {m.id: m for m in store.records.iter_memories(ns)}
        statuses = {records[tea.id].status, records[again.id].status}
        assert statuses == {Status.ACTIVE, Status.TOMBSTONED}
        merges = [e for e in store.audit.tail(ns, 100) if e.action is AuditAction.MERGE]
        assert [sorted(e.before) for e in merges] == [sorted([tea.id, again.id])]
    finally:
        store.client.close()


def test_consolidating_a_namespace_without_data_is_refused_and_writes_nothing(
        celery_stack: LocalStack) -> None:
    # A typo'd name ("Alice" for "alice") used to run a pass that wrote snapshot v1 and
    # registered the name: the pass "succeeded" and the typo became a namespace.
    url = celery_stack.redis_url
    ns = f"typo-{uuid.uuid4().hex[:8]}"
    client = Client(url)
    try:
        with pytest.raises(NamespaceNotFound, match=f"namespace '{ns}' has no data"):
            client.consolidate(ns, timeout=30)
        result = run(url, "consolidate", ns, "--timeout", "30")
        assert result.exit_code == 1 and "has no data" in result.output, result.output
        assert list(client.store.client.scan_iter(match=f"mc:{{{ns}}}:*")) == []
        assert not client.store.records.has_namespace(ns)
    finally:
        client.close()
