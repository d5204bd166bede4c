"""Input hygiene: what the service refuses, and what it must not count twice.

Seen before: NUL and ESC bytes were accepted in metadata values (refused in a turn's
content) and reached the inspector's HTML raw; with two ``Authorization`` headers the
last one won (a proxy may read the first); a batch sent again with the same turn ids
counted its turns again in the ``turns`` counter.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from memcore.adapters import build_models
from memcore.client.client import Client
from memcore.client.messages import to_episodes
from memcore.core.config import Settings
from memcore.core.models import Actor
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from tests.support.api_helpers import Api, api  # noqa: F401 - the fixture
from tests.support.cli_helpers import T0, memory

BAD = ["a\x00b", "colour \x1b[31mred", "bell\x07"]


@pytest.mark.parametrize("value", BAD)
def test_control_characters_in_metadata_are_refused_naming_the_field(redis_url: str,
                                                                    value: str) -> None:
    client = Client(redis_url)
    try:
        turn = [{"role": "user", "content": "I like tea."}]
        with pytest.raises(ValueError, match=r"^metadata\.note: contains control char"):
            client.add("hyg", turn, metadata={"note": value})
        with pytest.raises(ValueError, match=r"metadata\.tags\[1\]: contains control char"):
            client.add("hyg", [{**turn[0], "metadata": {"tags": ["ok", value]}}])
        stored = memory("Sam likes tea", ns="hyg")
        client.store.writes.add("hyg", stored, actor=Actor.USER, reason="test")
        with pytest.raises(ValueError, match=r"^metadata\.note: contains control char"):
            client.update("hyg", stored.id, metadata={"note": value})
        # Tabs, newlines and carriage returns are text, as in content.
        client.update("hyg", stored.id, metadata={"note": "line 1\r\nline 2\tend"})
        updated = client.get("hyg", stored.id)
        assert updated is not None and updated.metadata["note"] == "line 1\r\nline 2\tend"
    finally:
        client.close()


def test_http_refuses_control_characters_in_metadata(api: Api) -> None:  # noqa: F811
    key = api.key("hyg", role="write")
    answer = api.call("POST", "/v1/namespaces/hyg/messages", key, json={
        "messages": [{"role": "user", "content": "I like tea."}],
        "metadata": {"note": "a\u0000b"}})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == "metadata.note" and "control characters" in error["message"]


def _twice(api: Api, method: str, path: str, key: str, **kw: Any) -> httpx.Response:  # noqa: F811
    headers = [("Authorization", f"Bearer {key}"), ("Authorization", f"Bearer {key}")]
    return api.http.request(method, path, headers=headers, **kw)


def test_two_authorization_headers_are_refused(api: Api) -> None:  # noqa: F811
    reader = api.key("hyg", role="read")
    other = api.key("elsewhere", role="admin")
    search = {"query": "tea", "k": 3}
    # One header: fine (twice, so the search's shortcut has the key cached).
    for _ in range(2):
        ok = api.call("POST", "/v1/namespaces/hyg/search", reader, json=search)
        assert ok.status_code == 200, ok.text
    cases = [("POST", "/v1/namespaces/hyg/search", {"json": search}),
             ("GET", "/v1/namespaces/hyg/stats", {}),
             ("GET", "/v1/namespaces/hyg/memories", {})]
    for method, path, kw in cases:
        answer = _twice(api, method, path, reader, **kw)
        assert answer.status_code == 400, (path, answer.text)
        error = answer.json()["error"]
        assert error["field"] == "Authorization" and "2 times" in error["message"], error
    # Two different keys: neither wins, whichever order.
    mixed = api.http.get("/v1/namespaces/hyg/stats", headers=[
        ("Authorization", f"Bearer {other}"), ("Authorization", f"Bearer {reader}")])
    assert mixed.status_code == 400, mixed.text


def test_resent_turn_ids_are_not_counted_again(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, extractor="provided")
    store = MemoryStore.from_url(redis_url)
    try:
        pipeline = IngestPipeline(store, build_models(settings), settings)
        turns = [{"id": f"t{i}", "role": "user", "content": f"turn {i}",
                  "timestamp": (T0 + timedelta(minutes=i)).isoformat(),
                  "metadata": {"facts": [f"Sam's code {i} is {1000 + i}"]}} for i in range(3)]
        first = pipeline.ingest("hyg", to_episodes("hyg", turns, None, None))
        again = pipeline.ingest("hyg", to_episodes("hyg", turns, None, None))  # resent
        more = pipeline.ingest("hyg", to_episodes(
            "hyg", [turns[0], {**turns[0], "id": "t9", "content": "turn 9"}], None, None))
        counters = store.coordination.counters("hyg")
        print(f"\n[resent turns] new episodes per batch: {first.new_episodes}, "
              f"{again.new_episodes}, {more.new_episodes}; turns counter {counters['turns']}")
        assert (first.new_episodes, again.new_episodes, more.new_episodes) == (3, 0, 1)
        assert counters["turns"] == 4
    finally:
        store.close()
