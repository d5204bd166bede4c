"""What the write path stores for everyday phrasings of preferences and changes.

Each case feeds a few earlier turns and then the probe turn through the in-process
write path (the same :class:`~memcore.ingest.write_path.IngestPipeline` the workers
run, default models, an embedded Redis), runs a consolidation pass, and reports the
facts extracted from the probe, the write path's decisions for it, and the live and
superseded memories after the pass. ``python -m memcore_bench.phrasings``
prints a Markdown list (used for the before/after record in notes/benchmarks.md);
``--possessions N`` instead feeds N turns "I own a <adj> <thing> called itemN that I
bought in <city> in <year>." and counts the write path's decisions and the pass's events
(owning things is multi-valued: nothing should be superseded).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memcore.adapters import Models, build_models
from memcore.adapters.extract import OfflineExtractor
from memcore.consolidate.passes import run_pass
from memcore.core.config import Settings
from memcore.core.models import Episode, Role, Status
from memcore.ingest.write_path import IngestPipeline
from memcore.local.stack import EmbeddedRedis
from memcore.store import MemoryStore


@dataclass(frozen=True)
class Case:
    """Earlier turns, then the probe turn."""

    before: tuple[str, ...]
    probe: str
    forget_before: bool = False  # the user deletes what the earlier turns stored


CASES: tuple[Case, ...] = (
    Case((), "Please keep your answers short, with bullet points."),
    Case((), "Please remember that I'm allergic to peanuts."),
    Case((), "I now work as a UX designer."),
    Case(("I live in Lisbon.",), "I no longer live in Lisbon."),
    Case(("I live in Lisbon.",), "I moved to Porto."),
    Case(("I live in Lisbon.",), "I relocated to Porto."),
    Case(("I live in Lisbon.",), "I'm now based in Porto."),
    Case(("I work as a data engineer.",), "I started a new job as a nurse."),
    Case(("I work as a data engineer.",), "I'm a nurse now."),
    Case(("I live in Lisbon and I work as a nurse.",), "I work as a teacher now."),
    Case(("I use PyCharm.",), "I switched from PyCharm to VS Code."),
    Case(("My phone is a Pixel 6.",), "I replaced my Pixel 6 with an iPhone 15."),
    Case(("I use Firefox.",), "I use Chrome instead of Firefox now."),
    Case(("I play in a band called The Nods.",), "I quit the band."),
    Case(("I'm revising for the AWS exam.",), "I finished the AWS exam."),
    Case(("I have a red Fiat.",), "I sold my Fiat."),
    Case(("I take statins.",), "I stopped taking statins."),
    Case(("My laptop is a ThinkPad X1.",), "Actually it's a ThinkPad T14, not an X1."),
    Case(("I own a red bike called item1 that I bought in Paris in 2019.",),
         "I own a blue lamp called item2 that I bought in Rome in 2020."),
    Case(("My hobbies are painting and salsa.",), "I also started yoga."),
    Case(("My friend Carmen lives in Sevilla.",), "My friend Pablo lives in Madrid."),
)

# What a newcomer tried: abbreviations, employers, polite and
# negative preferences, corrections, dates, ended habits, a fact restated after a delete.
NEWCOMER_CASES: tuple[Case, ...] = (
    Case((), "I work as a nurse at St. Mary's hospital."),
    Case(("I work at Siemens.",), "Now I work at Bosch."),
    Case(("I worked at Siemens for six years.",), "Now I work at Bosch."),
    Case((), "I'd rather you use metric units."),
    Case((), "Don't use emojis, please."),
    Case(("My sister's name is Anna.",), "Sorry, it's Anne, not Anna."),
    Case(("My birthday is on May 3.",), "Actually, it's May 5."),
    Case((), "I quit smoking last month."),
    Case((), "I quit smoking in October."),
    Case(("I'm allergic to peanuts.",), "I'm allergic to peanuts.", forget_before=True),
    Case(("I don't eat meat.",), "I'm not vegetarian any more."),
    Case(("I've started learning Rust, and I find the borrow checker appealing.",),
         "I gave up on Rust."),
)


@contextlib.contextmanager
def _in_process() -> Iterator[tuple[MemoryStore, Models, Settings, IngestPipeline]]:
    """The workers' write path over a fresh embedded Redis, offline models."""
    redis = EmbeddedRedis()
    try:
        settings = Settings(redis_url=redis.url, openai_api_key=None)
        store = MemoryStore.from_url(redis.url)
        models = build_models(settings)
        yield store, models, settings, IngestPipeline(store, models, settings)
    finally:
        redis.stop()


