"""Naming a mistyped name: the closest known one, for "did you mean ...?" hints."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` most likely misspells (same letters in another case first,
    then a close spelling), or None."""
    names = [k for k in known if k != name]
    same_case = [k for k in names if k.lower() == name.lower()]
    if same_case:
        return same_case[0]
    found = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or an empty string."""
    found = closest(name, known)
    return f" (did you mean {found!r}?)" if found else ""
