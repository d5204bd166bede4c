"""``memcore ingest FILE``: JSONL turns or a LoCoMo conversation into a namespace."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from memcore.cli.common import JSON_OPTION, console, emit_json, fail, handles_errors, open_client

if TYPE_CHECKING:
    from memcore.client.client import Client
    from memcore.core.models import Episode


@handles_errors
def ingest(file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True,
                                       help="JSONL of turns, or a LoCoMo-format JSON file."),
           namespace: str = typer.Option(..., "--namespace", "-n", help="Target namespace."),
           wait: bool = typer.Option(True, "--wait/--no-wait",
                                     help="Wait for each session's ingest task before the next."),
           captions: bool = typer.Option(True, "--captions/--no-captions",
                                         help="LoCoMo: append image captions to the turn text."),
           timeout: float = typer.Option(600.0, "--timeout", min=1,
                                         help="Seconds to wait for each batch."),
           json_out: bool = JSON_OPTION) -> None:
    """Enqueue a conversation file's turns for ingestion (needs a running ingest worker).

    JSONL lines are {role, content|text, speaker?, timestamp?, id?, session?}; turns
    without a timestamp get the current time. LoCoMo files use dia_id as the episode
    id (D1:3 -> D1-3) and the session's date-time as timestamp. A batch refused
    because the ingest backlog is full is sent again after a wait, up to --timeout.
    """
    from memcore.core.config import get_settings
    from memcore.core.models import validate_namespace
    from memcore.devtools import conversation_files

    validate_namespace(namespace)
    batches = conversation_files.read_batches(file, captions=captions)
    # All or nothing: every turn is checked before the first is sent.
    episodes = conversation_files.validate(namespace, batches,
                                           max_turn_bytes=get_settings().max_turn_bytes)
    total = sum(len(b) for b in episodes)
    if total == 0:
        fail(f"{file}: no turns found")
    from memcore.client.errors import Backpressure, NoWorker

    client = open_client()
    try:
        task_ids = _run(client, namespace, episodes, wait, timeout, total, quiet=json_out)
    except NoWorker as exc:  # said within seconds, not after the whole timeout
        fail(f"ingest stopped: {exc}")
    except Backpressure as exc:  # the workers stayed behind for the whole timeout
        fail(f"ingest stopped: the backlog stayed full for {timeout:g} s: {exc}")
    except TimeoutError as exc:
        fail(f"ingest did not finish within {timeout:g} s (is an ingest worker running?): {exc}")
    summary = {"namespace": namespace, "file": str(file), "turns": total,
               "batches": len(episodes), "tasks": task_ids, "waited": wait}
    if json_out:
        emit_json(summary)
    else:
        console().print(f"{'ingested' if wait else 'enqueued'} {total} turns in "
                        f"{len(episodes)} batches into {namespace}")


def _run(client: Client, namespace: str, episodes: list[list[Episode]], wait: bool,
         timeout: float, total: int, quiet: bool) -> list[str]:
    from celery.exceptions import TimeoutError as CeleryTimeout
    from rich.progress import Progress

    from memcore.devtools.conversation_files import ingest_batches

    try:
        with Progress(console=console(), disable=quiet, transient=False) as progress:
            task = progress.add_task("ingesting" if wait else "enqueueing", total=total)
            return ingest_batches(
                client, namespace, episodes, wait=wait, timeout=timeout,
                progress=lambda n: progress.advance(task, n), fail_fast=True,
                on_wait=lambda exc, s: typer.echo(  # stderr: --json keeps stdout clean
                    f"backlog full, retrying in {s:.1f} s ({exc})", err=True))
    except CeleryTimeout as exc:
        raise TimeoutError(str(exc)) from exc


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to ``app``."""
    app.command()(ingest)
