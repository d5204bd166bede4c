"""``memcore ingest FILE``: JSONL turns (a chat history) or a LoCoMo conversation into a
namespace, through the normal ingest path, resumably."""

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
                                     help="Wait for each task before the next."),
           resume: bool = typer.Option(False, "--resume",
                                       help="Continue an ingest of this file that stopped."),
           chunk: int = typer.Option(256, "--chunk", min=1, max=256,
                                     help="Turns per task (the resume granularity)."),
           captions: bool = typer.Option(True, "--captions/--no-captions",
                                         help="LoCoMo: append image captions to the turn text."),
           timeout: float = typer.Option(600.0, "--timeout", min=1,
                                         help="Seconds to wait for each batch."),
           json_out: bool = JSON_OPTION) -> None:
    """Enqueue a conversation file's turns for ingestion (needs a running ingest worker).

    JSONL lines are {role, content|text, speaker?, timestamp?, id?, conversation?,
    session?, metadata?} (docs/operations.md: Bulk ingest of chat histories); turns without a
    timestamp get the current time, turns without an id one derived from their content,
    so a turn sent twice is stored once. LoCoMo files use dia_id as the episode id
    (D1:3 -> D1-3) and the session's date-time as timestamp. A task refused because the
    ingest backlog is full is sent again after a wait, up to --timeout. After each task
    is stored (--no-wait: enqueued) the resume marker mc:{ns}:ingest:<file id> moves on:
    a killed ingest goes on from there with --resume.
    """
    from memcore.client import conversation_files
    from memcore.core.config import get_settings
    from memcore.core.models import validate_namespace

    validate_namespace(namespace)
    batches = conversation_files.read_batches(file, captions=captions)
    # All or nothing: every turn is checked before the first is sent.
    episodes = conversation_files.validate(namespace, batches,
                                           max_turn_bytes=get_settings().max_turn_bytes)
    total = sum(len(b) for b in episodes)
    if total == 0:
        fail(f"{file}: no turns found")
    file_id = conversation_files.file_id(file)
    from memcore.client.errors import Backpressure, NoWorker

    client = open_client()
    try:
        done = client.store.ingest_marks.progress(namespace, file_id)
        if 0 < done < total and not resume:
            raise ValueError(f"an ingest of this file ({file_id}) into {namespace!r} stopped "
                             f"after turn {done} of {total}: run it again with --resume")
        start = done if resume else 0
        task_ids = _run(client, namespace, file_id, episodes, wait=wait, timeout=timeout,
                        total=total, start=start, chunk=chunk, quiet=json_out)
    except NoWorker as exc:  # said within seconds, not after the whole timeout
        fail(f"ingest stopped: {exc}")
    except Backpressure as exc:  # the workers stayed behind for the whole timeout
        fail(f"ingest stopped: the backlog stayed full for {timeout:g} s: {exc}")
    except TimeoutError as exc:
        fail(f"ingest did not finish within {timeout:g} s (is an ingest worker running?): {exc}")
    finally:
        client.close()
    summary = {"namespace": namespace, "file": str(file), "file_id": file_id, "turns": total,
               "resumed_after": start, "sent": total - start, "batches": len(episodes),
               "tasks": task_ids, "waited": wait}
    if json_out:
        emit_json(summary)
    else:
        resumed = f" (resumed after turn {start})" if start else ""
        console().print(f"{'ingested' if wait else 'enqueued'} {total - start} of {total} "
                        f"turns in {len(episodes)} batches into {namespace}{resumed}",
                        highlight=False)


def _run(client: Client, namespace: str, file_id: str, episodes: list[list[Episode]], *,
         wait: bool, timeout: float, total: int, start: int, chunk: int,
         quiet: bool) -> list[str]:
    from celery.exceptions import TimeoutError as CeleryTimeout
    from rich.progress import Progress

    from memcore.client.conversation_files import ingest_batches

    try:
        with Progress(console=console(), disable=quiet, transient=False) as progress:
            task = progress.add_task("ingesting" if wait else "enqueueing", total=total,
                                     completed=start)
            return ingest_batches(
                client, namespace, episodes, wait=wait, timeout=timeout,
                progress=lambda n: progress.advance(task, n), fail_fast=True,
                on_wait=lambda exc, s: typer.echo(  # stderr: --json keeps stdout clean
                    f"backlog full, retrying in {s:.1f} s ({exc})", err=True),
                start=start, chunk=chunk,
                on_done=lambda n: client.store.ingest_marks.advance(namespace, file_id, n))
    except CeleryTimeout as exc:
        raise TimeoutError(str(exc)) from exc


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to ``app``."""
    app.command()(ingest)
