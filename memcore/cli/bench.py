"""``memcore bench ...`` and ``memcore demo``: found in the ``memcore_bench`` package when the
``bench`` extra is installed; without it both commands say which extra to add (exit 2).

The benchmarks and the demo are dev tooling, not part of the runtime package: memcore
never imports ``memcore_bench`` but here, through :func:`memcore.core.extras.import_extra`.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from memcore.cli.common import EXIT_USAGE, fail, handles_errors
from memcore.core.extras import BENCH, MissingExtra, import_extra, installed

# Any words after the command: the message is the same, whatever was asked.
_ANY_ARGS = {"allow_extra_args": True, "ignore_unknown_options": True,
             "help_option_names": []}


def _missing(command: str) -> Callable[[typer.Context], None]:
    """A command that only says ``memcore <command>`` needs the bench extra."""

    @handles_errors
    def needs_bench(ctx: typer.Context) -> None:
        fail(str(MissingExtra(f"memcore {command}", BENCH)), EXIT_USAGE)

    # No brackets: the help is Rich markup, which would eat "[bench]".
    what = "Benchmarks" if command == "bench" else "The demo"
    needs_bench.__doc__ = f"{what}: not installed, needs the bench extra."
    return needs_bench


def register(app: typer.Typer) -> None:
    """Add ``bench`` and ``demo``: memcore_bench's commands, or the missing-extra ones."""
    if installed(BENCH):
        import_extra(BENCH, "memcore_bench.cli", "memcore bench").register(app)
        return
    for command in ("bench", "demo"):
        app.command(command, context_settings=_ANY_ARGS)(_missing(command))
