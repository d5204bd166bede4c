"""as_of with a superseded fact and its history; a time filter vs a post-filter."""
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memcore import Client
from memcore.core.filters import compile_filter
from memcore.local.redis_server import start_redis
from memcore.local.stack import LocalStack

server = start_redis()
stack = LocalStack(server.url, ingest_concurrency=1, consolidate_concurrency=1,
                   log_dir=Path(tempfile.mkdtemp()))
stack.start(); stack.wait_ready(timeout=90)
try:
    c = Client(server.url)
    for text, when in [("I live in Paris.", datetime(2019, 3, 1, tzinfo=UTC)),
                       ("I moved to Berlin.", datetime(2024, 6, 1, tzinfo=UTC))]:
        c.wait(c.add("sam", [{"role": "user", "speaker": "Sam", "content": text}], timestamp=when))
    q = "Where does Sam live?"
    (now,) = c.search("sam", q, k=1, include_history=True, touch=False)
    print(f"search now           : {now.memory.text!r} ({now.memory.status.value}, from {now.memory.valid_from.date()})")
    for m in now.earlier:
        print(f"  earlier value      : {m.text!r} {m.valid_from.date()} .. {m.valid_until.date()} ({m.status.value})")
    (then,) = c.search("sam", q, k=1, as_of="2021-01-01T00:00:00Z")
    print(f"search as_of 2021-01 : {then.memory.text!r} ({then.memory.status.value})")
    print(f"get(berlin, as_of=2020-06-01) -> {c.get('sam', now.memory.id, as_of='2020-06-01').text!r}")
    print(f"profile as_of 2019-06-01 -> {[m.text for m in c.profile('sam', as_of='2019-06-01')]}")
    print(f"history as_of 2020-01-01 -> {[e.action.value for e in c.history('sam', now.memory.id, as_of='2020-01-01')]}")
    print(f"history now              -> {[e.action.value for e in c.history('sam', now.memory.id)]}")
    try:
        c.search("sam", q, as_of="last March")
    except ValueError as exc:
        print("bad as_of ->", exc)

    # A time filter chosen before ranking vs a post-filter of the top k.
    turns = [("I would like to see Lisbon one day.", datetime(2023, 3, 10, tzinfo=UTC))]
    turns += [(f"I planned a trip to Lisbon number {i} with friends.",
               datetime(2025, 1, 1, tzinfo=UTC) + timedelta(days=i)) for i in range(60)]
    for text, when in turns:
        c.wait(c.add("trips", [{"role": "user", "content": text}], timestamp=when, infer=False))
    spec = {"event_at": {"lt": "2024-01-01T00:00:00Z"}}
    top = c.search("trips", "I planned a trip to Lisbon", k=10, touch=False)
    keep = compile_filter(spec)
    print(f"top-10 then post-filter {spec}: {[h.memory.text for h in top if keep(h.memory)]}")
    pre = c.search("trips", "I planned a trip to Lisbon", k=10, touch=False, filters=spec)
    print(f"filter before ranking            : {[h.memory.text for h in pre]}")
    c.close()
finally:
    stack.stop(); server.stop()
