"""Numbers written as words, read by text2num ("seventy-four" -> 74)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from text_to_num import text2num

if TYPE_CHECKING:
    from spacy.tokens import Token

MIN_AGE, MAX_AGE = 1, 120


def number(text: str) -> int | None:
    """The integer ``text`` writes in digits or words, or None."""
    text = text.strip().replace(",", "")
    if text.isdigit():
        return int(text)
    try:
        return int(text2num(text.lower(), "en"))
    except ValueError:
        return None


def age_value(tok: Token) -> str | None:
    """The age a number token (with the number words before it) gives, in digits."""
    if not tok.like_num:
        return None
    start = tok.i
    while (start > 0 and tok.doc[start - 1].like_num) or (
            start > 0 and tok.doc[start - 1].text == "-" and start > 1
            and tok.doc[start - 2].like_num):
        start -= 1
    value = number(tok.doc[start:tok.i + 1].text.replace(" - ", "-"))
    if value is None or not MIN_AGE <= value <= MAX_AGE:
        return None
    return str(value)
