"""Export and import over HTTP through the real API app (uvicorn, real Redis)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

from memcore.store import MemoryStore
from tests.client.test_portability import NS, audit_of, big_export, comparable, rich_namespace
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture
from tests.support.cli_helpers import run


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


def test_import_streams_the_body_chunk_by_chunk_like_the_cli(
        api: Api, tmp_path: Path) -> None:  # noqa: F811
    """A 20k-line upload is committed while it is still being sent (the resume marker
    advances before the client has sent the second half), and ends as the CLI's import
    of the same file does: the same records, audit and report."""
    out = tmp_path / "big.jsonl"
    records, audit = big_export(out, 10_000)
    lines = out.read_text().splitlines()
    assert len(lines) >= 20_000
    export_id = json.loads(lines[0])["export_id"]
    store = MemoryStore.from_url(api.redis_url)
    admin = api.key("*", role="admin")
    seen_mid_upload: list[int] = []

    def body() -> Iterator[bytes]:
        half = len(lines) // 2
        for start in range(0, len(lines), 250):
            if start >= half and not seen_mid_upload:
                # Half the file is sent: the server must have committed some of it.
                deadline = time.monotonic() + 60
                while (done := store.imports.progress("http", export_id)) < 500:
                    assert time.monotonic() < deadline, "nothing committed mid-upload"
                    time.sleep(0.02)
                seen_mid_upload.append(done)
            yield ("\n".join(lines[start:start + 250]) + "\n").encode()

    response = api.call("POST", "/v1/namespaces/http/import", admin, content=body(),
                        timeout=300)
    assert response.status_code == 200, response.text
    assert 500 <= seen_mid_upload[0] <= len(lines) // 2
    by_cli = run(api.redis_url, "import", str(out), "--namespace", "cli", "--json")
    assert by_cli.exit_code == 0, by_cli.output
    http_report, cli_report = response.json(), json.loads(by_cli.stdout)
    assert {**http_report, "namespace": "cli"} == cli_report
    assert http_report["added"] == len(records) and http_report["lines"] == len(lines)
    assert comparable(store, "http") == comparable(store, "cli") == records
    assert audit_of(store, "http") == audit_of(store, "cli")
    assert len(audit_of(store, "http")) == audit
    store.close()


def test_streamed_import_bad_line_keeps_earlier_chunks_and_resumes(
        api: Api, tmp_path: Path) -> None:  # noqa: F811
    """A bad line deep in an upload: a 422 naming it, the chunks before it committed;
    the fixed file sent again without resume is refused, with resume=true it completes."""
    out = tmp_path / "big.jsonl"
    records, _ = big_export(out, 1_000)
    lines = out.read_text().splitlines()
    broken = list(lines)
    broken[1500] = broken[1500].replace('"type":"audit"', '"type":"nonsense"', 1)
    assert broken[1500] != lines[1500]
    admin = api.key("*", role="admin")
    store = MemoryStore.from_url(api.redis_url)
    path = "/v1/namespaces/dst/import"
    bad = api.call("POST", path, admin, content="\n".join(broken) + "\n")
    assert bad.status_code == 422
    assert bad.json()["error"]["message"].startswith("line 1501: type")
    export_id = json.loads(lines[0])["export_id"]
    stopped = store.imports.progress("dst", export_id)
    assert 1 < stopped < 1501, "the chunks before the bad line are committed"
    fixed = "\n".join(lines) + "\n"
    refused = api.call("POST", path, admin, content=fixed)
    assert refused.status_code == 422 and f"stopped after line {stopped}" in refused.text
    resumed = api.call("POST", path, admin, params={"resume": "true"}, content=fixed)
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["resumed_after"] == stopped
    assert comparable(store, "dst") == records
    truncated = api.call("POST", "/v1/namespaces/cut/import", admin,
                         content="\n".join(lines[:-1]) + "\n")
    assert truncated.status_code == 422 and "truncated" in truncated.text
    long_line = api.call("POST", "/v1/namespaces/long/import", admin,
                         content=lines[0] + "\n" + "x" * (2 * 1024 * 1024))
    assert long_line.status_code == 422
    assert long_line.json()["error"]["message"].startswith("line 2: body: a line longer")
    store.close()
