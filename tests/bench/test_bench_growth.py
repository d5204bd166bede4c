"""`bench growth --quick`: real workers, one namespace, passes a day apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore_bench.growth import CONTRACT_KEYS, fact_turn, run_growth


def test_facts_are_distinct() -> None:
    assert len({fact_turn(i) for i in range(3000)}) == 3000


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="facts"):
        run_growth(5, 3)
    with pytest.raises(ValueError, match="new_share"):
        run_growth(100, 3, new_share=0.0)


def test_quick_run_measures_every_pass(tmp_path: Path) -> None:
    out = tmp_path / "growth.json"
    result = run_growth(quick=True, out=out)
    data = json.loads(out.read_text())
    for key in CONTRACT_KEYS:
        assert key in data and key in result
    rows = data["rows"]
    assert [int(r["pass"]) for r in rows] == [0, 1, 2, 3]
    assert [int(r["facts_added"]) for r in rows] == [60, 61, 62, 63]
    assert all(r["keys"] > 60 and r["namespace_mb"] > 0 for r in rows)
    assert [int(r["version"]) for r in rows] == [1, 2, 3, 4]  # every pass committed
    assert "| after pass |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
