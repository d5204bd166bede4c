"""Model adapters behind memcore.core.interfaces: offline rules, OpenAI-compatible, embedders.

:func:`build_models` picks the set from :class:`memcore.core.config.Settings`: the
OpenAI-compatible models when an API key is configured, the deterministic
offline ones otherwise; the embedder by ``settings.embedder``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcore.adapters.hashing import HashingEmbedder
from memcore.adapters.local import LocalEmbedder
from memcore.adapters.offline import OfflineDecider, OfflineExtractor, OfflineMerger
from memcore.adapters.openai_client import ModelCallError, OpenAIConfig
from memcore.adapters.openai_models import (
    OpenAIDecider,
    OpenAIEmbedder,
    OpenAIExtractor,
    OpenAIMerger,
)
from memcore.adapters.provided import ProvidedFactsExtractor
from memcore.core.config import Settings
from memcore.core.interfaces import Decider, Embedder, Extractor, Merger
from memcore.observability.instrument import InstrumentedModels, Instruments, instrument
from memcore.observability.usage import Metered, ModelUsage

__all__ = [
    "HashingEmbedder",
    "Metered",
    "ModelCallError",
    "ModelUsage",
    "Models",
    "OfflineDecider",
    "OfflineExtractor",
    "OfflineMerger",
    "OpenAIConfig",
    "build_embedder",
    "build_models",
    "openai_config",
]

EMBEDDERS = ("hash", "local", "openai")


@dataclass
class Models:
    """The four model roles the write path and consolidation use.

    The fields hold the adapters as built (tests and benchmarks may inspect or replace
    them); callers make their model calls through :attr:`instrumented`, so every call
    is counted, timed and its errors collected by the one :class:`Instruments`.
    """

    extractor: Extractor
    decider: Decider
    merger: Merger
    embedder: Embedder
    instruments: Instruments = field(default_factory=Instruments, repr=False, compare=False)

    @property
    def instrumented(self) -> InstrumentedModels:
        """The current adapters, each behind its instrumentation wrapper."""
        return instrument(self.extractor, self.decider, self.merger, self.embedder,
                          self.instruments)

    def usage(self) -> dict[str, ModelUsage]:
        """Each role's usage counters (empty for an adapter that keeps none)."""
        roles = {"extractor": self.extractor, "decider": self.decider,
                 "merger": self.merger, "embedder": self.embedder}
        return {name: adapter.usage if isinstance(adapter, Metered) else ModelUsage()
                for name, adapter in roles.items()}


def openai_config(settings: Settings) -> OpenAIConfig:
    """The OpenAI-compatible endpoint settings from ``settings``."""
    return OpenAIConfig(
        base_url=settings.openai_base_url,
        api_key=(settings.openai_api_key.get_secret_value()
                 if settings.openai_api_key else None),
        chat_model=settings.chat_model,
        embedding_model=settings.embedding_model,
        timeout=settings.model_timeout,
        max_retries=settings.model_max_retries,
        response_format=settings.model_response_format,
        max_tokens=settings.model_max_tokens,
        seed=settings.model_seed,
        max_input_chars=settings.model_input_chars,
    )


def build_embedder(settings: Settings) -> Embedder:
    """The embedder named by ``settings.embedder`` ("hash" | "local" | "openai")."""
    name = settings.embedder.strip().lower()
    if name == "hash":
        return HashingEmbedder(dim=settings.embedding_dim)
    if name == "local":
        return LocalEmbedder()
    if name == "openai":
        return OpenAIEmbedder(openai_config(settings), dim=settings.embedding_dim)
    raise ValueError(f"embedder must be one of {', '.join(EMBEDDERS)}; got {settings.embedder!r}")


def build_models(settings: Settings) -> Models:
    """OpenAI-compatible models when ``settings.openai_api_key`` is set, else offline rules."""
    embedder = build_embedder(settings)
    if settings.openai_api_key:
        config = openai_config(settings)
        return _with_options(settings, Models(
            extractor=OpenAIExtractor(config, allow_assistant=settings.allow_assistant_facts),
            decider=OpenAIDecider(config),
            merger=OpenAIMerger(config),
            embedder=embedder,
        ))
    return _with_options(settings, Models(
        extractor=OfflineExtractor(allow_assistant=settings.allow_assistant_facts),
        decider=OfflineDecider(),
        merger=OfflineMerger(),
        embedder=embedder,
    ))


EXTRACTORS = ("auto", "provided")


def _with_options(settings: Settings, models: Models) -> Models:
    """Apply ``settings.extractor`` ("provided": facts attached to the turns)."""
    choice = settings.extractor.strip().lower()
    if choice not in EXTRACTORS:
        raise ValueError(f"extractor must be one of {', '.join(EXTRACTORS)}; "
                         f"got {settings.extractor!r}")
    if choice == "provided":
        models.extractor = ProvidedFactsExtractor()
    return models
