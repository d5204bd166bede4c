"""``bench growth``: what a namespace costs in Redis as consolidation passes go by.

``facts`` distinct facts go in as turns through :class:`memcore.Client` and the Celery
ingest workers; then ``passes`` consolidation passes run through the consolidate
workers, one simulated day apart, each after ``new_share`` x ``facts`` new turns.
After every pass it records Redis ``used_memory``, the namespace's keys and their
bytes (``MEMORY USAGE`` of each key), so snapshot copies and uncollected versions
show up as growth.

Run: ``python -m memcore_bench.growth --facts 2000 --passes 30
--out bench/growth.json``. Writes the JSON (keys are a contract), ``.md`` and ``.png``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.store import MemoryStore
from memcore.store.footprint import namespace_usage
from memcore_bench.common import (
    machine,
    markdown_table,
    pyplot,
    running_stack,
    save_figure,
    write_outputs,
)
from memcore_bench.scale_store import tree_cpu_seconds

CONTRACT_KEYS = (
    "facts", "passes", "redis_mb_after_first_pass", "redis_mb_after_passes",
    "namespace_mb_after_first_pass", "namespace_mb_after_passes", "growth_ratio",
    "keys_after_first_pass", "keys_after_passes",
)  # fmt: skip
QUICK_FACTS = 60
QUICK_PASSES = 3
NAMESPACE = "bench-growth"
START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)

_PEOPLE = ("Ana", "Ben", "Chloe", "Dev", "Eli", "Farah", "Gus", "Hana", "Ivan", "Jo", "Kai",
           "Lena", "Mo", "Nia", "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tariq")
_PLACES = ("Lisbon", "Oslo", "Denver", "Kyoto", "Nairobi", "Lyon", "Austin", "Perth", "Quito",
           "Riga", "Seoul", "Tunis", "Utrecht", "Valencia", "Warsaw")
_THINGS = ("pottery", "rock climbing", "baking bread", "chess", "salsa dancing", "birding",
           "sailing", "origami", "archery", "beekeeping", "calligraphy", "fencing")
_SAYINGS = (
    "My friend {p} moved to {c} and took up {t}.",
    "{p} from my book club is learning {t} in {c}.",
    "I met {p} at a {t} workshop in {c}.",
    "My cousin {p} teaches {t} at a school in {c}.",
    "{p} invited me to go {t} near {c} next spring.",
)


def fact_turn(i: int) -> str:
    """The ``i``-th distinct fact, said as a chat turn (no two alike for i < 18,000)."""
    p = _PEOPLE[i % len(_PEOPLE)]
    c = _PLACES[(i // len(_PEOPLE)) % len(_PLACES)]
    t = _THINGS[(i // (len(_PEOPLE) * len(_PLACES))) % len(_THINGS)]
    s = _SAYINGS[(i // (len(_PEOPLE) * len(_PLACES) * len(_THINGS))) % len(_SAYINGS)]
    return s.format(p=p, c=c, t=t)


def _add(client: Client, start: int, count: int, at: datetime) -> None:
    ids: list[str] = []
    for i in range(start, start + count):
        ids += client.add(NAMESPACE, [{"role": "user", "speaker": "Sam",
                                       "content": fact_turn(i)}],
                          timestamp=at + timedelta(seconds=i - start))
    client.wait(ids, timeout=1800)


def run_growth(facts: int = 2000, passes: int = 30, new_share: float = 0.01, *,
               quick: bool = False, out: Path | None = None,
               redis_url: str | None = None, maintain: bool = True) -> dict[str, Any]:
    """Ingest, then run ``passes`` passes a day apart; writes ``out`` (JSON, .md, .png).

    ``maintain``: run the maintenance beat would run (snapshot and tombstone grace
    periods, audit retention, from the settings) before each day's new turns."""
    if quick:
        facts, passes = min(facts, QUICK_FACTS), min(passes, QUICK_PASSES)
    if facts < 10 or passes < 1:
        raise ValueError(f"facts must be >= 10 and passes >= 1, got {facts} and {passes}")
    if not 0.0 < new_share <= 1.0:
        raise ValueError(f"new_share must be in (0, 1], got {new_share}")
    new = max(1, round(facts * new_share))
    rows: list[dict[str, float]] = []
    settings = Settings()
    t_start = time.perf_counter()
    with running_stack(redis_url, ingest_concurrency=2, consolidate_concurrency=1) as stack:
        assert stack.redis_url
        data = MemoryStore.from_url(stack.redis_url, check_durability=False)
        client = Client(stack.redis_url)
        try:
            _add(client, 0, facts, START)
            added = facts
            for p in range(passes + 1):
                day = START + timedelta(days=p)
                if p and maintain:
                    data.maintenance.run(NAMESPACE, day,
                                         snapshot_grace_days=settings.snapshot_grace_days,
                                  tombstone_grace_days=settings.consolidation
                                  .tombstone_grace_days,
                                  audit_retention_days=settings.audit_retention_days)
                if p:
                    _add(client, added, new, day)
                    added += new
                t0 = time.perf_counter()
                cpu = tree_cpu_seconds(stack.processes["consolidate"].pid)
                report = client.consolidate(NAMESPACE, now=day + timedelta(hours=12),
                                            full=p == 0, timeout=1800)
                seconds = time.perf_counter() - t0
                row = {"pass": float(p), "facts_added": float(added), "seconds": seconds,
                       "worker_cpu_seconds":
                           tree_cpu_seconds(stack.processes["consolidate"].pid) - cpu,
                       **namespace_usage(data, NAMESPACE)}
                if isinstance(report, Mapping) and report.get("to_version") is not None:
                    row["version"] = float(report["to_version"])
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            client.close()
    first, last = rows[0], rows[-1]
    result: dict[str, Any] = {
        "facts": facts, "passes": passes, "new_per_pass": new, "rows": rows,
        "redis_mb_after_first_pass": first["redis_mb"], "redis_mb_after_passes": last["redis_mb"],
        "namespace_mb_after_first_pass": first["namespace_mb"],
        "namespace_mb_after_passes": last["namespace_mb"],
        "growth_ratio": last["namespace_mb"] / first["namespace_mb"],
        "keys_after_first_pass": int(first["keys"]), "keys_after_passes": int(last["keys"]),
        "seconds": time.perf_counter() - t_start, "quick": quick, "maintenance": maintain,
        "machine": machine(),
    }
    if out is not None:
        write_outputs(result, Path(out), markdown(result), plot)
    return result


