"""Unknown query parameters are refused with a 400 naming them, not ignored.

Seen before: ``GET /v1/namespaces/{ns}/profile?filters=...`` answered 200 with the whole
profile, unfiltered (the route takes no filters), and a misspelled ``limt`` on a listing
gave the default page size; neither said a word.
"""

from __future__ import annotations

from tests.support.api_helpers import Api, api  # noqa: F401 - the fixture


def test_unknown_query_parameters_are_named(api: Api) -> None:  # noqa: F811
    key = api.key("q", role="read")
    base = "/v1/namespaces/q"
    answer = api.call("GET", f"{base}/profile", key, params={"filters": '{"user_id": "a"}'})
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    print(f"\n[query params] profile?filters=... -> {answer.status_code}: {error['message']}")
    assert error["field"] == "query.filters" and "filters" in error["message"]
    assert "this route takes: as_of" in error["message"]
    typo = api.call("GET", f"{base}/memories", key, params={"limt": "5", "status": "active"})
    assert typo.status_code == 400 and typo.json()["error"]["field"] == "query.limt", typo.text
    assert "limit" in typo.json()["error"]["message"]  # what it takes is listed
    fine = api.call("GET", f"{base}/memories", key, params={"limit": "5", "status": "active"})
    assert fine.status_code == 200, fine.text
    # The search's shortcut (a cached key) checks it too.
    for _ in range(2):
        assert api.call("POST", f"{base}/search", key, json={"query": "tea"}).status_code == 200
    stray = api.call("POST", f"{base}/search", key, params={"k": "3"}, json={"query": "tea"})
    assert stray.status_code == 400 and stray.json()["error"]["field"] == "query.k", stray.text
    # Authentication comes first: no key, no hint about the route.
    assert api.call("GET", f"{base}/profile", params={"filters": "x"}).status_code == 401
