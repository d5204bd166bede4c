"""Peak memory of a `memcore serve` process during a streamed HTTP import, for files of
growing size (notes/issue31_rest.md): the server's RSS is sampled every 10 ms while the
file is uploaded chunked; a server that read the body whole would grow with the file.

Run: PYTHONPATH=. nice -n 10 .venv/bin/python notes/issue31_import_rss.py [memories ...]
(from the repository root; default 5000 and 20000 memories: ~10k and ~40k lines)."""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import redis

from memcore.local.redis_server import running_redis
from memcore.store.api_keys import ApiKeyRepository
from tests.api_helpers import serve_process
from tests.test_portability import big_export


def server_process(base: str) -> psutil.Process:
    """The process listening on ``base``'s port."""
    port = int(base.rsplit(":", 1)[1])
    for conn in psutil.net_connections("tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN \
                and conn.pid is not None:
            return psutil.Process(conn.pid)
    raise RuntimeError(f"nothing listens on {base}")


def measure(memories: int, folder: Path) -> None:
    out = folder / f"export-{memories}.jsonl"
    big_export(out, memories)
    lines = out.read_text().splitlines()
    size = out.stat().st_size
    with running_redis() as server, serve_process(server.url) as base:
        key = ApiKeyRepository(redis.Redis.from_url(server.url)).create(["*"], "admin")[1]
        proc = server_process(base)
        httpx.get(f"{base}/readyz")
        before = proc.memory_info().rss
        peak = before
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, proc.memory_info().rss)
                time.sleep(0.01)

        def body() -> Iterator[bytes]:
            for start in range(0, len(lines), 250):
                yield ("\n".join(lines[start:start + 250]) + "\n").encode()

        sampler = threading.Thread(target=sample)
        sampler.start()
        started = time.monotonic()
        r = httpx.post(f"{base}/v1/namespaces/copy/import", content=body(), timeout=600,
                       headers={"Authorization": f"Bearer {key}"})
        seconds = time.monotonic() - started
        stop.set()
        sampler.join()
        report = r.json()
        print(json.dumps({"memories": memories, "lines": len(lines),
                          "file_mib": round(size / 2**20, 1), "status": r.status_code,
                          "added": report.get("added"), "seconds": round(seconds, 1),
                          "rss_before_mib": round(before / 2**20, 1),
                          "rss_peak_growth_mib": round((peak - before) / 2**20, 1)}))


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [5000, 20000]
    with tempfile.TemporaryDirectory() as folder:
        for memories in sizes:
            measure(memories, Path(folder))


if __name__ == "__main__":
    main()
