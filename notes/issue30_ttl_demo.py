"""A caller's TTL: out of search at its time, tombstoned by maintenance, restored within
the grace period; and a relative time in a question read as a filter (time_hint)."""
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memcore import Client
from memcore.consolidate.maintenance import run_maintenance
from memcore.local.redis_server import start_redis
from memcore.local.stack import LocalStack

server = start_redis()
stack = LocalStack(server.url, ingest_concurrency=1, consolidate_concurrency=1,
                   log_dir=Path(tempfile.mkdtemp()))
stack.start(); stack.wait_ready(timeout=90)
try:
    c = Client(server.url)
    t0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    c.wait(c.add("acme", [{"role": "user", "content": "The guest wifi password is on the fridge."}],
                 timestamp=t0, infer=False, ttl_seconds=3600))
    (hit,) = c.search("acme", "guest wifi", k=1, now=t0, touch=False)
    print(f"at 09:00  search -> {hit.memory.text!r} (expires {hit.memory.expires_at:%H:%M})")
    later = t0 + timedelta(hours=2)
    print(f"at 11:00  search -> {[h.memory.text for h in c.search('acme', 'guest wifi', k=3, now=later, touch=False)]}")
    reports = run_maintenance(c.store, c.settings, later)
    print(f"maintenance at 11:00 expired -> {[r.expired for r in reports if r.namespace == 'acme']}")
    gone = c.get("acme", hit.memory.id)
    print(f"record now {gone.status.value}; audit: {[e.action.value for e in c.history('acme', hit.memory.id)]}")
    back = c.restore("acme", hit.memory.id)
    print(f"restored -> {back.status.value}, expires_at {back.expires_at}; search -> "
          f"{[h.memory.text for h in c.search('acme', 'guest wifi', k=1, touch=False)]}")

    now = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
    for text, days in [("Sam said Sintra was lovely.", 6),
                       ("Sam said the last trip, a week in Porto, was too rainy.", 40),
                       ("Sam said the trip last week to Faro was too hot.", 90)]:
        c.wait(c.add("sam", [{"role": "user", "content": text}],
                     timestamp=now - timedelta(days=days), infer=False))
    q = "what did Sam say about the trip last week?"
    print(f"{q!r} plain     -> {[h.memory.text for h in c.search('sam', q, k=1, now=now, touch=False)]}")
    print(f"  (now {now:%Y-%m-%d}; Sintra said {now - timedelta(days=6):%Y-%m-%d}, Porto and Faro months before)")
    print(f"{q!r} time_hint -> {[h.memory.text for h in c.search('sam', q, k=1, now=now, touch=False, time_hint=True)]}")
    c.close()
finally:
    stack.stop(); server.stop()
