"""Real prefork workers serve the model-call and memory metrics of ingest and passes.

Ingest and consolidate workers (two prefork children each) share one multiprocess
directory, as compose and Kubernetes run them; one port sums every child. A batch of
turns and a chord pass (merge batches in one child, the reduce with its summaries in
another) must move each role's calls and the memory counters.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from memcore.client.client import Client
from memcore.core.models import Actor, Kind
from memcore.local.stack import LocalStack
from tests.observability.test_metrics import scrape
from tests.support.helpers import EPOCH, hours, make_memory


def _pass_memories(ns: str) -> list[Any]:
    """A near-duplicate pair (vim), three fading errands, one fading heron."""
    def mem(text: str, vec: list[float], importance: float, last_h: float) -> Any:
        return make_memory(text, vec, importance, last_h, namespace=ns, kind=Kind.EVENT,
                           sources=[f"src-{abs(hash(text)) % 10**6}"])
    return [mem("Sam uses vim", [1, 0, 0, 0, 0, 0], 0.9, 8759),
            mem("Sam prefers vim keybindings", [0.99, 0.1, 0, 0, 0, 0], 0.9, 8759),
            # Pairwise cosine 0.64: one summary group, below the merge threshold, and
            # judged distinct when compared as borderline pairs.
            mem("Sam had lunch with Alice at Zinc", [0, 0.8, 0.6, 0, 0, 0], 0.02, 0),
            mem("Sam walked the dog in the park", [0, 0.8, 0, 0.6, 0, 0], 0.02, 0),
            mem("Sam bought stamps at the post office", [0, 0.8, 0, 0, 0.6, 0], 0.02, 0),
            mem("Sam once saw a heron", [0, 0, 0, 0, 0, 1], 0.02, 0)]


def test_workers_count_every_role(celery_stack: LocalStack) -> None:
    port = int(celery_stack.extra_env["MEMCORE_METRICS_PORT"])
    assert celery_stack.redis_url
    client = Client(celery_stack.redis_url)
    ns, pass_ns = f"wm-{uuid.uuid4().hex[:8]}", f"wp-{uuid.uuid4().hex[:8]}"
    before = scrape(port)
    client.wait(client.add(ns, [{"role": "user", "speaker": "Sam", "id": "p1",
                                 "content": "I live in Paris."}], timestamp=EPOCH), timeout=60)
    client.wait(client.add(ns, [{"role": "user", "speaker": "Sam", "id": "p2",
                                 "content": "I moved to Berlin."}],
                           timestamp=EPOCH + timedelta(days=30)), timeout=60)
    # A near repeat of it (same frame, same value) is the decider's to judge: the move
    # itself superseded Paris by its frame, with no call.
    client.wait(client.add(ns, [{"role": "user", "speaker": "Sam", "id": "p3",
                                 "content": "I have moved to Berlin."}],
                           timestamp=EPOCH + timedelta(days=31)), timeout=60)
    for memory in _pass_memories(pass_ns):
        client.store.writes.add(pass_ns, memory, actor=Actor.USER, reason="test")
    done = client.consolidate(pass_ns, now=hours(8760), timeout=120)
    after = scrape(port)
    client.close()

    def moved(name: str, **labels: str) -> float:
        def total(got: dict[Any, float]) -> float:
            return sum(v for (n, ls), v in got.items()
                       if n == name and set(labels.items()) <= set(ls))
        return total(after) - total(before)

    deltas = {f"calls:{kind}": moved("memcore_model_calls_total", kind=kind)
              for kind in ("extract", "decide", "merge", "summarize", "embed")}
    deltas |= {name: moved(f"memcore_memories_{name}_total")
               for name in ("added", "superseded", "merged", "tombstoned")}
    deltas |= {"decisions": moved("memcore_decisions_total"),
               "embedding_calls": moved("memcore_embedding_calls_total"),
               "passes": moved("memcore_consolidation_pass_seconds_count"),
               "latency:merge": moved("memcore_model_call_seconds_count", kind="merge")}
    print(f"\n[worker metrics] pass {done}; deltas {deltas}")
    assert all(v > 0 for v in deltas.values()), deltas
