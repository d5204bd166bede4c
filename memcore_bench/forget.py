"""``bench forget``: are requests to forget honoured inside the conversation
(docs/design.md, Forget on request)?

Input: a JSON list of cases (default ``memcore/data/forget_cases.json``, or ``--cases
FILE``). A case is ``{"name", "kind": "request" | "negative", "turns": [{"role",
"text"}], "secret": [...], "keep": [...]}``: ``secret`` strings must not survive a
request, ``keep`` strings must still be remembered. ``speaker`` and ``user_id`` are
optional (default ``Sam`` and ``sam``); other keys (notes, tags) are kept in the
per-case row and otherwise ignored.

Each case gets a fresh namespace. Its turns go through the real stack (``Client.add``
-> Celery ingest workers -> Redis), one turn per task, in order, each stamped a minute
after the one before (the cases advance together, one round of turns at a time); then
a consolidation pass runs. Judging uses this module's own rules, never the feature's
code, and compares case-insensitively (a secret string only where it is not part of a
longer run of letters and digits, so '43' is no hit inside a hex id; a keep string
anywhere):

- *request honoured*: no secret string in any live memory's text, in the texts of
  ``Client.search``'s top 10 for the secret, or in the value of any Redis key of the
  namespace (``mc:{ns}:*``; strings by GET, hashes by HGETALL, lists by LRANGE, sets by
  SMEMBERS, sorted sets by ZRANGE, streams by XRANGE). Keys outside every namespace (the
  broker's and the result backend's) are scanned too and their hits counted apart
  (``outside_key_hits``).
- *request stored as a fact*: a live memory of a request case containing one of the
  words forget/forgot/delete/remove/erase (any ending); ``requests_stored_as_facts_broad``
  also counts scratch/remember/keep/told/ask(s) (tests/ingest/test_forget.py's list).
- *over-deletion*: a keep string in no live memory. Each is split into ``keep_lost``
  (some live memory held it after one of the case's turns) and ``keep_never_stored``
  (none ever did: an extraction miss, not an erase).
- *negative kept*: a negative case with every keep string live; ``negatives_read_as_
  requests`` counts negatives whose audit has a forget request (``forget_audits``: the
  ERASE entries "forget request on the request of <turn>", one per request read).

recall = requests honoured / requests; precision = cases without a lost keep string /
cases (an innocent memory erased is a lost keep string).

Run: ``memcore bench forget --out bench/forget.json`` (``--cases FILE``).
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import redis

from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.core.models import AuditAction, Role
from memcore_bench.common import (
    machine,
    markdown_table,
    models_env,
    running_stack,
    task_timeout,
    write_outputs,
)

CONTRACT_KEYS = ("cases", "requests", "requests_honoured", "negatives", "negatives_kept",
                 "over_deletions", "requests_stored_as_facts", "key_scan_hits", "recall",
                 "precision", "per_case")
KINDS = ("request", "negative")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
REQUEST_WORDS = re.compile(r"\b(forget|forgot|delet|remov|eras)[a-z]*", re.IGNORECASE)
BROAD_REQUEST_WORDS = re.compile(
    r"\b(forget|forgot|delet|remov|eras|scratch|remember|keep|told|asks?\b)[a-z]*",
    re.IGNORECASE)
"""tests/ingest/test_forget.py's request words: a looser count of request-like live memories."""
SEARCH_K = 10


@dataclass
class Case:
    """One case: turns, the strings that must go and the strings that must stay."""

    name: str
    kind: str
    turns: list[dict[str, str]]
    secret: list[str]
    keep: list[str]
    speaker: str = "Sam"
    user_id: str = "sam"
    extra: dict[str, Any] = field(default_factory=dict)
    namespace: str = ""


def _strings(raw: Any, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(s, str) and s.strip() for s in raw):
        raise ValueError(f"{where}: expected a list of non-empty strings")
    return [s.strip() for s in raw]


