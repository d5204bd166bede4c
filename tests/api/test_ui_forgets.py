"""The inspector lists the forget requests a namespace handled (when, the turn that
asked, what kind, how many memories and turns were erased) and never the erased text;
over real HTTP against a real server and Redis, the requests made through the real
write path and the HTTP API."""

from __future__ import annotations

from datetime import UTC, datetime

from memcore.api.ui.forgets import forget_rows
from memcore.core.forget import FORGET_AUDIT_PREFIX
from memcore.core.models import Actor, AuditAction, AuditEvent
from tests.api.test_ui_security import signed_in
from tests.ingest.test_forget import _pipeline, _say
from tests.support.api_helpers import serve

NS = "acme-forgets"


def test_the_passes_page_shows_forget_requests_without_their_text(redis_url: str) -> None:
    pipeline, store, _ = _pipeline(redis_url)
    _say(pipeline, NS, ["I live in Leeds.", "My home address is 14 Larkspur Lane, Bristol.",
                        "Please forget my home address.", "Please forget my passport number."])
    gen = serve(redis_url)
    api = next(gen)
    try:
        _say(pipeline, "acme-other", ["I live in York."])
        browser = signed_in(api)
        assert api.call("POST", f"/v1/namespaces/{NS}/forget", api.key(NS),
                        json={"text": "that", "user_id": "ann"}).status_code == 200
        page = browser.get(f"/ui/ns/{NS}/passes")
        assert page.status_code == 200, page.text
        table = page.text[page.text.index('id="forgets"'):]
        table = table[:table.index("</table>")]
        assert "turn <code>ann-2</code>" in table and "attribute" in table
        assert "turn <code>ann-3</code>" in table and "nothing matched" in table
        assert "API / MCP" in table and "turn</td>" in table  # the API's "that"
        assert table.count("<tr>") == 1 + 3  # the header and the three requests
        assert "Larkspur" not in page.text and "passport" not in page.text
        empty = browser.get("/ui/ns/acme-other/passes")
        assert "No forget request recorded" in empty.text
    finally:
        gen.close()
        store.close()


def test_rows_read_from_the_audit() -> None:
    at = datetime(2026, 3, 1, tzinfo=UTC)
    events = [
        AuditEvent(action=AuditAction.ERASE, namespace="n", before=["m1", "m2"],
                   reason=f"{FORGET_AUDIT_PREFIX}turn t9; kind: entity; "
                          "2 memories and 1 turns erased", actor=Actor.USER, at=at),
        AuditEvent(action=AuditAction.ERASE, namespace="n", before=["m1"],
                   reason="forget request in turn t9 (entity); source turns erased: t1",
                   actor=Actor.USER, at=at),  # the erase path's own entry: not a request
    ]
    row, = forget_rows(events)
    assert (row.turn_id, row.kind, row.memories, row.turns) == ("t9", "entity", 2, 1)
