"""The ``memcore`` command line (Typer + Rich).

Commands live in small modules (``memcore/cli/*.py``), each with a ``register(app)``;
heavy imports (Celery, FAISS, matplotlib) happen inside the commands, so
``memcore --help`` stays fast.

Exit codes: 0 ok, 1 not found or a failed check, 2 usage error, 3 no Redis.
"""

from __future__ import annotations

import typer

from memcore.cli import (
    bench,
    calibrate,
    ingest,
    keys,
    manage,
    mcp_cmd,
    models,
    read,
    review,
    serve,
    stack,
)
from memcore.cli.common import CliState, set_state

app = typer.Typer(
    name="memcore",
    help="memcore: long-term memory for LLM agents (Redis + Celery + FAISS).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def root(redis_url: str | None = typer.Option(
             None, "--redis-url", metavar="URL",
             help="Redis to use (overrides MEMCORE_REDIS_URL).")) -> None:
    """memcore: long-term memory for LLM agents (Redis + Celery + FAISS)."""
    set_state(CliState(redis_url=redis_url))


for _module in (ingest, read, manage, review, stack, bench, calibrate, keys, serve, mcp_cmd,
                models):
    _module.register(app)


def main() -> None:
    """Console-script entry point (``memcore``)."""
    app()


if __name__ == "__main__":
    main()
