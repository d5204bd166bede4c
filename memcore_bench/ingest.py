"""``bench ingest``: turns per second through the real write path (Celery ingest workers,
Redis) against a no-op Celery task on the same broker and the same workers, same run.

Tasks go out in waves (``wave`` tasks, then wait for all of them): the workers stay
saturated while the queue stays short, so ``p50_ms`` / ``p95_ms`` (enqueue to stored,
from the enqueue time to the result's ``date_done``) are latencies under load, not the
length of a flooded queue. Throughput is tasks over the summed wave spans (first
enqueue to last ``date_done``). One turn per task, spread over 16 namespaces (users).

``--model-latency-ms L`` (one or several values) starts the workers with
``MEMCORE_OFFLINE_LATENCY_MS=L`` (each offline model call sleeps L ms) and, for L > 0,
a threads pool of ``--threads`` per worker: throughput then approaches
``threads / (model calls per turn x L)``.

Run: ``python -m memcore_bench.ingest --turns 2000 --model-latency-ms 0 50 200
--out bench/ingest.json``. Writes the JSON (keys are a contract), ``.md`` and ``.png``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.messaging import task_names
from memcore_bench.common import (
    machine,
    markdown_table,
    percentile,
    pyplot,
    running_stack,
    save_figure,
    write_outputs,
)

CONTRACT_KEYS = (
    "turns", "facts", "ingest_turns_per_s", "noop_tasks_per_s", "ratio",
    "model_calls_per_turn", "p50_ms", "p95_ms",
)
QUICK_TURNS = 60
NAMESPACES = 16
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)

_NAMES = ("Ana", "Ben", "Chloe", "Dev", "Eli", "Farah", "Gus", "Hana", "Ivan", "Jo", "Kai",
          "Lena", "Mo", "Nia", "Omar", "Pia")
_TEMPLATES = (
    "I just started a new job as a {job} in {city}.",
    "My sister {friend} is visiting us from {city} next week.",
    "I really love {hobby}, I do it every weekend.",
    "We adopted a {pet} named {petname} last month.",
    "I'm training for a {race} in {month}.",
    "Honestly I can't stand {food}, it makes me sick.",
    "Thanks, that sounds great!",
    "How was your weekend?",
    "I moved to {city} because of my partner's work.",
    "My favourite book is {book}; I reread it every year.",
    "I'm allergic to {food}, so I always check the menu.",
    "Last {month} I went hiking in {park} with {friend}.",
)
_FILL = {
    "job": ("nurse", "teacher", "data engineer", "carpenter", "chef", "pilot", "lawyer"),
    "city": ("Lisbon", "Oslo", "Denver", "Kyoto", "Nairobi", "Lyon", "Austin", "Perth"),
    "friend": ("Maya", "Tom", "Rosa", "Yusuf", "Iris", "Leo"),
    "hobby": ("pottery", "rock climbing", "baking bread", "chess", "salsa dancing", "birding"),
    "pet": ("beagle", "tabby cat", "parrot", "rabbit"),
    "petname": ("Biscuit", "Luna", "Pepper", "Milo"),
    "race": ("half marathon", "triathlon", "10k", "cycling sportive"),
    "month": ("March", "May", "July", "September", "November"),
    "food": ("peanuts", "shellfish", "cilantro", "olives", "mushrooms"),
    "book": ("Dune", "Middlemarch", "The Hobbit", "Beloved", "Kindred"),
    "park": ("Yosemite", "the Dolomites", "Snowdonia", "Banff"),
}


def synthetic_turns(n: int, seed: int = 0, prefix: str = "bench-ingest"
                    ) -> list[tuple[str, dict[str, Any]]]:
    """``n`` (namespace, message) pairs: varied chat turns over 16 users, in time order."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        user = i % NAMESPACES
        template = rng.choice(_TEMPLATES)
        text = template.format(**{k: rng.choice(v) for k, v in _FILL.items()})
        out.append((f"{prefix}-{user:02d}", {
            "role": "user", "speaker": _NAMES[user], "content": text,
            "timestamp": START + timedelta(minutes=i)}))
    return out


def _done_at(client: Client, task_id: str) -> float:
    done = client.celery.backend.get_task_meta(task_id).get("date_done")
    if isinstance(done, str):
        done = datetime.fromisoformat(done)
    if done is None:
        return time.time()
    if done.tzinfo is None:
        done = done.replace(tzinfo=UTC)
    return done.timestamp()


