"""Shared pieces of the ``bench`` subcommands: the machine, JSON + Markdown + PNG output,
contract-key checks and percentiles."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from memcore.core.config import Settings
from memcore.local.stack import LocalStack

PlotFn = Callable[[Mapping[str, Any], Path], None]


def machine() -> dict[str, Any]:
    """Cores, memory and platform of this machine (the figures are only ratios)."""
    memory_gb: float | None = None
    try:
        import psutil

        memory_gb = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:  # pragma: no cover - psutil is a dependency
        pass
    return {"cores": os.cpu_count(), "memory_gb": memory_gb, "platform": platform.platform(),
            "python": platform.python_version()}


def missing_keys(result: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """The contract keys ``result`` lacks (dotted names reach into nested objects)."""
    missing = []
    for key in keys:
        node: Any = result
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                missing.append(key)
                break
            node = node[part]
    return missing


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def fmt(value: Any) -> str:
    """A table cell: floats to 3 significant digits."""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table of ``rows`` under ``columns``."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path) -> None:
    """Lay out, write as PNG and close a matplotlib figure (every bench plot ends so)."""
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)


def write_outputs(result: Mapping[str, Any], out: Path, markdown: str,
                  plot: PlotFn | None = None) -> None:
    """Write ``out`` (JSON), ``out.md`` (Markdown) and ``out.png`` (the plot)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    out.with_suffix(".md").write_text(markdown if markdown.endswith("\n") else markdown + "\n")
    if plot is not None:
        plot(result, out.with_suffix(".png"))


MODELS = ("offline", "openai")


def decisions_by_type(counters: Mapping[str, Any]) -> dict[str, int]:
    """The write path's ``decisions.<OP>`` counters as ``{OP: n}``."""
    return {key.split(".", 1)[1]: int(float(value)) for key, value in counters.items()
            if str(key).startswith("decisions.")}


def agreement(counters: Mapping[str, Any]) -> dict[str, Any]:
    """How the decider agreed with the offline rules on the same requests, from the write
    path's ``shadow.*`` counters (``MEMCORE_SHADOW_DECISIONS``): ``compared`` decisions,
    ``agree`` (same op) and ``agree_target`` (same op on the same memory) with their
    shares, and ``matrix`` ``{"RULES_OP->MODEL_OP": n}`` (``KEPT``: a fact the model's
    answer could not decide, kept as a candidate)."""
    shadow = {str(k).split(".", 1)[1]: int(float(v)) for k, v in counters.items()
              if str(k).startswith("shadow.")}
    compared = shadow.pop("compared", 0)
    agree, agree_target = shadow.pop("agree", 0), shadow.pop("agree_target", 0)
    return {"compared": compared, "agree": agree, "agree_target": agree_target,
            "agreement": agree / compared if compared else None,
            "agreement_target": agree_target / compared if compared else None,
            "matrix": {k.replace(".", "->"): n for k, n in sorted(shadow.items())}}


def agreement_text(agree: Mapping[str, Any] | None) -> str:
    """One line for the Markdown reports: :func:`agreement`'s figures."""
    if not agree or not agree.get("compared"):
        return "not measured (offline models, or no decision went to the model)"
    return (f"{agree['agree']}/{agree['compared']} same op ({agree['agreement']:.2f}), "
            f"{agree['agree_target']} same op and target; rules->model {agree['matrix']}")


def add_counters(total: dict[str, float], counters: Mapping[str, Any]) -> dict[str, float]:
    """``total`` plus ``counters`` key by key (numbers), for summing namespaces."""
    for key, value in counters.items():
        try:
            total[str(key)] = total.get(str(key), 0.0) + float(value)
        except (TypeError, ValueError):
            continue
    return total


def models_env(models: str) -> dict[str, str]:
    """The workers' environment for ``--models``: ``offline`` rules (even if a key is set)
    or the OpenAI-compatible endpoint of the ``MEMCORE_OPENAI_*`` settings."""
    if models not in MODELS:
        raise ValueError(f"--models: expected one of {', '.join(MODELS)}; got {models!r}")
    if models == "offline":
        return {"MEMCORE_OPENAI_API_KEY": ""}  # the offline rules even if a key is set

    if not Settings().openai_api_key:
        raise ValueError("--models openai: set MEMCORE_OPENAI_API_KEY (any value for a local "
                         "server) and MEMCORE_OPENAI_BASE_URL")
    # The rules' decision on every request the model decides, for the agreement figure.
    return {"MEMCORE_SHADOW_DECISIONS": "true"}


def task_timeout(models: str, floor: float) -> float:
    """How long a bench waits for one ingest task (or a pass): ``floor`` with the offline
    rules; with ``--models openai`` at least the four model calls a task can make (an
    extraction and a decision, each with its one repair) at ``MEMCORE_MODEL_TIMEOUT`` each.
    A small local model on a shared CPU took over 10 minutes for one extraction call, so a
    fixed 600 s wait stopped ``bench locomo --models openai`` at its first batch."""
    if models != "openai":
        return floor

    return max(floor, 4 * Settings().model_timeout)


_STACK_ENV = ("MEMCORE_BROKER_URL", "MEMCORE_RESULT_BACKEND")
BENCH_APP = "memcore_bench.worker_app"
"""The benchmarks' Celery app (``celery -A``): workers.app plus MEMCORE_OFFLINE_LATENCY_MS."""


def _stop_on_sigterm() -> Any:
    """Make SIGTERM raise KeyboardInterrupt, so that a bench stopped by ``kill`` stops its
    workers and Redis too (they outlived it); returns the previous handler, or None off
    the main thread (where no handler can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, stop)


@contextlib.contextmanager
def running_stack(redis_url: str | None = None, **kwargs: Any) -> Iterator[LocalStack]:
    """A started, ready :class:`LocalStack` whose workers run the benchmarks' Celery app
    (:mod:`memcore_bench.worker_app`), stopped afterwards.

    LocalStack points this process's broker variables at its Redis; they are put back
    on exit so a later stack (another run in the same process) gets its own.
    """
    saved = {k: os.environ.get(k) for k in _STACK_ENV}
    # The benchmarks' app: workers.app, plus MEMCORE_OFFLINE_LATENCY_MS when set.
    kwargs.setdefault("app", BENCH_APP)
    stack = LocalStack(redis_url, **kwargs)
    previous = _stop_on_sigterm()
    try:
        stack.start()
        stack.wait_ready(timeout=120)
        yield stack
    finally:
        stack.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
