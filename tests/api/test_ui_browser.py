"""The inspector in a real browser: Debian's chromium driven by selenium, against a real
server, real Redis and real Celery workers fed the sample conversation.

Screenshots of each page go to bench/ui/latest/ (docs/inspector.md shows two of docs/ui/).
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from memcore.client.client import Client
from memcore.core.models import Status
from memcore.local.stack import LocalStack
from memcore_bench.demo import load_sample
from tests.support.api_helpers import Api, serve

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402

# Every run saves its screenshots in bench/ui/latest/ (ignored by git); the docs'
# copies in docs/ui/ are refreshed with MEMCORE_UI_SCREENSHOTS=docs/ui.
SHOTS = Path(os.environ.get("MEMCORE_UI_SCREENSHOTS")
             or Path(__file__).resolve().parents[2] / "bench" / "ui" / "latest")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def browser_missing() -> str | None:
    """Why no browser test can run here (None: both binaries are installed)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    return None if not missing else (
        f"{', '.join(missing)} missing: install Debian's chromium and chromium-driver "
        "(`make browser`, which `make test` runs)")


def test_the_browser_is_installed() -> None:
    """Fails (never skips) when make test's browser step did not install chromium."""
    assert browser_missing() is None, browser_missing()


@pytest.fixture()
def driver() -> Iterator[WebDriver]:
    if browser_missing():
        pytest.fail(browser_missing() or "")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,900"):
        options.add_argument(flag)
    # The console, to find what the Content-Security-Policy blocked.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    chrome.set_page_load_timeout(60)
    try:
        yield chrome
    finally:
        chrome.quit()


@dataclass
class Fed:
    """The running API, a Client, and the two tenants' namespaces."""

    api: Api
    client: Client
    ns: str
    other_ns: str


@pytest.fixture()
def fed(celery_stack: LocalStack) -> Iterator[Fed]:
    """The API over the Celery stack's Redis, with a namespace of tenant acme fed the
    sample conversation and consolidated twice (two versions to roll back between), and
    one of tenant globex with one fact."""
    client = Client(celery_stack.redis_url)
    suffix = uuid.uuid4().hex[:8]
    NS, OTHER_NS = f"acme-sam-{suffix}", f"globex-kim-{suffix}"
    # Each test sees only its own tenants' namespaces.
    for ns in client.store.records.namespaces():
        if ns.startswith(("acme-", "globex-")):
            client.erase(ns, everything=True)
    turns = load_sample()
    sessions: dict[int, list[dict[str, object]]] = {}
    for turn in turns:
        sessions.setdefault(int(turn["session"]), []).append(turn)
    for number in sorted(sessions):
        messages = [{"role": t["role"], "speaker": t["speaker"], "content": t["content"],
                     "timestamp": t["timestamp"], "id": f"s{number}-t{i}"}
                    for i, t in enumerate(sessions[number])]
        client.wait(client.add(NS, messages), timeout=120)
    last = max(datetime.fromisoformat(str(t["timestamp"])) for t in turns)
    client.consolidate(NS, now=last + timedelta(days=1), timeout=120)
    client.consolidate(NS, now=last + timedelta(days=2), timeout=120, full=True)
    client.wait(client.add(OTHER_NS, [{"role": "user", "content": "I live in Oslo.",
                                       "timestamp": last}]), timeout=60)
    api_gen = serve(celery_stack.redis_url)
    api = next(api_gen)
    try:
        yield Fed(api, client, NS, OTHER_NS)
    finally:
        api_gen.close()
        client.close()


