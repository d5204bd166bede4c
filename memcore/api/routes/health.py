"""Probes and metrics: ``/healthz``, ``/readyz``, ``/metrics`` (no key needed)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from memcore.api.metrics import QueueCollector, UsageCollector
from memcore.api.schemas import Health
from memcore.api.state import ApiState, current_state
from memcore.observability.metrics import exposition_registry

router = APIRouter(tags=["operations"])

READY_PUBLISH_SECONDS = 1.0
"""How long ``/readyz`` waits for a producer of the process's broker pool: a process whose
sends would wait longer for one is not ready."""


@router.get("/healthz", response_model=Health)
def healthz() -> Health:
    """The process is up (liveness)."""
    return Health(status="ok")


@router.get("/readyz", response_model=Health, responses={503: {"model": Health}})
def readyz(state: ApiState = Depends(current_state)) -> JSONResponse:
    """Redis and the broker answer, and this process can publish: a broker producer of
    its pool is free within a second (readiness)."""
    checks: dict[str, str] = {}
    try:
        state.client.store.ping()
        checks["redis"] = "ok"
    except Exception as exc:  # any failure means "not ready", with the reason
        checks["redis"] = f"error: {type(exc).__name__}"
    try:
        with state.client.celery.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        checks["broker"] = "ok"
    except Exception as exc:
        checks["broker"] = f"error: {type(exc).__name__}"
    else:  # reachable; but a process whose sends all wait for the pool cannot publish
        checks["publish"] = state.client.publish_check(READY_PUBLISH_SECONDS)
    ready = all(v == "ok" for v in checks.values())
    body = Health(status="ok" if ready else "unavailable", checks=checks)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text"}})
def metrics(request: Request) -> Response:
    """Prometheus metrics: HTTP requests, this process's memcore counters, the queue
    depths (broker queues, ingest backlog) and the model usage of all processes."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry, _ = exposition_registry()
    body = generate_latest(request.app.state.api_metrics.registry) + generate_latest(registry)
    queues = CollectorRegistry(auto_describe=False)
    queues.register(QueueCollector(request.app.state.memcore.client))
    queues.register(UsageCollector(request.app.state.memcore.client))
    body += generate_latest(queues)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
