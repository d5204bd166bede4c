"""Forget requests on the model path (issue 28): with a real model configured the model
extracts, but the erase path decides. The turn that carried the secret and every
memory holding it are gone after the request (a key scan finds no byte of it); the
request is never stored as a fact; a fact the user did not ask to forget survives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.adapters import build_models
from memcore.core.config import Settings
from memcore.core.models import Episode, Role
from memcore.ingest.write_path import IngestPipeline
from memcore.local.models import LlamaServer
from memcore.store import MemoryStore
from tests.support.key_scan import keys_holding

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

CASES = [
    # (shared, distractor, needle, request)
    ("My home address is 14 Larkspur Road, Leeds.", "I work as a nurse.", "Larkspur",
     "Please forget my address."),
    ("My ex is Daniel Okafor, we split up in May.", "I have a cat called Tom.", "Okafor",
     "Forget everything about my ex."),
    ("My passport number is 533918274.", "I play the violin.", "533918274",
     "I shouldn't have told you that, please delete it."),
]


@pytest.mark.parametrize(("shared", "distractor", "needle", "request_text"), CASES)
def test_a_forget_request_erases_what_the_model_extracted(
        llm_server: LlamaServer, redis_url: str, shared: str, distractor: str, needle: str,
        request_text: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key="local-llm",
                        openai_base_url=llm_server.base_url, chat_model=llm_server.model,
                        model_timeout=1200.0, model_max_retries=0, model_seed=42)
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    for i, text in enumerate([distractor, shared, request_text]):
        pipeline.ingest("fm", [Episode(id=f"fm-{i}", namespace="fm", role=Role.USER,
                                       speaker="Ann", text=text, user_id="ann",
                                       timestamp=T0 + timedelta(minutes=2 * i))])
        if i == 1:  # what the model kept of the distractor's turn
            kept = [m.text for m in store.records.iter_memories("fm")
                    if m.live and "fm-0" in m.sources]
    memories = [m for m in store.records.iter_memories("fm")]
    assert not keys_holding(store.client, needle), memories
    live = [m.text for m in memories if m.live]
    assert all(t in live for t in kept), (kept, live)  # the distractor survives
    assert not any(w in t.lower() for t in live for w in ("forget", "delete")), live
