"""``bench locomo``: evidence recall@10 of LoCoMo questions over raw turns, the write
path's memories and the consolidated memories, all measured in one run.

Each conversation is a namespace. Its turns go through the real pipeline
(``Client.add`` -> Celery ingest workers -> Redis) one turn per task, in order, stamped
with their session's date-time; a pass then runs as of the last session. For every
question of categories 1-4, ``Client.search(k=10, now=last session, touch=False)``
retrieves memories and the recall is the share of the question's evidence turns
covered by the retrieved memories' sources. ``raw`` stores every turn as a memory of
its own (namespace ``<ns>-raw``), nothing else.

``--facts observations`` attaches the dataset's human-checked ``session_N_observation``
facts to the turns they cite and runs the workers with ``MEMCORE_EXTRACTOR=provided``,
so the write path and the pass see those facts instead of the offline extractor's.

``--context-tokens 1000,2000`` also measures how often a question's evidence is inside a
context block of that many tokens, next to raw turns cut to the same budget
(:mod:`memcore_bench.locomo_context`).

Run: ``python -m memcore_bench.locomo --data ../shared/data/locomo --embedder local
--out bench/locomo.json``. Writes the JSON (keys are a contract), ``.md`` and ``.png``.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.client.client import Client
from memcore.client.conversation_files import is_locomo, locomo_batches, locomo_episode_id
from memcore.core.config import Settings
from memcore.core.models import LIVE_STATUSES, Actor, Memory, Status
from memcore.language.english.lexicon import canonical_terms, numbers
from memcore_bench.common import (
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
from memcore_bench.locomo_context import (
    combine_context,
    context_markdown,
    measure_context,
    parse_budgets,
    raw_text,
)

CONTRACT_KEYS = (
    "conversations", "questions", "embedder", "facts", "raw", "ingested", "consolidated",
    "model_calls_per_turn", "decision_share", "seconds",
)
STAGES = ("raw", "ingested", "consolidated")
STAGE_KEYS = ("recall_at_10", "memories", "words")
FACT_SOURCES = ("extracted", "observations")
SEARCH_MODES = ("hybrid", "vector")
CATEGORIES = (1, 2, 3, 4)
K = 10
QUICK_SESSIONS = 3
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_OBSERVATION_KEY = re.compile(r"^session_(\d+)_observation$")


@dataclass
class Question:
    """A question with the episode ids of its evidence turns."""

    text: str
    evidence: frozenset[str]
    category: int


@dataclass
class Conversation:
    """One LoCoMo conversation, ready to ingest."""

    name: str
    namespace: str
    sessions: list[list[dict[str, Any]]]
    questions: list[Question]
    last_time: datetime
    observations: int = 0
    unmatched_observations: int = 0

    @property
    def turns(self) -> int:
        """Turns in all sessions."""
        return sum(len(s) for s in self.sessions)


@dataclass
class StageResult:
    """Recall and size of one stage of one conversation."""

    recall: list[float] = field(default_factory=list)
    strict: list[float] = field(default_factory=list)
    carried: list[float] = field(default_factory=list)
    summaries: int = 0
    by_category: dict[int, list[float]] = field(default_factory=dict)
    memories: int = 0
    words: int = 0
    short_results: int = 0

    def summary(self) -> dict[str, Any]:
        """The stage's contract figures plus recall per category."""
        return {"recall_at_10": mean(self.recall), "memories": self.memories,
                "words": self.words, "questions": len(self.recall),
                "recall_at_10_strict": mean(self.strict),
                "recall_at_10_carried": mean(self.carried), "summaries": self.summaries,
                "short_results": self.short_results,
                "recall_by_category": {str(c): mean(v) for c, v in
                                       sorted(self.by_category.items())}}


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; 0.0 for no values."""
    return sum(values) / len(values) if values else 0.0


def evidence_ids(raw: Any) -> frozenset[str]:
    """Episode ids of a question's ``evidence`` (entries like ``"D8:6; D9:17"`` split)."""
    items = raw if isinstance(raw, list) else [raw]
    out = set()
    for item in items:
        for part in _EVIDENCE_SPLIT.split(str(item)):
            if part.strip():
                out.add(locomo_episode_id(part))
    return frozenset(out)


