"""The English language pack: frames read from spaCy's dependency parse.

A fact text ("Kenji moved to Munich.", "Kenji's phone number is 0171 555 0199.",
"Ben asks the assistant to stop suggesting jQuery.") is parsed once (the facts of a
batch in one ``nlp.pipe`` call); its first clause's root, subject, objects and
negation give the frame. The tables in :mod:`.tables` only say which lemmas name
which attribute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memcore.core.frames import is_single_valued
from memcore.core.models import Frame
from memcore.language.english.pipeline import load_pipeline
from memcore.language.english.reader import read_frame

if TYPE_CHECKING:
    from spacy.language import Language

_MAX_CHARS = 400  # a fact longer than this is read by its start only


class EnglishPack:
    """English frames (spaCy ``en_core_web_sm``: tagger, parser, lemmatizer)."""

    name = "english"

    def __init__(self, pipeline: str | None = None) -> None:
        self._pipeline_name = pipeline
        self._nlp: Language | None = None

    @property
    def nlp(self) -> Language:
        """The spaCy pipeline, loaded on first use (about 0.6 s)."""
        if self._nlp is None:
            self._nlp = load_pipeline(self._pipeline_name)
        return self._nlp

    def frames(self, texts: Sequence[str]) -> list[Frame | None]:
        """One frame per text (None: no known attribute), parsed in one batch."""
        if not texts:
            return []
        out: list[Frame | None] = []
        for doc in self.nlp.pipe([t[:_MAX_CHARS] for t in texts], batch_size=64):
            raw = read_frame(doc)
            if raw is None:
                out.append(None)
                continue
            subject, attribute, value, polarity, event = raw
            out.append(Frame(subject=subject[:256], attribute=attribute[:128],
                             value=value[:256], polarity=polarity,
                             single=is_single_valued(attribute), event=event))
        return out
