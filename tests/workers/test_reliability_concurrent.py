"""Concurrent ingest and consolidation on one namespace: zero lost, zero duplicated writes.

Ingest workers write distinct facts (and restate five shared ones) while consolidation
passes run back to back on the same namespace, which also holds near-duplicate
pairs for the passes to merge. Afterwards a content check reads every record.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path

from memcore.client.client import Client
from memcore.core.models import Actor, Memory
from tests.support.test_reliability_common import (
    T0,
    cluster,
    counted_sources,
    expected_shared_support,
    fact_text,
    turn_messages,
)

FACTS_PER_TURN = 5
REPEAT_EVERY = 4
BATCH = 10


def seed_pairs(client: Client, ns: str, pairs: int) -> set[str]:
    """Near-duplicate pairs (about other things than the turns' facts) for the passes to
    merge; their texts."""
    texts = []
    for g in range(pairs):
        base = f"Robin paints {uuid.uuid5(uuid.NAMESPACE_DNS, str(g)).hex[:8]} landscapes weekly"
        texts += [base, base + " indeed"]
    vectors = client.models.embedder.embed(texts)
    for text, vec in zip(texts, vectors, strict=True):
        client.store.writes.add(ns, Memory(namespace=ns, text=text, vector=[float(x) for x in vec],
                                    importance=0.6, last_used=T0, created_at=T0, updated_at=T0,
                                    sources=[f"seed-{uuid.uuid4().hex[:12]}"]),
                         actor=Actor.USER, reason="seed")
    return set(texts)


def _trail(client: Client, ns: str, lost: list[str], memories: list[Memory]) -> str:
    """What the audit and the records say of each lost text (a failure must say where
    the text went: this test has failed under load without telling)."""
    out = [f"lost: {lost[:5]}"]
    for text in lost[:5]:
        key = text[:28]
        out += [f"  audit {e.action.value} {e.before}->{e.after} {e.reason[:100]!r}"
                for _, e in client.store.audit.scan(ns)
                if key in (e.text or "") or key in e.reason]
        out += [f"  record {m.id} {m.status.value} {m.text!r} members={m.member_texts} "
                f"superseded_by={m.superseded_by}" for m in memories
                if key in m.text or any(key in t for t in m.member_texts)]
    return "\n".join(out)


def test_concurrent_ingest_and_consolidation(tmp_path: Path, long_mode: bool) -> None:
    turns = 2000 if long_mode else 400
    ns = f"conc-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        c.spawn("ingest", "ingest", 2)
        c.spawn("consolidate", "consolidate", 2)
        c.wait_ready({"ingest", "consolidate"})
        client = Client(c.url)
        seeded = seed_pairs(client, ns, 60)  # work for the passes
        ids: list[str] = []

        def produce() -> None:
            for start in range(0, turns, BATCH):
                ids.extend(client.add(ns, turn_messages(start, BATCH, FACTS_PER_TURN,
                                                        repeat_every=REPEAT_EVERY)))

        t0 = time.monotonic()
        producer = threading.Thread(target=produce)
        producer.start()
        passes: Counter[str] = Counter()
        # Passes run at the turns' own time: months later (the wall clock) every unsupported
        # fact is idle and summarized away, which is not what this test is about.
        as_of = T0 + timedelta(days=1)
        while producer.is_alive() or passes["committed"] < 2:
            res = client.consolidate(ns, timeout=300, full=not passes, now=as_of)
            passes["committed" if isinstance(res, dict) and "skipped" not in res
                   else "skipped"] += 1
            if not producer.is_alive():
                client.wait(ids, timeout=300)
        producer.join()
        client.wait(ids, timeout=300)
        passes["committed"] += isinstance(client.consolidate(ns, timeout=300, now=as_of), dict)
        elapsed = time.monotonic() - t0

        memories = list(client.store.records.iter_memories(ns))
        episodes = [e.id for e in client.store.episodes.iter_episodes(ns)]
        distinct = {fact_text(t, j): f"turn-{t}" for t in range(turns)
                    for j in range(FACTS_PER_TURN)}
        shared = expected_shared_support(turns, REPEAT_EVERY)
        by_text = Counter(m.text for m in memories)
        held = {t for m in memories for t in (m.text, *m.member_texts)}
        lost = [t for t in [*distinct, *shared, *seeded] if t not in held]
        dup = [t for t in [*distinct, *shared] if by_text[t] > 1]
        wrong = [m.text for m in memories if m.text in distinct and (
            m.sources != [distinct[m.text]] or m.support != 1)]
        wrong += [m.text for m in memories if m.text in shared and (
            counted_sources(client.store, ns, m) != shared[m.text]
            or m.support != len(shared[m.text]))]
        merged = sum(1 for m in memories if m.member_texts)
        print(f"\n[concurrent ingest + consolidation] {len(distinct) + len(shared):,} facts from "
              f"{turns:,} turns ({len(ids)} tasks) written during {passes['committed']} "
              f"committed passes ({passes['skipped']} skipped, locked), {merged} merged "
              f"records, {elapsed:.0f} s: {len(lost)} lost, {len(dup)} duplicated, "
              f"{len(wrong)} with wrong support, {len(episodes) - len(set(episodes))} episodes "
              f"duplicated, {turns - len(set(episodes))} missing")
        assert lost == [] and dup == [] and wrong == [], _trail(client, ns, lost, memories)
        assert sorted(set(episodes)) == sorted(f"turn-{t}" for t in range(turns))
        assert len(episodes) == turns
        assert passes["committed"] >= 2
        assert merged > 0, "the passes merged something while ingest ran"
        client.close()
