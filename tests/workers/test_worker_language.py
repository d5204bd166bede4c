"""Which worker processes load the language pack's parser (spaCy) before their pool forks.

Read from the real worker processes' memory maps: a process that imported spaCy has its
compiled modules mapped.
"""

from __future__ import annotations

from pathlib import Path

from memcore.local.stack import LocalStack


def _maps_spacy(pid: int) -> bool:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return any("/spacy/" in line and line.rstrip().endswith(".so") for line in maps.splitlines())


def test_only_ingest_workers_load_the_parser(celery_stack: LocalStack) -> None:
    ingest, consolidate = celery_stack.processes["ingest"], celery_stack.processes["consolidate"]
    assert ingest.poll() is None and consolidate.poll() is None
    # The ingest master loaded it before forking (its children share it); a
    # consolidate-only worker never parses text, so it does not pay for it.
    assert _maps_spacy(ingest.pid)
    assert not _maps_spacy(consolidate.pid)
