"""Read-side commands: search, context, profile, show, history, stats, versions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from memcore.cli.common import (
    JSON_OPTION,
    console,
    emit_json,
    fail,
    handles_errors,
    memory_json,
    open_client,
    parse_time,
    require_namespace,
)

if TYPE_CHECKING:
    from datetime import datetime

    from memcore.core.models import Memory


AS_OF_OPTION = typer.Option(None, "--as-of",
                            help="ISO time: as the memories were valid then.")


def span(memory: Memory) -> str:
    """A memory's validity interval, e.g. ``2019-03-01 .. 2024-06-01``."""
    def day(value: datetime | None) -> str:
        return value.date().isoformat() if value is not None else ""
    return f"{day(memory.valid_from or memory.created_at)} .. {day(memory.valid_until)}"


def _row(memory: Memory) -> list[str]:
    return [memory.id, memory.text, memory.kind.value, memory.status.value,
            f"{memory.confidence:.2f}", str(len(set(memory.sources)))]


def _table(title: str, memories: list[Memory], extra: list[str] | None = None) -> None:
    from rich.table import Table

    table = Table(title=title)
    for col in ["id", "text", "kind", "status", "conf", "support", *(extra or [])]:
        table.add_column(col, overflow="fold")
    for m in memories:
        table.add_row(*_row(m))
    console().print(table)


@handles_errors
def search(namespace: str = typer.Argument(..., help="Namespace to search."),
           query: str = typer.Argument(..., help="What to look for."),
           k: int = typer.Option(10, "-k", "--k", min=1, help="Most results."),
           touch: bool = typer.Option(False, "--touch/--no-touch",
                                      help="Record the recall (strength +1, last_used)."),
           as_of: str | None = AS_OF_OPTION,
           history: bool = typer.Option(False, "--include-history",
                                        help="Show the values each fact replaced."),
           time_hint: bool = typer.Option(False, "--time-hint",
                                          help="Read 'last week', 'in March' in QUERY as a "
                                               "filter on when the memories happened."),
           json_out: bool = JSON_OPTION) -> None:
    """Memories most similar to QUERY (live ones, or those valid at --as-of)."""
    client = open_client()
    hits = client.search(namespace, query, k=k, touch=touch,
                         as_of=parse_time(as_of, "--as-of"), include_history=history,
                         time_hint=time_hint, warn=False)
    if not hits:  # the CLI's error says what the warning would
        require_namespace(client, namespace)
    if json_out:
        emit_json([{**memory_json(h.memory), "similarity": h.similarity, "score": h.score,
                    **({"earlier": [memory_json(m) for m in h.earlier]} if history else {})}
                   for h in hits])
        return
    from rich.table import Table

    table = Table(title=f"{len(hits)} results for {query!r} in {namespace}")
    for col in ("id", "text", "kind", "similarity", "score"):
        table.add_column(col, overflow="fold")
    for h in hits:
        text = h.memory.text + "".join(f"\n  earlier: {m.text} ({span(m)})" for m in h.earlier)
        table.add_row(h.memory.id, text, h.memory.kind.value, f"{h.similarity:.3f}",
                      f"{h.score:.3f}")
    console().print(table)


@handles_errors
def context(namespace: str = typer.Argument(..., help="Namespace."),
            query: str = typer.Argument(..., help="What the block is for."),
            max_tokens: int = typer.Option(1000, "--max-tokens",
                                           help="Budget in cl100k_base tokens (50-32000)."),
            now: str | None = typer.Option(None, "--now",
                                           help="ISO time the dates are said from."),
            time_hint: bool = typer.Option(
                True, "--time-hint/--no-time-hint",
                help="Read a relative time in QUERY ('last week') as a filter."),
            json_out: bool = JSON_OPTION) -> None:
    """A prompt-ready context block for QUERY: key facts, relevant memories with their
    dates, earlier values of changed facts (exit 1 for a namespace without data)."""
    client = open_client()
    block = client.context(namespace, query, max_tokens, now=parse_time(now),
                           time_hint=time_hint)
    if not block.parts:
        require_namespace(client, namespace)
    if json_out:
        emit_json(block.as_dict())
        return
    typer.echo(block.text, nl=False)
    typer.echo(f"({block.tokens} of {block.max_tokens} {block.tokenizer} tokens, "
               f"{len(block.parts)} memories)", err=True)


@handles_errors
def profile(namespace: str = typer.Argument(..., help="Namespace."),
            now: str | None = typer.Option(None, "--now", help="ISO time to decay to."),
            as_of: str | None = AS_OF_OPTION,
            json_out: bool = JSON_OPTION) -> None:
    """The profile: active facts ranked by confidence (at most 50)."""
    client = open_client()
    facts = client.profile(namespace, now=parse_time(now), as_of=parse_time(as_of, "--as-of"),
                           warn=False)
    if not facts:
        require_namespace(client, namespace)
    if json_out:
        emit_json([memory_json(m) for m in facts])
        return
    _table(f"Profile of {namespace} ({len(facts)} facts)", facts)


