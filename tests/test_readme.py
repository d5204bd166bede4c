"""The README documents every setting and starts with the two commands."""

from __future__ import annotations

from pathlib import Path

from memcore.core.config import ApiConfig, ConsolidationConfig, HooksConfig, Settings

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_every_setting_is_documented() -> None:
    missing = [f"MEMCORE_{name.upper()}" for name in Settings.model_fields
               if name not in ("consolidation", "api", "hooks")
               and f"`MEMCORE_{name.upper()}`" not in README]
    missing += [f"MEMCORE_CONSOLIDATION__{name.upper()}"
                for name in ConsolidationConfig.model_fields
                if name not in ("merge_threshold", "borderline_threshold")
                and f"`MEMCORE_CONSOLIDATION__{name.upper()}`" not in README]
    missing += [f"MEMCORE_API__{name.upper()}" for name in ApiConfig.model_fields
                if f"`MEMCORE_API__{name.upper()}`" not in README]
    missing += [f"MEMCORE_HOOKS__{name.upper()}" for name in HooksConfig.model_fields
                if f"`MEMCORE_HOOKS__{name.upper()}`" not in README]
    assert missing == []


def test_readme_starts_with_the_two_commands() -> None:
    head = README[:1500]
    assert "make demo" in head and "make test" in head
