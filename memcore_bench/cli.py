"""``memcore bench ...`` and ``memcore demo``: the benchmarks, each a thin command over
memcore_bench/*.py, and the demo.

``memcore`` adds these commands when the ``bench`` extra is installed
(:mod:`memcore.cli.bench`). Each command imports its benchmark module inside its body,
so ``memcore --help`` stays fast. To add one, write ``run_<name>(...)`` in
memcore_bench/<name>.py and a command below that imports it in its body, then list it
in :func:`register` (see ``scale``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from memcore.cli.common import handles_errors, state

bench_app = typer.Typer(help="Benchmarks: scale, locomo, ingest, footprint, api, profile, "
                             "growth, forget.",
                        no_args_is_help=True)


@handles_errors
def scale(n: int = typer.Option(100_000, "--n", min=100, help="Memories (rows)."),
          d: int = typer.Option(384, "--d", min=2, help="Vector dimension."),
          incremental: float = typer.Option(0.01, "--incremental",
                                            help="Share of new rows in the incremental pass."),
          quick: bool = typer.Option(False, "--quick",
                                     help="Shrink n to 3,000 and passes to 2 (smoke run)."),
          store: bool = typer.Option(False, "--store",
                                     help="Also the real pass: n memories in Redis, passes "
                                          "through Celery workers."),
          store_only: bool = typer.Option(False, "--store-only",
                                          help="Only the store-backed mode."),
          passes: int = typer.Option(30, "--passes", min=1,
                                     help="Incremental passes after the full one (--store)."),
          out: Path | None = typer.Option(None, "--out", dir_okay=False,
                                          help="JSON result (plus .md and .png next to it)."),
          ) -> None:
    """Partition vs exact all-pairs and memcore's pass in process; with --store the real
    pass through Redis and the workers."""
    from memcore_bench.scale import CONTRACT_KEYS, STORE_KEYS, run_scale

    result = run_scale(n, d, incremental, quick, out, store=store or store_only,
                       passes=passes, offline=not store_only)
    typer.echo(json.dumps({k: result[k] for k in (*CONTRACT_KEYS, *STORE_KEYS) if k in result}))


# --- locomo, ingest, footprint (memcore_bench/{locomo,ingest,footprint}.py) -------


@handles_errors
def locomo(data: Path = typer.Option(..., "--data", file_okay=False,
                                     help="Directory of LoCoMo JSON files."),
           embedder: str = typer.Option("hash", "--embedder", help="hash | local | openai."),
           facts: str = typer.Option("extracted", "--facts",
                                     help="extracted | observations (the dataset's facts)."),
           quick: bool = typer.Option(False, "--quick",
                                      help="One conversation, 3 sessions (smoke run)."),
           turns_per_add: int = typer.Option(1, "--turns-per-add", min=1,
                                             help="Consecutive turns per Client.add."),
           search: str = typer.Option("hybrid", "--search",
                                      help="hybrid (BM25 + vector, default) | vector."),
           sets: list[str] = typer.Option([], "--set", metavar="KEY=VALUE",
                                          help="A setting for this run (repeatable)."),
           models: str = typer.Option("offline", "--models",
                                      help="offline | openai (MEMCORE_OPENAI_* settings)."),
           conversations: str = typer.Option(
               "", "--conversations",
               help="Comma-separated file stems (default: all), e.g. conv-26,conv-30."),
           context_tokens: str = typer.Option(
               "", "--context-tokens",
               help="Comma-separated token budgets, e.g. 1000,2000: share of questions whose "
                    "evidence is inside a context block, next to raw turns cut to the same "
                    "budget."),
           out: Path = typer.Option(..., "--out", dir_okay=False,
                                    help="JSON result (plus .md and .png next to it)."),
           ) -> None:
    """Evidence recall@10 of raw turns, ingested and consolidated memories (LoCoMo)."""
    from memcore_bench.locomo import (
        CONTRACT_KEYS,
        parse_budgets,
        parse_sets,
        run_locomo,
        split_names,
    )

    result = run_locomo(data, embedder=embedder, facts=facts, quick=quick, out=out,
                        overrides=parse_sets(sets), turns_per_add=turns_per_add,
                        search=search, models=models, conversations=split_names(conversations),
                        context_tokens=parse_budgets(context_tokens))
    typer.echo(json.dumps({k: result[k] for k in (*CONTRACT_KEYS, "context") if k in result},
                          default=str))


@handles_errors
def ingest(turns: int = typer.Option(2000, "--turns", min=1, help="Turns (one task each)."),
           model_latency_ms: list[float] = typer.Option(
               [0.0], "--model-latency-ms", help="Sleep per offline model call (repeatable)."),
           quick: bool = typer.Option(False, "--quick", help="60 turns (smoke run)."),
           threads: int = typer.Option(16, "--threads", min=1,
                                       help="Threads pool size when latency > 0."),
           turns_per_task: list[int] = typer.Option(
               [], "--turns-per-task", min=1,
               help="Also send turns one at a time through Client.batched, at most this many "
                    "per task (repeatable: --turns-per-task 1 --turns-per-task 8)."),
           max_wait_ms: float = typer.Option(5.0, "--max-wait-ms", min=0,
                                             help="Longest a batched turn waits for others."),
           out: Path = typer.Option(..., "--out", dir_okay=False,
                                    help="JSON result (plus .md and .png next to it)."),
           ) -> None:
    """Ingest turns/s through Celery and Redis against a no-op task, same workers."""
    from memcore_bench.ingest import CONTRACT_KEYS, run_ingest

    result = run_ingest(turns, model_latency_ms, quick=quick, out=out, threads=threads,
                        turns_per_task=turns_per_task, max_wait_ms=max_wait_ms)
    summary = {k: result[k] for k in CONTRACT_KEYS}
    if result.get("batching"):
        summary["batching"] = result["batching"]
    typer.echo(json.dumps(summary))


@handles_errors
def footprint(n: int = typer.Option(10_000, "--n", min=1, help="Memories."),
              d: int = typer.Option(384, "--d", min=8, help="Vector dimension."),
              quick: bool = typer.Option(False, "--quick", help="200 memories (smoke run)."),
              out: Path = typer.Option(..., "--out", dir_okay=False,
                                       help="JSON result (plus .md and .png next to it)."),
              ) -> None:
    """Redis bytes per memory (MEMORY USAGE): total, text and vector."""
    from memcore_bench.footprint import CONTRACT_KEYS, run_footprint

    result = run_footprint(n, d, quick=quick, out=out)
    typer.echo(json.dumps({k: result[k] for k in ("n", "d", *CONTRACT_KEYS)}))


@handles_errors
def api(memories: int = typer.Option(10_000, "--memories", min=1,
                                     help="Memories in the searched namespace."),
        concurrency: int = typer.Option(32, "--concurrency", min=1,
                                        help="Concurrent HTTP clients."),
        searches: int = typer.Option(5000, "--searches", min=1, help="Search requests."),
        adds: int = typer.Option(1000, "--adds", min=1, help="One-turn add requests."),
        server_workers: int = typer.Option(2, "--server-workers", min=1,
                                           help="memcore serve --workers."),
        quick: bool = typer.Option(False, "--quick",
                                   help="300 memories, 150 searches, 32 adds (smoke run)."),
        redis_url: str | None = typer.Option(None, "--bench-redis-url", metavar="URL",
                                             help="Use this Redis (default: embedded)."),
        baseline_python: str | None = typer.Option(
            None, "--baseline-python", metavar="PYTHON",
            help="Also measure the search of the memcore installed for this interpreter "
                 "(e.g. another checkout's .venv/bin/python), first, on the same data."),
        out: Path = typer.Option(..., "--out", dir_okay=False,
                                 help="JSON result (plus .md and .png next to it)."),
        ) -> None:
    """Search p50/p95 and add throughput over HTTP (memcore serve + workers)."""
    from memcore_bench.api import CONTRACT_KEYS, run_api

    result = run_api(memories, concurrency, searches, adds, server_workers=server_workers,
                     quick=quick, out=out, redis_url=redis_url,
                     baseline_python=baseline_python)
    typer.echo(json.dumps({k: result[k] for k in CONTRACT_KEYS}))


@handles_errors
def profile(models: str = typer.Option("offline", "--models",
                                       help="offline | openai (MEMCORE_OPENAI_* settings)."),
            embedder: str = typer.Option("hash", "--embedder", help="hash | local | openai."),
            quick: bool = typer.Option(False, "--quick", help="Two short scenarios (smoke run)."),
            scenarios: Path | None = typer.Option(None, "--scenarios", file_okay=False,
                                                  help="Directory of scenario JSON files "
                                                       "(default: the bundled ones)."),
            out: Path = typer.Option(..., "--out", dir_okay=False,
                                     help="JSON result (plus .md and .png next to it)."),
            resume: bool = typer.Option(False, "--resume",
                                        help="Continue the run in --out: keep its scenarios, "
                                             "run only the others (same settings)."),
            max_scenarios: int | None = typer.Option(
                None, "--max-scenarios", min=1,
                help="Run at most N scenarios not yet judged (with --resume: a slow model's "
                     "run spread over several sittings)."),
            ) -> None:
    """Precision and recall of the profile against scenarios' ground truth."""
    from memcore_bench.profile import CONTRACT_KEYS, run_profile

    result = run_profile(models=models, embedder=embedder, quick=quick,
                         scenarios_dir=scenarios, out=out, resume=resume,
                         max_scenarios=max_scenarios)
    typer.echo(json.dumps({k: result[k] for k in CONTRACT_KEYS if k != "per_scenario"},
                          default=str))