def drive(client: Client, send: Any, count: int, wave: int, timeout: float = 600.0
          ) -> tuple[float, list[float]]:
    """Send ``count`` tasks with ``send(i) -> task id`` in waves; returns (tasks per
    second, enqueue-to-done latencies in ms).

    The time of a wave runs from its first enqueue to its last ``date_done`` (stamped
    by the worker), so how quickly this process notices the end (the client polls)
    never counts against the workers.
    """
    sent: list[tuple[str, float]] = []
    waves: list[tuple[int, int]] = []
    for start in range(0, count, wave):
        first = len(sent)
        for i in range(start, min(count, start + wave)):
            at = time.time()
            sent.append((send(i), at))
        client.wait([tid for tid, _ in sent[first:]], timeout=timeout)
        waves.append((first, len(sent)))
    done = [_done_at(client, tid) for tid, _ in sent]
    busy = sum(max(done[a:b]) - sent[a][1] for a, b in waves)
    latencies = [(d - at) * 1000.0 for d, (_, at) in zip(done, sent, strict=True)]
    return count / busy if busy > 0 else 0.0, latencies


def drive_batched(client: Client, data: Sequence[tuple[str, dict[str, Any]]],
                  turns_per_task: int, wave: int, max_wait_ms: float, timeout: float = 600.0
                  ) -> tuple[float, float, list[float]]:
    """Send turns one at a time through ``Client.batched`` (turns of one namespace share
    a task, up to ``turns_per_task``); returns (turns/s, tasks/s, per-turn latencies ms).

    A turn's latency runs from its ``add`` to the ``date_done`` of the task carrying it,
    so the time it waited for companions counts.
    """
    submitted: list[tuple[Future[list[str]], float]] = []
    waves: list[tuple[int, int]] = []
    with client.batched(max_turns=turns_per_task, max_wait_ms=max_wait_ms) as batch:
        for start in range(0, len(data), wave):
            first = len(submitted)
            for ns, msg in data[start:start + wave]:
                at = time.time()
                submitted.append((batch.add(ns, [msg]), at))
            ids = {tid for f, _ in submitted[first:] for tid in f.result(timeout=timeout)}
            client.wait(sorted(ids), timeout=timeout)
            waves.append((first, len(submitted)))
    task_of = [f.result()[-1] for f, _ in submitted]
    done_at = {tid: _done_at(client, tid) for tid in set(task_of)}
    done = [done_at[tid] for tid in task_of]
    busy = sum(max(done[a:b]) - submitted[a][1] for a, b in waves)
    latencies = [(d - at) * 1000.0 for d, (_, at) in zip(done, submitted, strict=True)]
    rate = len(data) / busy if busy > 0 else 0.0
    return rate, (len(done_at) / busy if busy > 0 else 0.0), latencies


def in_bursts(data: Sequence[tuple[str, dict[str, Any]]], size: int
              ) -> list[tuple[str, dict[str, Any]]]:
    """Reorder turns so each user's turns arrive ``size`` at a time (a chat client
    uploading a stretch of conversation), users taking turns; time order per user kept."""
    per_user: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for ns, msg in data:
        per_user.setdefault(ns, []).append((ns, msg))
    queues = list(per_user.values())
    out: list[tuple[str, dict[str, Any]]] = []
    while any(queues):
        for q in queues:
            out += q[:size]
            del q[:size]
    return out


def run_batching(client: Client, turns: int, sizes: Sequence[int], *, workers: int,
                 max_wait_ms: float, noop_rate: float, seed: int = 0) -> list[dict[str, Any]]:
    """Ingest ``turns`` fresh turns at each turns-per-task size, on a running stack.

    Turns arrive in bursts of ``size`` per user, in waves of two tasks' worth per worker
    (the workers stay busy, the queue short, as in the one-turn measurement).
    """
    rows = []
    for size in sizes:
        # Fresh texts per size: a repeated text would take the cheaper duplicate path.
        data = in_bursts(synthetic_turns(turns, seed + 1000 * size,
                                         prefix=f"bench-batch{size}"), size)
        turn_rate, task_rate, latencies = drive_batched(
            client, data, size, size * 2 * workers, max_wait_ms)
        rows.append({"turns_per_task": size, "turns_per_s": turn_rate, "tasks_per_s": task_rate,
                     "ratio": turn_rate / noop_rate if noop_rate else 0.0,
                     "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95),
                     "max_wait_ms": max_wait_ms})
    return rows


