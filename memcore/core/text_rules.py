"""What the core asks of a language about raw fact texts, and the language-free answer.

The core compares frames (:mod:`memcore.core.frames`) and vectors; where it still reads
text (search terms, a guard against merging near-identical texts that differ, the
pass's text rules for facts no pack could frame) it asks a :class:`TextRules` given to
it by whoever composes the system: a language pack's (``LanguagePack.text_rules``), or
:class:`PlainText`, which knows no language. No grammar lives in the core.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

_WORD = re.compile(r"\w+", re.UNICODE)
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")

Supersession = tuple[str, str, str]
"""``(old_id, newer_id, reason)``: a newer fact that makes an older one stale."""


@runtime_checkable
class TextRules(Protocol):
    """A language's rules over fact texts, as the core uses them."""

    name: str

    def terms(self, text: str) -> list[str]:
        """Search index terms of ``text``, in order (normalized content words)."""
        ...

    def query_terms(self, query: str, expand: bool = True) -> dict[str, float]:
        """Query term -> weight (1 for terms said, less for broader terms it adds)."""
        ...

    def canonical_terms(self, text: str) -> frozenset[str]:
        """The content of ``text`` as a set of terms (numbers left out): what a short or
        duplicate fact is measured by."""
        ...

    def conflict(self, a: str, b: str) -> bool:
        """Do two near-identical texts differ in what they state (negation, numbers,
        names, one ending the other)? Such pairs are never merged on similarity alone."""
        ...

    def may_change(self, text: str) -> bool:
        """Cheap screen: could ``text`` retire an older fact by :meth:`supersessions`?"""
        ...

    def supersessions(self, ids: Sequence[str], texts: Sequence[str],
                      times: Sequence[float], slotted: Sequence[bool] | None = None, *,
                      hints: Sequence[bool] | None = None,
                      ended: Sequence[tuple[str, str, str] | None] | None = None
                      ) -> list[Supersession]:
        """Every older fact a newer one makes stale, read from the texts. ``ended``
        (optional): per text, the ``(subject, attribute, thing)`` of an end its frame
        reports, which the language matches in the older texts' words as it matches its
        own ends."""
        ...

    def reduced(self, text: str, value: str) -> str | None:
        """``text`` cut down to its own ``value`` (its frame's normalized value), still a
        sentence ("Ann is a nurse at St Mary's." with "nurse": "Ann is a nurse."), or
        None when nothing can be cut off."""
        ...


def plain_words(text: str) -> list[str]:
    """Lower-cased words of any script (NFKC, case-folded)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


class PlainText:
    """Rules that know no language: words are the terms, numbers are the only thing two
    texts can be seen to disagree on, and no text retires another."""

    name = "plain"

    def terms(self, text: str) -> list[str]:
        """Every word, lower-cased."""
        return plain_words(text)

    def query_terms(self, query: str, expand: bool = True) -> dict[str, float]:
        """The query's words, weight 1 (nothing to expand with)."""
        return dict.fromkeys(plain_words(query), 1.0)

    def canonical_terms(self, text: str) -> frozenset[str]:
        """The words that are not numbers."""
        return frozenset(w for w in plain_words(text) if not w.isdigit())

    def conflict(self, a: str, b: str) -> bool:
        """Texts that state different numbers ("room 12" / "room 14")."""
        return set(_DIGITS.findall(a)) != set(_DIGITS.findall(b))

    def may_change(self, text: str) -> bool:
        """Nothing is read as a change."""
        return False

    def supersessions(self, ids: Sequence[str], texts: Sequence[str],
                      times: Sequence[float], slotted: Sequence[bool] | None = None, *,
                      hints: Sequence[bool] | None = None,
                      ended: Sequence[tuple[str, str, str] | None] | None = None
                      ) -> list[Supersession]:
        """None: without a language only frames retire facts."""
        return []

    def reduced(self, text: str, value: str) -> str | None:
        """None: without a language nothing can be cut off."""
        return None


PLAIN = PlainText()
"""The language-free rules (``MEMCORE_LANGUAGE=none``)."""
