"""`bench scale --quick` writes the contract keys; its pass is memcore's consolidation."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memcore.adapters.offline import OfflineMerger
from memcore.consolidation import plan, reduce, resolve
from memcore.core.config import ConsolidationConfig
from memcore.index.table import STATUSES
from memcore.language.english.compare import Relation, change_of, relate, slot_of
from memcore.language.english.lexicon import numbers, polarity
from memcore_bench.scale import (
    CONTRACT_KEYS,
    STORE_KEYS,
    consolidate_table,
    main,
    run_scale,
    synthetic_table,
    table_loader,
)
from memcore_bench.synthetic import TOPICS, synthetic_text, synthetic_vectors


def test_quick_run_writes_json_markdown_and_plot(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    result = run_scale(100_000, 64, quick=True, out=out)
    data = json.loads(out.read_text())
    for key in CONTRACT_KEYS:
        assert key in data and key in result
    assert data["n"] == 3_000 and data["d"] == 64 and data["quick"] is True
    assert 0.0 <= data["pair_recall"] <= 1.0
    assert data["pairs_exact"] > 0 and data["pass"]["clusters"] > 0
    assert data["pass"]["merge"] > 0 and data["incremental"]["changed"] > 0
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


def test_synthetic_texts_are_distinct_and_neutral() -> None:
    # One text spelled "Fact died about ..." once retired 40 % of a 10^5 namespace: the
    # texts must give the change rules nothing, up to the 10^6 run's ids.
    ids = list(range(0, 1_400_000, 1_009)) + list(range(600))
    texts = [synthetic_text(i) for i in ids]
    assert len(set(texts)) == len(set(ids))
    for text in texts:
        assert slot_of(text) is None and change_of(text) is None, text
        assert polarity(text) > 0 and not numbers(text), text
    same_topic = [synthetic_text(7 + k * TOPICS) for k in range(40)]
    for a in same_topic[1:]:
        assert relate(a, same_topic[0])[0] is Relation.DISTINCT


def test_offline_pass_is_memcores_consolidation() -> None:
    """The bench's pass is plan/resolve/reduce of memcore.consolidation: over the
    same memories as Memory objects it gives the same statuses and events."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    x = synthetic_vectors(600, 32, seed=3)
    config = ConsolidationConfig(cap=560)
    table = synthetic_table(x.copy(), now=now, seed=3)
    memories = [m for m in table_loader(table)(table.ids) if m is not None]
    stats, _ = consolidate_table(table, config, now)
    assert stats["merge"] > 0 and stats["tombstone"] > 0
    assert int(table.live().sum()) <= config.cap
    merger = OfflineMerger()
    p = plan(memories, config)
    expected = reduce(memories, p, resolve(p, {m.id: m for m in memories}, merger), now, config,
                      summarize=merger.summarize)
    by_id = {m.id: m for m in expected.memories}
    got = [STATUSES[int(c)] for c in table.status[: len(memories)]]
    assert got == [by_id[i].status for i in table.ids[: len(memories)]]
    assert stats["merge"] == sum(e.action.value == "MERGE" for e in expected.events)


def test_store_mode_runs_the_real_pass_through_workers(tmp_path: Path) -> None:
    out = tmp_path / "store.json"
    result = run_scale(100_000, 384, quick=True, out=out, store=True, offline=False)
    data = json.loads(out.read_text())
    for key in STORE_KEYS:
        assert key in data and key in result
    rows = data["store_passes"]
    assert data["passes"] == 2 and len(rows) == 3
    assert [r["to_version"] for r in rows] == [1, 2, 3]  # every pass committed
    assert rows[0]["status"]["tombstoned"] > 0  # merged and capped
    # the incremental passes write what changed, not the namespace again
    assert data["bytes_written_incremental"] < data["bytes_written_full"]
    assert data["store_incremental_median_seconds"] == rows[2]["seconds"]  # passes after the 1st
    assert data["store_bytes_median_ratio"] == rows[2]["bytes_written"] / rows[0]["bytes_written"]
    assert data["store_memories"] == 3_000 + 2 * 30
    assert data["worker_peak_rss_mb"] > 50
    assert "Store-backed" in out.with_suffix(".md").read_text()
