"""What the write path leaves out of a task: what single erases after it removed.

A task carries the namespace's single-erase count from when its turns were accepted
(IngestPayload.erasures). A memory, turn or forget erase made after that noted, without
text, the turn ids and content hashes it removed (memcore.store.erased). A turn with an
erased id or text, and a fact from such a turn or whose text (in its turn's scope) was
erased, is neither stored nor read: a redelivered task, or another turn accepted
before the erase that restates the erased content, does not bring it back
(docs/design.md, Erase wins over the queue). Turns and facts accepted after the erase
are stored as usual: saying it again later is new information.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memcore.adapters.provided import provided_facts
from memcore.core.interfaces import ExtractedFact
from memcore.core.models import Episode
from memcore.core.text import content_hash
from memcore.store.erased import ErasedSince


def erased_turn(episode: Episode, erased: ErasedSince) -> bool:
    """The turn itself, its text in its scope, or one of the facts its producer gave
    with it was erased after it was accepted."""
    if episode.id in erased.turns or content_hash(episode.text, episode.scope) in erased.hashes:
        return True
    try:
        given = provided_facts(episode)
    except ValueError:  # a bad attachment is the extractor's to report
        return False
    return any(content_hash(f.text, episode.scope) in erased.hashes for f in given)


def kept_turns(episodes: Sequence[Episode], erased: ErasedSince) -> list[Episode]:
    """``episodes`` without the erased ones."""
    return [ep for ep in episodes if not erased_turn(ep, erased)]


def restated(facts: Sequence[ExtractedFact], origin: Mapping[str, Episode],
             erased: ErasedSince) -> set[int]:
    """Positions of the facts of an erased turn or restating an erased text (compared in
    the scope of the turn they come from, as the memory they would make)."""
    return {i for i, f in enumerate(facts)
            if f.source in erased.turns
            or content_hash(f.text, origin[f.source].scope) in erased.hashes}