def _observations(data: Mapping[str, Any]) -> list[tuple[int, str, list[str]]]:
    """``(session, text, [dia_id, ...])`` of every observation fact."""
    out = []
    for key, value in data.items():
        m = _OBSERVATION_KEY.match(str(key))
        if not m or not isinstance(value, Mapping):
            continue
        for facts in value.values():
            for fact in facts or []:
                if not isinstance(fact, list | tuple) or len(fact) < 2 or not fact[0]:
                    continue
                cited = fact[1] if isinstance(fact[1], list) else [fact[1]]
                ids = sorted({locomo_episode_id(p) for c in cited
                              for p in _EVIDENCE_SPLIT.split(str(c)) if p.strip()})
                out.append((int(m.group(1)), str(fact[0]).strip(), ids))
    return out


def load_conversation(path: Path, *, facts: str = "extracted",
                      max_sessions: int | None = None) -> Conversation:
    """One LoCoMo file as sessions of messages (with observation facts attached if asked)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not is_locomo(data):
        raise ValueError(f"--data: {path} is not a LoCoMo conversation")
    conv = data.get("conversation", data)
    # No image captions: the turns as the dataset's reference figures stored them.
    batches = locomo_batches(conv, captions=False)[:max_sessions]
    sessions = [b.messages for b in batches]
    if not sessions:
        raise ValueError(f"--data: {path} has no sessions")
    by_id = {m["id"]: m for s in sessions for m in s}
    name = path.stem
    namespace = "locomo-" + re.sub(r"[^A-Za-z0-9_.-]", "-", name)
    result = Conversation(name, namespace, sessions, [], sessions[-1][-1]["timestamp"])
    if facts == "observations":
        for _, text, ids in _observations(conv):
            known = [i for i in ids if i in by_id]
            result.observations += 1
            if not known:
                result.unmatched_observations += 1
                continue
            # Attached to every turn it cites: the write path's exact-duplicate step turns
            # the repeats into extra sources of one memory (its support), as it would for
            # a fact stated twice.
            for episode_id in known:
                meta = by_id[episode_id].setdefault("metadata", {})
                meta.setdefault("facts", []).append(text)
    for q in data.get("qa", []):
        category = int(q.get("category", 0))
        evidence = evidence_ids(q.get("evidence", []))
        if category not in CATEGORIES or not evidence:
            continue
        if max_sessions is not None and not evidence <= by_id.keys():
            continue  # truncated conversation: only questions it can answer
        result.questions.append(Question(str(q["question"]), evidence, category))
    return result


def load_conversations(data_dir: Path, *, facts: str = "extracted", quick: bool = False,
                       only: Sequence[str] | None = None) -> list[Conversation]:
    """Every LoCoMo JSON file in ``data_dir`` (quick: the first, truncated to 3 sessions);
    ``only``: just the files with these stems (``conv-26``), e.g. a tuning subset."""
    if facts not in FACT_SOURCES:
        raise ValueError(f"facts must be one of {', '.join(FACT_SOURCES)}; got {facts!r}")
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise ValueError(f"--data: {data_dir} is not a directory")
    files = sorted(data_dir.glob("*.json"))
    if not files:
        raise ValueError(f"--data: no .json files in {data_dir}")
    if only:
        missing = sorted(set(only) - {f.stem for f in files})
        if missing:
            raise ValueError(f"--conversations: no {', '.join(missing)} in {data_dir}")
        files = [f for f in files if f.stem in set(only)]
    if quick:
        return [load_conversation(files[0], facts=facts, max_sessions=QUICK_SESSIONS)]
    return [load_conversation(f, facts=facts) for f in files]


def store_raw(client: Client, conv: Conversation) -> str:
    """Every turn as an active memory of its own in ``<ns>-raw``; returns that namespace.

    A turn is stored as ``"Speaker: text"``: who said it is part of the turn (and is
    how the dataset's reference figures were measured).
    """
    ns = conv.namespace + "-raw"
    turns = [m for s in conv.sessions for m in s]
    embedder = client.models.embedder
    for start in range(0, len(turns), 256):
        chunk = turns[start:start + 256]
        texts = [raw_text(m) for m in chunk]
        vectors = embedder.embed(texts)
        for msg, text, vec in zip(chunk, texts, vectors, strict=True):
            at = msg["timestamp"]
            memory = Memory(id=msg["id"], namespace=ns, text=text,
                            vector=[float(x) for x in vec], last_used=at, sources=[msg["id"]],
                            status=Status.ACTIVE, created_at=at, updated_at=at)
            client.store.writes.add(ns, memory, actor=Actor.INGEST, reason="bench raw turn")
    return ns


def chunks(conv: Conversation, turns_per_add: int) -> list[list[dict[str, Any]]]:
    """The conversation's turns in ``Client.add`` batches of up to ``turns_per_add``
    consecutive turns of one session."""
    if turns_per_add < 1:
        raise ValueError(f"turns_per_add must be >= 1, got {turns_per_add}")
    return [s[i:i + turns_per_add] for s in conv.sessions
            for i in range(0, len(s), turns_per_add)]


def ingest(client: Client, convs: Sequence[Conversation], turns_per_add: int = 1,
           timeout: float = 600.0) -> float:
    """Enqueue every turn in order within each conversation, ``turns_per_add`` per task.

    Conversations advance together (one batch of each per round, then wait) so the
    workers stay busy while each namespace still sees its turns in order.
    Returns the seconds spent.
    """
    t0 = time.perf_counter()
    queues = [chunks(c, turns_per_add) for c in convs]
    for i in range(max(len(q) for q in queues)):
        ids: list[str] = []
        for conv, batches in zip(convs, queues, strict=True):
            if i < len(batches):
                ids += client.add(conv.namespace, batches[i])
        client.wait(ids, timeout=timeout)
    return time.perf_counter() - t0


CARRIED_SHARE = 0.8


def carries(summary: str, member: str, share: float = CARRIED_SHARE) -> bool:
    """True if ``summary``'s text says what ``member`` said: every number of it and at
    least ``share`` of its content terms (the lexicon's stems, stopwords left out)."""
    wanted = canonical_terms(member)
    if not numbers(member) <= numbers(summary):
        return False
    return len(wanted & canonical_terms(summary)) >= share * len(wanted)


def source_texts(client: Client, ns: str) -> dict[str, list[str]]:
    """Episode id -> texts of the live, non-derived memories citing it (before a pass)."""
    out: dict[str, list[str]] = {}
    for m in client.store.records.iter_memories(ns, statuses=LIVE_STATUSES):
        if m.derived_level == 0:
            for source in m.sources:
                out.setdefault(source, []).append(m.text)
    return out


def measure(client: Client, ns: str, conv: Conversation, hybrid: bool = True,
            said: Mapping[str, Sequence[str]] | None = None) -> StageResult:
    """Recall@10 of the conversation's questions and the live size of ``ns``.

    ``said``: episode id -> texts of the memories that cited it after ingestion; a
    summary is credited in ``carried`` for an evidence turn only if its text carries
    one of those texts (:func:`carries`)."""
    stage = StageResult()
    for m in client.store.records.iter_memories(ns, statuses=LIVE_STATUSES):
        stage.memories += 1
        stage.words += len(m.text.split())
        stage.summaries += m.derived_level > 0
    for q in conv.questions:
        hits = client.search(ns, q.text, k=K, now=conv.last_time, touch=False, hybrid=hybrid)
        if len(hits) < K:
            stage.short_results += 1
        covered = {s for h in hits for s in h.memory.sources} & q.evidence
        recall = len(covered) / len(q.evidence)
        stage.recall.append(recall)
        # Strict: a summary (derived memory) gets no credit for its members' sources,
        # since its text keeps only what they share.
        kept = {s for h in hits if h.memory.derived_level == 0 for s in h.memory.sources}
        stage.strict.append(len(kept & q.evidence) / len(q.evidence))
        # Carried: a summary is credited for an evidence turn whose memory's words it kept.
        carried = set(kept & q.evidence)
        for h in hits:
            if h.memory.derived_level > 0:
                carried |= {s for s in set(h.memory.sources) & q.evidence
                            if any(carries(h.memory.text, t) for t in (said or {}).get(s, ()))}
        stage.carried.append(len(carried) / len(q.evidence))
        stage.by_category.setdefault(q.category, []).append(recall)
    return stage


def combine(stages: Sequence[StageResult]) -> dict[str, Any]:
    """All conversations' figures of one stage (recall averaged over all questions)."""
    total = StageResult()
    for s in stages:
        total.recall += s.recall
        total.strict += s.strict
        total.carried += s.carried
        total.summaries += s.summaries
        total.memories += s.memories
        total.words += s.words
        total.short_results += s.short_results
        for c, v in s.by_category.items():
            total.by_category.setdefault(c, []).extend(v)
    return total.summary()


def run_locomo(data: Path, *, embedder: str = "hash", facts: str = "extracted",
               quick: bool = False, out: Path | None = None, redis_url: str | None = None,
               ingest_concurrency: int = 2, overrides: Mapping[str, str] | None = None,
               turns_per_add: int = 1, search: str = "hybrid",
               models: str = "offline", conversations: Sequence[str] | None = None,
               context_tokens: Sequence[int] = ()) -> dict[str, Any]:
    """Run the LoCoMo benchmark once and write ``out`` (JSON), ``.md`` and ``.png``.

    ``overrides``: settings for this run (``{"add_threshold": "0.6", "consolidation":
    '{"tau_hours": 2160}'}``), given to the workers as ``MEMCORE_*`` variables and to
    the searching client alike; recorded under ``settings`` in the result.
    ``conversations``: only these (file stems, e.g. ``["conv-26", "conv-30"]``).
    ``context_tokens``: budgets of the context measure (``result["context"]``).
    """
    if embedder not in ("hash", "local", "openai"):
        raise ValueError(f"embedder must be hash, local or openai; got {embedder!r}")
    if search not in SEARCH_MODES:
        raise ValueError(f"search must be {' or '.join(SEARCH_MODES)}; got {search!r}")
    convs = load_conversations(data, facts=facts, quick=quick, only=conversations)
    overrides = dict(overrides or {})
    settings_with(overrides, embedder=embedder)  # a bad override fails before any work
    if turns_per_add < 1:
        raise ValueError(f"turns_per_add must be >= 1, got {turns_per_add}")
    env = {"MEMCORE_EMBEDDER": embedder,
           "MEMCORE_EXTRACTOR": "provided" if facts == "observations" else "auto",
           **models_env(models),
           **{f"MEMCORE_{k.upper()}": v for k, v in overrides.items()}}
    t0 = time.perf_counter()
    with running_stack(redis_url, ingest_concurrency=ingest_concurrency, env=env) as stack:
        assert stack.redis_url
        settings = settings_with(overrides, redis_url=stack.redis_url, embedder=embedder,
                                 extractor=env["MEMCORE_EXTRACTOR"],
                                 **({"openai_api_key": None} if models == "offline" else {}))
        client = Client(settings=settings)
        try:
            result = _run(client, convs, embedder, facts, turns_per_add, search == "hybrid",
                          task_timeout(models, 600.0), context_tokens)
        finally:
            gc.collect()  # drop finished AsyncResults while their backend is still up
            client.close()
    result["seconds"] = time.perf_counter() - t0
    result["models"] = models
    result["seconds_per_turn"] = result["seconds"] / max(1, result["turns"])
    result["quick"] = quick
    result["settings"] = overrides
    result["selected"] = [c.name for c in convs]
    result["machine"] = machine()
    if out is not None:
        write_outputs(result, Path(out), markdown(result), plot)
    return result


def settings_with(overrides: Mapping[str, str], **fixed: Any) -> Settings:
    """Settings from ``MEMCORE_*``-style overrides (strings, JSON for nested values)."""
    data: dict[str, Any] = dict(fixed)
    for key, value in overrides.items():
        if key not in Settings.model_fields:
            raise ValueError(f"--set: unknown setting {key!r}")
        try:
            data[key] = json.loads(value)
        except json.JSONDecodeError:
            data[key] = value
    return Settings.model_validate(data)


def split_names(text: str) -> list[str] | None:
    """``"conv-26, conv-30"`` as ``["conv-26", "conv-30"]``; None for an empty string."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    return names or None


def parse_sets(items: Sequence[str]) -> dict[str, str]:
    """``["add_threshold=0.6", ...]`` as a mapping (an error names the bad item)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set: expected KEY=VALUE, got {item!r}")
        out[key.strip().lower()] = value
    return out


Counters = Mapping[str, Mapping[str, float]]


def _ratio(part: float, whole: float) -> float:
    """``part / whole``, 0.0 when ``whole`` is zero."""
    return part / whole if whole else 0.0


def _counter_total(counters: Counters, name: str) -> float:
    """One usage counter summed over the conversations' namespaces."""
    return sum(float(c.get(name, 0)) for c in counters.values())


def _pass_total(passes: Mapping[str, Any], name: str) -> int:
    """One figure summed over the consolidation passes' reports (mappings only)."""
    return sum(int(p.get(name, 0)) for p in passes.values() if isinstance(p, Mapping))


def _decisions(counters: Counters) -> dict[str, int]:
    """The write path's decisions by type, summed over the namespaces."""
    decisions: dict[str, int] = {}
    for c in counters.values():
        for op, n in decisions_by_type(c).items():
            decisions[op] = decisions.get(op, 0) + n
    return decisions


def _shadow_agreement(counters: Counters) -> dict[str, Any]:
    """:func:`agreement` over every namespace's ``shadow.*`` counters."""
    return agreement(add_counters({}, {k: v for c in counters.values() for k, v in c.items()
                                       if str(k).startswith("shadow.")}))


def _cost_figures(counters: Counters, passes: Mapping[str, Any],
                  n_conversations: int) -> dict[str, Any]:
    """Model calls, decisions and merge calls of the run, from counters and pass reports."""
    turns = _counter_total(counters, "turns")
    n_facts = _counter_total(counters, "facts")
    merge_calls = _pass_total(passes, "merge_calls")
    return {
        "model_calls_per_turn": _ratio(_counter_total(counters, "model_calls"), turns),
        "decision_share": _ratio(_counter_total(counters, "decision_facts"), n_facts),
        "merge_calls": merge_calls,
        "merge_calls_per_pass": _ratio(merge_calls, n_conversations),
        "merge_calls_per_changed": _ratio(merge_calls, _pass_total(passes, "changed")),
        "extracted_facts": int(n_facts),
        "decisions": _decisions(counters),
        "agreement": _shadow_agreement(counters),
    }


def _measure_and_consolidate(client: Client, convs: Sequence[Conversation],
                             raw_ns: Mapping[str, str],
                             per: dict[str, dict[str, StageResult]], hybrid: bool,
                             timeout: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """Measure the raw and ingested stages into ``per``, then consolidate each conversation.

    Returns the source texts read before each pass (for the consolidated stage's carried
    credit) and the passes' reports, both by conversation."""
    said: dict[str, dict[str, list[str]]] = {}
    passes: dict[str, Any] = {}
    for c in convs:
        per[c.name]["raw"] = measure(client, raw_ns[c.name], c, hybrid)
        per[c.name]["ingested"] = measure(client, c.namespace, c, hybrid)
        said[c.name] = source_texts(client, c.namespace)
        passes[c.name] = client.consolidate(c.namespace, now=c.last_time,
                                            timeout=max(1800.0, timeout))
    return said, passes


def _context(client: Client, convs: Sequence[Conversation], raw_ns: Mapping[str, str],
             context_tokens: Sequence[int]) -> dict[str, Any]:
    """The context measure over all conversations, with its own ``seconds``."""
    t_context = time.perf_counter()
    context = combine_context(
        [measure_context(client, c.namespace, raw_ns[c.name], c, context_tokens)
         for c in convs], context_tokens)
    context["seconds"] = time.perf_counter() - t_context
    return context


def _conversation_summary(c: Conversation, counters: Mapping[str, float], report: Any,
                          stages: Mapping[str, StageResult]) -> dict[str, Any]:
    """One conversation's entry of ``per_conversation``."""
    return {"turns": c.turns, "questions": len(c.questions),
            "observations": c.observations,
            "unmatched_observations": c.unmatched_observations,
            "counters": counters, "pass": _pass_summary(report),
            **{s: stages[s].summary() for s in STAGES}}


def _run(client: Client, convs: Sequence[Conversation], embedder: str, facts: str,
         turns_per_add: int, hybrid: bool = True, timeout: float = 600.0,
         context_tokens: Sequence[int] = ()) -> dict[str, Any]:
    """Store, ingest, measure and consolidate the conversations; the run's figures."""
    per: dict[str, dict[str, StageResult]] = {c.name: {} for c in convs}
    raw_ns = {c.name: store_raw(client, c) for c in convs}
    ingest_seconds = ingest(client, convs, turns_per_add, timeout)
    t_pass = time.perf_counter()
    said, passes = _measure_and_consolidate(client, convs, raw_ns, per, hybrid, timeout)
    pass_seconds = time.perf_counter() - t_pass
    for c in convs:
        per[c.name]["consolidated"] = measure(client, c.namespace, c, hybrid, said[c.name])
    counters = {c.name: client.store.coordination.counters(c.namespace) for c in convs}
    result: dict[str, Any] = {
        "conversations": len(convs),
        "questions": sum(len(c.questions) for c in convs),
        "turns": sum(c.turns for c in convs),
        "embedder": embedder,
        "search": "hybrid" if hybrid else "vector",
        "facts": facts,
        "turns_per_add": turns_per_add,
        **_cost_figures(counters, passes, len(convs)),
        "ingest_seconds": ingest_seconds,
        "pass_seconds": pass_seconds,
    }
    for stage in STAGES:
        result[stage] = combine([per[c.name][stage] for c in convs])
    if context_tokens:
        result["context"] = _context(client, convs, raw_ns, context_tokens)
    result["per_conversation"] = {
        c.name: _conversation_summary(c, counters[c.name], passes[c.name], per[c.name])
        for c in convs}
    return result


def _pass_summary(report: Any) -> Any:
    if isinstance(report, Mapping):
        return {k: report[k] for k in ("batches", "to_version", "events", "skipped",
                                       "changed", "merge_calls") if k in report}
    return report


def markdown(result: Mapping[str, Any]) -> str:
    """The stages as a table, plus the per-conversation recall."""
    rows = [(s, result[s]["recall_at_10"], result[s].get("recall_at_10_strict", ""),
             result[s].get("recall_at_10_carried", ""), result[s]["memories"],
             result[s].get("summaries", ""), result[s]["words"],
             result[s]["words"] / max(1, result["raw"]["words"])) for s in STAGES]
    per = [(name, c["questions"], *(c[s]["recall_at_10"] for s in STAGES),
            c["consolidated"].get("recall_at_10_strict", ""),
            c["consolidated"].get("recall_at_10_carried", ""),
            *(c[s]["words"] for s in STAGES))
           for name, c in result["per_conversation"].items()]
    return "\n".join([
        f"# bench locomo ({result['embedder']} embedder, {result['facts']} facts, "
        f"{result.get('search', 'vector')} search)", "",
        f"{result['conversations']} conversations, {result['questions']} questions "
        f"(categories 1-4), {result['turns']} turns ({result['turns_per_add']} per add); "
        f"settings {result.get('settings') or 'default'}; model calls per turn "
        f"{result['model_calls_per_turn']:.3f}; decision share {result['decision_share']:.3f}; "
        f"merge calls per pass {result.get('merge_calls_per_pass', 0):.1f} "
        f"({result.get('merge_calls_per_changed', 0):.3f} per changed memory); "
        f"{result['seconds']:.0f} s ({result.get('seconds_per_turn', 0):.1f} s per turn); "
        f"{result.get('models', 'offline')} models, decisions {result.get('decisions', {})}; "
        f"agreement with the offline rules {agreement_text(result.get('agreement'))}.", "",
        markdown_table(("stage", "recall_at_10", "strict (no summary credit)",
                        "carried (summary credit if its text carries the turn's memory)",
                        "memories",
                        "summaries", "words", "words / raw"), rows), "",
        markdown_table(("conversation", "questions", "raw recall", "ingested recall",
                        "consolidated recall", "consolidated strict", "consolidated carried",
                        "raw words", "ingested words",
                        "consolidated words"), per), "",
        *([context_markdown(result["context"])] if "context" in result else [])])


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Recall@10 against stored words for raw, ingested and consolidated."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for stage, marker in zip(STAGES, ("s", "o", "^"), strict=True):
        ax.scatter([result[stage]["words"]], [result[stage]["recall_at_10"]], marker=marker,
                   s=80, label=stage)
        for name, conv in result["per_conversation"].items():
            ax.scatter([conv[stage]["words"]], [conv[stage]["recall_at_10"]], marker=marker,
                       s=12, alpha=0.4, color=ax.collections[-1].get_facecolor()[0])
            del name
    ax.set_xscale("log")
    ax.set_xlabel("stored words (log)")
    ax.set_ylabel("evidence recall@10")
    ax.set_ylim(0, 1)
    ax.set_title(f"LoCoMo: {result['embedder']} embedder, {result['facts']} facts")
    ax.legend()
    save_figure(fig, path)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``python -m memcore_bench.locomo --data DIR [--embedder E] [--facts F]
    --out FILE``."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--embedder", choices=("hash", "local", "openai"), default="hash")
    parser.add_argument("--facts", choices=FACT_SOURCES, default="extracted")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--search", choices=SEARCH_MODES, default="hybrid",
                        help="Client.search ranking: hybrid (BM25 + vector, default) or vector")
    parser.add_argument("--turns-per-add", type=int, default=1,
                        help="consecutive turns of a session per Client.add (default 1)")
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting for this run, e.g. add_threshold=0.6 or "
                             "consolidation='{\"tau_hours\": 2160}'")
    parser.add_argument("--conversations", default="",
                        help="comma-separated file stems to run (default: all), e.g. "
                             "conv-26,conv-30")
    parser.add_argument("--context-tokens", default="",
                        help="comma-separated budgets, e.g. 1000,2000: share of questions "
                             "whose evidence is inside a context block of that many tokens, "
                             "next to raw turns cut to the same budget")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    overrides = parse_sets(args.set)
    result = run_locomo(args.data, embedder=args.embedder, facts=args.facts, quick=args.quick,
                        out=args.out, redis_url=args.redis_url, overrides=overrides,
                        turns_per_add=args.turns_per_add, search=args.search,
                        conversations=split_names(args.conversations),
                        context_tokens=parse_budgets(args.context_tokens))
    print(json.dumps({k: result[k] for k in CONTRACT_KEYS}, default=str), flush=True)
    return result


if __name__ == "__main__":
    main()
