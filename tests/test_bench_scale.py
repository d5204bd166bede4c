"""`bench scale --quick` writes the contract keys; the columnar merger follows the rules."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memcore.core.config import ConsolidationConfig
from memcore.core.scoring import retention
from memcore.devtools.bench.scale import (
    CONTRACT_KEYS,
    Columns,
    decay_floor_cap,
    main,
    merge_clusters,
    run_scale,
    synthetic_vectors,
)


def test_quick_run_writes_json_markdown_and_plot(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    result = run_scale(100_000, 64, quick=True, out=out)
    data = json.loads(out.read_text())
    for key in CONTRACT_KEYS:
        assert key in data and key in result
    assert data["n"] == 3_000 and data["d"] == 64 and data["quick"] is True
    assert 0.0 <= data["pair_recall"] <= 1.0
    assert data["pairs_exact"] > 0 and data["pass"]["clusters"] > 0
    assert "| n | d |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_cli_several_sizes(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    main(["--n", "500", "800", "--d", "16", "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["n"] == 800 and [r["n"] for r in data["runs"]] == [500, 800]
    assert out.with_suffix(".png").exists()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="incremental"):
        run_scale(1_000, 16, incremental=0.0)
    with pytest.raises(ValueError, match="n must"):
        run_scale(10, 16)


def test_synthetic_vectors_are_unit_with_duplicates() -> None:
    x = synthetic_vectors(2_000, 32, seed=5)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    sims = x @ x.T
    np.fill_diagonal(sims, 0)
    assert (sims >= 0.92).sum() > 50  # planted near-duplicates exist


def test_merge_and_decay_rules() -> None:
    x = np.eye(4, dtype=np.float32)
    x[1] = [0.8, 0.6, 0, 0]
    cols = Columns(
        vectors=x.copy(),
        importance=np.array([0.5, 0.9, 0.4, 0.001], np.float32),
        strength=np.array([1.0, 3.0, 1.0, 1.0], np.float32),
        hours_since_use=np.array([10.0, 100.0, 0.0, 0.0], np.float32),
        pinned=np.array([False, False, True, False]),
        alive=np.ones(4, bool),
    )
    assert merge_clusters(cols, [[0, 1]], strength_cap=3.5) == 1
    assert cols.alive.tolist() == [False, True, True, True]  # 1 is stronger: it survives
    assert cols.strength[1] == pytest.approx(3.5)  # 1 + 3 capped
    assert cols.importance[1] == pytest.approx(0.9) and cols.hours_since_use[1] == 10.0
    expected = (1.0 * x[0] + 3.0 * x[1]) / np.linalg.norm(1.0 * x[0] + 3.0 * x[1])
    np.testing.assert_allclose(cols.vectors[1], expected, atol=1e-6)
    config = ConsolidationConfig()
    assert decay_floor_cap(cols, config, cap=2) == (1, 0)
    assert not cols.alive[3]  # 0.001 < floor 0.01
    assert decay_floor_cap(cols, config, cap=1) == (0, 1)
    assert cols.alive.tolist() == [False, False, True, False]  # pinned rows are exempt
    # The vectorized score agrees with the scalar scoring module.
    score = float(cols.importance[1] * np.exp(-10.0 / (3.5 * config.tau_hours)))
    assert score == pytest.approx(retention(0.9, 10.0, 3.5, config.tau_hours), rel=1e-5)