def run_cases(cases: Sequence[Case] = CASES) -> list[dict[str, Any]]:
    """Each case in its own namespace of a fresh embedded Redis, default settings."""
    with _in_process() as (store, models, settings, pipeline):
        t0 = datetime(2026, 1, 1, tzinfo=UTC)
        out = []
        for n, case in enumerate(cases):
            ns = f"probe{n}"
            turns = [*case.before, case.probe]
            reports = []
            for i, text in enumerate(turns):
                if case.forget_before and i == len(turns) - 1:
                    for m in list(store.records.iter_memories(ns, vectors=False)):
                        if m.live:
                            store.writes.tombstone(ns, m.id, t0 + timedelta(days=i - 0.5))
                ep = Episode(id=f"p{n}-{i}", namespace=ns, role=Role.USER, speaker="User",
                             text=text, timestamp=t0 + timedelta(days=i))
                reports.append(pipeline.ingest(ns, [ep]))
            probe_id = f"p{n}-{len(turns) - 1}"
            run_pass(store, ns, settings.consolidation, models.merger,
                     now=t0 + timedelta(days=len(turns)))
            memories = list(store.records.iter_memories(ns))
            out.append({
                "before": list(case.before), "probe": case.probe,
                "extracted": [m.text for m in memories if probe_id in m.sources],
                "decisions": reports[-1].decisions,  # the write path's, for the probe
                "live": sorted(m.text for m in memories if m.live),
                "kinds": {m.text: m.kind.value for m in memories if probe_id in m.sources},
                "live_kinds": {m.text: m.kind.value for m in memories if m.live},
                "superseded": sorted(m.text for m in memories
                                     if m.status is Status.SUPERSEDED),
            })
        return out


def possessions(n: int, seed: int = 12) -> dict[str, Any]:
    """``n`` templated possession turns, in process: decisions, pass events, statuses."""
    import random
    from collections import Counter

    rng = random.Random(seed)
    adjectives = ["red", "blue", "green", "old", "new", "small", "large", "shiny", "vintage",
                  "cheap"]
    things = ["bike", "lamp", "camera", "desk", "guitar", "watch", "chair", "kettle", "radio",
              "rug"]
    cities = ["Paris", "Rome", "Oslo", "Lima", "Tokyo", "Cairo", "Quito", "Dublin"]
    with _in_process() as (store, models, settings, pipeline):
        t0 = datetime(2026, 1, 1, tzinfo=UTC)
        decisions: Counter[str] = Counter()
        for i in range(n):
            text = (f"I own a {rng.choice(adjectives)} {rng.choice(things)} called item{i} "
                    f"that I bought in {rng.choice(cities)} in {rng.randrange(2000, 2025)}.")
            ep = Episode(id=f"own{i}", namespace="own", role=Role.USER, speaker="Sam",
                         text=text, timestamp=t0 + timedelta(minutes=i))
            report_ = pipeline.ingest("own", [ep])
            decisions.update({str(k): v for k, v in report_.decisions.items()})
        report = run_pass(store, "own", settings.consolidation, models.merger,
                          now=t0 + timedelta(minutes=n + 1))
        statuses = Counter(m.status.value for m in store.records.iter_memories("own"))
        return {"turns": n, "write_path_decisions": dict(decisions),
                "pass_events": dict(getattr(report, "events", {}) or {}),
                "statuses_after_pass": dict(statuses)}


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """One bullet per case: the probe, what was stored, what is live / superseded after
    the pass."""
    lines = []
    for r in rows:
        before = " / ".join(f"“{b}”" for b in r["before"])
        lines.append(f"- {before + ' then ' if before else ''}“{r['probe']}” -> "
                     f"stored {r['extracted'] or 'nothing'}; live after the pass {r['live']}; "
                     f"superseded {r['superseded'] or 'none'}")
    return "\n".join(lines)


def extracted_lines(lines: Sequence[str]) -> dict[str, list[str]]:
    """Each non-empty line -> the facts the offline extractor makes of it as one user turn
    (no write path: the sentences' own before/after record)."""
    extractor = OfflineExtractor()
    at = datetime(2026, 9, 15, tzinfo=UTC)
    return {line: [f.text for f in extractor.extract_turn(Episode(
        namespace="sentences", role=Role.USER, speaker="Sam", text=line, timestamp=at))]
        for line in lines if line.strip()}


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Print the cases as Markdown (``--json`` for JSON)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--newcomer", action="store_true",
                        help="the newcomer's phrasings (second round) instead of the first")
    parser.add_argument("--possessions", type=int, default=0, metavar="N",
                        help="instead: N templated possession turns and one pass")
    parser.add_argument("--sentences", metavar="FILE",
                        help="instead: what the extractor makes of each line of FILE, said "
                             "by 'Sam' on 15 September 2026 (JSON: line -> facts)")
    args = parser.parse_args(argv)
    if args.sentences:
        with open(args.sentences, encoding="utf-8") as lines:
            print(json.dumps(extracted_lines(lines.read().splitlines()), indent=1))
        return []
    if args.possessions:
        print(json.dumps(possessions(args.possessions)))
        return []
    rows = run_cases(NEWCOMER_CASES if args.newcomer else CASES)
    print(json.dumps(rows, indent=1) if args.json else markdown(rows))
    return rows


if __name__ == "__main__":
    main()
