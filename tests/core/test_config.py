"""Settings: secrets stay out of repr, env files and nested variables are read."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from pydantic import ValidationError

from memcore.core.config import Settings, UnknownSettingWarning, get_settings


def test_settings_repr_hides_secrets() -> None:
    s = Settings(redis_url="redis://:hunter2@localhost:6379/0", openai_api_key="sk-sentinel")
    assert "hunter2" not in repr(s) and "sk-sentinel" not in repr(s)
    assert "hunter2" not in str(s) and "sk-sentinel" not in str(s)


def test_env_file_and_nested_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / "memcore.env"
    env.write_text("MEMCORE_NEIGHBOURS=7\nMEMCORE_CONSOLIDATION__FLOOR=0.02\n")
    monkeypatch.setenv("MEMCORE_ENV_FILE", str(env))
    monkeypatch.setenv("MEMCORE_CONSOLIDATION__CAP", "123")
    s = get_settings()
    assert (s.neighbours, s.consolidation.floor, s.consolidation.cap) == (7, 0.02, 123)
    assert s.consolidation.merge_threshold == 0.84, "the embedder's threshold still applies"


def test_bad_setting_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_NEIGHBOURS", "0")
    with pytest.raises(ValueError, match="neighbours"):
        get_settings()


def test_summary_threshold_follows_the_embedder_unless_set() -> None:
    from memcore.core.config import SUMMARY_THRESHOLDS

    assert Settings(embedder="hash").consolidation.summary_threshold == SUMMARY_THRESHOLDS["hash"]
    assert Settings(embedder="local").consolidation.summary_threshold == SUMMARY_THRESHOLDS[
        "local"]
    chosen = Settings(embedder="hash", consolidation={"summary_threshold": 0.45})
    assert chosen.consolidation.summary_threshold == 0.45


def test_a_misspelt_or_unknown_setting_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"no such setting: embeder \(did you mean embedder\?\)"):
        Settings(embeder="local")
    with pytest.raises(ValidationError, match=r"embedder\n.*'hash', 'local' or 'openai'"):
        Settings(embedder="foo")


def test_an_unknown_memcore_variable_warns_with_the_closest_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_REDIS_ULR", "redis://example:6379/0")
    with pytest.warns(UnknownSettingWarning, match="MEMCORE_REDIS_ULR.*MEMCORE_REDIS_URL"):
        Settings()
    monkeypatch.delenv("MEMCORE_REDIS_ULR")
    monkeypatch.setenv("MEMCORE_CONSOLIDATION__CAP", "5000")  # a nested setting is known
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownSettingWarning)
        assert Settings().consolidation.cap == 5000
