"""``bench profile``: is the profile right? Precision and recall of the profile against
hand-written ground truth, over scenarios of ordinary conversation.

Each scenario (``memcore/data/scenarios/*.json``) is one user's turns over weeks or
months and the truth at a stated date (``as_of``): facts that are *true* then (recall
counts them), *acceptable* facts (true but not required), *stale* facts (were true,
are not any more) and *noise* (never profile material: small talk, questions, other
people's facts taken for the user's). The turns go through the real stack
(``Client.add`` -> Celery ingest workers -> Redis), one turn per task, in order, each
stamped with its own time; a pass then runs with ``now = as_of`` and
``Client.profile(now=as_of)`` is judged.

Judging uses this module's own matching rules, never the extractor's code. A truth
item is a list of keyword groups (``all``) and veto words (``none``). A profile fact
matches an item when every group has one alternative in the fact's normalized text and
no veto word occurs. Normalized: accents dropped, lower case, ``n't`` -> `` not``, every
other non-alphanumeric character a space. An alternative is a phrase matched on word
boundaries; a trailing ``*`` on a word makes it a prefix (``live*`` matches ``lives``).
A profile fact is *stale* if it matches any stale item (a fact carrying an out-of-date
claim is out of date even if it also says something true), else *noise* if it matches a
noise item, else *correct* if it matches a true or acceptable item, else *unmatched*
(counted as wrong). precision = correct / profile facts; recall = true items matched
by at least one correct fact / true items. Scenarios marked ``held_out`` were written
before the extractor was changed and are reported separately (``held_out``). The
``frozen_*`` scenarios are a frozen held-out set (committed in 30d342a, written
by people who read only the README; no rule is ever changed for one of
their sentences): reported on their own as ``frozen``, and ``held_out`` includes them.

Run: ``memcore bench profile --out bench/profile.json`` (``--quick`` for two scenarios,
``--models openai`` for an OpenAI-compatible endpoint set by ``MEMCORE_OPENAI_*``).
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from memcore.client.client import Client
from memcore.core.config import Settings
from memcore.core.models import Role, as_utc, utcnow
from memcore_bench.common import (
    MODELS,
    add_counters,
    agreement,
    agreement_text,
    decisions_by_type,
    machine,
    markdown_table,
    models_env,
    pyplot,
    running_stack,
    save_figure,
    task_timeout,
    write_outputs,
)

CONTRACT_KEYS = ("scenarios", "facts", "precision", "recall", "stale_in_profile",
                 "noise_in_profile", "per_scenario", "held_out")
CATEGORIES = ("true", "acceptable", "stale", "noise")
QUICK_SCENARIOS = ("quick_seed_style", "quick_switches")
FROZEN_PREFIX = "frozen_"  # the frozen held-out set
_ITEM_KEYS = {"fact", "all", "none"}
_SCENARIO_KEYS = {"name", "held_out", "speaker", "style", "description", "as_of", "turns",
                  "truth"}
_TURN_KEYS = {"at", "role", "text", "tags"}


def normalize(text: str) -> str:
    """The form facts and keywords are compared in (see the module docstring)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    text = text.replace("\u2019", "'").replace("n't", " not")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


# Stands for a trailing "*" while the keyword is normalized: no word of English ("star"
# was, and a keyword "star" became a wildcard of nothing).
_WILDCARD = "qqwildcardqq"


def _phrase(alternative: str) -> re.Pattern[str]:
    words = normalize(alternative.replace("*", f" {_WILDCARD} ")).split()
    parts: list[str] = []
    for word in words:
        if word == _WILDCARD:
            if parts:
                parts[-1] += r"[a-z0-9]*"
            continue
        parts.append(re.escape(word))
    if not parts:
        raise ValueError(f"empty keyword {alternative!r}")
    return re.compile(r"(?<![a-z0-9])" + r" ".join(parts) + r"(?![a-z0-9])")