def shot(driver: WebDriver, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def click(driver: WebDriver, target: WebElement | tuple[str, str]) -> None:
    """Click something that loads a new page, and wait until the new page is there.

    ``target`` as a locator is found again when the page replaced its node between the
    find and the click (chromium: "Node with given id does not belong to the document",
    met on a loaded CI machine)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.wait import WebDriverWait

    for attempt in range(3):
        page = driver.find_element(By.TAG_NAME, "html")
        element = driver.find_element(*target) if isinstance(target, tuple) else target
        try:
            element.click()
        except (StaleElementReferenceException, WebDriverException) as error:
            gone = isinstance(error, StaleElementReferenceException) or \
                "does not belong to the document" in str(error)
            if not gone or not isinstance(target, tuple) or attempt == 2:
                raise
            continue
        WebDriverWait(driver, 30).until(_replaced_page(page))
        return


def _replaced_page(page: WebElement) -> Callable[[WebDriver], bool]:
    """The wait condition: ``page`` has been replaced (:func:`_replaced`)."""
    return lambda _driver: _replaced(page)


def _replaced(page: WebElement) -> bool:
    """Has the page the element belonged to been replaced? Chromium answers a check of a
    replaced node with "Node with given id does not belong to the document" as often as
    with a stale-element error (a loaded CI machine met both)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        page.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise
    return False


def sign_in(driver: WebDriver, api: Api, key: str) -> None:
    driver.get(f"{api.url}/ui/login")
    driver.find_element(By.ID, "key").send_keys(key)
    click(driver, (By.ID, "sign-in"))


def body(driver: WebDriver) -> str:
    return str(driver.find_element(By.TAG_NAME, "body").text)


def test_inspector_end_to_end(driver: WebDriver, fed: Fed) -> None:
    api, client, NS, OTHER_NS = fed.api, fed.client, fed.ns, fed.other_ns
    admin = api.key("acme-*", role="admin", name="acme admin")
    other = api.key("globex-*", role="admin", name="globex admin")

    driver.get(f"{api.url}/ui/")
    assert driver.current_url.endswith("/ui/login"), "no key, no pages"
    sign_in(driver, api, "mc_not_a_key")
    assert "Unknown or revoked API key" in body(driver)

    # Namespaces: only the key's scopes.
    sign_in(driver, api, admin)
    names = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#namespaces td:first-child a")]
    assert names == [NS], body(driver)
    shot(driver, "namespaces")

    # A namespace: profile, table, search, plots.
    click(driver, driver.find_element(By.LINK_TEXT, NS))
    profile = driver.find_element(By.ID, "profile").text
    assert "Berlin" in profile and "Paris" not in profile
    rows = driver.find_elements(By.CSS_SELECTOR, "#memories tbody tr")
    assert len(rows) >= 3
    driver.get(f"{api.url}/ui/ns/{NS}?q=Where+does+Sam+live")
    assert "Berlin" in driver.find_element(By.ID, "hits").text
    driver.get(f"{api.url}/ui/ns/{NS}?status=superseded")
    superseded_rows = driver.find_elements(By.CSS_SELECTOR, "#memories tbody tr td a")
    assert superseded_rows, "the move from Paris superseded a fact"
    shot(driver, "namespace")
    for name in ("retention", "scores", "versions"):
        png = httpx.get(f"{api.url}/ui/ns/{NS}/plots/{name}.png", cookies=driver_cookies(driver),
                        timeout=60)
        assert png.status_code == 200 and png.content[:4] == b"\x89PNG", (name, png.text[:300])

    # A superseded memory: its successor is in the lineage.
    old = next(m for m in client.store.records.iter_memories(NS) if m.status is Status.SUPERSEDED
               and m.superseded_by)
    driver.get(f"{api.url}/ui/ns/{NS}/m/{old.id}")
    assert driver.find_element(By.ID, "memory-status").text == "superseded"
    lineage_ids = [n.get_attribute("data-id")
                   for n in driver.find_elements(By.CSS_SELECTOR, "#lineage .node")]
    assert old.superseded_by in lineage_ids, lineage_ids
    assert "supersede" in driver.find_element(By.ID, "lineage").text.lower()
    assert driver.find_elements(By.CSS_SELECTOR, "#sources tbody tr")
    shot(driver, "memory")
    click(driver, driver.find_element(By.CSS_SELECTOR,
                                      f'#lineage a[data-id="{old.superseded_by}"]'))
    assert old.superseded_by in driver.current_url

    # The review: one click per fact, then precision with its interval.
    driver.get(f"{api.url}/ui/ns/{NS}/review")
    facts = driver.find_elements(By.CSS_SELECTOR, ".review-row")
    assert 1 <= len(facts) <= 30
    for i, row in enumerate(facts):
        label = "incorrect" if i == 0 and len(facts) > 1 else "correct"
        row.find_element(By.CSS_SELECTOR, f'input[value="{label}"]').click()
    shot(driver, "review")
    click(driver, (By.ID, "finish-review"))
    precision = driver.find_element(By.ID, "precision").text
    expected = (len(facts) - 1) / len(facts) if len(facts) > 1 else 1.0
    assert f"precision {expected * 100:.1f} %" in precision and "interval" in precision
    assert len(driver.find_elements(By.CSS_SELECTOR, "#review-history tbody tr")) == 1
    assert len(client.store.reviews.reviews(NS)) == 1
    shot(driver, "review-result")

    # Versions: roll back to the first pass's version.
    driver.get(f"{api.url}/ui/ns/{NS}/passes")
    assert driver.find_elements(By.CSS_SELECTOR, "details.pass")
    current = client.store.current_version(NS)
    button = driver.find_elements(By.CSS_SELECTOR, "button.rollback")[-1]
    target = int(button.get_attribute("data-version") or 0)
    shot(driver, "passes")
    click(driver, button)
    assert f"rolled back to version {target}" in body(driver)
    assert client.store.current_version(NS) != current

    # Erase: refused without the namespace name, done with it.
    victim = next(m for m in client.store.records.iter_memories(NS)
                  if m.live and "Berlin" in m.text)
    driver.get(f"{api.url}/ui/ns/{NS}/m/{victim.id}")
    click(driver, (By.ID, "erase"))
    assert "type the namespace name" in body(driver)
    assert client.get(NS, victim.id) is not None
    driver.find_element(By.ID, "erase-confirm").send_keys(NS)
    click(driver, (By.ID, "erase"))
    assert f"erased memory {victim.id}" in body(driver)
    assert client.get(NS, victim.id) is None

    # The strict policy blocked nothing the pages need (chromium logs what it blocks).
    assert not csp_complaints(driver)

    # Phone width.
    driver.set_window_size(390, 844)
    driver.get(f"{api.url}/ui/ns/{NS}")
    shot(driver, "namespace-phone")
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 400, f"the page scrolls sideways at phone width ({width}px)"
    driver.set_window_size(1280, 900)

    # Another tenant sees none of it.
    click(driver, (By.CSS_SELECTOR, "header form button"))
    sign_in(driver, api, other)
    names = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#namespaces td:first-child a")]
    assert names == [OTHER_NS]
    for path in (f"/ui/ns/{NS}", f"/ui/ns/{NS}/m/{old.id}", f"/ui/ns/{NS}/passes",
                 f"/ui/ns/{NS}/review", "/ui/ns/globex-does-not-exist"):
        driver.get(api.url + path)
        assert "Not found, or not in this key's scopes." in body(driver), path


def driver_cookies(driver: WebDriver) -> dict[str, str]:
    return {c["name"]: c["value"] for c in driver.get_cookies()}


def csp_complaints(driver: WebDriver) -> list[str]:
    """The console messages about the Content-Security-Policy since the last call."""
    return [str(e["message"]) for e in driver.get_log("browser")
            if "Content Security Policy" in str(e["message"])]


def page_token(driver: WebDriver) -> str:
    """The CSRF token of the page shown (every POST form has it)."""
    return str(driver.find_element(By.CSS_SELECTOR, 'input[name="csrf"]').get_attribute("value"))


def test_roles_hide_and_refuse_actions(driver: WebDriver, fed: Fed) -> None:
    api, client, NS = fed.api, fed.client, fed.ns
    reader = api.key("acme-*", role="read", name="roles-test-reader")
    memory = next(m for m in client.store.records.iter_memories(NS) if m.live)
    sign_in(driver, api, reader)
    driver.get(f"{api.url}/ui/ns/{NS}/m/{memory.id}")
    assert not driver.find_elements(By.ID, "erase") and not driver.find_elements(By.ID, "pin")
    assert "read-only" in body(driver)
    driver.get(f"{api.url}/ui/ns/{NS}/passes")
    assert not driver.find_elements(By.CSS_SELECTOR, "button.rollback")
    cookies = driver_cookies(driver)
    # With the page's token and origin: refused for the role alone.
    token = page_token(driver)
    for path, form in ((f"/ui/ns/{NS}/m/{memory.id}/erase", {"confirm": NS}),
                       (f"/ui/ns/{NS}/m/{memory.id}/pin", {}),
                       (f"/ui/ns/{NS}/rollback", {"version": "1"})):
        answer = httpx.post(api.url + path, data={**form, "csrf": token}, cookies=cookies,
                            headers={"Origin": api.url}, follow_redirects=False, timeout=60)
        assert answer.status_code == 403, (path, answer.status_code)
        assert "needs" in answer.text, answer.text
    assert client.get(NS, memory.id) is not None and not client.get(NS, memory.id).pinned
    # A revoked key signs its sessions out at once.
    # The key this test signed in with (other tests of the module make read keys too).
    key_id = next(k.id for k in client.store.api_keys.list() if k.name == "roles-test-reader")
    client.store.api_keys.revoke(key_id)
    driver.get(f"{api.url}/ui/")
    assert driver.current_url.endswith("/ui/login")


@contextmanager
def attacker_site(page: str) -> Iterator[str]:
    """Serve ``page`` at ``/attack.html`` on another port of the same host (same site as
    the inspector, so a SameSite=Strict cookie goes along; another origin); its URL."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/attack.html"
    finally:
        server.shutdown()
        server.server_close()


def test_a_cross_origin_form_post_is_refused(driver: WebDriver, fed: Fed) -> None:
    """A page on another port auto-submits forms to the signed-in inspector: pin a
    memory, erase one, sign the browser in with the attacker's key. Each is refused and
    nothing changes; the same actions through the inspector's own pages work."""
    from selenium.webdriver.support.wait import WebDriverWait

    api, client, NS = fed.api, fed.client, fed.ns
    admin = api.key("acme-*", role="admin", name="csrf-test admin")
    attacker_key = api.key("*", role="admin", name="csrf-test attacker")
    memory = next(m for m in client.store.records.iter_memories(NS)
                  if m.live and not m.pinned)
    sign_in(driver, api, admin)
    forms = {"pin": (f"/ui/ns/{NS}/m/{memory.id}/pin", {}),
             "erase": (f"/ui/ns/{NS}/m/{memory.id}/erase", {"confirm": NS}),
             "login": ("/ui/login", {"key": attacker_key})}
    for name, (path, fields) in forms.items():
        inputs = "".join(f'<input type="hidden" name="{k}" value="{v}">'
                         for k, v in fields.items())
        page = (f'<!doctype html><form id="f" method="post" action="{api.url}{path}">{inputs}'
                '</form><script>document.getElementById("f").submit()</script>')
        with attacker_site(page) as url:
            driver.get(url)
            WebDriverWait(driver, 30).until(lambda d: d.current_url.startswith(api.url))
            assert "refused" in body(driver), (name, body(driver))
        shot(driver, f"csrf-refused-{name}")
    after = client.get(NS, memory.id)
    assert after is not None and not after.pinned and after.live, "nothing changed"
    driver.get(f"{api.url}/ui/")
    mine = next(k.id for k in client.store.api_keys.list() if k.name == "csrf-test admin")
    who = driver.find_element(By.CSS_SELECTOR, "header .who code").text
    assert who == mine, "still signed in with the victim's own key"

    # Normal use through the inspector still works.
    driver.get(f"{api.url}/ui/ns/{NS}/m/{memory.id}")
    click(driver, (By.ID, "pin"))
    assert "pin: done" in body(driver)
    pinned = client.get(NS, memory.id)
    assert pinned is not None and pinned.pinned
    click(driver, (By.ID, "unpin"))
    assert "unpin: done" in body(driver)
    assert not csp_complaints(driver)
