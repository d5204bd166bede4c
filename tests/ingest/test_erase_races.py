"""Erases that race the write path (docs/design.md, Erase wins over the queue).

Found by the chaos run (notes/chaos.md): the namespace fence was compared once, when an
ingest task started, so a task that passed it just before an erase wrote afterwards;
and a memory, turn or forget erase left no trace, so a redelivered task (its worker
died before the acknowledgement) or another turn accepted before the erase that says
the same thing stored the erased content again.

The races are made deterministic through a public hook of the worker's runtime: its
models (``workers.runtime.Runtime``, as ``wrap_models`` builds them) get an extractor
that, before extracting, runs an erase on another thread and waits for it. Extraction
is the real step between the task's fence check and its writes. The redelivery cases
run a real Celery worker and send the same task id again.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from memcore.adapters import build_models
from memcore.client.client import Client
from memcore.client.messages import to_episodes
from memcore.core.config import Settings
from memcore.core.interfaces import ExtractedFact, Extractor
from memcore.core.models import AuditAction, Episode, utcnow
from memcore.core.text import content_hash
from memcore.ingest.write_path import IngestPipeline
from memcore.messaging import task_names
from memcore.messaging.payloads import IngestPayload
from memcore.store import MemoryStore, keys
from tests.ingest.test_erase_fence import TIMEOUT, ingest_worker, leaks, texts
from tests.support.test_reliability_common import T0, all_values, cluster
from workers.runtime import Runtime
from workers.tasks import _ingest

ADDRESS = "My home address is 14 Larkspur Lane, Bristol."


def turn(tag: str, i: int, fact: str, content: str | None = None) -> dict[str, Any]:
    """One user turn carrying ``fact`` as its producer-given fact."""
    return {"id": f"{tag}-{i}", "role": "user", "content": content or f"{tag} turn {i}",
            "timestamp": (T0 + timedelta(seconds=i)).isoformat(),
            "metadata": {"facts": [fact]}}


def secret(word: str) -> str:
    """A fact no other test writes (a made-up name: no secret to mask)."""
    name = "".join(chr(97 + int(c, 16)) for c in uuid.uuid4().hex[:10]).capitalize()
    return f"Sam's {word} pet is called {name}"


class ErasingExtractor:
    """The runtime's extractor, but the first call first runs ``erase`` on another
    thread (as another process would) and waits for it: the erase lands after the task
    checked its fences and before it writes its memories."""

    def __init__(self, inner: Extractor, erase: Callable[[], object]) -> None:
        self.inner = inner
        self.erase = erase
        self.done = threading.Event()
        self.calls = 0

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        self.calls += 1
        if not self.done.is_set():
            failed: list[BaseException] = []

            def run() -> None:
                try:
                    self.erase()
                except BaseException as exc:  # reported on the task's thread
                    failed.append(exc)
                finally:
                    self.done.set()

            threading.Thread(target=run).start()
            assert self.done.wait(30), "the erase did not finish"
            assert not failed, failed
        return self.inner.extract(episodes)


def runtime(redis_url: str, erase: Callable[[], object] | None = None
            ) -> tuple[Runtime, ErasingExtractor | None]:
    """A worker runtime on ``redis_url`` (as ``workers.runtime.runtime`` builds one),
    its extractor running ``erase`` before its first extraction when given."""
    settings = Settings(redis_url=redis_url, openai_api_key=None, extractor="provided")
    store = MemoryStore.from_url(redis_url)
    models = build_models(settings)
    hook = None
    if erase is not None:
        hook = ErasingExtractor(models.extractor, erase)
        models = dataclasses.replace(models, extractor=hook)
    return Runtime(settings, store, models, IngestPipeline(store, models, settings)), hook


def _payload(store: MemoryStore, ns: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The task a producer sends for ``messages`` now, stamped as memcore.Client does."""
    counts = store.fences.accepted(ns)
    return IngestPayload(namespace=ns, episodes=to_episodes(ns, messages, None, None),
                         erase_fence=counts.fence, erasures=counts.erasures).wire()


def memory_with(store: MemoryStore, ns: str, text: str) -> str:
    (memory,) = [m for m in store.records.iter_memories(ns) if m.text == text]
    return memory.id


