"""``memcore hooks add|list|remove|dead|retry``: signed webhooks (docs/operations.md, Webhooks)."""

from __future__ import annotations

import typer

from memcore.cli.common import (
    JSON_OPTION,
    console,
    emit_json,
    emit_listing,
    emit_removed,
    fail,
    handles_errors,
    open_client,
)

hooks_app = typer.Typer(help="Webhooks: signed POSTs to your URL when memories change.",
                        no_args_is_help=True)


@hooks_app.command("add")
@handles_errors
def add(url: str = typer.Option(..., "--url", help="http(s) URL the events are POSTed to."),
        events: str = typer.Option(
            ..., "--events", metavar="E1,E2",
            help="Comma-separated: memory.created, memory.updated, memory.superseded, "
                 "memory.deleted, memory.erased, pass.finished."),
        scope: list[str] = typer.Option(..., "--scope", metavar="PATTERN",
                                        help="Namespace glob, e.g. 'acme-*' (repeatable)."),
        json_out: bool = JSON_OPTION) -> None:
    """Register a hook and print its signing secret once."""
    hook, secret = open_client().store.hooks.add(url, events.split(","), scope)
    if json_out:
        emit_json({**hook.public(), "secret": secret})
        return
    out = console()
    out.print(f"hook {hook.id}: {', '.join(e.value for e in hook.events)} in "
              f"{', '.join(hook.scopes)} -> {hook.url}")
    out.print(f"secret: {secret}")
    out.print("This is the only time the secret is shown: the receiver verifies the "
              "Memcore-Signature header with it.")


@hooks_app.command("list")
@handles_errors
def list_hooks(json_out: bool = JSON_OPTION) -> None:
    """Every hook (never its secret)."""
    found = open_client().store.hooks.registered()
    emit_listing("Webhooks", ("id", "url", "events", "scopes", "created"),
                 [(h.id, h.url, " ".join(e.value for e in h.events), " ".join(h.scopes),
                   h.created_at.isoformat(timespec="seconds")) for h in found],
                 [h.public() for h in found], json_out=json_out)


@hooks_app.command("remove")
@handles_errors
def remove(hook_id: str = typer.Argument(..., metavar="ID", help="Hook id (hooks list)."),
           json_out: bool = JSON_OPTION) -> None:
    """Remove a hook; its queued events are dropped."""
    if not open_client().store.hooks.remove(hook_id):
        fail(f"no hook with id {hook_id!r}")
    emit_removed(hook_id, "removed", json_out=json_out)


@hooks_app.command("dead")
@handles_errors
def dead(json_out: bool = JSON_OPTION) -> None:
    """The dead-letter list: events that failed every attempt (no memory text)."""
    from rich.table import Table

    letters = open_client().store.hooks.dead()
    if json_out:
        emit_json(letters)
        return
    table = Table(title=f"Dead letters ({len(letters)})")
    for col in ("id", "hook", "event", "memory", "attempts", "last error"):
        table.add_column(col, overflow="fold")
    for d in letters:
        event = d["event"]
        table.add_row(d["id"], d["hook_id"], f"{event['type']} {event['id']}",
                      event.get("memory_id") or "-", str(d["attempts"]), d["last_error"])
    console().print(table)


@hooks_app.command("retry")
@handles_errors
def retry(ids: list[str] = typer.Argument(None, metavar="[ID...]",
                                          help="Dead letters to retry (default: all)."),
          hook: str | None = typer.Option(None, "--hook", metavar="ID",
                                          help="Only the dead letters of this hook."),
          json_out: bool = JSON_OPTION) -> None:
    """Queue dead letters again (at the end of their memory's queue: the seq number
    tells a receiver where they belong); the hooks worker delivers them."""
    from memcore.client.hooks import retry_dead

    count = retry_dead(open_client(), ids or None, hook)
    if ids and count < len(ids):
        fail(f"{len(ids) - count} of the ids given are not dead letters")
    if json_out:
        emit_json({"requeued": count})
    else:
        console().print(f"requeued {count} dead letter{'s' if count != 1 else ''}")


def register(app: typer.Typer) -> None:
    """Add the ``hooks`` group to ``app``."""
    app.add_typer(hooks_app, name="hooks")
