"""``bench api``: search latency and add throughput over HTTP.

Fills one namespace with ``memories`` facts (written through the store with the
configured embedder's vectors, so searches find real neighbours), starts ``memcore
serve`` as its own process plus the ingest and consolidate workers, then:

- search: ``searches`` requests, each a fact-like query with ``k=10``, from
  ``concurrency`` closed-loop clients. The load generator (:mod:`.loadgen`) runs in its
  own process and speaks raw keep-alive HTTP/1.1 on asyncio with requests encoded in
  advance, so it costs tens of microseconds per request instead of an httpx client's
  near-millisecond (on two shared cores that CPU would be taken from the server). The
  CPU seconds of the server's processes and of the generator are reported per search.
  With ``baseline_python`` (another checkout's venv), that server is measured first on
  the same data with the same load: before/after in one run.
- add: ``adds`` one-turn adds (202: enqueued) at the same concurrency (httpx: the
  server side dominates); ``add_rps`` is accepted adds per second, ``add_e2e_rps``
  turns stored per second (until the workers finished every task).

Everything runs on this machine: server, Redis, workers and load generator share the
cores. Writes the JSON (its keys are a contract), ``.md`` and ``.png``.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psutil

from memcore.adapters import build_embedder
from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.core.models import Actor, Kind, Memory, Status
from memcore.local.redis_server import free_port
from memcore.store import MemoryStore
from memcore_bench import loadgen
from memcore_bench.common import (
    machine,
    markdown_table,
    percentile,
    pyplot,
    running_stack,
    save_figure,
    write_outputs,
)
from memcore_bench.footprint import _W, _X, _Y, _Z, fact_text

CONTRACT_KEYS = ("memories", "concurrency", "search_p50_ms", "search_p95_ms", "search_rps",
                 "add_rps")
TARGET_P95_MS = 50.0
NAMESPACE = "bench-api"
QUICK = {"memories": 300, "searches": 150, "adds": 32}
_QUERIES = ("Who lives in {x}?", "who works as a {y}", "loves {z} on weekends",
            "dog named {w}", "marathon in {x}", "new job as a {y} in {x}")


def fill(store: MemoryStore, settings: Settings, n: int, seed: int = 0) -> None:
    """Write ``n`` active facts with the configured embedder's vectors."""
    rng = random.Random(seed)
    embedder = build_embedder(settings)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    kinds = list(Kind)[:5]
    for lo in range(0, n, 500):
        texts = [fact_text(rng, i) for i in range(lo, min(n, lo + 500))]
        vectors = embedder.embed(texts)
        for offset, (text, vec) in enumerate(zip(texts, vectors, strict=True)):
            i = lo + offset
            at = start + timedelta(minutes=i)
            memory = Memory(namespace=NAMESPACE, text=text, vector=[float(x) for x in vec],
                            importance=rng.random(), last_used=at, kind=rng.choice(kinds),
                            sources=[f"ep-{i}"], status=Status.ACTIVE, created_at=at,
                            updated_at=at)
            store.writes.add(NAMESPACE, memory, actor=Actor.INGEST, reason="bench api")


def _query(rng: random.Random) -> str:
    return rng.choice(_QUERIES).format(x=rng.choice(_X), y=rng.choice(_Y), z=rng.choice(_Z),
                                       w=rng.choice(_W))


async def _drive(url: str, key: str, concurrency: int, total: int,
                 make: Any) -> tuple[list[float], float, list[Any]]:
    """``total`` requests from ``concurrency`` closed-loop httpx clients (the adds, whose
    server side is slow enough that the client's cost does not matter); latencies (s),
    wall time (s) and the JSON answers."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    latencies: list[float] = []
    answers: list[Any] = []
    remaining = total
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60,
                                 headers={"Authorization": f"Bearer {key}"}) as http:

        async def client(seed: int) -> None:
            nonlocal remaining
            rng = random.Random(seed)
            while remaining > 0:
                remaining -= 1
                method, path, body = make(rng)
                t0 = time.perf_counter()
                reply = await http.request(method, path, json=body)
                latencies.append(time.perf_counter() - t0)
                if reply.status_code >= 400:
                    raise RuntimeError(f"{method} {path}: {reply.status_code} {reply.text}")
                answers.append(reply.json())

        t0 = time.perf_counter()
        await asyncio.gather(*(client(i) for i in range(concurrency)))
        return latencies, time.perf_counter() - t0, answers


def _start_server(python: str, url: str, port: int, workers: int,
                  log: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "MEMCORE_REDIS_URL": url}
    # Started outside any checkout: `python -m` puts the working directory first on
    # sys.path, so run from a checkout, a baseline interpreter would import that
    # checkout's memcore instead of its own.
    return subprocess.Popen([python, "-m", "memcore.cli", "serve", "--host",
                             "127.0.0.1", "--port", str(port), "--workers", str(workers),
                             "--log-level", "warning"],
                            env=env, stdout=log, stderr=log, start_new_session=True,
                            cwd=tempfile.gettempdir())


def _wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"memcore serve exited with {proc.returncode}")
        try:
            if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise TimeoutError("memcore serve did not become ready")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=10)


def _cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its live children (uvicorn's worker processes)."""
    proc = psutil.Process(pid)
    total = 0.0
    for p in (proc, *proc.children(recursive=True)):
        try:
            times = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