@dataclass(frozen=True)
class TruthItem:
    """One truth item: what it means (``fact``) and how a profile fact is matched."""

    fact: str
    groups: tuple[tuple[re.Pattern[str], ...], ...]
    vetoes: tuple[re.Pattern[str], ...] = ()

    def matches(self, normalized: str) -> bool:
        """Every group has an alternative in ``normalized`` and no veto occurs."""
        if any(v.search(normalized) for v in self.vetoes):
            return False
        return all(any(p.search(normalized) for p in group) for group in self.groups)


@dataclass
class Scenario:
    """One scenario: turns, the date of the truth and the truth items by category."""

    name: str
    held_out: bool
    speaker: str
    as_of: datetime
    turns: list[dict[str, Any]]
    truth: dict[str, list[TruthItem]]
    style: str = ""
    tags: dict[str, int] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        """The scenario's namespace in the bench store."""
        return "profile-" + re.sub(r"[^A-Za-z0-9_.-]", "-", self.name)


def _item(raw: Any, where: str) -> TruthItem:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: expected an object")
    unknown = set(raw) - _ITEM_KEYS
    if unknown:
        raise ValueError(f"{where}.{sorted(unknown)[0]}: unknown key")
    groups = raw.get("all")
    if (not isinstance(groups, list) or not groups
            or not all(isinstance(g, list) and g and all(isinstance(a, str) for a in g)
                       for g in groups)):
        raise ValueError(f"{where}.all: expected a non-empty list of non-empty lists of strings")
    vetoes = raw.get("none", [])
    if not isinstance(vetoes, list) or not all(isinstance(v, str) for v in vetoes):
        raise ValueError(f"{where}.none: expected a list of strings")
    return TruthItem(str(raw.get("fact", "")),
                     tuple(tuple(_phrase(a) for a in g) for g in groups),
                     tuple(_phrase(v) for v in vetoes))


def _iso(value: Any, where: str) -> datetime:
    """An ISO date-time in UTC (an error names ``where``)."""
    try:
        return as_utc(datetime.fromisoformat(str(value)))
    except ValueError as exc:
        raise ValueError(f"{where}: not an ISO date-time ({exc})") from exc


def _turn(turn: Any, where: str, as_of: datetime, tags: dict[str, int]) -> dict[str, Any]:
    """One checked turn (its tags counted into ``tags``)."""
    if not isinstance(turn, Mapping):
        raise ValueError(f"{where}: expected an object")
    if set(turn) - _TURN_KEYS:
        raise ValueError(f"{where}.{sorted(set(turn) - _TURN_KEYS)[0]}: unknown key")
    at = _iso(turn.get("at"), f"{where}.at")
    if at > as_of:
        raise ValueError(f"{where}.at: after as_of")
    try:
        role = Role(str(turn.get("role", "user")))
    except ValueError as exc:
        raise ValueError(f"{where}.role: {exc}") from exc
    if not isinstance(turn.get("text"), str) or not turn["text"].strip():
        raise ValueError(f"{where}.text: expected a non-empty string")
    for tag in turn.get("tags", []):
        tags[str(tag)] = tags.get(str(tag), 0) + 1
    return {"at": at, "role": role, "text": turn["text"]}


def _truth(raw: Any, origin: str) -> dict[str, list[TruthItem]]:
    """The truth items by category (at least one true item)."""
    if not isinstance(raw, Mapping) or set(raw) - set(CATEGORIES):
        raise ValueError(f"{origin}.truth: expected an object with keys {', '.join(CATEGORIES)}")
    truth = {c: [_item(x, f"{origin}.truth.{c}[{i}]") for i, x in
                 enumerate(raw.get(c, []))] for c in CATEGORIES}
    if not truth["true"]:
        raise ValueError(f"{origin}.truth.true: at least one true item is needed")
    return truth


