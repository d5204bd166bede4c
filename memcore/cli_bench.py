"""``memcore bench ...``: the benchmarks, each a thin command over memcore/bench/*.py.

Each command imports its benchmark module inside its body, so ``memcore --help``
stays fast. To add one (``bench locomo``, ``bench ingest``, ``bench footprint``),
write ``run_<name>(...)`` in memcore/bench/<name>.py and a command below that
imports it in its body, then list it in :func:`register` (see ``scale``).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from memcore.cli_common import handles_errors

bench_app = typer.Typer(help="Benchmarks (scale; locomo, ingest and footprint when added).",
                        no_args_is_help=True)


@handles_errors
def scale(n: int = typer.Option(100_000, "--n", min=100, help="Memories (rows)."),
          d: int = typer.Option(384, "--d", min=2, help="Vector dimension."),
          incremental: float = typer.Option(0.01, "--incremental",
                                            help="Share of new rows in the incremental pass."),
          quick: bool = typer.Option(False, "--quick", help="Shrink n to 3,000 (smoke run)."),
          out: Path | None = typer.Option(None, "--out", dir_okay=False,
                                          help="JSON result (plus .md and .png next to it).")
          ) -> None:
    """Partition vs exact all-pairs, and a full and an incremental offline pass."""
    from memcore.bench.scale import CONTRACT_KEYS, run_scale

    result = run_scale(n, d, incremental, quick, out)
    typer.echo(json.dumps({k: result[k] for k in CONTRACT_KEYS}))


# --- the benchmark helper adds its commands here ---------------------------------------
# e.g.
# @handles_errors
# def locomo(...) -> None:
#     from memcore.bench.locomo import run_locomo
#     ...


def register(app: typer.Typer) -> None:
    """Add the ``bench`` group (and its commands) to ``app``."""
    bench_app.command("scale")(scale)
    # bench_app.command("locomo")(locomo)
    # bench_app.command("ingest")(ingest)
    # bench_app.command("footprint")(footprint)
    app.add_typer(bench_app, name="bench")
