"""``memcore export NS`` and ``memcore import FILE --namespace NS [--resume]``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import typer

from memcore.cli.common import (
    JSON_OPTION,
    console,
    emit_json,
    fail,
    handles_errors,
    open_client,
    parse_time,
    require_namespace,
)


@handles_errors
def export(namespace: str = typer.Argument(..., help="Namespace to export."),
           out: Path | None = typer.Option(None, "--out", "-o", dir_okay=False,
                                           help="File to write (default: stdout)."),
           with_episodes: bool = typer.Option(False, "--with-episodes",
                                              help="Also export the raw turns."),
           as_of: str | None = typer.Option(None, "--as-of",
                                            help="ISO time: only the memories valid then, "
                                                 "turns and audit up to then.")) -> None:
    """Write a namespace as a memcore-export JSONL file: memories of every status with
    their history and vectors, pins, scopes, metadata and the audit log (docs/operations.md:
    Export and import)."""
    from memcore.client.portability import export_lines

    client = open_client()
    try:
        require_namespace(client, namespace)
        lines = export_lines(client.store, namespace, with_episodes=with_episodes,
                             as_of=parse_time(as_of, "--as-of"))
        if out is None:
            for line in lines:
                sys.stdout.write(line + "\n")
            return
        count = 0
        partial = out.with_name(out.name + ".part")
        try:
            with partial.open("w", encoding="utf-8") as fh:
                for line in lines:
                    fh.write(line + "\n")
                    count += 1
            partial.replace(out)  # a half-written export never has the final name
        except OSError as exc:
            fail(f"--out: cannot write {out}: {exc.strerror or exc}")
        console().print(f"exported {namespace} to {out} ({count} lines)", highlight=False)
    finally:
        client.close()


@handles_errors
def import_(file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True,
                                        help="A memcore-export JSONL file."),
            namespace: str = typer.Option(..., "--namespace", "-n",
                                          help="Namespace to import into (the file's own "
                                               "is ignored)."),
            resume: bool = typer.Option(False, "--resume",
                                        help="Continue an import of this file that stopped."),
            chunk: int = typer.Option(500, "--chunk", min=1,
                                      help="Lines per commit (the resume granularity)."),
            json_out: bool = JSON_OPTION) -> None:
    """Import a memcore-export file into a namespace: ids kept (running it twice adds
    nothing), every line checked before the first is written, resumable after a kill."""
    from rich.progress import Progress

    from memcore.client.portability import import_lines

    def lines() -> Iterator[str]:
        with file.open(encoding="utf-8") as fh:
            for line in fh:
                yield line.rstrip("\n")

    client = open_client()
    try:
        with Progress(console=console(), disable=json_out, transient=False) as bar:
            task = bar.add_task(f"importing into {namespace}", total=None)

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            report = import_lines(client.store, namespace, lines, resume=resume, chunk=chunk,
                                  progress=advance)
    finally:
        client.close()
    if json_out:
        emit_json(report.as_dict())
    else:
        console().print(f"imported {file} into {namespace}: {report.added} memories added, "
                        f"{report.existing} already there, {report.episodes} episodes, "
                        f"{report.audit} audit events (resumed after line "
                        f"{report.resumed_after})", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``export`` and ``import`` to ``app``."""
    app.command()(export)
    app.command("import")(import_)