def parse_case(data: Any, where: str) -> Case:
    """A case from its JSON object (an error names the bad field)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an object")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}.name: expected a non-empty string")
    kind = data.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}.kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    turns = data.get("turns")
    if not isinstance(turns, list) or not turns:
        raise ValueError(f"{where}.turns: expected a non-empty list")
    checked = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            raise ValueError(f"{where}.turns[{i}]: expected an object")
        try:
            role = Role(str(turn.get("role", "user")))
        except ValueError as exc:
            raise ValueError(f"{where}.turns[{i}].role: {exc}") from exc
        text = turn.get("text", turn.get("content"))
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}.turns[{i}].text: expected a non-empty string")
        checked.append({"role": role.value, "text": text})
    secret = _strings(data.get("secret"), f"{where}.secret")
    keep = _strings(data.get("keep"), f"{where}.keep")
    if kind == "request" and not secret:
        raise ValueError(f"{where}.secret: a request case needs at least one secret string")
    extra = {k: v for k, v in data.items()
             if k not in {"name", "kind", "turns", "secret", "keep", "speaker", "user_id"}}
    return Case(name=name, kind=str(kind), turns=checked, secret=secret, keep=keep,
                speaker=str(data.get("speaker") or "Sam"),
                user_id=str(data.get("user_id") or "sam"), extra=extra)


def load_cases(path: Path | None = None) -> list[Case]:
    """The cases in ``path`` (default: the bundled ``memcore/data/forget_cases.json``)."""
    if path is None:
        resource = resources.files("memcore.data").joinpath("forget_cases.json")
        if not resource.is_file():
            raise ValueError("no bundled memcore/data/forget_cases.json: pass --cases FILE")
        text, origin = resource.read_text(encoding="utf-8"), "forget_cases.json"
    else:
        if not Path(path).is_file():
            raise ValueError(f"--cases: {path} is not a file")
        text, origin = Path(path).read_text(encoding="utf-8"), str(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{origin}: invalid JSON ({exc})") from exc
    if isinstance(data, Mapping) and isinstance(data.get("cases"), list):
        data = data["cases"]  # {"cases": [...]} is accepted too
    if not isinstance(data, list) or not data:
        raise ValueError(f"{origin}: expected a non-empty JSON list of cases")
    cases = [parse_case(c, f"{origin}[{i}]") for i, c in enumerate(data)]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"{origin}: two cases share a name")
    return cases


def messages(case: Case) -> list[dict[str, Any]]:
    """The case's turns as ``Client.add`` messages, a minute apart."""
    return [{"role": t["role"], "content": t["text"],
             "timestamp": T0 + timedelta(minutes=i),
             "speaker": case.speaker if t["role"] == Role.USER.value else t["role"]}
            for i, t in enumerate(case.turns)]


def contains(haystack: str, needle: str) -> bool:
    """``needle`` in ``haystack``, case-insensitively (keep strings: any substring)."""
    return needle.casefold() in haystack.casefold()


# A task or memory id written as a UUID: its hyphens split it into runs a short secret
# ('4471') can equal by chance ('cbf06589-4471-4f48-...').
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def has_secret(haystack: str, secret: str) -> bool:
    """``secret`` in ``haystack``, case-insensitively, not inside a longer run of letters
    and digits: a short secret ('43', '512') is no hit inside a hex id or a UUID."""
    hay = haystack.casefold()
    if not _UUID.fullmatch(secret.casefold()):
        hay = _UUID.sub(" ", hay)
    return re.search(r"(?<![^\W_])" + re.escape(secret.casefold()) + r"(?![^\W_])",
                     hay) is not None


def key_values(client: redis.Redis, key: bytes) -> list[bytes]:
    """Every byte string a key holds (its members, fields and values, by type)."""
    kind = client.type(key)
    if kind == b"string":
        return [client.get(key) or b""]
    if kind == b"hash":
        return [b for kv in client.hgetall(key).items() for b in kv]
    if kind == b"list":
        return list(client.lrange(key, 0, -1))
    if kind == b"set":
        return list(client.smembers(key))
    if kind == b"zset":
        return list(client.zrange(key, 0, -1))
    if kind == b"stream":
        return [b for _, fields in client.xrange(key) for kv in fields.items() for b in kv]
    return []


def scan_keys(client: redis.Redis, pattern: str, needles: Sequence[str]
              ) -> dict[str, list[str]]:
    """``{needle: [keys whose values hold it]}`` over the keys matching ``pattern``."""
    hits: dict[str, list[str]] = {n: [] for n in needles}
    for key in client.scan_iter(match=pattern, count=1000):
        blob = b"\0".join(key_values(client, key)).decode("utf-8", "replace")
        for needle in needles:
            if has_secret(blob, needle):
                hits[needle].append(key.decode("utf-8", "replace"))
    return hits


