"""Maintenance keeps a namespace bounded: expired versions dropped, old tombstones purged
(text and vector gone, the audit keeps that they existed and why), audit trimmed, and
``restore`` of a purged tombstone says so. Real Redis; the beat task on a real worker."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import redis

from memcore.client.client import Client
from memcore.consolidate.maintenance import run_maintenance
from memcore.core.config import Settings
from memcore.core.models import Actor, AuditAction, AuditEvent, Status
from memcore.local.stack import LocalStack
from memcore.messaging import task_names
from memcore.messaging.celery_config import celery_config
from memcore.store import MemoryStore, PurgedError
from tests.store.test_store_erase import _assert_gone, _found, _needles
from tests.store.test_store_support import T0, mem
from tests.support.cli_helpers import run

OLD = "OLD-TOMBSTONE user once collected stamps from Peru"
YOUNG = "YOUNG-TOMBSTONE user once played the oboe"
LIVE = "LIVE-FACT user lives in Oslo"
NOW = T0 + timedelta(days=40)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def build(store: MemoryStore, ns: str) -> dict[str, str]:
    """v0 (retired day 1), v1 (old tombstoned on day 1, retired day 30), v2 current
    (young tombstoned on day 30). At NOW: old is 39 days a tombstone, young 10."""
    ids = {}
    for name, text, seed in (("old", OLD, 1), ("young", YOUNG, 2), ("live", LIVE, 3)):
        ids[name] = store.writes.add(ns, mem(ns, text, seed=seed, sources=[f"e-{name}"]),
                              actor=Actor.INGEST, reason="extracted").id
    for when, victim in ((day(1), "old"), (day(30), "young")):
        view = store.snapshots.begin_pass(ns)
        out = [m.model_copy(update={"status": Status.TOMBSTONED, "updated_at": when})
               if m.id == ids[victim] else m for m in view.memories]
        event = AuditEvent(action=AuditAction.TOMBSTONE, namespace=ns, before=[ids[victim]],
                           reason="retention 0.004 below the floor",
                           actor=Actor.CONSOLIDATION, at=when)
        store.snapshots.commit_pass(ns, view, out, [event], now=when)
    return ids


@pytest.fixture()
def store(redis_client: redis.Redis) -> MemoryStore:
    redis_client.config_set("rdbcompression", "no")  # DUMP shows raw bytes
    return MemoryStore(redis_client)


def test_maintain_drops_versions_purges_tombstones_and_keeps_why(store: MemoryStore) -> None:
    ids = build(store, "u")
    assert [v.version for v in store.snapshots.versions("u")] == [0, 1, 2]
    old_needles = _needles(1, OLD)  # text, int8 codes, float32 bytes (in no index blob here)
    assert _found(store.client, "u", old_needles) == set(old_needles[:2])
    report = store.maintenance.run("u", NOW, snapshot_grace_days=20, tombstone_grace_days=30,
                            audit_retention_days=0)
    assert report.versions_dropped == [0]  # v0 retired 39 days ago; v1 only 10
    assert report.tombstones_purged == [ids["old"]]
    assert report.audit_trimmed == 0
    assert [v.version for v in store.snapshots.versions("u")] == [1, 2]
    # The text and vector of the purged tombstone are gone from every key (v1 included).
    _assert_gone(store.client, "u", old_needles)
    assert _found(store.client, "u", _needles(2, YOUNG)) == set(_needles(2, YOUNG)[:2])
    assert store.records.get("u", ids["old"]) is None
    # The audit keeps that it existed and why; its text is redacted.
    history = store.audit.history("u", ids["old"])
    actions = [e.action for e in history]
    assert actions == [AuditAction.ADD, AuditAction.TOMBSTONE, AuditAction.PURGE]
    assert history[0].text == "[purged]" and history[0].reason == "extracted"
    assert history[1].reason == "retention 0.004 below the floor"
    assert "tombstone_grace_days" in history[2].reason
    assert store.eraser.purged_at("u", ids["old"]) == NOW
    # restore says the memory was purged; the younger tombstone still restores.
    with pytest.raises(PurgedError, match=r"purged on .*cannot be restored"):
        store.writes.restore("u", ids["old"], NOW)
    with pytest.raises(KeyError, match="not found"):
        store.writes.restore("u", "never-existed", NOW)
    assert store.writes.restore("u", ids["young"], NOW).status is Status.ACTIVE
    # A second run finds nothing left to do.
    again = store.maintenance.run("u", NOW, snapshot_grace_days=20, tombstone_grace_days=30,
                           audit_retention_days=0)
    assert (again.versions_dropped, again.tombstones_purged) == ([], [])


def test_purge_reaches_a_pass_in_flight(store: MemoryStore) -> None:
    ids = build(store, "u")
    view = store.snapshots.begin_pass("u")
    assert ids["old"] in {m.id for m in view.memories}
    assert store.maintenance.purge_tombstones("u", NOW, grace_days=30) == [ids["old"]]
    new = store.snapshots.commit_pass("u", view, view.memories, [], now=NOW)
    assert store.current_version("u") == new
    assert ids["old"] not in {m.id for m in store.records.iter_memories("u")}
    _assert_gone(store.client, "u", _needles(1, OLD))


def test_audit_retention_trims_old_events(store: MemoryStore) -> None:
    build(store, "u")
    before = store.audit.tail("u", 100)
    report = store.maintenance.run("u", NOW, snapshot_grace_days=1000, tombstone_grace_days=1000,
                            audit_retention_days=35)
    cutoff = NOW - timedelta(days=35)
    after = store.audit.tail("u", 100)
    assert report.audit_trimmed == sum(e.at < cutoff for e in before) > 0
    assert len(after) == len(before) - report.audit_trimmed
    assert all(e.at >= cutoff for e in after)


def test_settings_drive_maintenance(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = build(store, "a")
    build(store, "b")
    defaults = Settings()
    assert (defaults.snapshot_grace_days, defaults.consolidation.tombstone_grace_days,
            defaults.audit_retention_days) == (7.0, 30.0, 365.0)
    monkeypatch.setenv("MEMCORE_SNAPSHOT_GRACE_DAYS", "20")
    monkeypatch.setenv("MEMCORE_CONSOLIDATION__TOMBSTONE_GRACE_DAYS", "50")
    monkeypatch.setenv("MEMCORE_AUDIT_RETENTION_DAYS", "35")
    tuned = Settings()
    reports = {r.namespace: r for r in run_maintenance(store, tuned, NOW)}
    assert set(reports) == {"a", "b"}
    assert reports["a"].versions_dropped == [0] and reports["a"].tombstones_purged == []
    assert reports["a"].audit_trimmed > 0
    reports = {r.namespace: r for r in run_maintenance(store, defaults, NOW)}
    assert reports["a"].versions_dropped == [1]  # 10 days retired > 7
    assert reports["a"].tombstones_purged == [ids["old"]]
    assert reports["a"].audit_trimmed == 0  # nothing older than 365 days


def test_beat_schedules_maintenance_at_the_configured_interval(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_MAINTENANCE_INTERVAL_SECONDS", "123")
    settings = Settings()
    conf = celery_config(settings, "redis://localhost:1/0", "redis://localhost:1/0")
    entry = conf["beat_schedule"]["memcore-maintenance"]
    assert entry == {"task": task_names.MAINTAIN, "schedule": 123.0}
    assert conf["task_routes"][task_names.MAINTAIN] == {"queue": "consolidate"}


def test_maintenance_task_on_a_real_worker(celery_stack: LocalStack) -> None:
    assert celery_stack.redis_url
    client = Client(celery_stack.redis_url)
    ns = "maint-worker"
    try:
        client.store.eraser.erase_namespace(ns, NOW, missing_ok=True)  # a clean slate
        ids = build(client.store, ns)
        # The stack's Redis is shared with other tests: NOW (2024) is older than their
        # data, so the run touches only this namespace.
        result = client.celery.send_task(task_names.MAINTAIN, args=[NOW.isoformat()],
                                         queue="consolidate").get(timeout=120)
        mine = [r for r in result if r["namespace"] == ns]
        assert mine == [{"namespace": ns, "versions_dropped": [0, 1],
                         "tombstones_purged": [ids["old"]], "audit_trimmed": 0,
                         "expired": []}]
        with pytest.raises(PurgedError, match="purged"):
            client.restore(ns, ids["old"])
        out = run(celery_stack.redis_url, "restore", ns, ids["old"])
        assert out.exit_code == 1
        assert "was purged on" in out.output and "cannot be restored" in out.output
    finally:
        client.store.eraser.erase_namespace(ns, NOW, missing_ok=True)
        client.close()
