"""Run the app under uvicorn: in the foreground (``memcore serve``) or in a thread."""

from __future__ import annotations

import os
import threading
import time
from types import TracebackType

import uvicorn
from fastapi import FastAPI

from memcore.api import processes
from memcore.api.app import create_app
from memcore.client.client import Client
from memcore.core.config import Settings, get_settings

# Set only by serve() for the worker processes it starts itself.
_INSECURE_ENV = "_MEMCORE_API_INSECURE_DEV"


def make_server(settings: Settings, host: str, port: int, *, insecure_dev: bool = False,
                client: Client | None = None, log_level: str = "info",
                access_log: bool = True) -> uvicorn.Server:
    """A configured uvicorn server for the app (not started)."""
    app = create_app(settings, client=client, insecure_dev=insecure_dev)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                            access_log=access_log, server_header=False,
                            timeout_graceful_shutdown=10)
    return uvicorn.Server(config)


def serve(settings: Settings, host: str, port: int, *, workers: int = 1,
          insecure_dev: bool = False, log_level: str = "info") -> None:
    """Serve in the foreground until SIGINT/SIGTERM; ``workers`` > 1 starts that many
    processes on the same port (each with its own Client and index cache), the parent
    handing them connections in turn where the platform can pass sockets between
    processes (:mod:`memcore.api.processes`)."""
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    if workers == 1:
        make_server(settings, host, port, insecure_dev=insecure_dev, log_level=log_level).run()
        return
    # Worker processes read their settings from the environment, like any memcore process.
    os.environ["MEMCORE_REDIS_URL"] = settings.data_url()
    if insecure_dev:
        os.environ[_INSECURE_ENV] = "1"
    else:
        os.environ.pop(_INSECURE_ENV, None)
    if processes.supported() and settings.api.hand_connections:
        # The parent accepts and hands connections to the processes in turn.
        processes.serve_processes(host, port, workers, log_level)
        return
    uvicorn.run("memcore.api.server:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level=log_level, server_header=False,
                timeout_graceful_shutdown=10)


def app_from_env() -> FastAPI:
    """The app of one worker process started by :func:`serve` with ``workers`` > 1."""
    return create_app(get_settings(), insecure_dev=os.environ.get(_INSECURE_ENV) == "1")


class ServerThread:
    """The API served from a background thread (tests, benchmarks, ``memcore up``)."""

    def __init__(self, settings: Settings, host: str = "127.0.0.1", port: int = 0, *,
                 insecure_dev: bool = False, client: Client | None = None,
                 log_level: str = "warning") -> None:
        self.server = make_server(settings, host, port, insecure_dev=insecure_dev,
                                  client=client, log_level=log_level, access_log=False)
        self.host = host
        self.thread = threading.Thread(target=self.server.run, name="memcore-api", daemon=True)

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        return int(self.server.servers[0].sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        """Base URL of the running server."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Start and wait until it accepts connections."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the API server did not start")
            time.sleep(0.02)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """Ask uvicorn to exit and wait for it."""
        self.server.should_exit = True
        self.thread.join(timeout=timeout)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