def parse_scenario(data: Any, origin: str = "scenario") -> Scenario:
    """A scenario from its JSON object (an error names the bad field)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{origin}: expected a JSON object")
    unknown = set(data) - _SCENARIO_KEYS
    if unknown:
        raise ValueError(f"{origin}.{sorted(unknown)[0]}: unknown key")
    for key in ("name", "as_of", "turns", "truth"):
        if key not in data:
            raise ValueError(f"{origin}.{key}: required")
    as_of = _iso(data["as_of"], f"{origin}.as_of")
    turns = data["turns"]
    if not isinstance(turns, list) or not turns:
        raise ValueError(f"{origin}.turns: expected a non-empty list")
    tags: dict[str, int] = {}
    checked = [_turn(turn, f"{origin}.turns[{i}]", as_of, tags) for i, turn in enumerate(turns)]
    return Scenario(name=str(data["name"]), held_out=bool(data.get("held_out", False)),
                    speaker=str(data.get("speaker", "")), as_of=as_of, turns=checked,
                    truth=_truth(data["truth"], origin), style=str(data.get("style", "")),
                    tags=tags)


def load_scenarios(directory: Path | None = None, *, quick: bool = False) -> list[Scenario]:
    """Every ``*.json`` scenario in ``directory`` (default: the bundled ones), by name.

    ``quick``: only the two short scenarios named in :data:`QUICK_SCENARIOS`.
    """
    if directory is None:
        files = sorted((p.name, p.read_text(encoding="utf-8")) for p in
                       resources.files("memcore.data").joinpath("scenarios").iterdir()
                       if p.name.endswith(".json"))
    else:
        if not Path(directory).is_dir():
            raise ValueError(f"--scenarios: {directory} is not a directory")
        files = sorted((p.name, p.read_text(encoding="utf-8"))
                       for p in Path(directory).glob("*.json"))
    if not files:
        raise ValueError(f"--scenarios: no .json files in {directory or 'the bundled set'}")
    out = []
    for name, text in files:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}: invalid JSON ({exc})") from exc
        out.append(parse_scenario(data, name))
    if quick:
        out = [s for s in out if s.name in QUICK_SCENARIOS] or out[:2]
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise ValueError("scenarios: two scenarios share a name")
    return out


def classify(text: str, truth: Mapping[str, Sequence[TruthItem]]
             ) -> tuple[str, list[int]]:
    """The category of one profile fact and the indices of the true items it matches.

    Categories: ``stale``, ``noise``, ``correct`` or ``unmatched`` (module docstring).
    """
    norm = normalize(text)
    if any(item.matches(norm) for item in truth["stale"]):
        return "stale", []
    if any(item.matches(norm) for item in truth["noise"]):
        return "noise", []
    hits = [i for i, item in enumerate(truth["true"]) if item.matches(norm)]
    if hits or any(item.matches(norm) for item in truth["acceptable"]):
        return "correct", hits
    return "unmatched", []


def judge(scenario: Scenario, profile_texts: Sequence[str]) -> dict[str, Any]:
    """Precision, recall and the judged facts of one scenario's profile."""
    counts = {"correct": 0, "stale": 0, "noise": 0, "unmatched": 0}
    found: set[int] = set()
    judged = []
    for text in profile_texts:
        category, hits = classify(text, scenario.truth)
        counts[category] += 1
        found.update(hits)
        judged.append({"text": text, "category": category})
    n_true = len(scenario.truth["true"])
    return {
        "held_out": scenario.held_out, "turns": len(scenario.turns),
        "as_of": scenario.as_of.isoformat(), "facts": len(profile_texts),
        "true_items": n_true, "found": len(found),
        "precision": counts["correct"] / len(profile_texts) if profile_texts else 0.0,
        "recall": len(found) / n_true,
        "correct": counts["correct"], "stale_in_profile": counts["stale"],
        "noise_in_profile": counts["noise"], "unmatched_in_profile": counts["unmatched"],
        "missed": [scenario.truth["true"][i].fact for i in range(n_true) if i not in found],
        "profile": judged, "tags": scenario.tags,
    }


