"""`bench footprint --quick` on a real Redis: the JSON contract and the int8 vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore_bench.common import missing_keys
from memcore_bench.footprint import CONTRACT_KEYS, main, run_footprint


def test_quick_run_writes_json_markdown_and_plot(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "fp.json"
    main(["--n", "100000", "--d", "384", "--quick", "--redis-url", redis_url,
          "--out", str(out)])
    data = json.loads(out.read_text())
    assert not missing_keys(data, CONTRACT_KEYS)
    assert data["n"] == 200 and data["d"] == 384
    # Packed int8 vectors: d bytes plus a small header, far below float32.
    assert 384 <= data["vector_bytes_per_memory"] < 4 * 384
    assert data["bytes_per_memory"] > data["text_bytes_per_memory"] > 0
    assert "| n | d |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_embedded_redis_and_bad_arguments() -> None:
    result = run_footprint(50, 16)
    assert not missing_keys(result, CONTRACT_KEYS)
    with pytest.raises(ValueError, match="n must"):
        run_footprint(0, 16)
    with pytest.raises(ValueError, match="d must"):
        run_footprint(10, 4)