def markdown(result: Mapping[str, Any]) -> str:
    """The per-pass table."""
    rows = [(int(r["pass"]), int(r["facts_added"]), f"{r['redis_mb']:.1f}",
             f"{r['namespace_mb']:.2f}", f"{int(r['keys']):,}") for r in result["rows"]]
    table = markdown_table(("after pass", "facts added", "Redis used MiB", "namespace MiB",
                            "namespace keys"), rows)
    upkeep = "with" if result.get("maintenance") else "without"
    return (f"# bench growth\n\n{result['facts']} facts, then {result['passes']} passes a day "
            f"apart, each after {result['new_per_pass']} new turns, {upkeep} maintenance "
            f"between passes.\n\n{table}\n\n"
            f"namespace growth after {result['passes']} passes: "
            f"{result['growth_ratio']:.2f}x\n")


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Namespace bytes and keys per pass."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [r["pass"] for r in result["rows"]]
    ax.plot(xs, [r["namespace_mb"] for r in result["rows"]], "o-", label="namespace MiB")
    ax.plot(xs, [r["redis_mb"] for r in result["rows"]], "s--", label="Redis used MiB")
    ax.set_xlabel("pass")
    ax.set_ylabel("MiB")
    ax.legend()
    ax.set_title(f"bench growth, {result['facts']} facts")
    save_figure(fig, path)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m memcore_bench.growth --facts N --passes P --out FILE``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--passes", type=int, default=30)
    parser.add_argument("--new-share", type=float, default=0.01)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-maintenance", action="store_true",
                        help="never collect versions, tombstones or audit between passes")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = run_growth(args.facts, args.passes, args.new_share, quick=args.quick, out=args.out,
                        maintain=not args.no_maintenance)
    print(json.dumps({k: result[k] for k in CONTRACT_KEYS}))


if __name__ == "__main__":
    main()
