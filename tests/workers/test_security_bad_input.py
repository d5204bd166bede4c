"""Bad input, hypothesis-driven: through ``Client`` and as raw task messages to a real worker.

Every case must give a validation error naming the field, write nothing, and leave
the worker up. The suite prints how many inputs it tried.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcore.adapters import build_models
from memcore.client.client import Client, to_episodes
from memcore.core.config import Settings
from memcore.ingest.write_path import IngestPipeline
from memcore.messaging import task_names
from memcore.store import MemoryStore
from tests.support.test_reliability_common import T0, all_values, cluster

NS = "fuzz"
MAX_TURN_BYTES = Settings().max_turn_bytes
BAD_NAMESPACES = st.one_of(
    st.sampled_from(["", " ", "a{b", "b}", "*", "a:b", "a b", "x" * 10_000, "\u0000", "é"]),
    st.text(min_size=1, max_size=20).filter(lambda s: any(c in s for c in "{}*: \n")))
BAD_TEXTS = st.one_of(
    st.sampled_from(["", "   ", "\n\t", "x" * (MAX_TURN_BYTES + 1), "é" * (MAX_TURN_BYTES // 2 + 1),
                     "bad \ud800 surrogate", "nul \x00 byte", "bell \x07", "esc \x1b[31m"]),
    st.text(min_size=1, max_size=30).map(lambda s: s + "\x01"),
    st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2), st.floats())
BAD_ROLES = st.one_of(st.sampled_from(["robot", "USER ", "", "admin", "root"]), st.integers(),
                      st.none())
BAD_TIMES = st.one_of(
    st.sampled_from(["0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59+00:00",
                     "1850-01-01T00:00:00", "2999-01-01T00:00:00Z", "not a date", "",
                     "2026-13-45"]),
    st.integers(min_value=10**13), st.lists(st.integers(), max_size=2))
BAD_IDS = st.one_of(st.sampled_from(["a{b}", "*", "x:y", "a b", "i" * 200, ""]),
                    st.integers(), st.lists(st.integers(), max_size=1))

# (field the error must name, strategy for its bad value)
MUTATIONS: list[tuple[str, str, st.SearchStrategy[Any]]] = [
    ("text", "text", BAD_TEXTS), ("role", "role", BAD_ROLES),
    ("timestamp", "timestamp", BAD_TIMES), ("id", "id", BAD_IDS),
    ("namespace", "namespace", BAD_NAMESPACES),
    ("speaker", "speaker", st.one_of(st.integers(), st.just("s" * 300))),
    ("metadata", "metadata", st.one_of(st.integers(), st.text(max_size=3))),
]


def good_turn(i: int = 0) -> dict[str, Any]:
    return {"namespace": NS, "role": "user", "speaker": "Sam", "text": f"I like item {i}",
            "timestamp": T0.isoformat(), "id": f"ok-{i}"}


@st.composite
def bad_case(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """(field expected in the error, a raw ingest payload broken in that field)."""
    kind = draw(st.sampled_from(["mutate", "missing", "extra", "episodes", "top"]))
    turns = [good_turn(i) for i in range(draw(st.integers(1, 3)))]
    payload: dict[str, Any] = {"namespace": NS, "episodes": turns}
    which = draw(st.integers(0, len(turns) - 1))
    if kind == "mutate":
        name, field, values = draw(st.sampled_from(MUTATIONS))
        value = draw(values)
        turns[which][field] = value
        if field == "namespace":
            payload["namespace"] = value if draw(st.booleans()) else NS
        return name, payload
    if kind == "missing":
        field = "text"  # the client defaults role and timestamp by design
        del turns[which][field]
        return field, payload
    if kind == "extra":
        turns[which][draw(st.sampled_from(["tenant", "namespace_id", "__class__"]))] = "x"
        return "episodes", payload
    if kind == "episodes":
        payload["episodes"] = draw(st.sampled_from([[], "turns", None, 7]))
        return "episodes", payload
    payload[draw(st.sampled_from(["namespace", "oops"]))] = draw(
        st.one_of(BAD_NAMESPACES, st.integers()))
    return "namespace" if "oops" not in payload else "oops", payload


def messages_of(payload: dict[str, Any]) -> list[Any]:
    """The same turns as ``Client.add`` messages (content instead of text)."""
    eps = payload.get("episodes")
    if not isinstance(eps, list):
        return [eps]
    out = []
    for ep in eps:
        m = {k: v for k, v in ep.items() if k != "namespace"}
        if "text" in m:
            m["content"] = m.pop("text")
        out.append(m)
    return out


def data_keys(client: Client) -> dict[bytes, bytes]:
    return dict(all_values(client.store.client, "mc:*"))


def test_bad_input_is_rejected_naming_the_field(tmp_path: Path, long_mode: bool) -> None:
    n_client = 3000 if long_mode else 1500
    n_raw = 1500 if long_mode else 500
    with cluster(tmp_path / "logs") as c:
        c.spawn("ingest", "ingest", 2)
        c.wait_ready({"ingest"})
        client = Client(c.url)
        before = data_keys(client)
        raw_cases: list[tuple[str, dict[str, Any]]] = []
        counted = {"client": 0}

        @settings(max_examples=n_client, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(bad_case())
        def through_client(case: tuple[str, dict[str, Any]]) -> None:
            field, payload = case
            ns = payload["namespace"]
            if payload.get("oops") is not None:
                field = "namespace"  # the client has no place for unknown top-level keys
                ns = "bad ns"
            eps = payload["episodes"] if isinstance(payload["episodes"], list) else []
            if any(isinstance(e, dict) and e.get("namespace") != ns for e in eps):
                raw_cases.append(case)  # a per-turn namespace only exists in raw task messages
                return
            with pytest.raises((ValueError, TypeError)) as err:
                client.add(ns, messages_of(payload))
            msg = str(err.value).lower()
            aliases = {"text": ("text", "content", "message"), "episodes": ("message", "episode",
                                                                            "tenant", "extra")}
            assert any(a in msg for a in aliases.get(field, (field,))) or (
                field in ("namespace", "id", "speaker", "metadata") and "messages" in msg), \
                (field, msg[:300])
            counted["client"] += 1
            if len(raw_cases) < n_raw:
                raw_cases.append(case)

        through_client()
        # The same (and more) cases as raw task messages, all in flight at once.
        sent = [(field, client.celery.send_task(task_names.INGEST, args=[payload], queue="ingest"))
                for field, payload in raw_cases]
        unnamed = []
        for field, result in sent:
            try:
                result.get(timeout=60, propagate=True)
                unnamed.append((field, "succeeded"))
            except Exception as exc:
                msg = str(exc)
                if field not in msg and not (field == "id" and "episodes" in msg):
                    unnamed.append((field, msg[:200]))
        up = c.alive("ingest")
        try:
            c.wait_ready({"ingest"}, timeout=20)
        except TimeoutError:
            up = False
        alive = up
        after = data_keys(client)
        # (malformed broker messages: test_undecodable_message_does_not_kill_the_worker)
        print(f"\n[bad input] {counted['client']:,} through Client + {len(sent):,} raw task "
              f"messages = {counted['client'] + len(sent):,} inputs: "
              f"{len(unnamed)} without the field named, {len(set(after) ^ set(before))} keys "
              f"written, worker up: {alive}")
        assert unnamed == []
        assert after == before, "nothing written"
        assert alive
        client.close()


GOOD_BODY = json.dumps([[{"namespace": NS, "episodes": []}], {}, {}]).encode()
# (body, header overrides): bodies kombu cannot decode, bodies that decode to something
# other than [args, kwargs, embed] (kombu returns b"" undecoded for an empty body), and
# headers Celery cannot parse.
GARBAGE: list[tuple[bytes, dict[str, Any]]] = [
    (b"\xff\xfe\xfd", {}), (b"{not json", {}), (b"", {}), (GOOD_BODY + b"\x80", {}),
    (b"[1, 2", {}), (b"null", {}), (b"5", {}), (b'"a string"', {}), (b"[1, 2]", {}),
    (b"[[], [], {}]", {}), (b'{"args": 5}', {}), (b'{"kwargs": []}', {}),
    (GOOD_BODY, {"id": None}), (GOOD_BODY, {"id": 7}), (GOOD_BODY, {"eta": "not a date"}),
    (GOOD_BODY, {"expires": "never"}), (GOOD_BODY, {"timelimit": "x"}),
    (GOOD_BODY, {"timelimit": ["a", -1]}),
    (GOOD_BODY, {"task": "memcore.no_such_task"}),
]


def raw_garbage(client: Client) -> int:
    """Messages a producer could not build with Celery, pushed straight onto the queue."""
    r = client.store.client
    for body, headers in GARBAGE:
        msg = {"body": base64.b64encode(body).decode(), "content-encoding": "utf-8",
               "content-type": "application/json",
               "headers": {"lang": "py", "task": task_names.INGEST, "id": uuid.uuid4().hex,
                           "argsrepr": "", "kwargsrepr": "", "retries": 0, **headers},
               "properties": {"delivery_tag": uuid.uuid4().hex, "body_encoding": "base64",
                              "delivery_info": {"exchange": "", "routing_key": "ingest"},
                              "priority": 0, "correlation_id": uuid.uuid4().hex}}
        r.lpush("ingest", json.dumps(msg))
    deadline = time.monotonic() + 30
    while r.llen("ingest") and time.monotonic() < deadline:
        time.sleep(0.2)
    return len(GARBAGE)


def test_undecodable_message_does_not_kill_the_worker(tmp_path: Path) -> None:
    """Malformed messages are logged and dropped; the worker keeps serving valid tasks."""
    with cluster(tmp_path / "logs") as c:
        c.spawn("ingest", "ingest", 1)
        c.wait_ready({"ingest"})
        client = Client(c.url)
        sent = raw_garbage(client)
        time.sleep(1)
        up = c.alive("ingest")
        # The worker still runs tasks after the garbage (a real turn, end to end).
        ids = client.add(NS, [{"role": "user", "id": "after-garbage", "content": "hi",
                               "metadata": {"facts": ["Sam keeps bees"]}}])
        report = client.wait(ids, timeout=60)[0]
        stored = [m.text for m in client.store.records.iter_memories(NS)]
        # The result is stored before the late ack removes the message from "unacked":
        # give the ack a moment instead of reading the count in between.
        deadline = time.monotonic() + 15
        while (left := client.store.client.llen("ingest") + client.store.client.hlen(
                "unacked")) and time.monotonic() < deadline:
            time.sleep(0.1)
        print(f"\n[undecodable messages] {sent} malformed messages sent: worker up: {up}, "
              f"valid task after them: {report['facts']} fact stored, {left} left on the queue")
        assert up and c.alive("ingest")
        assert stored == ["Sam keeps bees"]
        assert left == 0
        assert "Unrecoverable" not in c.logs()
        client.close()


@pytest.mark.parametrize("key", ["tenant", "namespace", "namespace_id", "__class__", "user_id",
                                 "Content"])
def test_client_rejects_unknown_message_keys(redis_url: str, key: str) -> None:
    """An unknown key (a "tenant", a per-message "namespace") is an error, never ignored."""
    client = Client(redis_url)
    ok = {"role": "user", "content": "Sam likes tea", "id": "m0"}
    with pytest.raises(ValueError) as err:
        client.add(NS, [ok, {**ok, "id": "m1", key: "other"}])
    print(f"\n[unknown message key {key!r}] {str(err.value)[:80]!r}")
    assert f"messages[1].{key}" in str(err.value)
    assert data_keys(client) == {}, "nothing written"
    client.close()


class FaultyEmbedder:
    """An embedder that returns NaN, infinity or the wrong dimension."""

    def __init__(self, dim: int, fault: str) -> None:
        self.dim = dim
        self.fault = fault

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.ones((len(texts), self.dim), dtype=np.float32) / np.sqrt(self.dim)
        if self.fault == "nan":
            out[:, 3] = np.nan
        elif self.fault == "inf":
            out[:, 0] = np.inf
        elif self.fault == "dimension":
            out = out[:, : self.dim - 7]
        elif self.fault == "zero":
            out[:] = 0
        elif self.fault == "rows":
            out = out[:-1]
        return out


@pytest.mark.parametrize("fault", ["nan", "inf", "dimension", "zero", "rows"])
def test_faulty_embedder_is_rejected_naming_the_vector(redis_url: str, fault: str) -> None:
    s = Settings(redis_url=redis_url, extractor="provided")
    store = MemoryStore.from_url(redis_url)
    models = build_models(s)
    pipeline = IngestPipeline(store, models, s)
    pipeline.ingest(NS, to_episodes(NS, [{"role": "user", "id": "seed", "content": "x",
                                          "metadata": {"facts": ["Sam owns a red kayak"]}}],
                                    T0, None))
    before = {m.id: m.model_dump_json() for m in store.records.iter_memories(NS)}
    models.embedder = FaultyEmbedder(models.embedder.dim, fault)  # type: ignore[assignment]
    turn = [{"role": "user", "id": "bad", "content": "y",
             "metadata": {"facts": ["Sam climbs mountains in winter"]}}]
    with pytest.raises(ValueError) as err:
        pipeline.ingest(NS, to_episodes(NS, turn, datetime(2026, 3, 2, tzinfo=UTC), None))
    after = {m.id: m.model_dump_json() for m in store.records.iter_memories(NS)}
    print(f"\n[faulty embedder: {fault}] rejected: {str(err.value)[:90]!r}; "
          f"memories unchanged: {after == before}")
    assert "vector" in str(err.value).lower() or "embedd" in str(err.value).lower()
    assert after == before


@pytest.mark.parametrize(("messages", "expected"), [
    ([{"role": "user", "content": 5}],
     "messages[0].content: Input should be a valid string, got int"),
    ([{"role": "user"}], "messages[0].content: required"),
    ([{"role": "human", "content": "hi"}], "messages[0].role: Input should be 'user'"),
    ([{"content": "hi", "name": 7}], "messages[0].name: "),
    ([{"content": "hi", "timestamp": "yesterday"}], "messages[0].timestamp: "),
    ("I like tea", "messages: expected a list of messages"),
    ({"role": "user", "content": "I like tea"}, "messages: expected a list of messages"),
])
def test_message_errors_name_the_callers_own_key(redis_url: str, messages: Any,
                                                   expected: str) -> None:
    """One line naming the key the caller wrote (``content``, not the Episode's ``text``),
    not a pydantic dump; a bare string or dict is not read as a list of messages."""
    client = Client(redis_url)
    with pytest.raises(ValueError) as err:
        client.add(NS, messages)
    assert str(err.value).startswith(expected), str(err.value)
    assert "\n" not in str(err.value) and "validation error" not in str(err.value)
    assert data_keys(client) == {}, "nothing written"
    client.close()