@contextmanager
def _server(python: str, url: str, workers: int) -> Iterator[tuple[str, int, Any]]:
    """A ``memcore serve`` run by ``python``, ready; yields (host, port, process)."""
    port = free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed below; shown if a request fails
    server = _start_server(python, url, port, workers, log)
    try:
        _wait_ready(f"http://127.0.0.1:{port}", server)
        yield "127.0.0.1", port, server
    except RuntimeError as exc:
        log.seek(0)
        tail = log.read().decode(errors="replace")[-4000:]
        raise RuntimeError(f"{exc}\n--- memcore serve log ---\n{tail}") from exc
    finally:
        log.close()
        _stop(server)


def _search_phase(python: str, url: str, key: str, *, workers: int, concurrency: int,
                  searches: int, seed: int) -> dict[str, Any]:
    """Search figures of the server ``python`` runs: warm-up, the timed closed loop (load
    generator in its own process), then one client alone."""
    path = f"/v1/namespaces/{NAMESPACE}/search"
    rng = random.Random(seed)
    with _server(python, url, workers) as (host, port, proc):

        def requests(n: int) -> list[bytes]:
            return loadgen.encode_requests(host, port, key, "POST", path,
                                           [{"query": _query(rng), "k": 10} for _ in range(n)])

        # Warm up: each server process builds its index of the namespace on its first
        # searches (and its threads, imports and caches). As many connections as the
        # timed run, so that every process gets some (connections are not spread evenly
        # over the processes) and no index is built while the timed run is measured.
        loadgen.run_in_process(host, port, requests(max(60 * workers, 10 * concurrency)),
                               max(4 * workers, concurrency))
        cpu0 = _cpu_seconds(proc.pid)
        timed = loadgen.run_in_process(host, port, requests(searches), concurrency,
                                       keep_replies=True)
        server_cpu = _cpu_seconds(proc.pid) - cpu0
        probes = max(20, min(200, searches // 10))
        single = loadgen.run_in_process(host, port, requests(probes), 1)
    lat = timed.latencies
    return {
        "search_p50_ms": percentile(lat, 50) * 1000, "search_p95_ms": percentile(lat, 95) * 1000,
        "search_p99_ms": percentile(lat, 99) * 1000, "search_rps": len(lat) / timed.wall,
        "searches": len(lat),
        "search_hits_per_query": sum(len(a["results"]) for a in timed.replies) / max(1, len(lat)),
        "search_1_client_p50_ms": percentile(single.latencies, 50) * 1000,
        "server_cpu_ms_per_search": server_cpu / max(1, len(lat)) * 1000,
        "loadgen_cpu_ms_per_search": timed.cpu / max(1, len(lat)) * 1000,
        "meets_target": percentile(lat, 95) * 1000 <= TARGET_P95_MS,
        "latencies_ms": sorted(x * 1000 for x in lat),
    }


def run_api(memories: int = 10_000, concurrency: int = 32, searches: int = 5000,
            adds: int = 1000, *, server_workers: int = 2, quick: bool = False,
            out: Path | None = None, redis_url: str | None = None, seed: int = 0,
            baseline_python: str | None = None) -> dict[str, Any]:
    """Run the benchmark once; writes ``out`` (JSON), ``.md`` and ``.png`` when given.

    ``baseline_python``: the interpreter of another memcore checkout (e.g. main before a
    change, in its own venv); its server is measured first on the same data and load,
    and its search figures are reported under ``baseline``."""
    if quick:
        memories = min(memories, QUICK["memories"])
        searches = min(searches, QUICK["searches"])
        adds = min(adds, QUICK["adds"])
    for name, value in (("memories", memories), ("concurrency", concurrency),
                        ("server_workers", server_workers),
                        ("searches", searches), ("adds", adds)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    with running_stack(redis_url, ingest_concurrency=2, consolidate_concurrency=1) as stack:
        assert stack.redis_url
        url = stack.redis_url
        settings = Settings(redis_url=url)
        store = MemoryStore.from_url(url)
        store.eraser.erase_namespace(NAMESPACE, datetime.now(UTC), missing_ok=True)
        t0 = time.perf_counter()
        fill(store, settings, memories, seed)
        fill_seconds = time.perf_counter() - t0
        record, key = store.api_keys.create([NAMESPACE], "write", "bench api")
        try:
            baseline = None
            if baseline_python is not None:
                baseline = _search_phase(baseline_python, url, key, workers=server_workers,
                                         concurrency=concurrency, searches=searches, seed=seed)
            current = _search_phase(sys.executable, url, key, workers=server_workers,
                                    concurrency=concurrency, searches=searches, seed=seed)
            # Where the time goes: Client.search in this process, without HTTP.
            probes = max(20, min(200, searches // 10))
            local = Client(url)
            try:
                rng = random.Random(seed)
                local.search(NAMESPACE, _query(rng), 10)
                inproc = []
                for _ in range(probes):
                    t1 = time.perf_counter()
                    local.search(NAMESPACE, _query(rng), 10)
                    inproc.append(time.perf_counter() - t1)
            finally:
                local.close()
            add_lat, add_wall, e2e = _add_phase(url, key, server_workers, concurrency, adds)
        finally:
            store.eraser.erase_namespace(NAMESPACE, datetime.now(UTC), missing_ok=True)
            store.api_keys.revoke(record.id)
            store.close()
    result: dict[str, Any] = {
        "memories": memories, "concurrency": concurrency, "server_workers": server_workers,
        **{k: v for k, v in current.items() if k != "latencies_ms"},
        "client_search_in_process_p50_ms": percentile(inproc, 50) * 1000,
        "add_rps": len(add_lat) / add_wall, "add_p95_ms": percentile(add_lat, 95) * 1000,
        "add_e2e_rps": len(add_lat) / e2e, "adds": len(add_lat),
        "target_search_p95_ms": TARGET_P95_MS,
        "fill_seconds": fill_seconds, "quick": quick,
        "setup": f"memcore serve --workers {server_workers} + 2 ingest + 1 consolidate "
                 "workers + Redis + the load generator (its own process: raw keep-alive "
                 "HTTP/1.1 on asyncio), all on this machine",
        "machine": machine(), "latencies_ms": current["latencies_ms"],
    }
    if baseline is not None:
        result["baseline"] = {"python": baseline_python,
                              **{k: v for k, v in baseline.items() if k != "latencies_ms"}}
        result["baseline_latencies_ms"] = baseline["latencies_ms"]
    if out is not None:
        write_outputs(result, Path(out), markdown(result), plot)
    return result


def _add_phase(url: str, key: str, workers: int, concurrency: int,
               adds: int) -> tuple[list[float], float, float]:
    """One-turn adds at ``concurrency``: latencies, wall time of the requests, and the
    time until the workers stored them all."""
    counter = iter(range(adds))

    def add(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        i = next(counter)
        text = f"I just started learning the {rng.choice(_Z)} class number {i}."
        return "POST", f"/v1/namespaces/{NAMESPACE}/messages", {
            "messages": [{"role": "user", "content": text}]}

    with _server(sys.executable, url, workers) as (host, port, _):
        t0 = time.perf_counter()
        add_lat, add_wall, add_answers = asyncio.run(
            _drive(f"http://{host}:{port}", key, concurrency, adds, add))
        task_ids = [t for a in add_answers for t in a["task_ids"]]
        client = Client(url)
        try:
            client.wait(task_ids, timeout=600)
        finally:
            client.close()
        return add_lat, add_wall, time.perf_counter() - t0


def markdown(result: Mapping[str, Any]) -> str:
    """The figures as a table (the baseline's search row first, when measured)."""
    cols = ("search_p50_ms", "search_p95_ms", "search_p99_ms", "search_rps",
            "search_1_client_p50_ms", "server_cpu_ms_per_search", "loadgen_cpu_ms_per_search")
    rows = [["this checkout", *[result[c] for c in cols]]]
    if "baseline" in result:
        rows.insert(0, [f"baseline ({result['baseline']['python']})",
                        *[result["baseline"][c] for c in cols]])
    adds = ("add_rps", "add_p95_ms", "add_e2e_rps", "client_search_in_process_p50_ms")
    return "\n".join([
        "# bench api", "",
        f"Search over HTTP (k=10) with {result['concurrency']} concurrent clients on a "
        f"namespace of {result['memories']} memories; target p95 <= {TARGET_P95_MS:g} ms "
        f"({'met' if result['meets_target'] else 'not met'}).", "",
        result["setup"] + ".", "",
        markdown_table(("server", *cols), rows), "",
        "CPU per search: the server's processes, and the load generator's process. "
        "add_rps: one-turn adds accepted (202) per second; add_e2e_rps: stored per second; "
        "`Client.search` alone in the benchmark's process, without HTTP:", "",
        markdown_table(adds, [[result[c] for c in adds]]), ""])


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Latency distribution of the searches (CDF; the baseline's too), target marked."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    curves = [("this checkout", result["latencies_ms"])]
    if "baseline_latencies_ms" in result:
        curves.insert(0, ("baseline", result["baseline_latencies_ms"]))
    for label, lat in curves:
        if lat:
            ax.plot(lat, [(i + 1) / len(lat) for i in range(len(lat))], label=label)
    ax.set_xscale("log")
    ax.axvline(TARGET_P95_MS, color="black", linestyle="--", label="p95 target")
    ax.axhline(0.95, color="gray", linestyle=":")
    ax.set_xlabel("search latency (ms, log scale)")
    ax.set_ylabel("share of requests")
    ax.set_title(f"bench api: {result['memories']} memories, "
                 f"{result['concurrency']} clients")
    ax.legend()
    save_figure(fig, path)