def test_a_namespace_erase_between_the_fence_check_and_the_write_wins(redis_url: str) -> None:
    """The task checks the fence (not erased), the namespace is erased while it
    extracts, then it would write: nothing of it may be stored, the drop is audited."""
    ns = f"race-{uuid.uuid4().hex[:8]}"
    plain, _ = runtime(redis_url)
    early = secret("early")
    _ingest(plain, _payload(plain.store, ns, [turn("early", 0, early)]), "t-early")
    assert texts(plain.store, ns) == {early}
    late = secret("raced")
    payload = _payload(plain.store, ns, [turn("raced", 1, late)])
    rt, hook = runtime(redis_url, lambda: plain.store.eraser.erase_namespace(ns, utcnow()))
    result = _ingest(rt, payload, "t-raced")
    assert hook is not None and hook.done.is_set()
    print(f"\n[erase race, namespace] erased mid-task: result {result}; "
          f"memories now {len(texts(rt.store, ns))}")
    assert texts(rt.store, ns) == set()
    assert leaks(rt.store, [late.encode(), b"raced turn 1", early.encode()]) == []
    assert result.get("dropped_by_erase") == 1
    drops = [e for e in rt.store.audit.tail(ns, 100) if e.action is AuditAction.DROP]
    assert len(drops) == 1 and "t-raced" in drops[0].reason


def test_a_memory_erase_between_the_check_and_the_write_is_not_undone(redis_url: str) -> None:
    """A turn accepted before a memory erase restates the memory; the erase lands while
    the task extracts: the restating turn and its fact are not stored, the other turn
    and its fact are."""
    ns = f"race-{uuid.uuid4().hex[:8]}"
    plain, _ = runtime(redis_url)
    said = secret("erased")
    _ingest(plain, _payload(plain.store, ns, [turn("first", 0, said)]), "t-first")
    target = memory_with(plain.store, ns, said)
    other = secret("kept")
    payload = _payload(plain.store, ns, [turn("again", 1, said), turn("again", 2, other)])
    rt, _ = runtime(redis_url, lambda: plain.store.eraser.erase_memory(ns, target, utcnow()))
    result = _ingest(rt, payload, "t-again")
    stored = texts(rt.store, ns)
    print(f"\n[erase race, memory] erased mid-task: memories now {sorted(stored)}")
    assert stored == {other}
    assert not [m for m in rt.store.records.iter_memories(ns) if said in m.member_texts]
    assert rt.store.episodes.get_episode(ns, "again-1") is None
    assert rt.store.episodes.get_episode(ns, "again-2") is not None
    # (only the erased memory's own source turn keeps it: a memory erase keeps those)
    assert {k for k, _ in all_values(rt.store.client) if said.encode() in _} == {
        f"mc:{{{ns}}}:ep:first-0".encode()}
    assert result["facts"] == 1
    reasons = [e.reason for e in rt.store.audit.tail(ns, 100) if e.action is AuditAction.DROP]
    assert reasons == ["1 turn(s) and 0 fact(s) left out, not stored: erased after they were "
                       "accepted (single-erase count 0 when accepted); task t-again"]


def test_a_turn_erase_while_its_task_runs_again_is_not_undone(redis_url: str) -> None:
    """The task that stored a turn runs again (redelivery) and the turn is erased while
    it extracts: neither the turn nor its fact is back afterwards."""
    ns = f"race-{uuid.uuid4().hex[:8]}"
    plain, _ = runtime(redis_url)
    said = secret("turn")
    payload = _payload(plain.store, ns, [turn("once", 0, said, content="my code is 7-4-4")])
    _ingest(plain, payload, "t-once")
    assert texts(plain.store, ns) == {said}
    rt, _ = runtime(redis_url,
                    lambda: plain.store.eraser.erase_episode(ns, "once-0", utcnow()))
    _ingest(rt, payload, "t-once")
    assert texts(rt.store, ns) == set()
    assert rt.store.episodes.get_episode(ns, "once-0") is None
    assert leaks(rt.store, [said.encode(), b"my code is 7-4-4"]) == []


