"""docs/design.md's numbers and docs/configuration.md's defaults match the code.

A row's name is a setting path (``consolidation.floor``: read from a fresh ``Settings()``
with no ``MEMCORE_*`` variables) or a dotted path starting with ``memcore.`` (a module,
then attributes, mapping keys, or a function's parameter default).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from memcore.core.config import ConsolidationConfig, Settings

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "design.md"
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def table() -> dict[str, str]:
    """Name -> value cell of every table row whose first cell is a code name."""
    rows: dict[str, str] = {}
    for line in DESIGN.read_text().splitlines():
        match = ROW.match(line)
        if match:
            assert match.group(1) not in rows, f"{match.group(1)} is listed twice"
            rows[match.group(1)] = match.group(2)
    return rows


def step(obj: Any, part: str) -> Any:
    """One path segment: an attribute, a mapping key or a parameter default."""
    if isinstance(obj, Mapping):
        return obj[part]
    if hasattr(obj, part):
        return getattr(obj, part)
    if callable(obj):
        default = inspect.signature(obj).parameters[part].default
        return getattr(default, "default", default)  # typer.Option(...) keeps it inside
    raise AttributeError(f"{obj!r} has no {part!r}")


def resolve(name: str, settings: Settings) -> Any:
    """The code's value for a table name."""
    parts = name.split(".")
    if parts[0] != "memcore":
        obj: Any = settings
        for part in parts:
            obj = step(obj, part)
        return obj
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for part in parts[cut:]:
            obj = step(obj, part)
        return obj
    raise AssertionError(f"{name}: no such module")


def documented(cell: str, actual: Any) -> Any:
    """The cell's value in the shape of the code's value."""
    if isinstance(actual, bool):
        assert cell in ("true", "false"), f"{cell!r} is not true/false"
        return cell == "true"
    numbers = [float(n) for n in NUMBER.findall(cell.replace(",", ""))]
    if isinstance(actual, tuple):
        return tuple(numbers[:len(actual)])
    assert numbers, f"{cell!r} holds no number"
    return numbers[0]


@pytest.fixture()
def defaults(monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings as shipped: no ``MEMCORE_*`` variable, no env file."""
    import os

    for key in list(os.environ):
        if key.startswith("MEMCORE_"):
            monkeypatch.delenv(key)
    return Settings()


def test_every_number_in_the_design_matches_the_code(defaults: Settings) -> None:
    rows = table()
    assert len(rows) > 30
    wrong = []
    for name, cell in rows.items():
        actual = resolve(name, defaults)
        value = documented(cell, actual)
        expected = tuple(float(x) for x in actual) if isinstance(actual, tuple) else actual
        if isinstance(expected, bool) or isinstance(value, bool):
            ok = value == expected
        elif isinstance(expected, tuple):
            ok = value == pytest.approx(expected, abs=1e-9)
        else:
            ok = value == pytest.approx(float(expected), abs=1e-9)
        if not ok:
            wrong.append(f"{name}: docs/design.md says {cell!r}, the code {actual!r}")
    assert wrong == []


def test_every_consolidation_rule_and_half_life_is_in_the_table(defaults: Settings) -> None:
    rows = table()
    missing = [f"consolidation.{name}" for name in ConsolidationConfig.model_fields
               if name != "half_lives_days" and f"consolidation.{name}" not in rows]
    missing += [f"consolidation.half_lives_days.{kind}"
                for kind in defaults.consolidation.half_lives_days
                if f"consolidation.half_lives_days.{kind}" not in rows]
    assert missing == []


def test_names_in_the_prose_are_in_the_table() -> None:
    """Every backticked setting or constant the prose cites has its number in the table."""
    rows = table()
    prose = "\n".join(line for line in DESIGN.read_text().splitlines()
                      if not line.startswith("|"))
    cited = set(re.findall(r"`((?:consolidation\.)?[a-z_]+(?:\.[a-z_]+)*)`", prose))
    cited |= set(re.findall(r"`(memcore\.[A-Za-z_.]+[A-Za-z_])`", prose))
    settings_names = set(Settings.model_fields) | {
        f"consolidation.{n}" for n in ConsolidationConfig.model_fields}
    missing = []
    for name in sorted(cited):
        if name.endswith(".*"):
            continue
        is_setting = name in settings_names
        is_constant = name.startswith("memcore.") and name.split(".")[-1].isupper()
        if (is_setting or is_constant) and name not in rows:
            missing.append(name)
    assert missing == []


def test_the_checker_catches_a_wrong_number(defaults: Settings) -> None:
    floor = resolve("consolidation.floor", defaults)
    assert documented("0.01", floor) == pytest.approx(floor)
    assert documented("0.02", floor) != pytest.approx(floor)
    from memcore.client.client import Client
    from memcore.core.config import EMBEDDER_THRESHOLDS

    assert (resolve("memcore.core.config.EMBEDDER_THRESHOLDS.local", defaults)
            == EMBEDDER_THRESHOLDS["local"])
    assert (resolve("memcore.client.client.Client.search.max_chars", defaults)
            == inspect.signature(Client.search).parameters["max_chars"].default)


CONFIGURATION = DESIGN.parent / "configuration.md"
SETTING_ROW = re.compile(r"^\|\s*`MEMCORE_([A-Z0-9_]+)`\s*\|\s*`([^`]*)`\s*\|")


def test_readme_configuration_defaults_match_the_settings(defaults: Settings) -> None:
    """Each literal default in the configuration table is the Settings default."""
    checked, wrong = 0, []
    for line in CONFIGURATION.read_text().splitlines():
        match = SETTING_ROW.match(line)
        if not match:
            continue
        variable, cell = match.groups()
        actual = resolve(".".join(part.lower() for part in variable.split("__")), defaults)
        if isinstance(actual, str):
            ok = cell == actual
        else:
            ok = documented(cell, actual) == pytest.approx(actual)
        checked += 1
        if not ok:
            wrong.append(f"MEMCORE_{variable}: docs/configuration.md says {cell!r}, "
                         f"Settings {actual!r}")
    assert checked > 30
    assert wrong == []
