"""``memcore calibrate``: merge and borderline thresholds for the configured embedder."""

from __future__ import annotations

from pathlib import Path

import typer

from memcore.cli.common import JSON_OPTION, console, emit_json, fail, handles_errors


@handles_errors
def calibrate(pairs: Path | None = typer.Option(
                  None, "--pairs", exists=True, dir_okay=False,
                  help="JSONL of {a, b, duplicate, why}; default: the shipped labelled set."),
              embedder: str | None = typer.Option(
                  None, "--embedder", help="hash | local | openai (default: MEMCORE_EMBEDDER)."),
              json_out: bool = JSON_OPTION) -> None:
    """Compute the merge and borderline thresholds for an embedder from labelled pairs.

    Set the results as MEMCORE_MERGE_THRESHOLD and MEMCORE_BORDERLINE_THRESHOLD.
    """
    from memcore.adapters import build_embedder
    from memcore.core.calibration import calibrate as run
    from memcore.core.calibration import load_pairs
    from memcore.core.config import get_settings
    from memcore.language import text_rules

    settings = get_settings()
    if embedder:
        settings = settings.model_copy(update={"embedder": embedder})
    try:
        labelled = load_pairs(pairs)
    except ValueError as exc:
        fail(f"{pairs}: {exc}", 2)
    result = run(build_embedder(settings), labelled, rules=text_rules(settings.language))
    if json_out:
        emit_json(result.as_dict())
        return
    out = console()
    out.print(f"embedder {result.embedder}, {result.pairs} labelled pairs")
    out.print(f"MEMCORE_MERGE_THRESHOLD={result.merge}  "
              f"(auto-merge precision {result.auto_merge_precision:.2f}, "
              f"recall {result.auto_merge_recall:.2f})")
    out.print(f"MEMCORE_BORDERLINE_THRESHOLD={result.borderline}  "
              f"(duplicates above {result.borderline_recall:.2f}, contradictions above "
              f"{result.contradiction_recall:.2f}, unrelated above "
              f"{result.unrelated_above_borderline:.2f})")


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to the CLI."""
    app.command("calibrate")(calibrate)
