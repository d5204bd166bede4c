"""Celery tasks: each validates its payload and calls memcore."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from celery import Task, chord
from celery.exceptions import Reject
from pydantic import ValidationError

from memcore.consolidate import passes
from memcore.consolidate.maintenance import run_maintenance
from memcore.consolidate.scheduling import due_namespaces
from memcore.core.hooks import HookEventType
from memcore.core.models import new_id, turn_limit, utcnow, validate_namespace
from memcore.hooks.delivery import drain, http_poster
from memcore.hooks.dispatch import behind, dispatch, pass_finished
from memcore.ingest.fence import Dropped, ingest_fenced
from memcore.ingest.redelivery import redeliver_lost
from memcore.language import text_rules
from memcore.messaging import task_names
from memcore.messaging.payloads import ConsolidatePayload, IngestPayload
from memcore.observability.usage import CallUsage
from memcore.store.errors import UNREACHABLE
from workers.celery_app import app
from workers.runtime import Runtime, runtime

log = logging.getLogger(__name__)

STORE_WAIT_SECONDS = 30.0
"""How long an ingest task waits in place for its Redis to come back before it hands its
message back to the broker (docs/design.md, Redelivery)."""


class InvalidPayload(ValueError):
    """A task message that does not validate; it fails at once and writes nothing."""


def _validate(model: type[Any], payload: Any, context: dict[str, Any] | None = None) -> Any:
    try:
        return model.model_validate(payload, context=context)
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                           for e in exc.errors())
        raise InvalidPayload(f"invalid {model.__name__}: {fields}") from None


@app.task(name=task_names.INGEST, bind=True, acks_late=True, reject_on_worker_lost=True)
def ingest(self: Task, payload: dict[str, Any]) -> dict[str, Any]:
    """Run the write path for a batch of turns of one namespace, unless the namespace
    was erased after the turns were accepted: then they are dropped (audited, no text)."""
    try:
        rt = runtime()
        result = _until_stored(lambda: _ingest(rt, payload, self.request.id),
                               self.request.id)
    except Reject:
        raise  # handed back to the broker: still waiting, it stays in the backlog
    except BaseException:
        _release(payload, self.request.id)
        raise
    _release(payload, self.request.id)
    _kick_hooks(rt, payload.get("namespace"))  # validated by _ingest
    return result


def _release(payload: Any, task_id: str | None) -> None:
    """Stored, dropped or failed: no longer waiting (a redelivery removes nothing)."""
    namespace = payload.get("namespace") if isinstance(payload, dict) else None
    if isinstance(namespace, str) and task_id:
        try:
            runtime().store.backlog.release(namespace, [task_id])
        except ValueError:  # an invalid name was never counted
            pass
        except Exception as exc:  # the entry ages out; the task's outcome stands
            log.warning("ingest task %s: backlog entry not removed: %s", task_id, exc)


def _until_stored(run: Callable[[], dict[str, Any]], task_id: str | None) -> dict[str, Any]:
    """``run()``, again while Redis cannot be reached (restarting, loading its AOF).

    The turns were accepted: ending as a failure would acknowledge the message (acks late
    acknowledges failures too) and lose them. The write path is idempotent, so a run cut
    off mid-write is simply run again. Past ``STORE_WAIT_SECONDS`` the message goes back
    to the broker (or, with the broker down too, stays taken and comes back after the
    visibility timeout)."""
    deadline = time.monotonic() + STORE_WAIT_SECONDS
    delay = 0.25
    while True:
        try:
            return run()
        except UNREACHABLE as exc:
            if time.monotonic() + delay > deadline:
                log.warning("ingest task %s: Redis unreachable for %.0f s (%s): handed back "
                            "to the broker", task_id, STORE_WAIT_SECONDS, exc)
                raise Reject(exc, requeue=True) from exc
            log.info("ingest task %s: Redis unreachable (%s): run again in %.2f s",
                     task_id, exc, delay)
            time.sleep(delay)
            delay = min(delay * 2, 4.0)


def _ingest(rt: Runtime, payload: dict[str, Any], task_id: str | None) -> dict[str, Any]:
    data: IngestPayload = _validate(IngestPayload, payload,
                                    turn_limit(rt.settings.max_turn_bytes))
    done = ingest_fenced(rt.store, rt.pipeline, data, task_id=task_id, now=utcnow(),
                         keep_seconds=rt.settings.visibility_timeout)
    if isinstance(done, Dropped):
        return {"episodes": done.turns, "new_episodes": 0, "facts": 0, "decisions": {},
                "model_calls": 0, "memory_ids": [], "dropped_by_erase": done.turns,
                "usage": CallUsage().as_dict()}
    report = done
    if data.charge_to is not None and report.model_calls and task_id:
        # Before the result is stored: a caller that waited sees its budget charged.
        rt.store.rate_limits.charge_model_calls(data.charge_to, task_id, report.model_calls)
    return {"episodes": report.episodes, "new_episodes": report.new_episodes,
            "facts": report.facts, "decisions": report.decisions,
            "model_calls": report.model_calls, "memory_ids": report.memory_ids,
            "usage": report.usage.as_dict()}


@app.task(name=task_names.NOOP)
def noop(payload: dict[str, Any] | None = None) -> None:
    """Does nothing: the ceiling the ingest benchmark compares against."""


@app.task(name=task_names.CONSOLIDATE, acks_late=True, reject_on_worker_lost=True)
def consolidate(payload: dict[str, Any]) -> dict[str, Any]:
    """Start a pass: lock, plan, fan the clusters out as a chord (or finish inline)."""
    data: ConsolidatePayload = _validate(ConsolidatePayload, payload)
    rt = runtime()
    pass_id = data.pass_id or new_id()
    if passes.pass_finished(rt.store, data.namespace, pass_id):
        return {"namespace": data.namespace, "pass_id": pass_id, "skipped": "finished"}
    now = data.now or utcnow()
    started = passes.start_pass(rt.store, data.namespace, pass_id, now,
                                rt.settings.consolidation, full=data.full,
                                rules=text_rules(rt.settings.language))
    if started is None:
        done = passes.pass_finished(rt.store, data.namespace, pass_id)
        return {"namespace": data.namespace, "pass_id": pass_id,
                "skipped": "finished" if done else "locked"}
    if not started.batches:
        report = passes.finish_pass(rt.store, data.namespace, pass_id, [],
                                    rt.settings.consolidation, rt.models.merger,
                                    done_ttl=rt.settings.visibility_timeout,
                                    rules=text_rules(rt.settings.language))
        out = {"namespace": data.namespace, "pass_id": pass_id,
               "to_version": report.to_version, "events": report.events}
        _kick_hooks(rt, data.namespace, pass_report=out)
        return out
    header = [consolidate_batch.s(data.namespace, pass_id, a, b) for a, b in started.batches]
    chord(header)(consolidate_reduce.s(data.namespace, pass_id))
    return {"namespace": data.namespace, "pass_id": pass_id, "batches": len(header)}


@app.task(name=task_names.CONSOLIDATE_BATCH, acks_late=True, reject_on_worker_lost=True)
def consolidate_batch(namespace: str, pass_id: str, start: int, end: int
                      ) -> list[dict[str, Any] | None]:
    """One model call for a batch of clusters; never raises for a model failure."""
    rt = runtime()
    try:
        return passes.merge_batch(rt.store, namespace, pass_id, start, end, rt.models.merger,
                                  rt.settings.consolidation.pass_lock_ttl_seconds)
    except Exception as exc:  # the pass must land even if this batch cannot
        log.warning("consolidate batch failed: %s", exc)
        return [None] * (end - start)


@app.task(name=task_names.CONSOLIDATE_REDUCE, acks_late=True, reject_on_worker_lost=True)
def consolidate_reduce(results: list[list[dict[str, Any] | None] | None], namespace: str,
                       pass_id: str) -> dict[str, Any]:
    """The chord body: reduce, write snapshot v+1 and swap the pointer."""
    rt = runtime()
    report = passes.finish_pass(rt.store, namespace, pass_id, results,
                                rt.settings.consolidation, rt.models.merger,
                                done_ttl=rt.settings.visibility_timeout,
                                rules=text_rules(rt.settings.language))
    out = {"namespace": namespace, "pass_id": pass_id, "from_version": report.from_version,
           "to_version": report.to_version, "events": report.events,
           "failed_batches": report.failed_batches, "skipped": report.skipped}
    _kick_hooks(rt, namespace, pass_report=out)
    return out


@app.task(name=task_names.SCHEDULE)
def schedule_due(now: str | None = None) -> list[str]:
    """Beat's tick: send again the accepted ingest tasks the broker lost, restart an
    erase's file rewrite a Redis crash cut short, finish an erase whose process died,
    then enqueue one pass per due namespace (once per interval, any beat count)."""
    rt = runtime()
    at = datetime.fromisoformat(now) if now else datetime.now(UTC)
    try:
        redeliver_lost(rt.store.backlog, rt.broker_holding, _send_again,
                       older_than=rt.settings.visibility_timeout, now=time.time())
    except Exception as exc:  # the next tick looks again
        log.warning("lost ingest messages not looked for: %s", exc)
    try:  # an erase's file rewrite cut short by a Redis crash is started again
        rt.store.eraser.resume_rewrites()
    except Exception as exc:  # the next tick tries again; passes still get scheduled
        log.warning("pending erase rewrite not checked: %s", exc)
    try:  # an erase whose process died mid-way is finished
        rt.store.eraser.finish_unfinished(older_than=rt.settings.visibility_timeout)
    except Exception as exc:  # the next tick tries again
        log.warning("unfinished erases not looked for: %s", exc)
    due = due_namespaces(rt.store, rt.settings, at)
    for ns in due:
        consolidate.apply_async(args=[{"namespace": ns}], queue="consolidate")
    return due


def _send_again(task_id: str, queue: str, payload: dict[str, Any]) -> None:
    """Send a kept ingest message again under its own id (redeliver_lost)."""
    ingest.apply_async(args=[payload], task_id=task_id, queue=queue)


@app.task(name=task_names.MAINTAIN, acks_late=True, reject_on_worker_lost=True)
def maintain(now: str | None = None) -> list[dict[str, Any]]:
    """Beat's maintenance: expired versions, old tombstones and old audit events go."""
    rt = runtime()
    at = datetime.fromisoformat(now) if now else datetime.now(UTC)
    return [asdict(r) for r in run_maintenance(rt.store, rt.settings, at)]