@handles_errors
def growth(facts: int = typer.Option(2000, "--facts", min=10, help="Distinct facts (turns)."),
           passes: int = typer.Option(30, "--passes", min=1, help="Passes, a day apart."),
           new_share: float = typer.Option(0.01, "--new-share",
                                           help="New turns before each pass, share of facts."),
           quick: bool = typer.Option(False, "--quick", help="60 facts, 3 passes (smoke run)."),
           maintenance: bool = typer.Option(True, "--maintenance/--no-maintenance",
                                            help="Collect versions, tombstones and audit "
                                                 "between passes, as beat does."),
           out: Path = typer.Option(..., "--out", dir_okay=False,
                                    help="JSON result (plus .md and .png next to it)."),
           ) -> None:
    """Redis memory and keys of a namespace after each of many passes (real workers)."""
    from memcore_bench.growth import CONTRACT_KEYS, run_growth

    result = run_growth(facts, passes, new_share, quick=quick, out=out, maintain=maintenance)
    typer.echo(json.dumps({k: result[k] for k in CONTRACT_KEYS}))


@handles_errors
def forget(cases: Path | None = typer.Option(None, "--cases", dir_okay=False,
                                             help="JSON list of cases (default: the bundled "
                                                  "memcore/data/forget_cases.json)."),
           out: Path = typer.Option(..., "--out", dir_okay=False,
                                    help="JSON result (plus .md next to it)."),
           models: str = typer.Option("offline", "--models",
                                      help="offline | openai (MEMCORE_OPENAI_* settings)."),
           ) -> None:
    """Forget requests inside the conversation: honoured, negatives kept, over-deletions,
    key scans (real workers)."""
    from memcore_bench.forget import CONTRACT_KEYS, run_forget

    result = run_forget(cases_path=cases, out=out, models=models)
    typer.echo(json.dumps({k: result[k] for k in CONTRACT_KEYS if k != "per_case"}))


def demo() -> None:
    """The whole pipeline on embedded defaults (same as `make demo`)."""
    from memcore_bench import demo as demo_module

    url = state().redis_url
    if url:
        os.environ["MEMCORE_REDIS_URL"] = url
    raise typer.Exit(demo_module.main())


def register(app: typer.Typer) -> None:
    """Add the ``bench`` group (and its commands) and ``demo`` to ``app``."""
    app.command()(demo)
    bench_app.command("scale")(scale)
    bench_app.command("locomo")(locomo)
    bench_app.command("ingest")(ingest)
    bench_app.command("footprint")(footprint)
    bench_app.command("api")(api)
    bench_app.command("profile")(profile)
    bench_app.command("growth")(growth)
    bench_app.command("forget")(forget)
    app.add_typer(bench_app, name="bench")