def run_once(turns: int, latency_ms: float, *, concurrency: int, threads: int, wave: int,
             redis_url: str | None = None, seed: int = 0,
             turns_per_task: Sequence[int] = (), max_wait_ms: float = 5.0) -> dict[str, Any]:
    """One stack, both measurements (no-op first, then ingest) at one model latency."""
    pool = "threads" if latency_ms > 0 else "prefork"
    workers = threads if latency_ms > 0 else concurrency
    env = {"MEMCORE_OFFLINE_LATENCY_MS": str(latency_ms), "MEMCORE_EMBEDDER": "hash",
           "MEMCORE_EXTRACTOR": "auto"}
    data = synthetic_turns(turns, seed)
    with running_stack(redis_url, ingest_concurrency=workers, pool=pool, env=env) as stack:
        assert stack.redis_url
        client = Client(settings=Settings(redis_url=stack.redis_url, embedder="hash"))
        try:
            # Warm up both task paths (imports, runtime, connections) outside the timing.
            client.wait([client.celery.send_task(task_names.NOOP, args=[None], queue="ingest").id
                         for _ in range(workers * 2)])
            client.wait(client.add("bench-warmup", [{"role": "user", "content": "I like tea.",
                                                     "timestamp": START}]))
            noop_rate, _ = drive(client, lambda i: client.celery.send_task(
                task_names.NOOP, args=[{"turn": i}], queue="ingest").id, turns, wave)

            def send_turn(i: int) -> str:
                ns, msg = data[i]
                return client.add(ns, [msg])[0]

            ingest_rate, latencies = drive(client, send_turn, turns, wave)
            counters = [client.store.coordination.counters(ns) for ns in {ns for ns, _ in data}]
            batching = run_batching(client, turns, turns_per_task, workers=workers,
                                    max_wait_ms=max_wait_ms, noop_rate=noop_rate, seed=seed)
            gc.collect()  # drop finished AsyncResults while their backend is still up
        finally:
            client.close()
    stored_turns = sum(float(c.get("turns", 0)) for c in counters)
    calls = sum(float(c.get("model_calls", 0)) for c in counters)
    facts = sum(float(c.get("facts", 0)) for c in counters)
    calls_per_turn = calls / stored_turns if stored_turns else 0.0
    result: dict[str, Any] = {
        "turns": turns, "facts": int(facts), "ingest_turns_per_s": ingest_rate,
        "noop_tasks_per_s": noop_rate, "ratio": ingest_rate / noop_rate if noop_rate else 0.0,
        "model_calls_per_turn": calls_per_turn, "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95), "model_latency_ms": latency_ms, "pool": pool,
        "concurrency": workers, "wave": wave,
    }
    if batching:
        result["batching"] = batching
    return result


def _add_bounds(runs: list[dict[str, Any]]) -> None:
    """``threads / (calls per turn x latency)`` for each run with a latency.

    The per-turn call count comes from a prefork run of the same invocation when there
    is one: in a threads pool the write path's per-batch counts are read as differences
    of a counter that other threads move too, so they overcount (recorded as
    ``model_calls_exact: false``).
    """
    exact = [r["model_calls_per_turn"] for r in runs if r["pool"] == "prefork"]
    for r in runs:
        r["model_calls_exact"] = r["pool"] == "prefork"
        calls = exact[0] if exact else r["model_calls_per_turn"]
        if r["model_latency_ms"] > 0 and calls > 0:
            r["latency_bound_turns_per_s"] = r["concurrency"] * 1000.0 / (
                calls * r["model_latency_ms"])


