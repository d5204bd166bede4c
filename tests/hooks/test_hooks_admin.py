"""Managing webhooks: the ``memcore hooks`` commands and the ``/v1/hooks`` endpoints
(admin role, a key manages only hooks inside its scopes), on a real Redis and the real
API server."""

from __future__ import annotations

import json
import re

import httpx

from memcore.store import MemoryStore
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture
from tests.support.cli_helpers import run, run_json

EVENTS = "memory.created,memory.erased"


def _dead_letter(store: MemoryStore, hook_id: str) -> None:
    """One dead letter of ``hook_id``, as a delivery that failed every attempt leaves."""
    event = {"id": "n:1", "type": "memory.created", "namespace": "acme-1", "seq": 1,
             "memory_id": "m1", "action": "ADD", "actor": "ingest", "data": {},
             "occurred_at": "2026-03-01T00:00:00+00:00", "audit_id": "1-0"}
    lane = f"{hook_id}/m1"
    cursor, seq = store.hooks.position("acme-1")
    assert store.hooks.commit("acme-1", cursor, f"{seq + 1}-0", seq + 1,
                              [(lane, json.dumps(event))])
    raw = store.hooks.head("acme-1", lane)
    assert raw is not None
    store.hooks.dead_letter("acme-1", lane, raw, {
        "hook_id": hook_id, "url": "http://x", "attempts": 8, "last_error": "HTTP 500",
        "failed_at": "2026-03-01T00:00:00+00:00"}, keep=10)


def test_cli_adds_lists_shows_dead_letters_retries_and_removes(redis_url: str) -> None:
    added = run_json(redis_url, "hooks", "add", "--url", "http://127.0.0.1:9/h",
                     "--events", EVENTS, "--scope", "acme-*")
    assert added["secret"].startswith("whsec_") and added["events"] == EVENTS.split(",")
    listed = run_json(redis_url, "hooks", "list")
    assert [h["id"] for h in listed] == [added["id"]] and "secret" not in listed[0]
    text = run(redis_url, "hooks", "list").output
    assert added["id"] in text and added["secret"] not in text
    bad = run(redis_url, "hooks", "add", "--url", "file:///etc/passwd", "--events", EVENTS,
              "--scope", "a")
    assert bad.exit_code == 2 and "url: scheme 'file' not allowed" in bad.output
    bad = run(redis_url, "hooks", "add", "--url", "http://x", "--events", "memory.boom",
              "--scope", "a")
    assert bad.exit_code == 2 and "memory.boom" in bad.output

    store = MemoryStore.from_url(redis_url)
    assert run_json(redis_url, "hooks", "dead") == []
    _dead_letter(store, added["id"])
    (dead,) = run_json(redis_url, "hooks", "dead")
    assert dead["attempts"] == 8 and dead["event"]["memory_id"] == "m1"
    assert dead["id"] in run(redis_url, "hooks", "dead").output
    missing = run(redis_url, "hooks", "retry", "nope")
    assert missing.exit_code == 1
    assert run_json(redis_url, "hooks", "retry", "--hook", added["id"]) == {"requeued": 1}
    assert store.hooks.dead() == [] and store.hooks.queued("acme-1", f"{added['id']}/m1") == 1
    assert run_json(redis_url, "hooks", "remove", added["id"])["removed"] is True
    assert run(redis_url, "hooks", "remove", added["id"]).exit_code == 1
    store.close()