@handles_errors
def show(namespace: str = typer.Argument(..., help="Namespace."),
         memory_id: str = typer.Argument(..., metavar="ID", help="Memory id."),
         as_of: str | None = AS_OF_OPTION,
         json_out: bool = JSON_OPTION) -> None:
    """One memory with every field (exit 1 if it does not exist); with --as-of, the value
    of its fact valid then."""
    memory = open_client().get(namespace, memory_id, as_of=parse_time(as_of, "--as-of"))
    if memory is None:
        fail(f"memory {memory_id!r} not found in namespace {namespace!r}"
             + ("" if as_of is None else f" valid at {as_of}"))
    data = memory_json(memory)
    if json_out:
        emit_json(data)
        return
    from rich.table import Table

    table = Table(title=f"Memory {memory_id}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in data.items():
        table.add_row(key, "" if value is None else str(value))
    console().print(table)


@handles_errors
def history(namespace: str = typer.Argument(..., help="Namespace."),
            memory_id: str = typer.Argument(..., metavar="ID", help="Memory id."),
            as_of: str | None = AS_OF_OPTION,
            json_out: bool = JSON_OPTION) -> None:
    """Every audited change of a memory, through merges and supersessions (exit 1 if none);
    with --as-of, those made by then."""
    events = open_client().history(namespace, memory_id, as_of=parse_time(as_of, "--as-of"))
    if not events:
        fail(f"no history for {memory_id!r} in namespace {namespace!r}")
    if json_out:
        emit_json([e.model_dump(mode="json") for e in events])
        return
    from rich.table import Table

    table = Table(title=f"History of {memory_id}")
    for col in ("at", "action", "actor", "before", "after", "reason"):
        table.add_column(col, overflow="fold")
    for e in events:
        table.add_row(e.at.isoformat(timespec="seconds"), e.action.value, e.actor.value,
                      ", ".join(e.before), ", ".join(e.after), e.reason)
    console().print(table)


@handles_errors
def stats(namespace: str = typer.Argument(..., help="Namespace."),
          json_out: bool = JSON_OPTION) -> None:
    """Counts by status, usage counters (model calls and tokens by operation), snapshot
    version (exit 1 for an unknown namespace)."""
    client = open_client()
    # Known: stored data, or turns of it still queued. Else the error alone, before any
    # zeroed block of a typo'd name.
    if client.store.backlog.depth(namespace).namespace == 0:
        require_namespace(client, namespace)
    data = client.stats(namespace)
    store = client.store
    last = store.coordination.last_pass_at(namespace)
    data.update({"pending_importance": store.coordination.pending_importance(namespace),
                 "last_pass_at": last.isoformat() if last else None,
                 "versions": [v.version for v in store.snapshots.versions(namespace)]})
    if json_out:
        emit_json(data)
    else:
        out = console()
        from rich.text import Text

        out.print(Text.assemble((namespace, "bold"), f"  version {data['version']}  "
                                f"last pass {data['last_pass_at'] or 'never'}"))
        out.print("status: " + ", ".join(f"{k} {v}" for k, v in sorted(data["status"].items())))
        if data["counters"]:
            out.print("counters: " + ", ".join(
                f"{k} {v:g}" for k, v in sorted(data["counters"].items())))
        for operation, used in sorted(data["usage"].items()):
            out.print(f"usage, {operation}: {used['model_calls']} model calls, "
                      f"{used['prompt_tokens']} prompt + {used['completion_tokens']} "
                      "completion tokens")
        out.print(f"pending importance: {data['pending_importance']:g}")
        backlog = data["backlog"]
        out.print(f"ingest backlog: {backlog['namespace']} task(s) of this namespace, "
                  f"{backlog['total']} in all; queues: " + (", ".join(
                      f"{k} {v}" for k, v in sorted(data["queues"].items())) or "unreadable"))


@handles_errors
def versions(namespace: str = typer.Argument(..., help="Namespace."),
             json_out: bool = JSON_OPTION) -> None:
    """Committed snapshot versions (for `memcore rollback`)."""
    store = open_client().store
    current = store.current_version(namespace)
    rows = [{"version": v.version, "created_at": v.created_at.isoformat(),
             "memories": v.memories, "current": v.version == current}
            for v in store.snapshots.versions(namespace)]
    if json_out:
        emit_json({"current": current, "versions": rows})
        return
    from rich.table import Table

    table = Table(title=f"Snapshot versions of {namespace} (current v{current})")
    for col in ("version", "created_at", "memories", "current"):
        table.add_column(col)
    for r in rows:
        table.add_row(str(r["version"]), str(r["created_at"]), str(r["memories"]),
                      "*" if r["current"] else "")
    console().print(table)


def register(app: typer.Typer) -> None:
    """Add the read commands to ``app``."""
    for fn in (search, context, profile, show, history, stats, versions):
        app.command(fn.__name__)(fn)
