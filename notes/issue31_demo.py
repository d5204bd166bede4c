"""Transcript for notes/issue31.md: export, erase, import into another Redis; a SIGKILL
mid-import, then --resume. Real redis-servers and the real `memcore` command.

Run: PYTHONPATH=. .venv/bin/python notes/issue31_demo.py (from the repository root)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memcore.adapters import build_embedder
from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.core.models import Actor, Memory, Status
from memcore.local.redis_server import running_redis
from memcore.store import MemoryStore

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def memcore(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memcore.cli", "--redis-url", url, *args],
                          env=ENV, capture_output=True, text=True, check=False)


def load(store: MemoryStore, ns: str, n: int) -> None:
    texts = [f"fact number {i} about topic {i % 37}" for i in range(n)]
    vectors = build_embedder(Settings()).embed(texts)
    mems = [Memory(namespace=ns, text=t, vector=[float(x) for x in v], last_used=T0,
                   created_at=T0, updated_at=T0, status=Status.ACTIVE, sources=[f"e{i}"])
            for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]
    for start in range(0, n, 500):
        store.writes.add_new(ns, mems[start:start + 500], actor=Actor.USER, reason="load")


def main() -> None:
    work = Path(tempfile.mkdtemp())
    out = work / "acme.jsonl"
    with running_redis() as a, running_redis() as b:
        src, dst = Client(a.url), Client(b.url)
        load(src.store, "acme", 3000)
        first = next(iter(src.store.records.iter_memories("acme")))
        src.store.writes.tombstone("acme", first.id, T0, "deleted by the user")
        query = "topic 5"
        before = [(h.memory.id[:8], round(h.score, 6)) for h in
                  src.search("acme", query, k=3, now=T0, touch=False)]
        records = {m.id: m.model_dump(exclude={"namespace"})
                   for m in src.store.records.iter_memories("acme")}
        print("$ memcore export acme --out acme.jsonl --with-episodes")
        print(memcore(a.url, "export", "acme", "--out", str(out), "--with-episodes").stdout.strip())
        print("$ memcore erase acme --all --yes   (source deployment)")
        print(memcore(a.url, "erase", "acme", "--all", "--yes").stdout.strip())
        export_id = json.loads(out.read_text().split("\n", 1)[0])["export_id"]
        print(f"$ memcore --redis-url {'<other redis>'} import acme.jsonl --namespace acme "
              "--chunk 40   (SIGKILL once 1000 lines are in)")
        proc = subprocess.Popen([sys.executable, "-m", "memcore.cli", "--redis-url", b.url,
                                 "import", str(out), "--namespace", "acme", "--chunk", "40"],
                                env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while dst.store.imports.progress("acme", export_id) < 1000:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        print(f"killed: resume marker at line {dst.store.imports.progress('acme', export_id)}, "
              f"{sum(dst.store.records.count_by_status('acme').values())} memories stored")
        again = memcore(b.url, "import", str(out), "--namespace", "acme")
        print(f"$ memcore import acme.jsonl --namespace acme -> exit {again.returncode}: "
              f"{again.stderr.strip()}")
        resumed = memcore(b.url, "import", str(out), "--namespace", "acme", "--resume",
                          "--json")
        print("$ memcore import acme.jsonl --namespace acme --resume --json")
        print(resumed.stdout.strip())
        got = {m.id: m.model_dump(exclude={"namespace"})
               for m in dst.store.records.iter_memories("acme")}
        after = [(h.memory.id[:8], round(h.score, 6)) for h in
                 dst.search("acme", query, k=3, now=T0, touch=False)]
        print(f"records identical to the source's: {got == records} ({len(got)}); "
              f"statuses {dst.store.records.count_by_status('acme')}")
        print(f"search {query!r} before: {before}")
        print(f"search {query!r} after:  {after}")
        twice = json.loads(memcore(b.url, "import", str(out), "--namespace", "acme",
                                   "--json").stdout)
        print(f"a third run adds {twice['added']} memories, {twice['audit']} audit events")
        src.close()
        dst.close()


if __name__ == "__main__":
    main()
