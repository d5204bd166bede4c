"""Management commands: consolidate, rollback, pin, unpin, restore, erase."""

from __future__ import annotations

from collections.abc import Callable

import typer

from memcore.cli.common import (
    EXIT_USAGE,
    JSON_OPTION,
    CliError,
    console,
    emit_json,
    fail,
    handles_errors,
    memory_json,
    open_client,
    parse_time,
    require_namespace,
)


@handles_errors
def consolidate(namespace: str = typer.Argument(..., help="Namespace."),
                now: str | None = typer.Option(None, "--now",
                                               help="ISO time the pass treats as now."),
                wait: bool = typer.Option(True, "--wait/--no-wait",
                                          help="Wait for the whole pass to finish."),
                timeout: float = typer.Option(600.0, "--timeout", min=1,
                                              help="Seconds to wait for the workers."),
                full: bool = typer.Option(
                    False, "--full",
                    help="Search every memory against every other, not only those written "
                         "or changed since the last pass."),
                json_out: bool = JSON_OPTION) -> None:
    """Run a consolidation pass on the workers (needs a running consolidate worker)."""
    from celery.exceptions import TimeoutError as CeleryTimeout

    client = open_client()
    try:
        result = client.consolidate(namespace, wait=wait, timeout=timeout, now=parse_time(now),
                                    full=full)
    except (TimeoutError, CeleryTimeout):
        fail(f"consolidation did not finish within {timeout:g} s "
             "(is a consolidate worker running?)")
    if json_out:
        emit_json(result if isinstance(result, dict) else {"task_id": result})
    elif isinstance(result, dict):
        console().print(f"pass of {namespace}: " + ", ".join(f"{k}={v}" for k, v in
                                                             result.items()))
    else:
        console().print(f"consolidation of {namespace} enqueued: task {result}")


@handles_errors
def rollback(namespace: str = typer.Argument(..., help="Namespace."),
             version: int = typer.Argument(..., min=0, help="Committed version to go back to."),
             json_out: bool = JSON_OPTION) -> None:
    """Point the namespace back at a committed snapshot version (see `memcore versions`)."""
    from memcore.core.models import utcnow

    store = open_client().store
    known = [v.version for v in store.snapshots.versions(namespace)]
    if version not in known:
        fail(f"version {version} is not a committed version of {namespace!r} "
             f"(committed: {known or 'none'})")
    before = store.current_version(namespace)
    store.snapshots.rollback(namespace, version, utcnow(), reason="memcore rollback")
    if json_out:
        emit_json({"namespace": namespace, "from": before, "to": version})
    else:
        console().print(f"{namespace}: v{before} -> v{version}")


def _simple(action: str, doc: str) -> Callable[..., None]:
    @handles_errors
    def command(namespace: str = typer.Argument(..., help="Namespace."),
                memory_id: str = typer.Argument(..., metavar="ID", help="Memory id."),
                json_out: bool = JSON_OPTION) -> None:
        client = open_client()
        memory = getattr(client, action)(namespace, memory_id)
        if json_out:
            emit_json(memory_json(memory))
        else:
            console().print(f"{action}: {memory.id} ({memory.status.value}"
                            f"{', pinned' if memory.pinned else ''}) {memory.text}")

    command.__doc__ = doc
    command.__name__ = action
    return command


@handles_errors
def erase(namespace: str = typer.Argument(..., help="Namespace."),
          memory: str | None = typer.Option(None, "--memory", help="Erase this memory id."),
          episode: str | None = typer.Option(None, "--episode",
                                             help="Erase this episode and what it alone supports."),
          everything: bool = typer.Option(False, "--all", help="Erase the whole namespace."),
          keep_sources: bool = typer.Option(
              False, "--keep-sources",
              help="With --memory: keep the turns the memory came from (default: erase them)."),
          yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
          json_out: bool = JSON_OPTION) -> None:
    """Erase on the user's request (right to be forgotten): everywhere, every snapshot.

    Give exactly one of --memory, --episode, --all. Erasing a memory also erases the turns
    it came from (unless --keep-sources) and lists memories left without a source turn.
    Asks for confirmation unless --yes.
    """
    chosen = [x for x in (memory, episode, everything or None) if x]
    if len(chosen) != 1:
        fail("give exactly one of --memory ID, --episode ID, --all", EXIT_USAGE)
    what = (f"memory {memory}" if memory else f"episode {episode}" if episode
            else f"EVERYTHING in namespace {namespace}")
    client = open_client()
    if everything and not client.store.records.has_namespace(namespace):
        # Nothing stored: a typo'd name, or every turn of it still queued. No ERASE event
        # is written, but the erase fence is set, so those queued turns are never stored.
        if not yes:
            typer.confirm(f"Namespace {namespace} has no stored data. Drop its turns still "
                          "queued, if any?", abort=True)
        client.store.fences.advance(namespace)
        try:
            require_namespace(client, namespace)
        except CliError as missing:
            fail(f"{missing}: nothing erased; its erase fence is set, so turns of it "
                 "accepted before now and still queued will be dropped, not stored")
    if not yes:
        typer.confirm(f"Erase {what}? This cannot be undone", abort=True)
    extra: dict[str, list[str]] = {}
    if memory and not keep_sources:
        report = client.erase_memory(namespace, memory)
        removed = len(report.removed) + len(report.episodes)
        extra = {"turns_erased": report.episodes, "orphaned": report.orphaned}
    else:
        removed = client.erase(namespace, memory_id=memory, episode_id=episode,
                               everything=everything, keep_sources=keep_sources)
    if json_out:
        emit_json({"namespace": namespace, "erased": what, "removed": removed, **extra})
    else:
        console().print(f"erased {what}: {removed} removed")
        if extra:
            console().print(f"source turns erased: {', '.join(extra['turns_erased']) or 'none'}")
        if extra.get("orphaned"):
            console().print("kept, but no source turn left (erase them too if wanted): "
                            + ", ".join(extra["orphaned"]))
    if removed == 0 and not everything:
        fail(f"nothing found to erase for {what}")


def register(app: typer.Typer) -> None:
    """Add the management commands to ``app``."""
    app.command()(consolidate)
    app.command()(rollback)
    app.command("pin")(_simple("pin", "Pin a memory: it never decays and is never dropped."))
    app.command("unpin")(_simple("unpin", "Undo `memcore pin`."))
    app.command("restore")(_simple("restore", "Bring a tombstoned memory back to active."))
    app.command()(erase)