def test_redelivered_and_queued_tasks_do_not_restore_erased_memories(tmp_path: Path) -> None:
    """Real worker. A task stores a fact, the memory is erased (with its turn), then the
    same task is delivered again (its worker died before the acknowledgement), and
    another task accepted before the erase restating the fact runs: nothing comes back.
    The same fact said again after the erase is new information and is stored."""
    ns = f"race-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        client = Client(c.url)
        try:
            said = secret("redelivered")
            first = _payload(client.store, ns, [turn("r", 0, said, content="r turn 0")])
            task_id = str(uuid.uuid4())

            def deliver(payload: dict[str, Any], tid: str) -> dict[str, Any]:
                result = client.celery.AsyncResult(tid)
                result.forget()
                client.celery.send_task(task_names.INGEST, args=[payload], task_id=tid,
                                        queue=task_names.INGEST_QUEUE)
                answer: dict[str, Any] = result.get(timeout=TIMEOUT)
                return answer

            with ingest_worker(c, "w"):
                deliver(first, task_id)
                restated = _payload(client.store, ns, [turn("q", 1, said, content="q turn 1")])
                report = client.erase_memory(ns, memory_with(client.store, ns, said))
                assert report.episodes == ["r-0"]
                again = [deliver(first, task_id), deliver(restated, str(uuid.uuid4()))]
                assert texts(client.store, ns) == set()
                assert client.store.episodes.get_episode(ns, "r-0") is None
                assert leaks(client.store, [said.encode(), b"r turn 0"]) == []
                later = deliver(_payload(client.store, ns, [turn("n", 2, said)]),
                                str(uuid.uuid4()))
            print(f"\n[erase, redelivery] after the memory erase: redelivered task facts "
                  f"{again[0]['facts']}, restating task facts {again[1]['facts']}; "
                  f"said again after the erase: facts {later['facts']}")
            assert [a["facts"] for a in again] == [0, 0]
            assert later["facts"] == 1 and texts(client.store, ns) == {said}
        finally:
            client.close()


def test_a_forget_request_is_not_undone_by_a_redelivery(tmp_path: Path) -> None:
    """Real worker. A turn gives an address, a later turn asks to forget it (erased in
    its task), then the first task is delivered again: the address stays forgotten."""
    ns = f"race-{uuid.uuid4().hex[:8]}"
    with cluster(tmp_path / "logs") as c:
        client = Client(c.url)
        try:
            first = _payload(client.store, ns, [
                {"id": "a-0", "role": "user", "content": ADDRESS, "timestamp": T0.isoformat(),
                 "metadata": {"facts": [ADDRESS]}}])
            task_id = str(uuid.uuid4())

            def deliver(payload: dict[str, Any], tid: str) -> dict[str, Any]:
                result = client.celery.AsyncResult(tid)
                result.forget()
                client.celery.send_task(task_names.INGEST, args=[payload], task_id=tid,
                                        queue=task_names.INGEST_QUEUE)
                answer: dict[str, Any] = result.get(timeout=TIMEOUT)
                return answer

            with ingest_worker(c, "w"):
                deliver(first, task_id)
                assert any("Larkspur Lane" in t for t in texts(client.store, ns))
                forget = deliver(_payload(client.store, ns, [
                    {"id": "a-1", "role": "user", "content": "Can you forget my address?",
                     "timestamp": (T0 + timedelta(seconds=5)).isoformat()}]),
                    str(uuid.uuid4()))
                assert forget.get("usage") is not None
                assert not any("Larkspur Lane" in t for t in texts(client.store, ns))
                again = deliver(first, task_id)
            print(f"\n[forget, redelivery] redelivered task after the forget request: "
                  f"facts {again['facts']}, memories {sorted(texts(client.store, ns))}")
            assert not any("Larkspur Lane" in t for t in texts(client.store, ns))
            assert leaks(client.store, [b"Larkspur Lane"]) == []
        finally:
            client.close()


def test_the_erased_set_keeps_hashes_and_ids_only(redis_url: str) -> None:
    store = MemoryStore.from_url(redis_url)
    try:
        hashed = content_hash("Sam lives in Leeds")
        assert store.erased.record("u", turns=["t-1"], hashes=[hashed]) == 1
        assert store.erased.record("u", turns=["t-2"], hashes=[]) == 2
        assert store.erased.since("u", 0).turns == {"t-1", "t-2"}
        later = store.erased.since("u", 1)
        assert later.turns == {"t-2"} and not later.hashes
        assert not store.erased.since("u", 2)
        raw = store.client.hgetall(keys.erased("u"))
        assert raw == {b"e:t-1": b"1", f"h:{hashed}".encode(): b"1", b"e:t-2": b"2"}
        store.eraser.erase_namespace("u", utcnow())
        assert store.erased.count("u") == 2  # outlives the namespace, as the fence does
        assert not store.erased.since("u", 0)
    finally:
        store.client.close()
