"""Per-embedder thresholds come from the shipped labelled pairs, and stay in sync."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from memcore.adapters.hashing import HashingEmbedder
from memcore.consolidation import plan
from memcore.core.calibration import calibrate, load_pairs
from memcore.core.config import EMBEDDER_THRESHOLDS, Settings
from memcore.language.english.text_rules import ENGLISH_TEXT, texts_conflict
from tests.support.helpers import make_memory


def test_hash_defaults_match_the_shipped_calibration() -> None:
    cal = calibrate(HashingEmbedder(), load_pairs(), rules=ENGLISH_TEXT)
    assert (cal.merge, cal.borderline) == EMBEDDER_THRESHOLDS["hash"]
    assert cal.auto_merge_precision == 1.0
    assert cal.borderline_recall >= 0.9 and cal.contradiction_recall >= 0.9


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="the `local` extra (sentence-transformers) is not installed")
def test_local_defaults_match_the_shipped_calibration() -> None:
    from memcore.adapters.local import LocalEmbedder

    cal = calibrate(LocalEmbedder(), load_pairs(), rules=ENGLISH_TEXT)
    # One step of the calibration grid (0.01) of slack: torch and sentence-transformers
    # releases round MiniLM's cosines differently (0.69 vs 0.70 seen on one machine).
    shipped = EMBEDDER_THRESHOLDS["local"]
    assert abs(cal.merge - shipped[0]) <= 0.011 and abs(cal.borderline - shipped[1]) <= 0.011


def test_bad_pairs_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"a": "x", "b": "y", "duplicate": true}\n{"a": "x"}\n')
    with pytest.raises(ValueError, match="line 2"):
        load_pairs(path)
    path.write_text('{"a": "x", "b": "y", "duplicate": true}\n')
    with pytest.raises(ValueError, match="both"):
        load_pairs(path)


def test_settings_take_the_embedders_thresholds_unless_overridden() -> None:
    s = Settings(embedder="local")
    assert (s.consolidation.merge_threshold, s.consolidation.borderline_threshold) == (0.93, 0.70)
    assert s.add_threshold == 0.70
    s = Settings(embedder="hash", merge_threshold=0.9, add_threshold=0.4)
    assert s.consolidation.merge_threshold == 0.9 and s.add_threshold == 0.4
    with pytest.raises(ValueError, match="borderline_threshold"):
        Settings(merge_threshold=0.5, borderline_threshold=0.6)


def test_negations_and_changed_numbers_are_never_auto_merged() -> None:
    assert texts_conflict("Sam likes hiking.", "Sam does not like hiking.")
    assert texts_conflict("Sam has 2 kids.", "Sam has 3 kids.")
    assert not texts_conflict("Sam likes hiking.", "Sam enjoys hiking.")
    a = make_memory("Sam likes hiking.", [1.0, 0.0])
    b = make_memory("Sam does not like hiking.", [1.0, 0.001])
    p = plan([a, b], Settings().consolidation, rules=ENGLISH_TEXT)
    assert all(len(w.members) < 2 for w in p.clusters)
    assert any(w.pairs for w in p.clusters), "the pair goes to the model instead"


def test_calibrate_command(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from memcore.cli.app import app

    result = CliRunner().invoke(app, ["calibrate", "--json", "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["merge"], data["borderline"]) == EMBEDDER_THRESHOLDS["hash"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": "x"}\n')
    result = CliRunner().invoke(app, ["calibrate", "--pairs", str(bad)])
    assert result.exit_code == 2 and "line 1" in result.output

