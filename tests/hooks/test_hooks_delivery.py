"""Webhooks end to end: real Celery workers (the session's celery_stack, whose hooks
worker runs with a 0.25 s backoff doubling to 1 s and 8 attempts: tests/support/celery_stack.py),
a real Redis and a real HTTP receiver. Signatures verify with the hook's secret, a
receiver that was down gets every event afterwards in order per memory, erased text is
never posted, and a receiver that keeps failing sends the event to the dead letters."""

from __future__ import annotations

import time

from memcore.client.client import Client
from memcore.core.hooks import SIGNATURE_HEADER, HookEventType, verify
from tests.hooks.hook_receiver import Received, Receiver
from tests.support.celery_stack import fresh_ns

ALL = [e.value for e in HookEventType]


def _turn(text: str, i: int) -> dict[str, str]:
    return {"role": "user", "speaker": "Rory", "content": text, "id": f"turn-{i}"}


def _events(got: list[Received], secret: str) -> list[dict[str, object]]:
    for r in got:
        assert verify(secret, r.headers[SIGNATURE_HEADER], r.body, now=time.time()), r.body
    return [r.event for r in got]


def _wait_for_types(receiver: Receiver, want: dict[str, int], timeout: float = 60.0
                    ) -> list[Received]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = receiver.accepted()
        counts = {t: sum(r.event["type"] == t for r in got) for t in want}
        if all(counts[t] >= n for t, n in want.items()):
            return got
        time.sleep(0.1)
    raise AssertionError(f"wanted {want}, got {[r.event['type'] for r in receiver.accepted()]}")


def test_deliveries_are_signed_and_survive_an_outage_in_order(
        stack_client: Client, receiver: Receiver) -> None:
    ns = fresh_ns("hooks")
    hook, secret = stack_client.store.hooks.add(receiver.url, ALL, [ns])
    stack_client.wait(stack_client.add(ns, [_turn("Rory likes green tea.", 0)], infer=False),
                      timeout=60)
    first = _events(_wait_for_types(receiver, {"memory.created": 1}), secret)
    assert first[0]["data"] == {"text": "Rory likes green tea."}

    receiver.down()
    outage = time.monotonic()
    tasks = stack_client.add(ns, [_turn(f"Rory visited city number {i}.", i + 1)
                                  for i in range(4)], infer=False)
    stack_client.wait(tasks, timeout=60)
    ids = sorted(m.id for m in stack_client.list(ns).memories if m.text.startswith("Rory visited"))
    assert len(ids) == 4
    for n, memory_id in enumerate(ids):  # three changes per memory while the receiver is down
        stack_client.update(ns, memory_id, text=f"Rory visited city number {n} twice.")
        stack_client.update(ns, memory_id, text=f"Rory visited city number {n} thrice.")
        stack_client.delete(ns, memory_id)
    time.sleep(max(0.0, 2.5 - (time.monotonic() - outage)))  # failed attempts pile up
    receiver.up()
    got = _wait_for_types(receiver, {"memory.created": 5, "memory.updated": 8,
                                     "memory.deleted": 4})
    events = _events(got, secret)
    for memory_id in ids:
        mine = [e for e in events if e["memory_id"] == memory_id]
        assert [e["type"] for e in mine] == ["memory.created", "memory.updated",
                                             "memory.updated", "memory.deleted"]
        assert [e["seq"] for e in mine] == sorted(e["seq"] for e in mine)  # type: ignore[type-var]
        assert "twice" in str(mine[1]["data"]) and "thrice" in str(mine[2]["data"])
    # Retries were made: some event was attempted more than once, under one event id.
    assert max(int(e["attempt"]) for e in events) > 1  # type: ignore[call-overload]
    assert len({e["id"] for e in events}) == len(events)
    assert stack_client.store.hooks.dead() == [] or all(
        d["hook_id"] != hook.id for d in stack_client.store.hooks.dead())


def test_erased_text_is_never_delivered(stack_client: Client, receiver: Receiver) -> None:
    ns = fresh_ns("hooks")
    _, secret = stack_client.store.hooks.add(receiver.url, ALL, [ns])
    receiver.down()  # the created event waits in its lane while the memory is erased
    stack_client.wait(stack_client.add(
        ns, [_turn("Rory's favourite band is Quokkaverse.", 0)], infer=False), timeout=60)
    (memory,) = stack_client.list(ns).memories
    stack_client.erase(ns, memory_id=memory.id)
    receiver.up()
    got = _wait_for_types(receiver, {"memory.created": 1, "memory.erased": 1})
    events = _events(got, secret)
    assert [e["type"] for e in events if e["memory_id"] == memory.id] == [
        "memory.created", "memory.erased"]
    assert events[0]["data"] == {"text": None}
    time.sleep(1.0)  # anything still in flight arrives too
    assert not any(b"Quokkaverse" in r.body for r in receiver.received)


def test_a_receiver_that_keeps_failing_gets_a_dead_letter(
        stack_client: Client, receiver: Receiver) -> None:
    ns = fresh_ns("hooks")
    hook, _ = stack_client.store.hooks.add(receiver.url, ["memory.created"], [ns])
    receiver.status = 503
    stack_client.wait(stack_client.add(ns, [_turn("Rory plays the oboe.", 0)], infer=False),
                      timeout=60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        dead = [d for d in stack_client.store.hooks.dead() if d["hook_id"] == hook.id]
        if dead:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("no dead letter")
    assert dead[0]["attempts"] == 8 and dead[0]["last_error"] == "HTTP 503"
    assert len(receiver.received) == 8  # one event, 8 attempts, under one id
    assert len({r.headers["Memcore-Event-Id"] for r in receiver.received}) == 1
    gaps = [b.at - a.at for a, b in zip(receiver.received, receiver.received[1:], strict=False)]
    assert gaps[0] >= 0.2 and gaps[3] >= 0.9  # 0.25 s, doubling to the 1 s cap
    receiver.status = 200
    from memcore.client.hooks import retry_dead

    assert retry_dead(stack_client, hook_id=hook.id) == 1
    (ok,) = _wait_for_types(receiver, {"memory.created": 1})[-1:]
    assert ok.status == 200 and ok.event["data"] == {"text": "Rory plays the oboe."}
    assert not [d for d in stack_client.store.hooks.dead() if d["hook_id"] == hook.id]
