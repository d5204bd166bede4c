"""The ``memcore`` command line (Typer + Rich).

Commands live in small modules (``memcore/cli/*.py``), each with a ``register(app)``;
heavy imports (Celery, FAISS, matplotlib) happen inside the commands, so
``memcore --help`` stays fast.

Exit codes: 0 ok, 1 not found or a failed check, 2 usage error, 3 no Redis.
"""

from __future__ import annotations

import inspect

import typer

from memcore.cli import (
    bench,
    calibrate,
    hooks,
    ingest,
    keys,
    manage,
    mcp_cmd,
    models,
    portability,
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


for _module in (ingest, read, manage, review, stack, bench, calibrate, keys, hooks, serve,
                mcp_cmd, models, portability):
    _module.register(app)


def _reflow(doc: str) -> str:
    """A docstring's paragraphs each on one line: typer 0.29 keeps the single line
    breaks of every paragraph after the first, so `--help` showed ragged half-lines."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def _reflow_help(typer_app: typer.Typer) -> None:
    for command in typer_app.registered_commands:
        doc = command.help or (command.callback.__doc__ if command.callback else None)
        if doc:
            command.help = _reflow(doc)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _reflow_help(group.typer_instance)


_reflow_help(app)


def main() -> None:
    """Console-script entry point (``memcore``)."""
    app()


if __name__ == "__main__":
    main()
