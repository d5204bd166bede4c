"""The inspector against forged forms and framing, over real HTTP (a real server, Redis).

Every answer under /ui has its security headers; every POST form of every page carries a
token; a state-changing POST without the token, with another browser's token, or from a
foreign origin is refused (403) and changes nothing, while the same POST with the page's
token from the page's own origin works; the sign-in form has a token of its own, bound to
the pre-session cookie (login CSRF). The browser version is in tests/api/test_ui_browser.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from memcore.adapters import build_models
from memcore.api.ui.csrf import PRE_SESSION_COOKIE
from memcore.api.ui.session import COOKIE
from memcore.core.config import Settings
from memcore.core.models import Episode
from memcore.ingest.write_path import IngestPipeline
from memcore.store import MemoryStore
from tests.support.api_helpers import Api, serve

NS = "acme-csrf"
TOKEN = re.compile(r'name="csrf" value="([0-9a-f]+)"')


@pytest.fixture()
def fed(redis_url: str) -> Iterator[tuple[Api, str]]:
    """The API over a namespace with one memory: (api, its id)."""
    settings = Settings(redis_url=redis_url)
    store = MemoryStore.from_url(redis_url)
    IngestPipeline(store, build_models(settings), settings).ingest(
        NS, [Episode(id="t1", namespace=NS, role="user", speaker="Sam",
                     text="I have a cat called Tom.", timestamp=datetime(2026, 3, 1, tzinfo=UTC))],
        infer=False)
    memory_id = next(iter(store.gateway.live_ids(NS)))
    store.close()
    gen = serve(redis_url)
    api = next(gen)
    try:
        yield api, memory_id
    finally:
        gen.close()


def signed_in(api: Api, role: str = "admin") -> httpx.Client:
    """A browser-like client signed in through the form (token and pre-session cookie)."""
    browser = httpx.Client(base_url=api.url, timeout=60)
    form = browser.get("/ui/login")
    token = TOKEN.search(form.text)
    assert token and PRE_SESSION_COOKIE in browser.cookies, form.text
    answer = browser.post("/ui/login", data={"key": api.key("acme-*", role=role),
                                             "csrf": token.group(1)},
                          headers={"Origin": api.url})
    assert answer.status_code == 303, answer.text
    assert COOKIE in browser.cookies
    return browser


def page_token(browser: httpx.Client, path: str) -> str:
    page = browser.get(path)
    assert page.status_code == 200, page.text
    found = TOKEN.search(page.text)
    assert found, f"no token on {path}"
    return found.group(1)


def pinned(api: Api, memory_id: str) -> bool:
    answer = api.call("GET", f"/v1/namespaces/{NS}/memories/{memory_id}",
                      api.key(NS, role="read"))
    return bool(answer.json()["pinned"])


def test_every_inspector_answer_has_the_security_headers(fed: tuple[Api, str]) -> None:
    api, memory_id = fed
    browser = signed_in(api)
    for path in ("/ui/login", "/ui/", f"/ui/ns/{NS}", f"/ui/ns/{NS}/m/{memory_id}",
                 f"/ui/ns/{NS}/passes", f"/ui/ns/{NS}/review", "/ui/ns/nope",
                 "/ui/static/ui.css", f"/ui/ns/{NS}/plots/retention.png", "/ui/hooks"):
        answer = browser.get(path)
        csp = answer.headers.get("content-security-policy", "")
        assert answer.headers.get("x-frame-options") == "DENY", path
        assert answer.headers.get("referrer-policy") == "same-origin", path
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp, path
        # Strict: no script at all, no inline style, nothing from elsewhere.
        assert "script-src" not in csp and "unsafe" not in csp and "*" not in csp, path
    # The JSON API keeps its own answers (its /docs page loads scripts).
    assert "x-frame-options" not in api.http.get("/healthz").headers


def test_every_post_form_carries_the_token(fed: tuple[Api, str]) -> None:
    api, memory_id = fed
    browser = signed_in(api)
    pages = [browser.get("/ui/login"), browser.get("/ui/"), browser.get("/ui/hooks")]
    pages += [browser.get(f"/ui/ns/{NS}{p}") for p in ("", f"/m/{memory_id}", "/passes",
                                                       "/review")]
    forms = 0
    for page in pages:
        assert page.status_code == 200
        for form in re.findall(r"<form[^>]*>.*?</form>", page.text, flags=re.S):
            if 'method="post"' in form:
                forms += 1
                assert TOKEN.search(form), form
        # No inline script or style attribute for the policy to block.
        assert "<script" not in page.text and "style=" not in page.text
    assert forms >= 6  # sign-out on each page, pin, delete, erase, review


def test_forged_posts_are_refused_and_change_nothing(fed: tuple[Api, str]) -> None:
    api, memory_id = fed
    browser = signed_in(api)
    token = page_token(browser, f"/ui/ns/{NS}/m/{memory_id}")
    pin = f"/ui/ns/{NS}/m/{memory_id}/pin"
    other = signed_in(api)  # another browser: its own pre-session cookie
    foreign = "http://127.0.0.1:1"  # same host, another port: same site, other origin
    refused = {
        "no token": ({}, {"Origin": api.url}),
        "a wrong token": ({"csrf": "0" * 64}, {"Origin": api.url}),
        "another browser's token": ({"csrf": page_token(other, f"/ui/ns/{NS}")},
                                    {"Origin": api.url}),
        "a foreign Origin": ({"csrf": token}, {"Origin": foreign}),
        "a foreign Referer": ({"csrf": token}, {"Referer": foreign + "/attack.html"}),
        "Origin null": ({"csrf": token}, {"Origin": "null"}),
    }
    for case, (form, headers) in refused.items():
        answer = browser.post(pin, data=form, headers=headers)
        assert answer.status_code == 403, (case, answer.status_code)
        assert "refused" in answer.text, case
        assert not pinned(api, memory_id), case
    for path, form in ((f"/ui/ns/{NS}/m/{memory_id}/erase", {"confirm": NS}),
                       (f"/ui/ns/{NS}/rollback", {"version": "1"}),
                       (f"/ui/ns/{NS}/review", {f"label:{memory_id}": "correct"}),
                       ("/ui/hooks/retry", {}), ("/ui/logout", {})):
        answer = browser.post(path, data=form, headers={"Origin": foreign})
        assert answer.status_code == 403, (path, answer.status_code)
    assert browser.get(f"/ui/ns/{NS}/m/{memory_id}").status_code == 200, "still signed in"
    store = MemoryStore.from_url(api.redis_url)
    assert not store.reviews.reviews(NS) and store.records.get(NS, memory_id) is not None
    store.close()

    # The real thing: the page's token, from the page's origin (or with no Origin at all,
    # as a script sends it) works.
    answer = browser.post(pin, data={"csrf": token}, headers={"Origin": api.url})
    assert answer.status_code == 303 and pinned(api, memory_id)
    answer = browser.post(f"/ui/ns/{NS}/m/{memory_id}/unpin", data={"csrf": token})
    assert answer.status_code == 303 and not pinned(api, memory_id)


def test_login_csrf_is_closed(fed: tuple[Api, str]) -> None:
    api, _ = fed
    key = api.key("acme-*", role="admin")
    # A form posted from elsewhere: no pre-session cookie, no token.
    blind = httpx.post(f"{api.url}/ui/login", data={"key": key}, timeout=60)
    assert blind.status_code == 403 and COOKIE not in blind.cookies
    # A pre-session cookie but a token the page did not give.
    browser = httpx.Client(base_url=api.url, timeout=60)
    browser.get("/ui/login")
    for form, headers in (({"key": key, "csrf": "0" * 64}, {}),
                          ({"key": key, "csrf": TOKEN.search(browser.get("/ui/login").text
                                                             ).group(1)},  # type: ignore[union-attr]
                           {"Origin": "http://127.0.0.1:1"})):
        answer = browser.post("/ui/login", data=form, headers=headers)
        assert answer.status_code == 403 and COOKIE not in browser.cookies, answer.text
    # Signing in renews the pre-session secret.
    before = browser.cookies[PRE_SESSION_COOKIE]
    token = TOKEN.search(browser.get("/ui/login").text).group(1)  # type: ignore[union-attr]
    answer = browser.post("/ui/login", data={"key": key, "csrf": token})
    assert answer.status_code == 303 and browser.cookies[PRE_SESSION_COOKIE] != before
