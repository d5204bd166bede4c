"""Export and import over HTTP through the real API app (uvicorn, real Redis)."""

from __future__ import annotations

import json

from memcore.store import MemoryStore
from tests.api_helpers import Api, api  # noqa: F401 - fixture
from tests.test_portability import NS, audit_of, comparable, rich_namespace


def test_export_streams_ndjson_and_import_round_trips(api: Api) -> None:  # noqa: F811
    store: MemoryStore = rich_namespace(api.redis_url)
    admin = api.key("*", role="admin")
    writer = api.key("*", role="write")
    assert api.call("GET", f"/v1/namespaces/{NS}/export", writer).status_code == 403
    with api.http.stream("GET", f"/v1/namespaces/{NS}/export",
                         params={"with_episodes": "true"},
                         headers={"Authorization": f"Bearer {admin}"}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        lines = list(response.iter_lines())
    header = json.loads(lines[0])
    assert header["format"] == "memcore-export" and header["with_episodes"] is True
    assert json.loads(lines[-1]) == {"type": "end", "records": len(lines) - 2}

    body = "\n".join(lines) + "\n"
    path = "/v1/namespaces/copy/import"
    assert api.call("POST", path, writer, content=body).status_code == 403
    first = api.call("POST", path, admin, content=body,
                     headers={"Content-Type": "application/x-ndjson"})
    assert first.status_code == 200, first.text
    report = first.json()
    assert report["added"] == 4 and report["episodes"] == 1
    assert comparable(store, "copy") == comparable(store, NS)
    assert audit_of(store, "copy") == audit_of(store, NS)
    again = api.call("POST", path, admin, content=body)
    assert again.status_code == 200 and again.json()["added"] == 0
    assert len(audit_of(store, "copy")) == len(audit_of(store, NS))

    broken = body.replace('"importance":0.5', '"importance":"high"', 1)
    bad = api.call("POST", "/v1/namespaces/other/import", admin, content=broken)
    assert bad.status_code == 422
    error = bad.json()["error"]
    assert error["field"] == "importance" and error["message"].startswith("line 2: importance")
    assert not store.records.has_namespace("other")
    missing = api.call("GET", "/v1/namespaces/nothing-here/export", admin)
    assert missing.status_code == 404
    store.close()
