"""The inspector's pages under ``/ui``: server-rendered (Jinja2), no build step.

Pages: namespaces, a namespace (profile, memory table, search, plots), a memory
(scores, sources, lineage, audit, actions), passes and versions, the precision review,
webhooks and their dead letters (admin).
Every page checks the signed-in key's scopes and role (see :mod:`.session`); actions
are POST forms that redirect back (post/redirect/get), each carrying a token and checked
for its origin (:mod:`.csrf`); every answer has the security headers of :mod:`.headers`.
"""

from __future__ import annotations

import random
import tempfile
import threading
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, FastAPI, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from memcore.api.routes.hooks import manages, visible_dead
from memcore.api.state import api_state
from memcore.api.ui import csrf
from memcore.api.ui.forgets import forget_rows
from memcore.api.ui.headers import SecurityHeaders
from memcore.api.ui.lineage import lineage_svg
from memcore.api.ui.session import (
    COOKIE,
    NotVisible,
    RoleTooLow,
    SignInRequired,
    Viewer,
    verify,
    viewer,
)
from memcore.client.hooks import retry_dead
from memcore.core import review as rv
from memcore.core.bounds import record_caps
from memcore.core.filters import FilterError, compile_filter
from memcore.core.models import Actor, AuditEvent, Kind, Memory, Status, utcnow
from memcore.core.scoring import effective_confidence, memory_score
from memcore.store.api_keys import ApiRole

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
router = APIRouter(prefix="/ui", include_in_schema=False)

PAGE_SIZE = 25
REVIEW_SIZE = 30
PASS_AUDIT_WINDOW = 5000
SORTS = ("score", "confidence", "recency")
PLOTS = ("retention", "scores", "versions")
# matplotlib (and the pyparsing behind its text layout) is not thread-safe, and the
# server runs handlers in threads: a page's three images would otherwise race.
_PLOT_LOCK = threading.Lock()


def install(app: FastAPI) -> None:
    """Add the inspector's routes, static files, error pages and headers to ``app``."""
    app.include_router(router)
    app.add_middleware(SecurityHeaders)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")

    async def to_sign_in(request: Request, _: Exception) -> Response:
        return RedirectResponse("/ui/login", status_code=303)

    async def not_visible(request: Request, _: Exception) -> Response:
        return _page(request, "error.html", None, status_code=404,
                     message="Not found, or not in this key's scopes.")

    async def role_too_low(request: Request, exc: Exception) -> Response:
        return _page(request, "error.html", None, status_code=403, message=str(exc))

    async def forged(request: Request, exc: Exception) -> Response:
        return _page(request, "error.html", None, status_code=403, message=str(exc))

    app.add_exception_handler(SignInRequired, to_sign_in)
    app.add_exception_handler(csrf.CsrfRefused, forged)
    app.add_exception_handler(NotVisible, not_visible)
    app.add_exception_handler(RoleTooLow, role_too_low)


def _page(request: Request, name: str, who: Viewer | None, status_code: int = 200,
          **context: Any) -> HTMLResponse:
    """Render ``name``; its POST forms get this browser's token (a first page also sets
    the pre-session cookie the token is bound to)."""
    secret = request.cookies.get(csrf.PRE_SESSION_COOKIE, "")
    fresh = not secret
    secret = secret or csrf.new_secret()
    token = csrf.token(secret, request.cookies.get(COOKIE, ""))
    response = templates.TemplateResponse(request, name,
                                          {"viewer": who, "csrf": token, **context},
                                          status_code=status_code)
    if fresh:
        csrf.set_secret(response, request, secret)
    return response


def checked(request: Request, token: str = Form("", alias=csrf.FIELD),
            who: Viewer = Depends(viewer)) -> Viewer:
    """FastAPI dependency of every state-changing page: the signed-in viewer, once the
    request passed the origin and token checks (else :class:`~.csrf.CsrfRefused`)."""
    csrf.check_origin(request)
    csrf.check_token(request, token, request.cookies.get(COOKIE, ""))
    return who


def _new_pre_session(response: Response, request: Request) -> Response:
    """Replace the pre-session secret (at sign-in and sign-out: a secret planted before
    signing in is not the one the session's tokens are bound to)."""
    csrf.set_secret(response, request, csrf.new_secret())
    return response


def _back(url: str, **flash: str) -> RedirectResponse:
    query = f"?{urlencode(flash)}" if flash else ""
    return RedirectResponse(url + query, status_code=303)


# -- signing in ---------------------------------------------------------------------------


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request) -> HTMLResponse:
    """The sign-in form (paste an API key)."""
    return _page(request, "login.html", None)


