"""``max_turn_bytes`` bounds a turn wherever turns enter: Client, task payload, write path."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import redis
from pydantic import ValidationError

from memcore.adapters import build_models
from memcore.client.client import Client, to_episodes
from memcore.core.config import Settings
from memcore.core.models import MAX_TEXT_BYTES, Episode, turn_limit
from memcore.ingest.write_path import IngestPipeline
from memcore.messaging.payloads import IngestPayload
from memcore.store import MemoryStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NS = "turns"


def message(text: str) -> dict[str, str]:
    return {"role": "user", "content": text, "id": "m0"}


def test_client_applies_the_setting() -> None:
    assert to_episodes(NS, [message("é" * 50)], T0, None, max_turn_bytes=100)
    with pytest.raises(ValueError, match=r"(?s)messages\[0\].*text is 101 bytes; the limit is 100"):
        to_episodes(NS, [message("x" * 101)], T0, None, max_turn_bytes=100)
    # A raised limit accepts turns above the old fixed bound.
    big = "y" * (MAX_TEXT_BYTES + 1000)
    (episode,) = to_episodes(NS, [message(big)], T0, None, max_turn_bytes=2 * MAX_TEXT_BYTES)
    # An Episode passed in is checked as well (files validated earlier, then added).
    with pytest.raises(ValueError, match=r"messages\[0\]\.text: text is \d+ bytes"):
        to_episodes(NS, [episode], T0, None, max_turn_bytes=MAX_TEXT_BYTES)


def test_client_add_rejects_before_sending(redis_url: str, redis_client: redis.Redis) -> None:
    client = Client(redis_url, settings=Settings(max_turn_bytes=64))
    with pytest.raises(ValueError, match="text is 65 bytes; the limit is 64"):
        client.add(NS, [message("z" * 65)])
    with client.batched() as batch, pytest.raises(ValueError, match="the limit is 64"):
        batch.add(NS, [message("z" * 65)])
    assert redis_client.keys("*") == []  # nothing enqueued, nothing stored
    client.close()


def test_task_payload_validates_with_the_limit() -> None:
    payload = {"namespace": NS, "episodes": [{"namespace": NS, "role": "user", "text": "w" * 40,
                                              "timestamp": T0.isoformat()}]}
    assert IngestPayload.model_validate(payload, context=turn_limit(40))
    with pytest.raises(ValidationError, match=r"episodes\.0\.text") as err:
        IngestPayload.model_validate(payload, context=turn_limit(39))
    assert "text is 40 bytes; the limit is 39" in str(err.value)


def test_write_path_rejects_an_oversized_turn_and_writes_nothing(
        redis_url: str, redis_client: redis.Redis) -> None:
    settings = Settings(redis_url=redis_url, max_turn_bytes=30)
    pipeline = IngestPipeline(MemoryStore.from_url(redis_url), build_models(settings), settings)
    fits = Episode(namespace=NS, role="user", text="Sam keeps bees.", timestamp=T0)
    too_big = Episode(namespace=NS, role="user", text="Sam keeps bees in a garden by the sea.",
                      timestamp=T0)
    with pytest.raises(ValueError, match=r"episodes\.1\.text: text is 38 bytes; the limit is 30"):
        pipeline.ingest(NS, [fits, too_big])
    assert redis_client.keys(f"mc:{{{NS}}}:*") == []
    assert pipeline.ingest(NS, [fits]).episodes == 1
