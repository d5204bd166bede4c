"""``memcore review``: the precision check (docs/design.md) on a terminal or from a script.

The logic (sampling, precision, advice, records) lives in :mod:`memcore.core.review`;
this module only asks, prints and saves.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from memcore.cli.common import (
    EXIT_FAILED,
    JSON_OPTION,
    console,
    emit_json,
    fail,
    handles_errors,
    open_client,
    parse_time,
)

if TYPE_CHECKING:
    from memcore.client.client import Client
    from memcore.core.config import ConsolidationConfig
    from memcore.core.models import Memory
    from memcore.core.review import Advice, LabelledFact, ReviewRecord

PROMPT = "[c]orrect  [i]ncorrect  [o]ut of date  [s]kip  [q]uit"


@handles_errors
def review(namespace: str = typer.Argument(..., help="Namespace."),
           sample: int = typer.Option(30, "--sample", min=1, help="Facts to review."),
           labels: Path | None = typer.Option(
               None, "--labels", exists=True, dir_okay=False,
               help="Answers from a file (JSON {id: label} or JSONL {id, label}); no terminal."),
           seed: int | None = typer.Option(None, "--seed", help="Seed of the random sample."),
           save: Path | None = typer.Option(None, "--save", dir_okay=False,
                                            help="Also append the review to this JSONL file."),
           store_it: bool = typer.Option(True, "--store/--no-store",
                                         help="Keep the review in Redis for --history."),
           show_history: bool = typer.Option(False, "--history",
                                             help="Show past reviews (precision over time)."),
           now: str | None = typer.Option(None, "--now", help="ISO time confidence decays to."),
           json_out: bool = JSON_OPTION) -> None:
    """Precision check: label a random sample of active facts.

    One key per fact: c = correct, i = incorrect, o = out of date, s = skip (q stops).
    Prints precision = correct / (correct + incorrect + out of date) and, below 90 %,
    which thresholds to raise. Exit 1 when precision is below 90 %.
    """
    from memcore.core import review as rv
    from memcore.core.models import Status, utcnow

    client = open_client()
    if show_history:
        _history(client, namespace, save, json_out)
        return
    config = client.settings.consolidation
    at = parse_time(now) or utcnow()
    if labels is not None:
        facts = _from_file(client, namespace, labels, at, config)
    else:
        chosen = rv.sample_facts(client.store.records.iter_memories(namespace, [Status.ACTIVE]),
                                 sample, seed, now=at, config=config)
        if not chosen:
            fail(f"no active facts to review in namespace {namespace!r}")
        facts = _ask(chosen, at, config)
    advice = rv.advise(facts, config)
    record = rv.make_record(namespace, facts, advice, config, at)
    if facts:
        _save(client, record, store_it, save)
    _report(record, advice, json_out)
    if record.precision is None:
        fail("nothing was judged (all skipped)")
    if record.precision < rv.TARGET_PRECISION:
        raise typer.Exit(EXIT_FAILED)


def _from_file(client: Client, namespace: str, path: Path, at: datetime,
               config: ConsolidationConfig) -> list[LabelledFact]:
    from memcore.core.review import describe, parse_labels

    given = parse_labels(path.read_text(encoding="utf-8"))
    if not given:
        fail(f"{path}: no labels")
    ids = list(given)
    found = client.store.records.get_many(namespace, ids)
    missing = [i for i, m in zip(ids, found, strict=True) if m is None]
    if missing:
        typer.echo(f"warning: {len(missing)} labelled ids not found in {namespace}: "
                   + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""), err=True)
    facts = [describe(m, given[m.id], at, config) for m in found if m is not None]
    if not facts:
        fail(f"none of the {len(ids)} labelled ids exist in namespace {namespace!r}")
    return facts


def _ask(chosen: list[Memory], at: datetime, config: ConsolidationConfig
         ) -> list[LabelledFact]:
    """One fact at a time; one key and Enter per answer. q, end of input or Ctrl-C
    finish early (what was labelled so far is kept)."""
    from rich.panel import Panel
    from rich.text import Text

    from memcore.core.review import KEYS, describe

    out = console()
    facts: list[LabelledFact] = []
    for n, memory in enumerate(chosen, 1):
        fact = describe(memory, KEYS["s"], at, config)
        since = (memory.last_supported or memory.last_used).date().isoformat()
        out.print(Panel(
            Text.assemble(
                (memory.text, "bold"), "\n\n",
                f"kind {fact.kind} · confidence {fact.confidence:.2f} · support {fact.support}"
                f" · last supported {since}{' · merged' if fact.merged else ''}"),
            title=f"fact {n}/{len(chosen)}  {memory.id}"))
        answer = _prompt()
        if answer is None:
            break
        facts.append(describe(memory, KEYS[answer], at, config))
    return facts


def _prompt() -> str | None:
    """A valid key, or None to stop."""
    while True:
        try:
            raw = typer.prompt(PROMPT, default="", show_default=False)
        except typer.Abort:
            typer.echo("")
            return None
        key = str(raw).strip().lower()[:1]
        if key == "q":
            return None
        if key in ("c", "i", "o", "s"):
            return key
        typer.echo("answer with one of c, i, o, s (or q to stop)", err=True)


def _save(client: Client, record: ReviewRecord, store_it: bool, path: Path | None) -> None:
    line = record.to_json()
    if store_it:
        client.store.reviews.add_review(record.namespace, line)
    if path is not None:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def _report(record: ReviewRecord, advice: Sequence[Advice], json_out: bool) -> None:
    if json_out:
        emit_json({k: v for k, v in record.__dict__.items() if k != "facts"})
        return
    out = console()
    c = record.counts
    out.print(f"\ncorrect {c['correct']}, incorrect {c['incorrect']}, "
              f"out of date {c['out_of_date']}, skipped {c['skip']}")
    if record.precision is None:
        return
    from rich.text import Text

    verdict = ("ok", "") if record.precision >= 0.9 else ("below 90 %", "red")
    out.print(Text.assemble((f"precision {record.precision:.1%}", "bold"), " (", verdict, ")"))
    if advice:
        out.print("Raise these thresholds:")
        for a in advice:
            out.print(f"  • {a.render()}")
    elif record.precision < 0.9:
        out.print("No single threshold explains the errors in this sample; label more facts.")


def _history(client: Client, namespace: str, path: Path | None, json_out: bool) -> None:
    from memcore.core.models import validate_namespace
    from memcore.core.review import ReviewRecord
    validate_namespace(namespace)
    raws: list[str | bytes] = list(client.store.reviews.reviews(namespace))
    if path is not None and path.is_file():
        raws += [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = {(r.at, r.to_json()): r for r in map(ReviewRecord.from_json, raws)
               if r.namespace == namespace}
    ordered = [records[k] for k in sorted(records)]
    if json_out:
        emit_json([{k: v for k, v in r.__dict__.items() if k != "facts"} for r in ordered])
    else:
        from rich.table import Table

        table = Table(title=f"Precision reviews of {namespace}")
        for col in ("at", "judged", "precision", "correct", "incorrect", "out of date"):
            table.add_column(col)
        for r in ordered:
            judged = r.counts["correct"] + r.counts["incorrect"] + r.counts["out_of_date"]
            table.add_row(r.at[:19], str(judged),
                          "-" if r.precision is None else f"{r.precision:.1%}",
                          str(r.counts["correct"]), str(r.counts["incorrect"]),
                          str(r.counts["out_of_date"]))
        console().print(table)
    if not ordered:
        fail(f"no reviews saved for namespace {namespace!r}")


def register(app: typer.Typer) -> None:
    """Add ``review`` to ``app``."""
    app.command()(review)