def totals(per: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Micro-averaged figures over scenarios (precision over all facts, recall over all
    true items)."""
    facts = sum(p["facts"] for p in per)
    true_items = sum(p["true_items"] for p in per)
    return {
        "scenarios": len(per), "facts": facts, "true_items": true_items,
        "precision": sum(p["correct"] for p in per) / facts if facts else 0.0,
        "recall": sum(p["found"] for p in per) / true_items if true_items else 0.0,
        "stale_in_profile": sum(p["stale_in_profile"] for p in per),
        "noise_in_profile": sum(p["noise_in_profile"] for p in per),
        "unmatched_in_profile": sum(p["unmatched_in_profile"] for p in per),
        "scenarios_with_stale": sum(1 for p in per if p["stale_in_profile"]),
    }


def messages(scenario: Scenario) -> list[dict[str, Any]]:
    """The scenario's turns as ``Client.add`` messages."""
    return [{"role": t["role"].value, "content": t["text"], "timestamp": t["at"],
             "speaker": scenario.speaker if t["role"] is Role.USER else t["role"].value}
            for t in scenario.turns]


def _earlier_run(out: Path | None, models: str, embedder: str, quick: bool
                 ) -> tuple[dict[str, dict[str, Any]], float]:
    """The scenarios (and seconds) an earlier run of the same settings wrote to ``out``."""
    if out is None:
        raise ValueError("--resume: needs --out (the run to continue)")
    if not Path(out).exists():
        return {}, 0.0
    earlier = json.loads(Path(out).read_text(encoding="utf-8"))
    for key, value in (("models", models), ("embedder", embedder), ("quick", quick)):
        if earlier.get(key) != value:
            raise ValueError(f"--resume: {out} was run with {key}={earlier.get(key)!r}, "
                             f"this run has {value!r}")
    per = earlier.get("per_scenario", {})
    if any("counters" not in p for p in per.values()):
        raise ValueError(f"--resume: {out} was written without per-scenario counters "
                         "(by an older memcore); run it again whole")
    return per, float(earlier.get("seconds", 0.0))


def run_profile(*, models: str = "offline", embedder: str = "hash", quick: bool = False,
                scenarios_dir: Path | None = None, out: Path | None = None,
                redis_url: str | None = None, timeout: float | None = None,
                resume: bool = False, max_scenarios: int | None = None
                ) -> dict[str, Any]:
    """Run every scenario through a stack, judge the profiles, write ``out`` (+ .md, .png).

    ``resume`` continues the run already in ``out`` (same models, embedder and quick):
    its scenarios are kept and only the others run; ``max_scenarios`` runs at most that
    many of them, so a slow model's run can be spread over several sittings. The totals
    are always over every scenario in ``out``.
    """
    if embedder not in ("hash", "local", "openai"):
        raise ValueError(f"--embedder: expected hash, local or openai; got {embedder!r}")
    if max_scenarios is not None and max_scenarios < 1:
        raise ValueError(f"--max-scenarios: expected at least 1, got {max_scenarios}")
    env = {"MEMCORE_EMBEDDER": embedder, "MEMCORE_EXTRACTOR": "auto", **models_env(models)}
    scenarios = load_scenarios(scenarios_dir, quick=quick)
    per, seconds_before = _earlier_run(out, models, embedder, quick) if resume else ({}, 0.0)
    scenarios = [s for s in scenarios if s.name not in per][:max_scenarios]
    timeout = timeout if timeout is not None else task_timeout(models, 900.0)
    t0 = time.perf_counter()
    if scenarios:
        _run_scenarios(scenarios, per, env, embedder, models, redis_url, timeout)
    result = _result(per, models, embedder, quick, seconds_before + time.perf_counter() - t0)
    if out is not None:
        write_outputs(result, Path(out), markdown(result), plot)
    return result


def _run_scenarios(scenarios: list[Scenario], per: dict[str, dict[str, Any]],
                   env: dict[str, str], embedder: str, models: str, redis_url: str | None,
                   timeout: float) -> None:
    """Feed ``scenarios`` through one stack (their turns interleaved), run a pass on each
    and add its judged profile to ``per``."""
    with running_stack(redis_url, ingest_concurrency=2, env=env) as stack:
        settings = Settings(redis_url=stack.redis_url, embedder=embedder,
                            **({"openai_api_key": None} if models == "offline" else {}))
        client = Client(settings=settings)
        try:
            for s in scenarios:
                # A reused Redis starts each scenario empty.
                client.store.eraser.erase_namespace(s.namespace, utcnow(), missing_ok=True)
            # Turns in order, one per task; the scenarios advance together.
            queues = [messages(s) for s in scenarios]
            for i in range(max(len(q) for q in queues)):
                ids: list[str] = []
                for s, q in zip(scenarios, queues, strict=True):
                    if i < len(q):
                        ids += client.add(s.namespace, [q[i]])
                client.wait(ids, timeout=timeout)
            for s in scenarios:
                report = client.consolidate(s.namespace, now=s.as_of, timeout=timeout)
                texts = [m.text for m in client.profile(s.namespace, now=s.as_of)]
                per[s.name] = judge(s, texts)
                counters = client.store.coordination.counters(s.namespace)
                per[s.name]["model_calls"] = float(counters.get("model_calls", 0))
                per[s.name]["decisions"] = decisions_by_type(counters)
                per[s.name]["counters"] = {k: float(v) for k, v in counters.items()
                                           if str(k).startswith("shadow.")}
                per[s.name]["pass"] = ({k: report[k] for k in ("batches", "events",
                                                                "changed", "merge_calls")
                                        if k in report} if isinstance(report, Mapping)
                                       else report)
                per[s.name]["merge_calls"] = int(report.get("merge_calls", 0)
                                                 if isinstance(report, Mapping) else 0)
                per[s.name]["changed"] = int(report.get("changed", 0)
                                             if isinstance(report, Mapping) else 0)
        finally:
            gc.collect()  # drop finished AsyncResults while their backend is still up
            client.close()


def _result(per: dict[str, dict[str, Any]], models: str, embedder: str, quick: bool,
            seconds: float) -> dict[str, Any]:
    """Totals (all, held out, tuned) and the run's figures over the judged scenarios."""
    result: dict[str, Any] = totals(list(per.values()))
    held = [p for p in per.values() if p["held_out"]]
    tuned = [p for p in per.values() if not p["held_out"]]
    result["held_out"] = totals(held)
    result["frozen"] = totals([p for name, p in per.items() if name.startswith(FROZEN_PREFIX)])
    result["tuned"] = totals(tuned)
    result["per_scenario"] = per
    result["models"] = models
    result["embedder"] = embedder
    result["quick"] = quick
    result["turns"] = sum(p["turns"] for p in per.values())
    result["phrasings"] = {tag: sum(p["tags"].get(tag, 0) for p in per.values())
                           for tag in ("change", "please")}
    result["seconds"] = seconds
    result["decisions"] = {op: sum(p["decisions"].get(op, 0) for p in per.values())
                           for op in ("ADD", "UPDATE", "DELETE", "NOOP")}
    # One pass per scenario: the model calls it made against the memories changed since
    # the last pass (model calls follow what changed: docs/design.md, Merging).
    result["merge_calls"] = sum(p["merge_calls"] for p in per.values())
    result["merge_calls_per_pass"] = result["merge_calls"] / max(1, len(per))
    changed = sum(p["changed"] for p in per.values())
    result["changed"] = changed
    result["merge_calls_per_changed"] = result["merge_calls"] / changed if changed else 0.0
    shadow: dict[str, float] = {}
    for p in per.values():
        add_counters(shadow, p["counters"])  # kept per scenario: a resumed run adds to it
    result["agreement"] = agreement(shadow)
    turns = max(1, result["turns"])
    result["model_calls_per_turn"] = sum(p["model_calls"] for p in per.values()) / turns
    result["seconds_per_turn"] = result["seconds"] / turns
    result["machine"] = machine()
    return result


def markdown(result: Mapping[str, Any]) -> str:
    """Totals (all, held-out, tuned), then one row per scenario and the misses."""
    head = ("set", "scenarios", "facts", "precision", "recall", "stale", "noise", "unmatched")
    rows = [(label, r["scenarios"], r["facts"], r["precision"], r["recall"],
             r["stale_in_profile"], r["noise_in_profile"], r["unmatched_in_profile"])
            for label, r in (("all", result), ("held out", result["held_out"]),
                             ("frozen held-out (30d342a)",
                              result.get("frozen", result["held_out"])),
                             ("tuned", result["tuned"]))]
    per = [(name, "yes" if p["held_out"] else "", p["turns"], p["facts"], p["precision"],
            p["recall"], p["stale_in_profile"], p["noise_in_profile"],
            p["unmatched_in_profile"], p.get("merge_calls", 0), p.get("changed", 0))
           for name, p in result["per_scenario"].items()]
    wrong = [f"- {name}: [{j['category']}] {j['text']}"
             for name, p in result["per_scenario"].items() for j in p["profile"]
             if j["category"] != "correct"]
    missed = [f"- {name}: {m}" for name, p in result["per_scenario"].items()
              for m in p["missed"]]
    return "\n".join([
        f"# bench profile ({result['models']} models, {result['embedder']} embedder)", "",
        f"{result['scenarios']} scenarios, {result['turns']} turns "
        f"({result['phrasings']['change']} change phrasings, "
        f"{result['phrasings']['please']} 'please' turns); {result['seconds']:.0f} s "
        f"({result.get('seconds_per_turn', 0):.1f} s and "
        f"{result.get('model_calls_per_turn', 0):.2f} model calls per turn); decisions "
        f"{result.get('decisions', {})}; merge calls per pass "
        f"{result.get('merge_calls_per_pass', 0):.1f} "
        f"({result.get('merge_calls_per_changed', 0):.3f} per changed memory); agreement "
        f"with the offline rules {agreement_text(result.get('agreement'))}.", "",
        markdown_table(head, rows), "",
        markdown_table(("scenario", "held out", "turns", "facts", "precision", "recall",
                        "stale", "noise", "unmatched", "merge calls", "changed"), per), "",
        "## Profile facts judged wrong", "", *(wrong or ["(none)"]), "",
        "## True items missed", "", *(missed or ["(none)"]), ""])


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Precision and recall per scenario (held-out ones hatched), targets dashed."""
    plt = pyplot()
    names = list(result["per_scenario"])
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(names) + 2), 4))
    xs = range(len(names))
    for offset, key in ((-0.2, "precision"), (0.2, "recall")):
        bars = ax.bar([x + offset for x in xs], [result["per_scenario"][n][key] for n in names],
                      width=0.4, label=key)
        for bar, n in zip(bars, names, strict=True):
            if result["per_scenario"][n]["held_out"]:
                bar.set_hatch("//")
    ax.axhline(0.9, color="C0", linestyle="--", linewidth=0.8)
    ax.axhline(0.8, color="C1", linestyle="--", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_title(f"profile: P {result['precision']:.2f} R {result['recall']:.2f} "
                 f"(held out P {result['held_out']['precision']:.2f} "
                 f"R {result['held_out']['recall']:.2f})")
    ax.legend(loc="lower right")
    save_figure(fig, path)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``python -m memcore_bench.profile --out FILE [--quick] [--models M]``."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", choices=MODELS, default="offline")
    parser.add_argument("--embedder", choices=("hash", "local", "openai"), default="hash")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scenarios", type=Path, default=None)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = run_profile(models=args.models, embedder=args.embedder, quick=args.quick,
                         scenarios_dir=args.scenarios, out=args.out, redis_url=args.redis_url)
    print(json.dumps({k: result[k] for k in CONTRACT_KEYS if k != "per_scenario"},
                     default=str), flush=True)
    return result


if __name__ == "__main__":
    main()
