"""Facts that the producer extracted itself, carried on the episode (``metadata["facts"]``).

Selected with ``MEMCORE_EXTRACTOR=provided``: the write path then stores exactly the
facts a caller attached to each turn (a client-side model, a human annotation such as
LoCoMo's observations) and extracts nothing else. Every later step (exact and MinHash
duplicates, neighbours, the decision call, consolidation) is unchanged, which is what
lets a benchmark isolate consolidation from extraction. Without the setting, the key
is ignored: attached facts are never trusted by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memcore.core.interfaces import ExtractedFact
from memcore.core.models import FACTS_KEY, Episode
from memcore.observability.usage import Metered


def provided_facts(episode: Episode) -> list[ExtractedFact]:
    """The facts attached to ``episode``: strings or ``{text, kind?, importance?,
    explicit?, valid_from?, valid_until?, expires_at?}`` objects (an error names the
    episode and the item)."""
    raw: Any = episode.metadata.get(FACTS_KEY) or []
    if not isinstance(raw, list):
        raise ValueError(f"episode {episode.id}: metadata.{FACTS_KEY} must be a list")
    facts: list[ExtractedFact] = []
    for i, item in enumerate(raw):
        data: dict[str, Any]
        if isinstance(item, str):
            data = {"text": item}
        elif isinstance(item, Mapping):
            data = dict(item)
        else:
            raise ValueError(f"episode {episode.id}: metadata.{FACTS_KEY}[{i}] must be a "
                             "string or an object with text")
        data["source"] = episode.id  # a fact always comes from the turn that carries it
        try:
            facts.append(ExtractedFact.model_validate(data))
        except ValueError as exc:
            raise ValueError(f"episode {episode.id}: metadata.{FACTS_KEY}[{i}]: {exc}") from exc
    return facts


class ProvidedFactsExtractor(Metered):
    """An extractor that returns the facts attached to the turns; never a model call."""

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        """Attached facts of all ``episodes``, in turn order (``usage.calls`` stays 0)."""
        out: list[ExtractedFact] = []
        for episode in episodes:
            try:
                out.extend(provided_facts(episode))
            except ValueError as exc:  # a bad attachment loses that turn's facts, audited
                self.record_error(str(exc))
        return out
