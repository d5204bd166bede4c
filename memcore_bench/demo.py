"""``make demo``: the whole distributed pipeline on embedded defaults.

Starts an embedded Redis (unless ``MEMCORE_REDIS_URL`` is set) and real Celery
workers, ingests a bundled conversation through :class:`memcore.Client`, runs a
consolidation pass and shows what memcore now remembers, and why.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from memcore.client.client import Client
from memcore.core.models import AuditAction, Status, utcnow
from memcore.local.stack import LocalStack

NAMESPACE = "demo-sam"


def load_sample() -> list[dict[str, Any]]:
    """The bundled conversation: four sessions over eleven weeks."""
    text = resources.files("memcore.data").joinpath("sample_conversation.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def ingest_sessions(client: Client, turns: list[dict[str, Any]], console: Console) -> None:
    """Enqueue each session as one batch, in order, with a progress bar."""
    sessions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for turn in turns:
        sessions[turn["session"]].append(turn)
    with Progress(console=console, transient=False) as progress:
        task = progress.add_task("ingesting turns", total=len(turns))
        for number in sorted(sessions):
            batch = sessions[number]
            messages = [{"role": t["role"], "speaker": t["speaker"], "content": t["content"],
                         "timestamp": t["timestamp"], "id": f"s{number}-t{i}"}
                        for i, t in enumerate(batch)]
            # Sessions are weeks apart: wait for one before the next, so order holds.
            client.wait(client.add(NAMESPACE, messages), timeout=120)
            progress.advance(task, len(batch))


def show(client: Client, now: datetime, console: Console) -> None:
    """Print the profile, counts, merges, a supersession and the audit tail."""
    store = client.store
    memories = {m.id: m for m in store.records.iter_memories(NAMESPACE)}
    counts = store.records.count_by_status(NAMESPACE)
    profile = client.profile(NAMESPACE, now=now)
    # The profile leaves out what has faded from it (a passing remark, an unsupported
    # candidate): say so, or "active 13" below reads as two facts missing from 11 rows.
    table = Table(title=f"Profile of {NAMESPACE}: {len(profile)} of "
                        f"{counts.get('active', 0)} active facts, by standing (the rest "
                        f"have faded from the profile; search still finds them)")
    for col in ("fact", "kind", "confidence", "support"):
        table.add_column(col)
    for m in profile:
        table.add_row(m.text, m.kind.value, f"{m.confidence:.2f}", str(len(set(m.sources))))
    console.print(table)

    console.print("Memories by status: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))

    events = store.audit.tail(NAMESPACE, 500)
    merges = [e for e in events if e.action is AuditAction.MERGE]
    console.print(f"\n[bold]Merged memories[/bold] ({len(merges)} merges)")
    for e in merges[:5]:
        kept = memories.get(e.after[0]) if e.after else None
        if kept:
            console.print(f"  • {kept.text}\n    sources: {', '.join(kept.sources)}")
    superseded = [m for m in memories.values() if m.status is Status.SUPERSEDED
                  and m.superseded_by]
    console.print("\n[bold]Superseded facts[/bold] (validity closed, never deleted)")
    for m in superseded[:2]:
        successor = memories.get(m.superseded_by or "")
        until = m.valid_until.date().isoformat() if m.valid_until else "?"
        console.print(f"  • {m.text}  [dim](valid until {until})[/dim]\n"
                      f"    -> {successor.text if successor else m.superseded_by}")
    tail = Table(title="Audit tail")
    for col in ("action", "actor", "reason"):
        tail.add_column(col)
    for e in events[-10:]:
        tail.add_row(e.action.value, e.actor.value, e.reason[:80])
    console.print(tail)


def main() -> int:
    """Run the demo; returns the exit code."""
    console = Console()
    turns = load_sample()
    start = time.perf_counter()
    stack = LocalStack(ingest_concurrency=1, consolidate_concurrency=1)

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    # Background jobs start with SIGINT ignored; Ctrl-C must still stop the demo.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        stack.start()
        where = f"embedded ({stack.embedded.binary}) at " if stack.embedded else ""
        console.print(f"Redis: {where}{stack.redis_url}")
        stack.wait_ready()
        client = Client(stack.redis_url)
        client.store.eraser.erase_namespace(NAMESPACE, utcnow(), missing_ok=True)  # a fresh start
        ingest_sessions(client, turns, console)
        last = max(datetime.fromisoformat(t["timestamp"]) for t in turns)
        now = last + timedelta(days=1)
        console.print(f"Consolidating as of {now.date()} ...")
        result = client.consolidate(NAMESPACE, now=now, timeout=120)
        console.print(f"pass: {result}")
        show(client, now, console)
        client.close()
        console.print(f"\nDone in {time.perf_counter() - start:.1f} s.")
        return 0
    except KeyboardInterrupt:
        console.print("interrupted: stopping workers")
        return 130
    finally:
        stack.stop()


if __name__ == "__main__":
    sys.exit(main())
