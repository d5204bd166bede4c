"""`bench api --quick` on a real Redis, real workers and a real `memcore serve`: the JSON
contract, the Markdown and the plot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memcore_bench.api import CONTRACT_KEYS, run_api
from memcore_bench.common import missing_keys
from tests.support.cli_helpers import run


def test_quick_run_writes_json_markdown_and_plot(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "api.json"
    # The baseline option measured with this same checkout's interpreter (a real run
    # compares with another checkout's venv).
    result = run(None, "bench", "api", "--quick", "--bench-redis-url", redis_url,
                 "--baseline-python", sys.executable, "--out", str(out))
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(printed) == set(CONTRACT_KEYS)
    data = json.loads(out.read_text())
    assert not missing_keys(data, CONTRACT_KEYS)
    assert data["memories"] == 300 and data["concurrency"] == 32
    assert data["searches"] == 150 and data["adds"] == 32
    assert 0 < data["search_p50_ms"] <= data["search_p95_ms"] <= data["search_p99_ms"]
    assert data["search_rps"] > 0 and data["add_rps"] > 0 and data["add_e2e_rps"] > 0
    assert data["search_hits_per_query"] == 10  # every query finds k neighbours
    assert data["search_1_client_p50_ms"] > 0 and data["client_search_in_process_p50_ms"] > 0
    assert data["server_cpu_ms_per_search"] > 0 and data["loadgen_cpu_ms_per_search"] > 0
    base = data["baseline"]
    assert base["python"] == sys.executable and base["searches"] == 150
    assert 0 < base["search_p50_ms"] <= base["search_p95_ms"]
    assert base["search_hits_per_query"] == 10
    table = out.with_suffix(".md").read_text()
    assert "| server | search_p50_ms | search_p95_ms |" in table and "| baseline (" in table
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="concurrency must"):
        run_api(concurrency=0)
