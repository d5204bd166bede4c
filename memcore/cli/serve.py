"""``memcore serve``: the HTTP API."""

from __future__ import annotations

import typer

from memcore.cli.common import EXIT_NO_REDIS, NO_URL, fail, handles_errors, state


@handles_errors
def serve(host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
          port: int = typer.Option(8080, "--port", min=0, max=65535, help="TCP port."),
          workers: int = typer.Option(1, "--workers", min=1,
                                      help="Server processes (about one per core)."),
          insecure_dev: bool = typer.Option(
              False, "--insecure-dev",
              help="No authentication at all: every caller is admin over every namespace. "
                   "For a laptop only."),
          log_level: str = typer.Option("info", "--log-level",
                                        help="uvicorn log level (debug, info, warning).")) -> None:
    """Serve the HTTP API (JSON under /v1; docs at /docs; /healthz, /readyz, /metrics).

    Settings come from MEMCORE_* variables (limits: MEMCORE_API__*). Every /v1 request
    needs an API key from `memcore keys create` unless --insecure-dev is given.
    """
    from memcore.api.app import INSECURE_BANNER
    from memcore.api.server import serve as run_server
    from memcore.core.config import get_settings

    settings = get_settings()
    url = state().redis_url or settings.redis_url
    if not url:
        fail(NO_URL, EXIT_NO_REDIS)
    settings = settings.model_copy(update={"redis_url": url})
    if insecure_dev:
        bar = "!" * 78
        typer.echo(f"{bar}\n{INSECURE_BANNER}\n{bar}", err=True)
    typer.echo(f"memcore API on http://{host}:{port}/  (docs: /docs)", err=True)
    run_server(settings, host, port, workers=workers, insecure_dev=insecure_dev,
               log_level=log_level)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command()(serve)
