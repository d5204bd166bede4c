"""`bench ingest --quick` through real Celery workers and Redis: the JSON contract (not
the speed), and the simulated model latency it relies on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcore.adapters import build_models
from memcore.core.config import Settings
from memcore.core.interfaces import DecisionRequest
from memcore.core.models import Episode, Role
from memcore_bench.common import missing_keys, percentile
from memcore_bench.ingest import CONTRACT_KEYS, main, run_ingest, synthetic_turns
from memcore_bench.latency import (
    DelayedDecider,
    DelayedExtractor,
    DelayedMerger,
    delayed,
    latency_ms,
)

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_with_and_without_latency(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "ingest.json"
    main(["--turns", "5000", "--quick", "--model-latency-ms", "0", "5", "--threads", "4",
          "--redis-url", redis_url, "--out", str(out)])
    data = json.loads(out.read_text())
    assert not missing_keys(data, CONTRACT_KEYS)
    assert data["turns"] == 60 and data["quick"] is True
    assert [r["model_latency_ms"] for r in data["runs"]] == [0.0, 5.0]
    assert [r["pool"] for r in data["runs"]] == ["prefork", "threads"]
    for run in data["runs"]:
        assert not missing_keys(run, CONTRACT_KEYS)
        assert run["ingest_turns_per_s"] > 0 and run["noop_tasks_per_s"] > 0
        assert run["facts"] > 0 and run["model_calls_per_turn"] >= 1.0
        assert 0 <= run["p50_ms"] <= run["p95_ms"]
    assert data["runs"][1]["latency_bound_turns_per_s"] > 0
    assert "| model_latency_ms |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="turns"):
        run_ingest(0)
    with pytest.raises(ValueError, match="model_latency_ms"):
        run_ingest(10, [-1.0])


def test_synthetic_turns_are_varied_and_ordered() -> None:
    turns = synthetic_turns(100, seed=1)
    assert len({ns for ns, _ in turns}) == 16
    assert len({m["content"] for _, m in turns}) > 50
    times = [m["timestamp"] for _, m in turns]
    assert times == sorted(times)


def test_latency_wraps_the_offline_models() -> None:
    models = delayed(build_models(Settings()), Settings(), 30)
    assert isinstance(models.extractor, DelayedExtractor)
    assert isinstance(models.decider, DelayedDecider)
    assert isinstance(models.merger, DelayedMerger)
    episode = Episode(namespace="n", role=Role.USER, speaker="Sam", text="I live in Paris.",
                      timestamp=datetime(2025, 1, 1, tzinfo=UTC))
    t0 = time.perf_counter()
    facts = models.extractor.extract([episode])
    assert time.perf_counter() - t0 >= 0.03
    assert facts and models.extractor.usage.calls == 1  # the wrapped adapter's counter
    t0 = time.perf_counter()
    assert models.decider.decide([]) == []
    assert time.perf_counter() - t0 < 0.03  # an empty batch is no call
    assert models.decider.decide([DecisionRequest("Sam lives in Paris.", [])])
    assert models.merger.summarize([["a b", "a c"]])
    assert not isinstance(delayed(build_models(Settings()), Settings(), 0).extractor,
                          DelayedExtractor)
    # A real model's own latency is not simulated on top.
    real = Settings(openai_api_key="sk-test")
    assert not isinstance(delayed(build_models(real), real, 30).extractor, DelayedExtractor)


def test_latency_variable_is_checked() -> None:
    assert latency_ms({}) == 0.0 and latency_ms({"MEMCORE_OFFLINE_LATENCY_MS": ""}) == 0.0
    assert latency_ms({"MEMCORE_OFFLINE_LATENCY_MS": "12.5"}) == 12.5
    for bad in ("-1", "soon", "nan"):
        with pytest.raises(ValueError, match="MEMCORE_OFFLINE_LATENCY_MS"):
            latency_ms({"MEMCORE_OFFLINE_LATENCY_MS": bad})


def _worker_models(app: str, latency: str, redis_url: str) -> subprocess.CompletedProcess[str]:
    """The extractor class of a worker runtime built in a fresh process that loaded ``app``."""
    code = (f"import {app}\nfrom workers.runtime import runtime\n"
            "print(type(runtime().models.extractor).__name__)\n")
    env = {**os.environ, "MEMCORE_REDIS_URL": redis_url, "MEMCORE_OFFLINE_LATENCY_MS": latency,
           "MEMCORE_OPENAI_API_KEY": "", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120, check=False)


def test_bench_worker_app_delays_the_workers_models(redis_url: str) -> None:
    bench = _worker_models("memcore_bench.worker_app", "30", redis_url)
    assert bench.returncode == 0, bench.stderr
    assert bench.stdout.split() == ["DelayedExtractor"]
    # The runtime's own app ignores the variable: memcore has no simulated latency.
    plain = _worker_models("workers.app", "30", redis_url)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.split() == ["OfflineExtractor"]
    bad = _worker_models("memcore_bench.worker_app", "soon", redis_url)
    assert bad.returncode != 0 and "MEMCORE_OFFLINE_LATENCY_MS" in bad.stderr


def test_percentile() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)


def test_batching_rows_share_tasks(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "ingest.json"
    main(["--turns", "64", "--quick", "--turns-per-task", "1", "8", "--redis-url", redis_url,
          "--out", str(out)])
    rows = json.loads(out.read_text())["batching"]
    assert [r["turns_per_task"] for r in rows] == [1, 8]
    one, eight = rows
    assert one["tasks_per_s"] == pytest.approx(one["turns_per_s"])
    assert eight["turns_per_s"] > eight["tasks_per_s"] * 2, "several turns share each task"
    assert all(0 < r["p50_ms"] <= r["p95_ms"] for r in rows)
    assert "| turns_per_task |" in out.with_suffix(".md").read_text()
