"""`bench api --quick` on a real Redis, real workers and a real `memcore serve`: the JSON
contract, the Markdown and the plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.devtools.bench.api import CONTRACT_KEYS, run_api
from memcore.devtools.bench.common import missing_keys
from tests.cli_helpers import run


def test_quick_run_writes_json_markdown_and_plot(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "api.json"
    result = run(None, "bench", "api", "--quick", "--bench-redis-url", redis_url,
                 "--out", str(out))
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
    assert "| memories | concurrency |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="concurrency must"):
        run_api(concurrency=0)
