"""Transcript for notes/issue31_ops.md: a 429 under a per-key rate limit, shared by two
`memcore serve` processes on one real redis-server.

Run: PYTHONPATH=. .venv/bin/python notes/issue31_ops_demo.py (from the repository root)."""

from __future__ import annotations

import time
from contextlib import ExitStack

import httpx
import redis

from memcore.local.redis_server import running_redis
from memcore.store.api_keys import ApiKeyRepository
from tests.api_helpers import serve_process


def main() -> None:
    with running_redis() as server, ExitStack() as stack:
        env = {"MEMCORE_API__KEY_REQUESTS_PER_SECOND": "2"}
        bases = [stack.enter_context(serve_process(server.url, env)) for _ in range(2)]
        keys = ApiKeyRepository(redis.Redis.from_url(server.url))
        key = keys.create(["alice"], "read", "demo")[1]
        other = keys.create(["alice"], "read", "other")[1]
        print("MEMCORE_API__KEY_REQUESTS_PER_SECOND=2, two server processes:", bases)
        with httpx.Client(timeout=30) as http:
            start = time.monotonic()
            for i in range(6):
                base = bases[i % 2]
                r = http.get(f"{base}/v1/namespaces/alice/memories",
                             headers={"Authorization": f"Bearer {key}"})
                extra = (f" Retry-After: {r.headers['Retry-After']} {r.text}"
                         if r.status_code == 429 else "")
                print(f"t={time.monotonic() - start:5.3f}s key A -> process {i % 2 + 1}: "
                      f"{r.status_code}{extra}")
            r = http.get(f"{bases[1]}/v1/namespaces/alice/memories",
                         headers={"Authorization": f"Bearer {other}"})
            print(f"key B -> process 2: {r.status_code}")
            time.sleep(1)
            r = http.get(f"{bases[0]}/v1/namespaces/alice/memories",
                         headers={"Authorization": f"Bearer {key}"})
            print(f"after Retry-After, key A -> process 1: {r.status_code}")


if __name__ == "__main__":
    main()
