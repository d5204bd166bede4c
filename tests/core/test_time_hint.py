"""A relative time in a question becomes a filter on event_at, chosen before ranking
(dateparser, resolved against ``now``); on a real Redis and through the real HTTP API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from memcore import Client, RemoteClient
from memcore.core.models import Memory, utcnow
from memcore.core.timehint import resolve_time
from tests.core.test_time_queries import put
from tests.support.api_helpers import Api, serve

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)  # a Wednesday


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(("query", "phrase", "start", "end", "rest"), [
    ("what did I say about the trip last week?", "last week", day(2026, 5, 11),
     day(2026, 5, 18), "what did I say about the trip ?"),
    ("what happened in March", "in March", day(2026, 3, 1), day(2026, 4, 1), "what happened"),
    ("in December", "in December", day(2025, 12, 1), day(2026, 1, 1), "in December"),
    ("where was I 3 days ago", "3 days ago", day(2026, 5, 17), day(2026, 5, 18), "where was I"),
    ("what did I eat yesterday", "yesterday", day(2026, 5, 19), day(2026, 5, 20),
     "what did I eat"),
    ("what did I do in 2024", "in 2024", day(2024, 1, 1), day(2025, 1, 1), "what did I do"),
    ("plans from last month", "from last month", day(2026, 4, 1), day(2026, 5, 1), "plans"),
])
def test_phrases_resolve_to_their_period(query: str, phrase: str, start: datetime,
                                         end: datetime, rest: str) -> None:
    hint = resolve_time(query, NOW)
    assert hint is not None
    assert (hint.phrase, hint.start, hint.end, hint.query) == (phrase, start, end, rest)
    assert hint.filter() == {"event_at": {"gte": start.isoformat(), "lt": end.isoformat()}}


@pytest.mark.parametrize("query", ["May I ask where I parked?", "did we march in the parade",
                                   "tell me about Lisbon", "now what", "what about May"])
def test_words_that_only_look_like_dates_are_not_hints(query: str) -> None:
    assert resolve_time(query, NOW) is None


def trips(client: Client, ns: str, now: datetime) -> Memory:
    """Twenty trip memories over the last months; the one said last week returned."""
    last_week = now - timedelta(days=8)
    for i in range(20):
        put(client, ns, f"Sam said the trip to Porto is plan {i}",
            now - timedelta(days=30 + 5 * i))
    return put(client, ns, "A day in Sintra should be part of the holiday", last_week)


def test_a_relative_time_in_the_question_filters_before_ranking(
        client: Client) -> None:
    sintra = trips(client, "sam", NOW)
    question = "what did Sam say about the trip last week?"
    plain = client.search("sam", question, k=3, now=NOW, touch=False)
    assert sintra.id not in {h.memory.id for h in plain}  # "last week" is just words here
    hinted = client.search("sam", question, k=3, now=NOW, touch=False, time_hint=True)
    assert [h.memory.id for h in hinted] == [sintra.id]
    # Combined with the caller's filters (and-ed), and with nothing in the period: none.
    assert client.search("sam", question, k=3, now=NOW, touch=False, time_hint=True,
                         filters={"user_id": "bob"}) == []
    assert client.search("sam", "what did Sam say about the trip in 2020", k=3, now=NOW,
                         touch=False, time_hint=True) == []
    with pytest.raises(ValueError, match="time_hint: expected a boolean"):
        client.search("sam", question, time_hint="yes")  # type: ignore[arg-type]


@pytest.fixture()
def api(redis_url: str) -> Iterator[Api]:
    yield from serve(redis_url)


def test_time_hint_over_http(api: Api) -> None:
    local = Client(api.redis_url)
    try:
        sintra = trips(local, "sam", utcnow())  # the server resolves against its clock
    finally:
        local.close()
    key = api.key("sam", role="read")
    with RemoteClient(api.url, key) as remote:
        hits = remote.search("sam", "what did Sam say about the trip last week?", k=3,
                             time_hint=True)
    # "last week" from the server's today: the memory said 8 days ago is in it unless
    # today is Sunday or Monday (then it fell in the week before).
    if utcnow().weekday() in (0, 6):
        pytest.skip("8 days ago is not last week on Sundays and Mondays")
    assert [h.memory.id for h in hits] == [sintra.id]
    bad = api.call("POST", "/v1/namespaces/sam/search", key,
                   json={"query": "trip last week", "time_hint": "yes"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "time_hint"