def _kick_hooks(rt: Runtime, namespace: object, *,
                pass_report: dict[str, Any] | None = None) -> None:
    """Queue the webhook dispatch of ``namespace`` after a change (one task while one is
    waiting; a pass's report always goes, as its ``pass.finished`` event). Never fails
    the task that changed memories: the beat sweep catches up."""
    if not isinstance(namespace, str):
        return
    try:
        if not rt.store.hooks.exist():
            return
        extra = [{"type": HookEventType.PASS_FINISHED.value,
                  "data": pass_finished(pass_report)}] \
            if pass_report is not None and not pass_report.get("skipped") else []
        if extra or rt.store.hooks.claim_dispatch(namespace):
            hooks_dispatch.apply_async(args=[namespace, extra], queue=task_names.HOOKS_QUEUE)
    except Exception as exc:
        log.warning("webhook dispatch of %s not queued: %s", namespace, exc)


def _extra_events(extra: Any) -> list[dict[str, Any]]:
    if extra is None:
        return []
    ok = isinstance(extra, list) and all(
        isinstance(e, dict) and e.get("type") == HookEventType.PASS_FINISHED.value
        and isinstance(e.get("data", {}), dict) for e in extra)
    if not ok:
        raise InvalidPayload("invalid hooks_dispatch extra: a list of "
                             "{'type': 'pass.finished', 'data': {...}}")
    return list(extra)


