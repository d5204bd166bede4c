"""A closed-loop HTTP load generator that costs the server as little CPU as possible.

``bench api`` measures a server sharing two cores with Redis, the workers and the load
generator itself, so the generator's own CPU per request is taken from the server. An
httpx client in the benchmark's process spends about as much per request as the
server's request handling (and its latencies include waiting for its own GIL). This
one runs in a separate process (see :func:`run_in_process`), keeps ``concurrency``
keep-alive HTTP/1.1 connections, writes requests encoded once in advance, and reads
replies by ``Content-Length``: tens of microseconds per request. It reports its own
CPU time so that the share it took is visible in the results (the replies kept with
``keep_replies`` are decoded after the run: neither that time nor that CPU is counted,
and it takes none of the cores from the server while it is measured).

Each of the ``concurrency`` clients sends its next request as soon as its previous
reply arrived (closed loop), until ``total`` requests were sent.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class LoadResult:
    """Latencies (seconds, in completion order), wall time, the generator's CPU seconds,
    and the decoded JSON replies (only if ``keep_replies``)."""

    latencies: list[float]
    wall: float
    cpu: float
    replies: list[Any] = field(default_factory=list)


def encode_requests(host: str, port: int, key: str, method: str, path: str,
                    bodies: list[Any]) -> list[bytes]:
    """Each body as a complete HTTP/1.1 request (JSON, bearer key, keep-alive)."""
    out = []
    for body in bodies:
        payload = json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n").encode("latin-1")
        out.append(head + payload)
    return out


async def _read_reply(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        lowered = name.strip().lower()
        if lowered == "content-length":
            length = int(value.strip())
        elif lowered == "transfer-encoding" and "chunked" in value.lower():
            raise RuntimeError("chunked replies are not supported by the load generator")
    body = await reader.readexactly(length) if length else b""
    return status, body


async def drive(host: str, port: int, requests: list[bytes], concurrency: int, *,
                keep_replies: bool = False) -> LoadResult:
    """Send ``requests`` (in order) from ``concurrency`` closed-loop connections."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    latencies: list[float] = []
    bodies: list[bytes] = []
    position = 0

    async def client() -> None:
        nonlocal position
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while position < len(requests):
                request = requests[position]
                position += 1
                t0 = time.perf_counter()
                writer.write(request)
                status, body = await _read_reply(reader)
                latencies.append(time.perf_counter() - t0)
                if status >= 400:
                    raise RuntimeError(f"HTTP {status}: {body[:500].decode(errors='replace')}")
                if keep_replies:
                    bodies.append(body)  # decoded after the run: not the load's CPU
        finally:
            writer.close()

    cpu0 = time.process_time()
    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return LoadResult(latencies, wall, cpu, [json.loads(body) for body in bodies])


def _child(host: str, port: int, requests: list[bytes], concurrency: int,
           keep_replies: bool) -> LoadResult:
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:  # plain asyncio works, at a little more CPU per request
        runner = asyncio.run
    return runner(drive(host, port, requests, concurrency, keep_replies=keep_replies))


def run_in_process(host: str, port: int, requests: list[bytes], concurrency: int, *,
                   keep_replies: bool = False) -> LoadResult:
    """:func:`drive` in a fresh (spawned) process, so it holds no GIL the caller needs
    and its CPU time is its own."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        result: LoadResult = pool.apply(_child, (host, port, requests, concurrency,
                                                 keep_replies))
    return result
