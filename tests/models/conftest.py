"""A real llama.cpp server on a real small model for the whole session (``make test-models``).

The model is ``$MEMCORE_TEST_MODEL`` (default qwen-0.5b); ``make test-models`` fetches the
runtime and the model first. Calls are greedy (temperature 0) with a fixed seed, and the
tests assert structure and clear-cut cases only: a real model is not deterministic
across prompt-cache states.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from memcore.adapters.openai_client import OpenAIConfig
from memcore.local.models import LlamaServer, ModelSpec, runtime_ready, verified


@pytest.fixture(scope="session")
def llm_server() -> Iterator[LlamaServer]:
    """The server, started once (a missing model or runtime fails with the command to run)."""
    model = os.environ.get("MEMCORE_TEST_MODEL", "qwen-0.5b")
    if not verified(ModelSpec.named(model)) or not runtime_ready():
        pytest.fail(f"model {model} or the llama.cpp runtime is missing: run `make models` "
                    f"(or `memcore models fetch --model {model}`)")
    with LlamaServer(model) as server:
        yield server


@pytest.fixture()
def llm(llm_server: LlamaServer) -> OpenAIConfig:
    """Adapter settings for the session's server: greedy, seeded, patient, no retries."""
    return OpenAIConfig(base_url=llm_server.base_url, api_key="local-llm",
                        chat_model=llm_server.model, timeout=1200.0, max_retries=0,
                        temperature=0.0, seed=42, max_tokens=512, max_input_chars=1500)