@app.task(name=task_names.HOOKS_DISPATCH, acks_late=True, reject_on_worker_lost=True)
def hooks_dispatch(namespace: str, extra: list[dict[str, Any]] | None = None
                   ) -> dict[str, Any]:
    """Turn the namespace's new audit entries into queued hook events and start the
    delivery of every lane that got one."""
    try:
        validate_namespace(namespace)
    except ValueError as exc:
        raise InvalidPayload(f"invalid hooks_dispatch namespace: {exc}") from None
    lanes = dispatch(runtime().store, namespace, extra=_extra_events(extra))
    for lane in lanes:
        hooks_deliver.apply_async(args=[namespace, lane], queue=task_names.HOOKS_QUEUE)
    return {"namespace": namespace, "lanes": len(lanes)}


@app.task(name=task_names.HOOKS_DELIVER, bind=True, acks_late=True,
          reject_on_worker_lost=True, max_retries=None)
def hooks_deliver(self: Task, namespace: str, lane: str, token: str | None = None
                  ) -> dict[str, Any]:
    """Post one lane's events in order; on a failure, retry after the backoff (the
    attempts are counted in Redis, so a redelivered task does not reset them)."""
    if not isinstance(namespace, str) or not isinstance(lane, str) or "/" not in lane:
        raise InvalidPayload("invalid hooks_deliver arguments: namespace and lane")
    rt = runtime()
    token = token or self.request.id or new_id()
    post, close = http_poster(rt.settings.hooks.timeout_seconds)
    try:
        outcome = drain(rt.store, rt.settings.hooks, namespace, lane, token, post)
    finally:
        close()
    if outcome.retry_in is not None:
        raise self.retry(args=[namespace, lane, token], countdown=outcome.retry_in)
    return asdict(outcome)


@app.task(name=task_names.HOOKS_SWEEP)
def hooks_sweep() -> dict[str, int]:
    """Beat's tick for webhooks: dispatch namespaces with undispatched audit entries and
    restart every lane with queued events (a lane being delivered ignores it)."""
    stale, lanes = behind(runtime().store)
    for namespace in stale:
        hooks_dispatch.apply_async(args=[namespace, []], queue=task_names.HOOKS_QUEUE)
    for namespace, lane in lanes:
        hooks_deliver.apply_async(args=[namespace, lane], queue=task_names.HOOKS_QUEUE)
    return {"namespaces": len(stale), "lanes": len(lanes)}
