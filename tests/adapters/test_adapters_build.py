"""build_models picks the adapters from Settings."""

from __future__ import annotations

import pytest

from memcore.adapters import HashingEmbedder, Models, build_models
from memcore.adapters.offline import OfflineDecider, OfflineExtractor, OfflineMerger
from memcore.adapters.openai_models import (
    OpenAIDecider,
    OpenAIEmbedder,
    OpenAIExtractor,
    OpenAIMerger,
)
from memcore.core.config import Settings
from memcore.core.interfaces import Decider, Embedder, Extractor, Merger


def test_offline_by_default() -> None:
    models = build_models(Settings(openai_api_key=None, embedder="hash", embedding_dim=64))
    assert isinstance(models, Models)
    assert isinstance(models.extractor, OfflineExtractor)
    assert isinstance(models.decider, OfflineDecider)
    assert isinstance(models.merger, OfflineMerger)
    assert isinstance(models.embedder, HashingEmbedder) and models.embedder.dim == 64
    for role, proto in ((models.extractor, Extractor), (models.decider, Decider),
                        (models.merger, Merger), (models.embedder, Embedder)):
        assert isinstance(role, proto)
    assert set(models.usage()) == {"extractor", "decider", "merger", "embedder"}


def test_openai_when_a_key_is_set() -> None:
    settings = Settings(openai_api_key="sk-test", openai_base_url="http://127.0.0.1:9/v1",
                        embedder="openai", embedding_dim=32, allow_assistant_facts=True)
    models = build_models(settings)
    assert isinstance(models.extractor, OpenAIExtractor) and models.extractor.allow_assistant
    assert isinstance(models.decider, OpenAIDecider)
    assert isinstance(models.merger, OpenAIMerger)
    assert isinstance(models.embedder, OpenAIEmbedder) and models.embedder.dim == 32
    assert models.instruments.drain_errors() == []


def test_unknown_embedder_names_the_field() -> None:
    with pytest.raises(ValueError, match="embedder"):
        build_models(Settings(embedder="word2vec"))