def test_http_endpoints_need_admin_and_stay_inside_the_keys_scopes(
        api: Api) -> None:  # noqa: F811
    admin_all = api.key("*", role="admin")
    admin_acme = api.key("acme-*", role="admin")
    writer = api.key("*", role="write")
    body = {"url": "http://127.0.0.1:9/h", "events": EVENTS.split(","), "scopes": ["acme-*"]}
    assert api.call("POST", "/v1/hooks", writer, json=body).status_code == 403
    assert api.call("GET", "/v1/hooks", writer).status_code == 403
    made = api.call("POST", "/v1/hooks", admin_acme, json=body)
    assert made.status_code == 201, made.text
    hook = made.json()
    assert hook["secret"].startswith("whsec_")
    wide = api.call("POST", "/v1/hooks", admin_acme, json={**body, "scopes": ["*"]})
    assert wide.status_code == 403
    other = api.call("POST", "/v1/hooks", admin_all, json={**body, "scopes": ["bob"]}).json()
    bad = api.call("POST", "/v1/hooks", admin_all, json={**body, "url": "ftp://x/y"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "url"
    unknown = api.call("POST", "/v1/hooks", admin_all, json={**body, "secret": "mine"})
    assert unknown.status_code == 422
    mine = api.call("GET", "/v1/hooks", admin_acme).json()
    assert [h["id"] for h in mine] == [hook["id"]] and mine[0]["secret"] is None
    assert {h["id"] for h in api.call("GET", "/v1/hooks", admin_all).json()} == {
        hook["id"], other["id"]}

    store = MemoryStore.from_url(api.redis_url)
    _dead_letter(store, hook["id"])
    _dead_letter(store, other["id"])
    assert [d["hook_id"] for d in api.call("GET", "/v1/hooks/dead", admin_acme).json()] == [
        hook["id"]]
    retried = api.call("POST", "/v1/hooks/dead/retry", admin_acme, json={})
    assert retried.json() == {"requeued": 1}
    assert [d["hook_id"] for d in store.hooks.dead()] == [other["id"]]
    assert api.call("DELETE", f"/v1/hooks/{other['id']}", admin_acme).status_code == 404
    assert api.call("DELETE", f"/v1/hooks/{hook['id']}", admin_acme).status_code == 200
    assert [h.id for h in store.hooks.registered()] == [other["id"]]
    store.close()


def test_inspector_lists_hooks_and_retries_dead_letters(api: Api) -> None:  # noqa: F811
    store = MemoryStore.from_url(api.redis_url)
    hook, _ = store.hooks.add("http://127.0.0.1:9/h", ["memory.created"], ["acme-*"])
    other, _ = store.hooks.add("http://127.0.0.1:9/o", ["memory.created"], ["bob"])
    _dead_letter(store, hook.id)
    _dead_letter(store, other.id)

    def token(browser: httpx.Client, path: str) -> str:
        """The form token of the page at ``path`` (every POST form carries it)."""
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', browser.get(path).text)
        assert found, path
        return found.group(1)

    def signed_in(key: str) -> httpx.Client:
        browser = httpx.Client(base_url=api.url, timeout=60, follow_redirects=True)
        form = {"key": key, "csrf": token(browser, "/ui/login")}
        assert browser.post("/ui/login", data=form).status_code == 200
        return browser

    reader = signed_in(api.key("acme-*", role="write"))
    assert reader.get("/ui/hooks").status_code == 403
    assert "/ui/hooks" not in reader.get("/ui/").text
    admin = signed_in(api.key("acme-*", role="admin"))
    assert "/ui/hooks" in admin.get("/ui/").text
    page = admin.get("/ui/hooks").text
    assert hook.url in page and other.url not in page  # bob's hook is not this key's
    assert "Dead letters (1)" in page and "HTTP 500" in page
    (mine,) = [d for d in store.hooks.dead() if d["hook_id"] == hook.id]
    forged = admin.post("/ui/hooks/retry", data={"dead_id": mine["id"]})
    assert forged.status_code == 403, "no token: refused"
    done = admin.post("/ui/hooks/retry",
                      data={"dead_id": mine["id"], "csrf": token(admin, "/ui/hooks")})
    assert "Requeued 1 dead letter." in done.text
    assert [d["hook_id"] for d in store.hooks.dead()] == [other.id]
    assert "No dead letters." in admin.get("/ui/hooks").text
    for browser in (reader, admin):
        browser.close()
    store.close()