def run_ingest(turns: int, model_latency_ms: Sequence[float] = (0.0,), *, quick: bool = False,
               out: Path | None = None, concurrency: int | None = None, threads: int = 16,
               wave: int | None = None, redis_url: str | None = None,
               turns_per_task: Sequence[int] = (), max_wait_ms: float = 5.0) -> dict[str, Any]:
    """Run the ingest benchmark at each latency; returns the last run (all under ``runs``).

    ``turns_per_task`` (e.g. 1 8 32) also sends the turns one at a time through
    ``Client.batched`` at each size, on the same stack (under ``batching``).
    """
    if any(size < 1 for size in turns_per_task):
        raise ValueError(f"turns_per_task must be >= 1, got {list(turns_per_task)}")
    if quick:
        turns = min(turns, QUICK_TURNS)
    if turns < 1:
        raise ValueError(f"turns must be >= 1, got {turns}")
    if any(ms < 0 for ms in model_latency_ms) or not model_latency_ms:
        raise ValueError("model_latency_ms must be one or more values >= 0")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    concurrency = concurrency or os.cpu_count() or 1
    runs = []
    for ms in model_latency_ms:
        workers = threads if ms > 0 else concurrency
        runs.append(run_once(turns, float(ms), concurrency=concurrency, threads=threads,
                             wave=wave or max(16, 4 * workers), redis_url=redis_url,
                             turns_per_task=turns_per_task, max_wait_ms=max_wait_ms))
    _add_bounds(runs)
    result = dict(runs[-1])
    if len(runs) > 1:
        result["runs"] = runs
    result["quick"] = quick
    result["machine"] = machine()
    if out is not None:
        write_outputs(result, Path(out), markdown(result), plot)
    return result


def _runs(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(result.get("runs") or [result])


def markdown(result: Mapping[str, Any]) -> str:
    """One row per model latency."""
    cols = ("model_latency_ms", "pool", "concurrency", *CONTRACT_KEYS,
            "latency_bound_turns_per_s")
    rows = [[r.get(c, "") for c in cols] for r in _runs(result)]
    lines = ["# bench ingest", "",
             "Ingest through real Celery workers and Redis against a no-op task on the "
             "same workers; p50/p95 from enqueue to stored.", "", markdown_table(cols, rows), ""]
    for r in _runs(result):
        if r.get("batching"):
            bcols = ("turns_per_task", "turns_per_s", "tasks_per_s", "ratio", "p50_ms",
                     "p95_ms", "max_wait_ms")
            lines += [f"Turns sent one at a time through `Client.batched` "
                      f"(model latency {r['model_latency_ms']} ms, {r['pool']}); ratio is "
                      "turns/s over the no-op task rate.", "",
                      markdown_table(bcols, [[b[c] for c in bcols] for b in r["batching"]]), ""]
    return "\n".join(lines)


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Turns per second against model latency, with the concurrency / latency bound."""
    plt = pyplot()
    runs = _runs(result)
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [r["model_latency_ms"] for r in runs]
    ax.plot(xs, [r["ingest_turns_per_s"] for r in runs], "o-", label="ingest turns/s")
    ax.plot(xs, [r["noop_tasks_per_s"] for r in runs], "s--", label="no-op tasks/s")
    bound = [(r["model_latency_ms"], r["latency_bound_turns_per_s"]) for r in runs
             if "latency_bound_turns_per_s" in r]
    if bound:
        ax.plot([b[0] for b in bound], [b[1] for b in bound], "k:",
                label="threads / (calls per turn x latency)")
    ax.set_yscale("log")
    ax.set_xlabel("model latency per call (ms)")
    ax.set_ylabel("per second (log)")
    ax.set_title(f"bench ingest, {result['turns']} turns")
    ax.legend()
    save_figure(fig, path)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``python -m memcore_bench.ingest --turns N [--model-latency-ms L ...]
    --out FILE``."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--model-latency-ms", type=float, nargs="+", default=[0.0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="prefork processes without latency (default: cores)")
    parser.add_argument("--threads", type=int, default=16, help="threads pool with latency")
    parser.add_argument("--wave", type=int, default=None)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--turns-per-task", type=int, nargs="*", default=[],
                        help="also send turns through Client.batched at these sizes")
    parser.add_argument("--max-wait-ms", type=float, default=5.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = run_ingest(args.turns, args.model_latency_ms, quick=args.quick, out=args.out,
                        concurrency=args.concurrency, threads=args.threads, wave=args.wave,
                        redis_url=args.redis_url, turns_per_task=args.turns_per_task,
                        max_wait_ms=args.max_wait_ms)
    print(json.dumps({k: result[k] for k in CONTRACT_KEYS}), flush=True)
    return result


if __name__ == "__main__":
    main()