@router.post("/login")
def login(request: Request, key: str = Form(""),
          token: str = Form("", alias=csrf.FIELD)) -> Response:
    """Check the key and keep it in an HttpOnly, SameSite=Strict cookie. The form's token
    is bound to the pre-session cookie (no site can sign a browser in to its key)."""
    try:
        csrf.check_origin(request)
        csrf.check_token(request, token, "")
    except csrf.CsrfRefused as exc:
        return _page(request, "login.html", None, status_code=403, error=str(exc))
    if verify(api_state(request), key.strip()) is None:
        return _page(request, "login.html", None, status_code=401,
                     error="Unknown or revoked API key.")
    response = RedirectResponse("/ui/", status_code=303)
    response.set_cookie(COOKIE, key.strip(), httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/ui")
    return _new_pre_session(response, request)


@router.post("/logout")
def logout(request: Request, token: str = Form("", alias=csrf.FIELD)) -> Response:
    """Forget the key."""
    csrf.check_origin(request)
    csrf.check_token(request, token, request.cookies.get(COOKIE, ""))
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return _new_pre_session(response, request)


# -- namespaces ---------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
def namespaces(request: Request, q: str = "", who: Viewer = Depends(viewer)) -> HTMLResponse:
    """The namespaces in the key's scopes with counts, last pass and pending importance."""
    store = who.state.client.store
    rows = []
    for ns in who.visible_namespaces():
        if q and q.lower() not in ns.lower():
            continue
        rows.append({"name": ns, "counts": store.records.count_by_status(ns),
                     "last_pass": store.coordination.last_pass_at(ns),
                     "pending": store.coordination.pending_importance(ns)})
    return _page(request, "namespaces.html", who, rows=rows, q=q,
                 statuses=[s.value for s in Status])


def _table(memories: list[Memory], *, status: str, kind: str, meta: str, text: str,
           sort: str, now: datetime, who: Viewer) -> tuple[list[Memory], str | None]:
    """The memories the table's filters choose, sorted; (rows, error naming a field)."""
    config = who.state.client.settings.consolidation
    spec: dict[str, Any] = {}
    if status:
        spec["status"] = status
    if kind:
        spec["kind"] = kind
    if meta:
        key, sep, value = meta.partition("=")
        if not sep or not key.strip():
            return [], "metadata: write the filter as key=value"
        spec[f"metadata.{key.strip()}"] = value.strip()
    try:
        wanted = compile_filter(spec)
    except FilterError as exc:
        return [], str(exc)
    rows = [m for m in memories if wanted(m) and (not text or text.lower() in m.text.lower())]
    if sort == "confidence":
        rows.sort(key=lambda m: -effective_confidence(m, now, config))
    elif sort == "recency":
        rows.sort(key=lambda m: m.updated_at, reverse=True)
    else:
        rows.sort(key=lambda m: -memory_score(m, now, config))
    return rows, None


@router.get("/ns/{namespace}", response_class=HTMLResponse)
def namespace_page(request: Request, namespace: str, status: str = "", kind: str = "",
                   meta: str = "", text: str = "", sort: str = "score",
                   page: int = Query(1, ge=1), q: str = "", done: str = "",
                   who: Viewer = Depends(viewer)) -> HTMLResponse:
    """Profile, memory table (filters, sorting, pages), search and plots."""
    ns = who.namespace(namespace)
    client = who.state.client
    now = utcnow()
    config = client.settings.consolidation
    sort = sort if sort in SORTS else "score"
    everything = list(client.store.records.iter_memories(ns, vectors=False))
    rows, error = _table(everything, status=status, kind=kind, meta=meta, text=text, sort=sort,
                         now=now, who=who)
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    page = min(page, pages)
    shown = rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    hits = client.search(ns, q, k=10, touch=False, now=now, warn=False) if q.strip() else []
    facts = client.profile(ns, now=now, warn=False)
    profile = [(m, effective_confidence(m, now, config)) for m in facts]
    filters = {"status": status, "kind": kind, "meta": meta, "text": text, "sort": sort}
    return _page(request, "namespace.html", who, ns=ns, profile=profile, rows=shown,
                 total=len(rows), page=page, pages=pages, error=error, filters=filters,
                 page_query=urlencode({k: v for k, v in filters.items() if v}),
                 scores={m.id: memory_score(m, now, config) for m in shown},
                 confidences={m.id: effective_confidence(m, now, config) for m in shown},
                 q=q, hits=hits, statuses=[s.value for s in Status],
                 kinds=[k.value for k in Kind], sorts=SORTS, plots=PLOTS, done=done)


@router.get("/ns/{namespace}/plots/{name}.png")
def plot(namespace: str, name: str, who: Viewer = Depends(viewer)) -> Response:
    """One of the pictures ``memcore plot`` draws, for this namespace, now."""
    from memcore.client import plots

    ns = who.namespace(namespace)
    if name not in PLOTS:
        raise NotVisible()
    client = who.state.client
    config = client.settings.consolidation
    with _PLOT_LOCK, tempfile.TemporaryDirectory(prefix="memcore-ui-") as tmp:
        out = Path(tmp) / f"{name}.png"
        try:
            if name == "retention":
                plots.retention_curves(config, out)
            elif name == "scores":
                memories = list(client.store.records.iter_memories(ns, vectors=False))
                plots.score_distribution(plots.live_scores(memories, utcnow(), config),
                                         config.floor, out, title=f"Retention scores of {ns}")
            else:
                plots.store_sizes(client.store.snapshots.versions(ns),
                                  client.store.current_version(ns),
                                  out)
        except plots.PlotsUnavailable as exc:
            return Response(str(exc), status_code=501, media_type="text/plain")
        body = out.read_bytes()
    return Response(body, media_type="image/png", headers={"Cache-Control": "no-store"})


# -- one memory ---------------------------------------------------------------------------


def _sources(who: Viewer, ns: str, memory: Memory) -> list[dict[str, Any]]:
    store = who.state.client.store
    out = []
    for source in memory.sources:
        episode = store.episodes.get_episode(ns, source)
        if episode is not None:
            out.append({"id": source, "episode": episode})
            continue
        member = store.records.get(ns, source)
        out.append({"id": source, "memory": member})
    return out


@router.get("/ns/{namespace}/m/{memory_id}", response_class=HTMLResponse)
def memory_page(request: Request, namespace: str, memory_id: str, done: str = "",
                error: str = "", who: Viewer = Depends(viewer)) -> HTMLResponse:
    """A memory: text, scores, validity, sources, lineage, audit and actions."""
    ns = who.namespace(namespace)
    client = who.state.client
    memory = client.get(ns, memory_id)
    if memory is None:
        raise NotVisible()
    now = utcnow()
    config = client.settings.consolidation
    history = client.history(ns, memory_id)
    texts: dict[str, str | None] = {}

    def label_of(mid: str) -> str | None:
        if mid not in texts:
            found = client.store.records.get(ns, mid)
            texts[mid] = None if found is None else found.text
        return texts[mid]

    svg = lineage_svg(memory_id, label_of, lambda mid: f"/ui/ns/{ns}/m/{mid}", history)
    scores = {"retention": memory_score(memory, now, config),
              "confidence": effective_confidence(memory, now, config),
              "stored confidence": memory.confidence, "strength": memory.strength,
              "importance": memory.importance}
    # Which bounds the record reached, and what its writes dropped (the audit says it).
    caps = record_caps(memory)
    drops = [e for e in history if e.reason and "record capped:" in e.reason]
    return _page(request, "memory.html", who, ns=ns, memory=memory, scores=scores,
                 caps=caps, drops=drops, sources=_sources(who, ns, memory), lineage=svg,
                 history=sorted(history, key=lambda e: e.at, reverse=True),
                 done=done, error=error)


ACTIONS = {"pin": ApiRole.WRITE, "unpin": ApiRole.WRITE, "restore": ApiRole.WRITE,
           "delete": ApiRole.WRITE, "erase": ApiRole.WRITE}


@router.post("/ns/{namespace}/m/{memory_id}/{action}")
def memory_action(namespace: str, memory_id: str, action: str,
                  confirm: str = Form(""), who: Viewer = Depends(checked)) -> Response:
    """Pin, unpin, restore, delete (tombstone) or erase a memory."""
    ns = who.namespace(namespace)
    if action not in ACTIONS:
        raise NotVisible()
    who.require(ACTIONS[action])
    client = who.state.client
    page = f"/ui/ns/{ns}/m/{memory_id}"
    if action == "erase":
        if confirm.strip() != ns:
            return _back(page, error="erase: type the namespace name to confirm")
        client.erase(ns, memory_id=memory_id)
        return _back(f"/ui/ns/{ns}", done=f"erased memory {memory_id}")
    try:
        getattr(client, action)(ns, memory_id)
    except (KeyError, ValueError) as exc:
        return _back(page, error=str(exc).strip("'\""))
    return _back(page, done=f"{action}: done")


# -- passes and versions ------------------------------------------------------------------


def _passes(events: list[AuditEvent]) -> list[dict[str, Any]]:
    """Consolidation events grouped by pass (a pass stamps its events with its ``now``)."""
    by_pass: dict[datetime, dict[str, list[AuditEvent]]] = defaultdict(lambda: defaultdict(list))
    for e in events:
        if e.actor is Actor.CONSOLIDATION:
            by_pass[e.at][e.action.value].append(e)
    return [{"at": at, "actions": dict(sorted(groups.items())),
             "total": sum(len(v) for v in groups.values())}
            for at, groups in sorted(by_pass.items(), reverse=True)]


@router.get("/ns/{namespace}/passes", response_class=HTMLResponse)
def passes_page(request: Request, namespace: str, done: str = "", error: str = "",
                who: Viewer = Depends(viewer)) -> HTMLResponse:
    """Each pass with what it merged, superseded, summarized and tombstoned, and why;
    the forget requests handled (never the erased text); the versions with rollback
    (admin)."""
    ns = who.namespace(namespace)
    store = who.state.client.store
    events = store.audit.tail(ns, PASS_AUDIT_WINDOW)
    return _page(request, "passes.html", who, ns=ns, passes=_passes(events),
                 forgets=forget_rows(events),
                 versions=sorted(store.snapshots.versions(ns), key=lambda v: v.version,
                                 reverse=True),
                 current=store.current_version(ns), done=done, error=error)


@router.post("/ns/{namespace}/rollback")
def rollback(namespace: str, version: int = Form(...), who: Viewer = Depends(checked)) -> Response:
    """Make ``version`` current again (admin)."""
    ns = who.namespace(namespace)
    who.require(ApiRole.ADMIN)
    try:
        who.state.client.store.snapshots.rollback(ns, version, utcnow(),
                                                  reason="rollback from the inspector")
    except (KeyError, ValueError) as exc:
        return _back(f"/ui/ns/{ns}/passes", error=str(exc).strip("'\""))
    return _back(f"/ui/ns/{ns}/passes", done=f"rolled back to version {version}")


# -- the precision review -----------------------------------------------------------------


def _review_history(who: Viewer, ns: str) -> list[rv.ReviewRecord]:
    lines = who.state.client.store.reviews.reviews(ns)
    records = [rv.ReviewRecord.from_json(line) for line in lines]
    return sorted(records, key=lambda r: r.at, reverse=True)


@router.get("/ns/{namespace}/review", response_class=HTMLResponse)
def review_form(request: Request, namespace: str, seed: int | None = None,
                who: Viewer = Depends(viewer)) -> HTMLResponse:
    """Thirty sampled active facts, one click each."""
    ns = who.namespace(namespace)
    client = who.state.client
    now = utcnow()
    seed = seed if seed is not None else random.randrange(1 << 30)
    sample = rv.sample_facts(client.store.records.iter_memories(ns, [Status.ACTIVE], vectors=False),
                             REVIEW_SIZE, seed, now=now, config=client.settings.consolidation)
    return _page(request, "review.html", who, ns=ns, sample=sample, seed=seed,
                 labels=[label.value for label in rv.Label], history=_review_history(who, ns),
                 target=rv.TARGET_PRECISION)


@router.post("/ns/{namespace}/review", response_class=HTMLResponse)
async def review_submit(request: Request, namespace: str,
                        who: Viewer = Depends(checked)) -> HTMLResponse:
    """Precision with its interval and the advice; the review is saved (write role)."""
    ns = who.namespace(namespace)
    who.require(ApiRole.WRITE)
    form = await request.form()
    client = who.state.client
    now = utcnow()
    config = client.settings.consolidation
    facts = []
    for name, value in form.multi_items():
        if not name.startswith("label:"):
            continue
        memory = client.store.records.get(ns, name.removeprefix("label:"))
        if memory is not None:
            facts.append(rv.describe(memory, rv.parse_label(str(value)), now, config))
    advice = rv.advise(facts, config)
    record = rv.make_record(ns, facts, advice, config, now)
    if facts:
        client.store.reviews.add_review(ns, record.to_json())
    return _page(request, "review_result.html", who, ns=ns, record=record, advice=advice,
                 interval=rv.precision_interval(facts), target=rv.TARGET_PRECISION,
                 history=_review_history(who, ns))


# -- webhooks -----------------------------------------------------------------------------


@router.get("/hooks", response_class=HTMLResponse)
def hooks_page(request: Request, done: str = "", error: str = "",
               who: Viewer = Depends(viewer)) -> HTMLResponse:
    """The hooks this admin key manages and their dead letters, with retry."""
    who.require(ApiRole.ADMIN)
    store = who.state.client.store
    hooks = [h for h in store.hooks.registered() if manages(who.principal, h)]
    return _page(request, "hooks.html", who, hooks=hooks,
                 dead=visible_dead(who.state, who.principal), done=done, error=error)


@router.post("/hooks/retry")
def hooks_retry(dead_id: str = Form(""), who: Viewer = Depends(checked)) -> Response:
    """Queue one dead letter (or, with no id, all this key sees) for delivery again."""
    who.require(ApiRole.ADMIN)
    ids = [d["id"] for d in visible_dead(who.state, who.principal)
           if not dead_id or d["id"] == dead_id]
    if not ids:
        return _back("/ui/hooks", error="No such dead letter.")
    count = retry_dead(who.state.client, ids)
    return _back("/ui/hooks", done=f"Requeued {count} dead letter{'s' if count != 1 else ''}.")