def live_texts(client: Client, ns: str) -> list[str]:
    """The namespace's live memories' texts."""
    return [m.text for m in client.store.records.iter_memories(ns, vectors=False) if m.live]


def _secret_findings(case: Case, live: Sequence[str],
                     searched: Mapping[str, Sequence[str]],
                     key_hits: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Where the case's secrets survived: live memories, search results, stored keys."""
    secret_keys = {s: list(keys) for s, keys in key_hits.items() if keys}
    return {
        "secret_live": [s for s in case.secret if any(has_secret(t, s) for t in live)],
        "secret_in_search": [s for s in case.secret
                             if any(has_secret(t, s) for t in searched[s])],
        "secret_in_keys": secret_keys,
        "key_scan_hits": sum(map(len, secret_keys.values())),
    }


def _keep_findings(keep: Sequence[str], live: Sequence[str],
                   ever_live: set[str]) -> dict[str, Any]:
    """The keep strings missing at the end, split into lost (once live) and never stored."""
    missing = [k for k in keep if not any(contains(t, k) for t in live)]
    lost = [k for k in missing if k in ever_live]
    return {"keep_missing": missing, "keep_lost": lost,
            "keep_never_stored": [k for k in missing if k not in lost], "kept": not missing}


def _request_facts(case: Case, live: Sequence[str], words: re.Pattern[str]) -> list[str]:
    """A request case's live memories that read like the request itself (``words``)."""
    if case.kind != "request":
        return []
    return [t for t in live if words.search(t)]


def judge(case: Case, live: Sequence[str], searched: Mapping[str, Sequence[str]],
          key_hits: Mapping[str, Sequence[str]], ever_live: set[str],
          forget_audits: int) -> dict[str, Any]:
    """One case's row (module docstring)."""
    secrets = _secret_findings(case, live, searched, key_hits)
    honoured = not (secrets["secret_live"] or secrets["secret_in_search"]
                    or secrets["secret_in_keys"])
    return {
        "kind": case.kind, "turns": len(case.turns), "secret": case.secret,
        "keep": case.keep, "honoured": honoured if case.kind == "request" else None,
        **secrets, **_keep_findings(case.keep, live, ever_live),
        "request_facts": _request_facts(case, live, REQUEST_WORDS),
        "request_facts_broad": _request_facts(case, live, BROAD_REQUEST_WORDS),
        "forget_audits": forget_audits,
        "live": list(live), **({"extra": case.extra} if case.extra else {}),
    }


def _count(rows: Sequence[Mapping[str, Any]], key: str) -> int:
    """How many rows have a truthy ``key``."""
    return sum(1 for p in rows if p[key])


def _total_len(rows: Sequence[Mapping[str, Any]], key: str) -> int:
    """The summed lengths of the rows' ``key`` lists."""
    return sum(len(p[key]) for p in rows)


def totals(per: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The run's figures over the judged cases."""
    rows = list(per.values())
    requests = [p for p in rows if p["kind"] == "request"]
    negatives = [p for p in rows if p["kind"] == "negative"]
    honoured = _count(requests, "honoured")
    lost_cases = _count(rows, "keep_lost")
    return {
        "cases": len(per), "requests": len(requests), "requests_honoured": honoured,
        "negatives": len(negatives),
        "negatives_kept": _count(negatives, "kept"),
        "negatives_read_as_requests": _count(negatives, "forget_audits"),
        "keep_strings": _total_len(rows, "keep"),
        "over_deletions": _total_len(rows, "keep_missing"),
        "keep_lost": _total_len(rows, "keep_lost"),
        "keep_never_stored": _total_len(rows, "keep_never_stored"),
        "requests_stored_as_facts": _count(requests, "request_facts"),
        "requests_stored_as_facts_broad": sum(1 for p in requests
                                              if p.get("request_facts_broad")),
        "key_scan_hits": sum(p["key_scan_hits"] for p in rows),
        "secret_live": _total_len(rows, "secret_live"),
        "secret_in_search": _total_len(rows, "secret_in_search"),
        "recall": honoured / len(requests) if requests else 0.0,
        "precision": (len(per) - lost_cases) / len(per) if per else 0.0,
    }


def _name_namespaces(cases: Sequence[Case]) -> None:
    """Give every case a namespace of its own, fresh for this run."""
    run = uuid.uuid4().hex[:8]
    for i, case in enumerate(cases):
        case.namespace = f"forget-{run}-{i:03d}"


def _note_live_keeps(client: Client, case: Case, seen: set[str]) -> None:
    """Add to ``seen`` the case's keep strings that are live now."""
    live = live_texts(client, case.namespace)
    seen.update(k for k in case.keep if any(contains(t, k) for t in live))


def _add_turns(client: Client, cases: Sequence[Case], timeout: float) -> dict[str, set[str]]:
    """Add every case's messages in lockstep, one per case per round; return per case the
    keep strings that were live after any round (to tell lost from never stored)."""
    ever_live: dict[str, set[str]] = {c.name: set() for c in cases}
    queues = [messages(c) for c in cases]
    for i in range(max(len(q) for q in queues)):
        active = [(c, q[i]) for c, q in zip(cases, queues, strict=True) if i < len(q)]
        ids: list[str] = []
        for c, message in active:
            ids += client.add(c.namespace, [message], user_id=c.user_id)
        client.wait(ids, timeout=timeout)
        for c, _ in active:
            _note_live_keeps(client, c, ever_live[c.name])
    return ever_live


def _forget_audits(client: Client, namespace: str) -> int:
    """The namespace's erasures done on a forget request."""
    return sum(1 for e in client.store.audit.tail(namespace, 500)
               if e.action is AuditAction.ERASE
               and e.reason.startswith("forget request on the request of"))


def _judge_case(client: Client, raw: redis.Redis, case: Case, ever_live: set[str],
                timeout: float) -> dict[str, Any]:
    """Consolidate the case's namespace an hour after its last turn, then judge it."""
    last = T0 + timedelta(minutes=len(case.turns))
    if client.store.records.has_namespace(case.namespace):
        client.consolidate(case.namespace, now=last + timedelta(hours=1), timeout=timeout)
    live = live_texts(client, case.namespace)
    searched = {s: [h.memory.text for h in client.search(
        case.namespace, s, k=SEARCH_K, touch=False)] for s in case.secret}
    hits = scan_keys(raw, f"mc:{{{case.namespace}}}:*", case.secret)
    return judge(case, live, searched, hits, ever_live, _forget_audits(client, case.namespace))


def _outside_hits(raw: redis.Redis, secrets: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """The broker's and result backend's keys (outside every namespace) holding a secret."""
    outside: dict[str, dict[str, list[str]]] = {}
    for key in raw.scan_iter(count=1000):
        name = key.decode("utf-8", "replace")
        if name.startswith("mc:"):
            continue
        blob = b"\0".join(key_values(raw, key)).decode("utf-8", "replace")
        for s in secrets:
            if has_secret(blob, s):
                outside.setdefault(s, {}).setdefault("keys", []).append(name)
    return outside


def _run_cases(client: Client, settings: Settings, cases: Sequence[Case], timeout: float
               ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, list[str]]]]:
    """Ingest and judge every case; return the per-case rows and the outside key hits."""
    ever_live = _add_turns(client, cases, timeout)
    # A connection of the bench's own to read every key as stored (an inspection,
    # like the security tests' scans; memcore itself reads data via the store).
    raw: redis.Redis = redis.Redis.from_url(settings.data_url())
    per = {c.name: _judge_case(client, raw, c, ever_live[c.name], timeout) for c in cases}
    outside = _outside_hits(raw, sorted({s for c in cases for s in c.secret}))
    raw.close()
    return per, outside


def _result(per: dict[str, dict[str, Any]], outside: dict[str, dict[str, list[str]]],
            cases_path: Path | None, t0: float, models: str = "offline") -> dict[str, Any]:
    """The totals plus the run's per-case rows and description."""
    result: dict[str, Any] = totals(per)
    result["outside_key_hits"] = sum(len(v["keys"]) for v in outside.values())
    result["outside_keys"] = outside
    result["per_case"] = per
    result["cases_file"] = str(cases_path) if cases_path else "memcore/data/forget_cases.json"
    result["turns"] = sum(p["turns"] for p in per.values())
    result["seconds"] = time.perf_counter() - t0
    result["models"] = models
    result["embedder"] = "hash"
    result["machine"] = machine()
    return result


def run_forget(*, cases_path: Path | None = None, out: Path | None = None,
               redis_url: str | None = None, timeout: float | None = None,
               models: str = "offline") -> dict[str, Any]:
    """Run every case through a stack, judge it, write ``out`` (+ .md). ``models``:
    ``offline`` rules, or ``openai`` (the ``MEMCORE_OPENAI_*`` endpoint extracts and
    decides; the erase path is the same)."""
    cases = load_cases(cases_path)
    _name_namespaces(cases)
    env = {"MEMCORE_EMBEDDER": "hash", "MEMCORE_EXTRACTOR": "auto", **models_env(models)}
    timeout = timeout if timeout is not None else task_timeout(models, 300.0)
    t0 = time.perf_counter()
    with running_stack(redis_url, ingest_concurrency=2, env=env) as stack:
        settings = Settings(redis_url=stack.redis_url, embedder="hash",
                            **({"openai_api_key": None} if models == "offline" else {}))
        client = Client(settings=settings)
        try:
            per, outside = _run_cases(client, settings, cases, timeout)
        finally:
            gc.collect()  # drop finished AsyncResults while their backend is still up
            client.close()
    result = _result(per, outside, cases_path, t0, models)
    if out is not None:
        write_outputs(result, Path(out), markdown(result))
    return result


def _cell(values: Sequence[str]) -> str:
    return "; ".join(v.replace("|", "/") for v in values) or ""


def markdown(result: Mapping[str, Any]) -> str:
    """Totals, then one row per case and the live memories of every failing case."""
    head = ("requests honoured", "negatives kept", "over-deletions (lost / never stored)",
            "requests stored as facts", "key-scan hits", "recall", "precision")
    row = (f"{result['requests_honoured']} / {result['requests']}",
           f"{result['negatives_kept']} / {result['negatives']}",
           f"{result['over_deletions']} ({result['keep_lost']} / "
           f"{result['keep_never_stored']}) of {result['keep_strings']}",
           result["requests_stored_as_facts"], result["key_scan_hits"],
           result["recall"], result["precision"])
    per = [(name, p["kind"], p["turns"],
            "" if p["honoured"] is None else ("yes" if p["honoured"] else "NO"),
            _cell(p["secret_live"]), _cell(p["secret_in_search"]), p["key_scan_hits"],
            _cell(p["keep_lost"]), _cell(p["keep_never_stored"]), len(p["request_facts"]),
            p["forget_audits"])
           for name, p in result["per_case"].items()]
    failing = [f"- {name} ({p['kind']}): " + (" / ".join(p["live"]) or "(no live memory)")
               for name, p in result["per_case"].items()
               if p["honoured"] is False or p["keep_missing"] or p["request_facts"]
               or (p["kind"] == "negative" and p["forget_audits"])]
    m = result["machine"]
    return "\n".join([
        f"# bench forget ({result['models']} models, {result['embedder']} embedder)", "",
        f"{result['cases']} cases ({result['requests']} requests, {result['negatives']} "
        f"negatives), {result['turns']} turns from {result['cases_file']}; "
        f"{result['seconds']:.0f} s on {m['cores']} cores. Negatives read as requests: "
        f"{result['negatives_read_as_requests']}. Secret strings in keys outside the "
        f"namespaces (broker, results): {result['outside_key_hits']}. Requests with a "
        f"request-like live memory by the broader word list (scratch, remember, keep, told, "
        f"ask): {result['requests_stored_as_facts_broad']}.", "",
        markdown_table(head, [row]), "",
        markdown_table(("case", "kind", "turns", "honoured", "secret live",
                        "secret in search top 10", "key hits", "keep lost",
                        "keep never stored", "request facts", "forget audits"), per), "",
        "## Live memories of the cases with a failure", "", *(failing or ["(none)"]), ""])


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``python -m memcore_bench.forget --out FILE [--cases FILE]``."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, default=None)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--models", default="offline", help="offline | openai")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = run_forget(cases_path=args.cases, out=args.out, redis_url=args.redis_url,
                        models=args.models)
    print(json.dumps({k: result[k] for k in CONTRACT_KEYS if k != "per_case"}), flush=True)
    return result


if __name__ == "__main__":
    main()
