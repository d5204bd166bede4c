"""What a language pack reads in one fact text (its own module: the packs import it
without importing the package that picks them)."""

from __future__ import annotations

from typing import NamedTuple

from memcore.core.models import Frame


class Reading(NamedTuple):
    """What a pack reads in one fact text."""

    frame: Frame | None  # its structure (None: no known attribute)
    problem: str | None  # why it is no well-formed sentence (None: it is)
    correction: str | None  # the correction it makes, as "It's X[, not Y]." (None: none)
    vague: bool = False  # says only a passing feeling, or of something only a pronoun names
    agreed: str | None = None  # the text with its verbs made to agree (None: they do)
    bare: bool = False  # names fewer than two things: nothing to find or tell it by
    general: bool = False  # a general remark about no one ("Staying positive is key")
