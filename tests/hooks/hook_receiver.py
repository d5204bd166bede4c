"""A real HTTP receiver for webhook tests: ``http.server`` in a thread, recording every
request, that can answer errors or go away (its port closed) and come back."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memcore.local.redis_server import free_port


@dataclass(frozen=True)
class Received:
    """One request as it arrived."""

    headers: dict[str, str]
    body: bytes
    at: float
    status: int
    """What the receiver answered."""

    @property
    def event(self) -> dict[str, Any]:
        """The JSON body."""
        return dict(json.loads(self.body))


class Receiver:
    """Records POSTs to ``url``; ``status`` is what it answers; ``down()`` closes the port
    (connection refused) until ``up()`` opens it again on the same port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.received: list[Received] = []
        self.status = 200
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def up(self) -> Receiver:
        """Listen (again)."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with owner._lock:
                    status = owner.status
                    owner.received.append(Received(dict(self.headers.items()), body,
                                                   time.monotonic(), status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def down(self) -> None:
        """Stop listening: deliveries now fail with connection refused."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def accepted(self) -> list[Received]:
        """The requests answered with a 2xx so far, in arrival order."""
        with self._lock:
            return [r for r in self.received if 200 <= r.status < 300]

    def wait_for(self, count: int, timeout: float = 60.0) -> list[Received]:
        """Block until ``count`` requests arrived; all of them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.05)
        raise AssertionError(f"{len(self.received)} of {count} deliveries arrived")
