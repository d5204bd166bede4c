"""The docs document every setting; README.md, their front page, starts with the two commands
and stays short."""

from __future__ import annotations

from memcore.core.config import ApiConfig, ConsolidationConfig, HooksConfig, Settings
from tests.support.docs_text import doc

README = doc("README.md")
# Every setting is in the configuration page's table.
DOCS = doc("configuration.md")


def test_every_setting_is_documented() -> None:
    missing = [f"MEMCORE_{name.upper()}" for name in Settings.model_fields
               if name not in ("consolidation", "api", "hooks")
               and f"`MEMCORE_{name.upper()}`" not in DOCS]
    missing += [f"MEMCORE_CONSOLIDATION__{name.upper()}"
                for name in ConsolidationConfig.model_fields
                if name not in ("merge_threshold", "borderline_threshold")
                and f"`MEMCORE_CONSOLIDATION__{name.upper()}`" not in DOCS]
    missing += [f"MEMCORE_API__{name.upper()}" for name in ApiConfig.model_fields
                if f"`MEMCORE_API__{name.upper()}`" not in DOCS]
    missing += [f"MEMCORE_HOOKS__{name.upper()}" for name in HooksConfig.model_fields
                if f"`MEMCORE_HOOKS__{name.upper()}`" not in DOCS]
    assert missing == []


def test_readme_starts_with_the_two_commands() -> None:
    head = README[:1500]
    assert "make demo" in head and "make test" in head


def test_readme_is_a_front_page() -> None:
    """At most 400 lines: the rest is on the docs site, linked from the front page."""
    assert len(README.splitlines()) <= 400
    for page in ("usage.md", "configuration.md", "http-api.md", "operations.md"):
        assert f"](docs/{page})" in README, page
