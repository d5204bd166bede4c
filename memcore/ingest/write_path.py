"""The write path for one batch of turns (docs/design.md, write path), free of Celery.

store episodes -> extract facts (one call) -> exact duplicates reinforce (no
embedding, no call) -> embed the rest (one batched call) -> top-s neighbours ->
clearly new facts are ADDed (no call) -> one decision call for the borderline
facts -> each decision applied atomically and audited.

Redelivery is harmless: memory ids are derived from (episode, fact), ``add`` of
an existing id and ``reinforce`` with a known source change nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memcore.adapters import Models, OfflineDecider
from memcore.core.config import Settings
from memcore.core.frames import is_single_valued, overrules_text, retires, values_differ
from memcore.core.interfaces import Decision, DecisionRequest, ExtractedFact, Neighbour, Op
from memcore.core.models import (
    FACTS_KEY,
    Actor,
    Episode,
    Frame,
    Kind,
    Memory,
    Role,
    Status,
    check_turn_size,
)
from memcore.core.text import MinHasher, content_hash
from memcore.index.vector_index import IndexCache
from memcore.ingest.dependents import cut_down
from memcore.ingest.erased import kept_turns, restated
from memcore.ingest.forget import REQUEST_MARKER, ForgetRequest, Forgetter, read_requests
from memcore.ingest.redaction import audit_redactions, mask_turns
from memcore.language import LanguagePack, language_pack
from memcore.language.english.compare import (
    is_correction,
    leans_on_recent,
    relation_for,
    relation_of,
)
from memcore.language.reading import Reading
from memcore.observability import metrics
from memcore.observability.instrument import Instruments
from memcore.observability.usage import CallUsage, collect_usage
from memcore.store import MemoryStore
from memcore.store.erased import ErasedSince

MINHASH_MIN_WORDS = 12
# A correction ("It's Anne, not Anna") is judged against this many of the scope's
# latest memories: it corrects what was just said, however unlike it the text is.
RECENT_FOR_CORRECTION = 5
MINHASH_JACCARD = 0.9
# Stored episodes looked back over for the assistant's question a bare answer answers.
QUESTION_LOOKBACK = 8
BARE_ANSWER_CHARS = 200  # a longer turn is no bare answer to a question
REFERENT_CHARS = 400  # the language pack resolves pronouns in turns this short


@dataclass
class IngestReport:
    """What one batch did; also the source of the per-namespace counters."""

    episodes: int = 0
    new_episodes: int = 0
    facts: int = 0
    decisions: dict[str, int] = field(default_factory=dict)
    model_calls: int = 0
    embedding_calls: int = 0
    decision_facts: int = 0
    garbled: int = 0  # rule-extracted facts dropped as no well-formed sentence
    bare: int = 0  # rule-extracted facts dropped as bare or general remarks (Reading)
    memory_ids: list[str] = field(default_factory=list)
    forgotten: list[dict[str, object]] = field(default_factory=list)  # forget requests
    erased_turns: int = 0  # turns left out: erased after they were accepted
    erased_facts: int = 0  # facts left out: their turn or their text erased since
    usage: CallUsage = field(default_factory=CallUsage)  # every model call, embeddings too

    shadow: dict[str, int] = field(default_factory=dict)

    def count(self, op: str) -> None:
        """Count one decision of type ``op``."""
        self.decisions[op] = self.decisions.get(op, 0) + 1

    def compare(self, reference: Sequence[Decision], chosen: Sequence[Decision]) -> None:
        """Count how the decider's ``chosen`` decisions agree with the offline rules'
        ``reference`` decisions on the same requests (``settings.shadow_decisions``).

        ``shadow.<RULES_OP>.<MODEL_OP>`` is the confusion matrix (a fact the model's
        answer could not decide, kept as a candidate, counts as ``KEPT``); ``agree`` is
        the same op, ``agree_target`` the same op on the same memory.
        """
        def tally(key: str) -> None:
            self.shadow[key] = self.shadow.get(key, 0) + 1

        for ref, got in zip(reference, chosen, strict=True):
            model_op = "KEPT" if got.candidate else got.op.value
            tally("compared")
            tally(f"{ref.op.value}.{model_op}")
            if model_op == ref.op.value:
                tally("agree")
                if got.target == ref.target:
                    tally("agree_target")


_MORE_WORDS = 6  # a fact this much longer than a statement of its frame says more


def _says_nothing_findable(fact: ExtractedFact, reading: Reading) -> bool:
    """A rule-extracted fact with no frame, no change rule and no correction that names
    fewer than two things or is about no one."""
    return ((reading.bare or reading.general) and fact.frame is None and reading.frame is None
            and fact.relation is None and not is_correction(fact.text))


def _with_frame(fact: ExtractedFact, reading: Reading) -> ExtractedFact:
    """``fact`` with the frame the pack read, unless it came with one."""
    if fact.frame is None and reading.frame is not None:
        return fact.model_copy(update={"frame": reading.frame})
    return fact


def _as_read(fact: ExtractedFact, reading: Reading) -> ExtractedFact:
    """A rule-extracted fact as the pack read it: its verbs made to agree ("Richard is
    74 and live ..." -> "... lives ..."), a passing feeling a candidate, its frame."""
    if reading.agreed:
        fact = fact.model_copy(update={"text": reading.agreed})
    if reading.vague and fact.frame is None and reading.frame is None:
        # A passing feeling, or a clause about "it": a candidate, not a statement
        # (docs/design.md, Support and confidence): unless said again, it goes.
        fact = fact.model_copy(update={"explicit": False,
                                       "importance": min(fact.importance, 3)})
    return _with_frame(fact, reading)


def _changes_value(new: Frame | None, old: Frame | None) -> bool:
    """Does the fact ``new`` give another value of ``old``'s single-valued attribute
    (a plain statement or a correction, not an end)?"""
    return (new is not None and old is not None and new.subject == old.subject
            and new.attribute == old.attribute and is_single_valued(old.attribute)
            and new.polarity > 0 and new.event in ("", "correction")
            and values_differ(new.value, old.value))


def fact_memory_id(namespace: str, episode_id: str, index: int, text: str) -> str:
    """Deterministic id of the memory a fact would create (redelivery-safe)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"{namespace}/{episode_id}/{index}/{text}").hex


def verbatim_fact(episode: Episode) -> ExtractedFact:
    """A turn's whole text as one explicit fact (``infer=False``). Built without the
    extractor's 2000-character cap: the memory's own text limit applies."""
    return ExtractedFact.model_construct(text=episode.text, kind=Kind.KNOWLEDGE, importance=5,
                                         explicit=True, source=episode.id, valid_from=None,
                                         valid_until=None, expires_at=None, relation=None)


def inherited(episode: Episode) -> dict[str, object]:
    """The metadata a memory takes from its episode: all of it but the producer's facts."""
    return {k: v for k, v in episode.metadata.items() if k != FACTS_KEY}


def same_slot(a: str, b: str) -> bool:
    """Both facts give a value to the same single-valued attribute of the same subject."""
    ra, rb = relation_of(a), relation_of(b)
    return ra is not None and rb is not None and ra[:2] == rb[:2]


_OP_METRIC: dict[str, metrics.MemoryOp] = {"ADD": "added", "UPDATE": "updated",
                                           "DELETE": "superseded"}


def _export(namespace: str, report: IngestReport) -> None:
    """Mirror a batch's decisions into the process's Prometheus metrics (model calls,
    tokens and errors are counted by the instrumented models themselves)."""
    for op, n in report.decisions.items():
        for _ in range(n):
            metrics.record_decision(op)
        if op in _OP_METRIC:
            metrics.record_memory_change(_OP_METRIC[op], n, namespace)



def _lasting(fact: ExtractedFact) -> ExtractedFact:
    """A fact the turn also states as a present state of the speaker (a core attribute
    read from its frame: "I'm a law student at Edinburgh this year") is no dated plan:
    the period it names ("this year") says when it holds, not when it ends."""
    if fact.kind is not Kind.GOAL or fact.valid_until is None or fact.valid_from is not None:
        return fact
    return fact.model_copy(update={"kind": Kind.KNOWLEDGE, "valid_until": None,
                                   "expires_at": None})


def _with_reply(facts: list[ExtractedFact], source: str,
                reply: tuple[Frame | None, str]) -> list[ExtractedFact]:
    """A bare answer read with its question replaces what was made of it alone."""
    frame, text = reply
    out = [f for f in facts if f.source != source]
    out.append(ExtractedFact(text=text, kind=Kind.KNOWLEDGE, importance=6,
                             explicit=True, source=source, frame=frame, frame_read=True))
    return out


def _restates(fact: ExtractedFact, frame: Frame, text: str) -> bool:
    """A fact of the turn that says the statement already stands for it, unless that
    fact says much more (one clause of several would go stale with the others)."""
    return (fact.frame is not None
            and fact.frame.subject == frame.subject
            and fact.frame.attribute == frame.attribute
            and not values_differ(fact.frame.value, frame.value)
            and len(fact.text.split()) <= len(text.split()) + _MORE_WORDS)


def _only_carries(fact: ExtractedFact, source: str, value: str) -> bool:
    """A frameless fact of the turn ``source`` that only carries ``value``."""
    return fact.source == source and fact.frame is None and value in fact.text.lower()


def _shown_target(decision: Decision, near: list[Neighbour]
                  ) -> tuple[Decision, Neighbour | None]:
    """The neighbour a decision targets; the model may only touch the neighbours it was
    shown: a target it invented turns the decision into a NOOP."""
    chosen = decision.target
    if chosen is None:
        return decision, None
    if not 0 <= chosen < len(near):
        return Decision(Op.NOOP, reason=f"rejected invented id {chosen}"), None
    return decision, near[chosen]


class IngestPipeline:
    """Runs the write path for batches of one namespace's turns."""

    def __init__(self, store: MemoryStore, models: Models, settings: Settings,
                 index_cache: IndexCache | None = None,
                 language: LanguagePack | None = None) -> None:
        self.store = store
        self.models = models
        self.settings = settings
        # Reads the facts' frames (subject, attribute, value): loaded on first use.
        self.language = language or language_pack(settings.language, settings.spacy_pipeline)
        self.index_cache = index_cache or IndexCache(store.records.vectors_since,
                                                     models.embedder.dim,
                                                     drains=True)
        self.minhash = MinHasher()

    @property
    def instruments(self) -> Instruments:
        """Where the models' calls are counted and their errors wait for the audit."""
        return self.models.instruments

    def trusted(self, episode: Episode) -> bool:
        """Only user turns become facts by default (poisoned-memory defence)."""
        if episode.role is Role.USER:
            return True
        return episode.role is Role.ASSISTANT and self.settings.allow_assistant_facts

    def ingest(self, namespace: str, episodes: Sequence[Episode], *,
               infer: bool = True, erased: ErasedSince | None = None) -> IngestReport:
        """Process one batch of turns of ``namespace``; returns what was done.

        ``infer=False`` stores each trusted turn's text as one memory verbatim: no
        extraction and no decision call, but exact duplicates (same text, same scope)
        still reinforce the memory they repeat, and every write is audited.
        ``report.usage``: the model calls (and reported tokens) the batch cost.
        ``erased``: what single erases made after the turns were accepted removed; those
        turns and facts are left out (memcore.ingest.erased).
        """
        with collect_usage() as usage:
            report = self._ingest(namespace, episodes, infer, erased or ErasedSince())
        report.usage = usage
        self._count(namespace, report)
        return report

    def _ingest(self, namespace: str, episodes: Sequence[Episode], infer: bool,
                erased: ErasedSince) -> IngestReport:
        self._check_sizes(episodes)  # before anything is written
        # Secrets are masked before anything is stored or extracted (docs/design.md).
        episodes, secrets = mask_turns(self.settings, namespace, episodes)
        # Forget requests (docs/design.md): their sentences are never stored nor read for facts.
        episodes, forget = read_requests(self.language, episodes)
        report = IngestReport(episodes=len(episodes))
        if erased:  # as stored: masked, without request sentences
            episodes, secrets, forget = self._without_erased_turns(
                namespace, episodes, secrets, forget, erased, report)
        fresh = self.store.episodes.add_episodes(episodes)
        audit_redactions(self.store, namespace, episodes, fresh, secrets)
        report.new_episodes = sum(fresh)
        # A turn that was nothing but a forget request gives no fact (not even as the
        # answer to the question before it: "How old is he?" - "Forget it").
        trusted = [ep for ep in episodes if self.trusted(ep) and ep.text != REQUEST_MARKER]
        if trusted:
            self._write_facts(namespace, episodes, trusted, fresh, infer, erased, report)
        if forget:  # erased in this task, before it is acknowledged (memcore.ingest.forget)
            # The task's own erase: not refused by the fence its writes are under.
            with self.store.gateway.unfenced(namespace):
                report.forgotten = [o.as_dict() for o in Forgetter(
                    self.store, self.models.embedder, self.language,
                    self.index_cache).apply(namespace, episodes, forget)]
        return report

    def _check_sizes(self, episodes: Sequence[Episode]) -> None:
        """Refuse a batch with a turn past the size limit, naming the turn."""
        for i, episode in enumerate(episodes):
            try:
                check_turn_size(episode.text, self.settings.max_turn_bytes)
            except ValueError as exc:
                raise ValueError(f"episodes.{i}.text: {exc}") from None

    def _without_erased_turns(self, namespace: str, episodes: list[Episode],
                              secrets: list[list[str]], forget: dict[str, ForgetRequest],
                              erased: ErasedSince, report: IngestReport
                              ) -> tuple[list[Episode], list[list[str]],
                                         dict[str, ForgetRequest]]:
        """The turns, their secrets and their forget requests without the turns single
        erases removed after they were accepted; a copy stored before the erase is
        dropped (the erase wins)."""
        kept = {ep.id for ep in kept_turns(episodes, erased)}
        report.erased_turns = len(episodes) - len(kept)
        secrets = [found for ep, found in zip(episodes, secrets, strict=True)
                   if ep.id in kept]
        for ep in episodes:
            if ep.id not in kept:
                self.store.episodes.drop(namespace, ep.id)
        episodes = [ep for ep in episodes if ep.id in kept]
        forget = {k: v for k, v in forget.items() if k in kept}
        return episodes, secrets, forget

    def _write_facts(self, namespace: str, episodes: list[Episode], trusted: list[Episode],
                     fresh: Sequence[bool], infer: bool, erased: ErasedSince,
                     report: IngestReport) -> None:
        """Read the trusted turns' facts, leave out what was erased since, then decide
        and apply each."""
        origin = {ep.id: ep for ep in episodes}
        facts = self._facts(namespace, episodes, trusted, infer, report)
        if erased:
            new = {ep.id for ep, stored in zip(episodes, fresh, strict=True) if stored}
            facts = self._without_erased(namespace, facts, origin, new, erased, report)
        report.facts = len(facts)
        if facts:
            self._decide_and_apply(namespace, facts, origin, report, infer=infer)

    def _facts(self, namespace: str, episodes: list[Episode], trusted: list[Episode],
               infer: bool, report: IngestReport) -> list[ExtractedFact]:
        """The trusted turns' facts: extracted and framed (with the speakers' own
        statements when the rules extract), or each turn verbatim without ``infer``."""
        if not infer:
            return [verbatim_fact(ep) for ep in trusted]
        extracted = self._extract(namespace, self._resolved(trusted, episodes), report)
        self.language.prepare(  # one parse call for the turns and their facts
            [ep.text for ep in trusted if ep.role is Role.USER]
            if self._rule_extraction else [], [f.text for f in extracted])
        facts = self._framed(extracted, report)
        if self._rule_extraction:
            facts = self._with_statements(trusted, facts, batch=episodes)
        return facts

    def _without_erased(self, namespace: str, facts: list[ExtractedFact],
                        origin: dict[str, Episode], new: set[str],
                        erased: ErasedSince, report: IngestReport) -> list[ExtractedFact]:
        """``facts`` without those single erases since the turns were accepted removed
        (memcore.ingest.erased); a turn this run stored that restates erased content is
        removed again (the erase would have taken it: docs/design.md)."""
        gone = restated(facts, origin, erased)
        if not gone:
            return facts
        report.erased_facts = len(gone)
        for source in sorted({facts[i].source for i in gone} & new):
            self.store.episodes.drop(namespace, source)
            report.erased_turns += 1
            report.new_episodes -= 1
        return [f for i, f in enumerate(facts) if i not in gone]

    def _extract(self, namespace: str, episodes: Sequence[Episode],
                 report: IngestReport) -> list[ExtractedFact]:
        calls_before = self.instruments.thread_calls("extract")
        facts = self.models.instrumented.extractor.extract(episodes)
        report.model_calls += self.instruments.thread_calls("extract") - calls_before
        self._audit_model_errors(namespace, episodes[-1].timestamp, [ep.id for ep in episodes])
        known = {ep.id for ep in episodes}
        return [f for f in facts if f.source in known]

    def _resolved(self, episodes: Sequence[Episode], batch: Sequence[Episode]
                  ) -> list[Episode]:
        """What the rule extractor reads: user turns with the "he"/"she" and the "it"
        the language pack can resolve named (a model reads the turn as it is; the
        stored turn is never changed). ``batch``: all the batch's turns, the
        assistant's too (an "it" may point back into the turn just before)."""
        if not self._rule_extraction:
            return list(episodes)
        users = [i for i, ep in enumerate(episodes) if ep.role is Role.USER]
        before = self._previous_user_turns(episodes)
        just_before = self._turns_just_before(batch)
        texts = self.language.referents([episodes[i].text for i in users],
                                        [before.get(episodes[i].id, "") for i in users],
                                        [just_before.get(episodes[i].id, "") for i in users])
        out = list(episodes)
        for i, text in zip(users, texts, strict=True):
            if text != out[i].text:
                out[i] = out[i].model_copy(update={"text": text})
        return out

    @property
    def _reads_frames(self) -> bool:
        """A language pack reads the facts' frames (``frame_read`` of what it reads)."""
        return self.language.name != "none"

    @property
    def _rule_extraction(self) -> bool:
        """The offline extractor is in use (no model configured, no provided facts)."""
        return not self.settings.openai_api_key and self.settings.extractor == "auto"

    def _with_statements(self, episodes: Sequence[Episode], facts: list[ExtractedFact],
                         *, batch: Sequence[Episode] | None = None) -> list[ExtractedFact]:
        """``facts`` plus the speakers' first-person statements of core attributes
        (residence, work, age, name, contact, ...) that no fact of the same turn already
        gives: written from their frames, explicit (an explicit statement
        stands in for support: docs/design.md, Support and confidence)."""
        users = [ep for ep in episodes if ep.role is Role.USER]
        if not users:
            return facts
        found = self.language.statements([(ep.speaker.strip() or "User", ep.text)
                                          for ep in users])
        # The questions from the whole batch: the assistant's turns are not trusted (they
        # give no facts) but a bare answer is read with the one it answers.
        asked = self._questions(batch if batch is not None else episodes, users)
        replies = self.language.answers([(ep.speaker.strip() or "User", asked[ep.id], ep.text)
                                         for ep in users if ep.id in asked])
        replied = dict(zip([ep.id for ep in users if ep.id in asked], replies, strict=True))
        out = list(facts)
        for episode, statements in zip(users, found, strict=True):
            reply = replied.get(episode.id)
            if reply is not None:
                out = _with_reply(out, episode.id, reply)
            else:
                out = self._with_turn_statements(out, facts, episode.id, statements)
        return self._with_instructions(users, asked,
                                       {k for k, v in replied.items() if v is not None}, out,
                                       {id(f) for f in out} - {id(f) for f in facts})

    def _with_turn_statements(self, out: list[ExtractedFact], facts: list[ExtractedFact],
                              source: str, statements: list[tuple[Frame, str]]
                              ) -> list[ExtractedFact]:
        """``out`` with one turn's well-formed statements that no fact of the turn (in
        the extractor's ``facts``) already gives."""
        known = [f for f in facts if f.source == source and f.frame is not None]
        problems = self.language.problems([t for _, t in statements])
        for (frame, text), problem in zip(statements, problems, strict=True):
            if problem is not None:
                continue
            same = [f for f in known if _restates(f, frame, text)]
            if same:
                out = [_lasting(f) if f in same else f for f in out]
                continue
            if frame.attribute.startswith("contact:"):
                # The value written from its frame stands in for the turn's other
                # facts that only carry it ("New one is 06-51930462.").
                out = [f for f in out if not _only_carries(f, source, frame.value)]
            out.append(ExtractedFact(text=text, kind=Kind.KNOWLEDGE, importance=7,
                                     explicit=True, source=source, frame=frame,
                                     frame_read=True))
        return out

    def _with_instructions(self, users: Sequence[Episode], asked: dict[str, str],
                           replied: set[str], facts: list[ExtractedFact],
                           statements: set[int]) -> list[ExtractedFact]:
        """``facts`` with the turns' terse standing instructions to the assistant ("Plots:
        drop matplotlib, use plotly") written as "<speaker> asks the assistant to ...",
        in place of what the extractor made of the sentences that said them."""
        turns = [ep for ep in users if ep.id not in replied]
        per_turn = self.language.instructions([(ep.speaker.strip() or "User", ep.text,
                                                asked.get(ep.id, "")) for ep in turns])
        texts = [text for found in per_turn for _, text in found]
        if not texts:
            return facts
        readings = dict(zip(texts, self.language.read(texts), strict=True))
        rules = self.language.text_rules
        out = list(facts)
        for episode, found in zip(turns, per_turn, strict=True):
            name = rules.canonical_terms(episode.speaker.strip() or "User") | \
                rules.canonical_terms("asks the assistant")
            for said, text in found:
                reading = readings[text]
                if reading.problem is not None:
                    continue
                within = rules.canonical_terms(said) | name  # the words that said it
                # A withdrawal's sentence with an aside ("never mind the date format
                # thing, ISO dates are fine") is the withdrawal; a rule's own words are
                # kept whole ("keep answers short, with bullet points").
                aside = ASIDE_TERMS if reading.frame is not None \
                    and reading.frame.polarity < 0 else 0
                out = [f for f in out if f.source != episode.id or id(f) in statements
                       or not _made_of(rules.canonical_terms(f.text), within, aside)]
                if all(f.text != text for f in out):
                    out.append(ExtractedFact(text=text, kind=Kind.PREFERENCE, importance=7,
                                             explicit=True, source=episode.id,
                                             frame=reading.frame, frame_read=True))
        return out

    def _previous_user_turns(self, episodes: Sequence[Episode]) -> dict[str, str]:
        """Each short user turn's previous user turn of its scope: whom an opening "she"
        may mean (the pack reads only turns this short for it)."""
        found = self._turn_before(episodes, lambda e: e.role is Role.USER,
                                  look_back=lambda e: len(e.text) <= REFERENT_CHARS)
        return {k: v.text for k, v in found.items()}

    def _turns_just_before(self, episodes: Sequence[Episode]) -> dict[str, str]:
        """Each short user turn's turn just before it in its scope, either speaker's:
        what an opening "it" may mean."""
        found = self._turn_before(episodes, lambda e: True,
                                  look_back=lambda e: len(e.text) <= REFERENT_CHARS)
        return {k: v.text for k, v in found.items()}

    def _questions(self, episodes: Sequence[Episode], users: Sequence[Episode]
                   ) -> dict[str, str]:
        """Each user turn's preceding turn of its scope when that is the assistant's:
        what a bare answer answers (only a short turn can be one)."""
        found = self._turn_before(episodes, lambda e: True,
                                  look_back=lambda e: len(e.text) <= BARE_ANSWER_CHARS)
        wanted = {ep.id for ep in users}
        return {k: v.text for k, v in found.items()
                if v.role is Role.ASSISTANT and k in wanted}

    def _turn_before(self, episodes: Sequence[Episode], counts: Callable[[Episode], bool],
                     look_back: Callable[[Episode], bool]) -> dict[str, Episode]:
        """Each user turn's nearest earlier turn of its scope that ``counts``: from the
        batch, else (for turns ``look_back`` accepts) from the last stored episodes, read
        at most once."""
        out: dict[str, Episode] = {}
        last: dict[str, Episode] = {}
        missing: list[Episode] = []
        for episode in episodes:
            if episode.role is Role.USER:
                before = last.get(episode.scope)
                if before is not None:
                    out[episode.id] = before
                elif look_back(episode):
                    missing.append(episode)
            if counts(episode):
                last[episode.scope] = episode
        if not missing:
            return out
        recent = self.store.episodes.recent(missing[0].namespace, QUESTION_LOOKBACK)
        ids = [e.id for e in recent]
        for episode in missing:
            if episode.id not in ids:
                continue
            older = next((e for e in recent[ids.index(episode.id) + 1:]
                          if e.scope == episode.scope and counts(e)), None)
            if older is not None:
                out[episode.id] = older
        return out

    def _framed(self, facts: list[ExtractedFact], report: IngestReport) -> list[ExtractedFact]:
        """``facts`` with their frames, read by the language pack in one batch (a fact
        that came with a frame keeps it). The rule extractor's facts that are no
        well-formed sentence ("Richard cannots think ...") are dropped and counted
        (``facts_garbled``); a model's facts are kept as written."""
        if not facts:
            return facts
        out: list[ExtractedFact] = []
        for fact, reading in zip(facts, self.language.read([f.text for f in facts]),
                                 strict=True):
            fact = fact.model_copy(update={"frame_read": self._reads_frames})
            if not self._rule_extraction:
                out.append(_with_frame(fact, reading))
            elif reading.correction:
                # "Sorry, Ann meant Thursday." is the correction "It's Thursday."
                out.append(fact.model_copy(update={"text": reading.correction,
                                                   "explicit": True}))
            elif reading.problem is not None:
                report.garbled += 1
            elif _says_nothing_findable(fact, reading):
                # "Caroline is so grateful" names nothing to find it by, "Staying positive
                # is key" is about no one: stored, they only cost words (docs/design.md,
                # Bare facts and general remarks)
                report.bare += 1
            else:
                out.append(_as_read(fact, reading))
        return out

    def _decide_and_apply(self, namespace: str, facts: list[ExtractedFact],
                          origin: dict[str, Episode], report: IngestReport, *,
                          infer: bool = True) -> None:
        # Every fact's exact duplicate (in its own scope) and the version for the
        # neighbours: one round trip.
        version, owners = self.store.records.find_by_hashes_at(
            namespace, [content_hash(f.text, origin[f.source].scope) for f in facts])
        pending = self._reinforce_duplicates(namespace, facts, owners, origin, report)
        if not pending:
            return
        vectors = self._embed(namespace, [f.text for _, f in pending],
                              origin[pending[-1][1].source].timestamp)
        report.embedding_calls += 1
        if len(vectors) != len(pending):  # a faulty embedder: fail before writing anything
            raise ValueError(f"vectors: the embedder returned {len(vectors)} vectors for "
                             f"{len(pending)} facts")
        if not infer:
            for (index, fact), vec in zip(pending, vectors, strict=True):
                self._add(namespace, index, fact, vec, origin[fact.source], "stored verbatim",
                          None, report)
            return
        neighbours = self._neighbours(namespace, version, vectors,
                                      [origin[f.source].scope for _, f in pending])
        requests: list[tuple[int, ExtractedFact, np.ndarray, list[Neighbour]]] = []
        for (index, fact), vec, near in zip(pending, vectors, neighbours, strict=True):
            asked = self._by_rules(namespace, version, index, fact, vec, near,
                                   origin[fact.source], report)
            if asked is not None:
                requests.append((index, fact, vec, asked))
        if requests:
            self._decide(namespace, requests, origin, report)

    def _reinforce_duplicates(self, namespace: str, facts: list[ExtractedFact],
                              owners: Sequence[str | None], origin: dict[str, Episode],
                              report: IngestReport) -> list[tuple[int, ExtractedFact]]:
        """Reinforce the memory each exact duplicate repeats (``owners``: the memory with
        the fact's text in its scope, or None); the other facts, with their index."""
        pending: list[tuple[int, ExtractedFact]] = []
        for index, (fact, existing) in enumerate(zip(facts, owners, strict=True)):
            if existing is None:
                pending.append((index, fact))
                continue
            self.store.writes.reinforce(namespace, existing, source=fact.source,
                                        now=origin[fact.source].timestamp,
                                        reason="exact duplicate (normalized text)",
                                        metadata=inherited(origin[fact.source]))
            report.count(Op.NOOP)
            report.memory_ids.append(existing)
        return pending

    def _by_rules(self, namespace: str, version: int, index: int, fact: ExtractedFact,
                  vec: np.ndarray, near: list[Neighbour], episode: Episode,
                  report: IngestReport) -> list[Neighbour] | None:
        """Apply what the rules decide for one fact without a decision call; else the
        neighbours to ask the decider about (None: applied)."""
        top = near[0].similarity if near else -1.0
        repeat = self._verbatim_repeat(fact.text, near)
        if leans_on_recent(fact.text):
            recent = self._recent(namespace, version, episode.scope, vec)
            if recent:
                seen = {n.memory_id for n in recent}
                return recent + [n for n in near if n.memory_id not in seen]
        changed = self._frame_change(fact, near) if self._rule_extraction else None
        if changed is not None:
            # Same subject and attribute, another value (or its end): the newer fact
            # supersedes the neighbour it replaces, with no model call.
            self._apply(namespace, index, fact, vec, near, changed, episode, report)
        elif repeat is not None:
            self.store.writes.reinforce(namespace, repeat, source=fact.source,
                                        now=episode.timestamp,
                                        reason="near-verbatim repeat (MinHash)",
                                        metadata=inherited(episode))
            report.count(Op.NOOP)
            report.memory_ids.append(repeat)
        elif self._lone_correction(fact):
            report.count(Op.NOOP)
        elif top < (self.settings.add_threshold or 0.0):
            self._add(namespace, index, fact, vec, episode, "no similar memory", None,
                      report)
        elif not self._worth_a_call(fact.text, near):
            self._add(namespace, index, fact, vec, episode,
                      "similar memories, none the same fact or in conflict", None, report)
        else:
            return near
        return None

    def _lone_correction(self, fact: ExtractedFact) -> bool:
        """A rule-read correction ("It's Thursday.") about to be stored on its own: it
        corrected nothing it could find, and says nothing by itself (docs/design.md, Frames).
        "It's X, not Y." names both values and is kept."""
        return (self._rule_extraction and is_correction(fact.text)
                and ", not " not in fact.text)

    @staticmethod
    def _frame_change(fact: ExtractedFact, near: list[Neighbour]) -> Decision | None:
        """A DELETE (supersede) of the first neighbour whose frame ``fact``'s frame
        retires (:func:`memcore.core.frames.retires`), or None."""
        if fact.frame is None:
            return None
        for i, n in enumerate(near):
            if n.frame is not None and (why := retires(fact.frame, n.frame)) is not None:
                return Decision(Op.DELETE, target=i, reason=why)
        return None

    def _checked(self, fact: ExtractedFact, near: list[Neighbour], decision: Decision
                 ) -> Decision:
        """``decision``, checked against the frames (the offline rules' decisions only:
        with a model configured its verdict stands). One that keeps (NOOP) or rewrites
        (UPDATE) a neighbour ``fact``'s frame says it replaces supersedes it instead (a
        new phone number is not "the same fact" as the old one, however alike); one that
        retires (DELETE) a neighbour of another attribute, by its words only and with no
        word of change, adds instead (:func:`~memcore.core.frames.overrules_text`)."""
        if fact.frame is None or not self._rule_extraction:  # a model's verdict stands
            return decision
        target = decision.target if decision.target is not None else (0 if near else None)
        if target is None or not 0 <= target < len(near):
            return decision
        old = near[target].frame
        if decision.op is Op.DELETE:
            # A text that says something changed ("Chrome instead of Firefox") may retire
            # what it names; otherwise only the frames retire.
            if overrules_text(fact.frame, old) and \
                    not self.language.text_rules.may_change(fact.text):
                return Decision(Op.ADD, reason=f"frames differ ({decision.reason})")
            return decision
        if decision.op not in (Op.NOOP, Op.UPDATE):
            return decision
        if old is not None and (why := retires(fact.frame, old)) is not None:
            return Decision(Op.DELETE, target=target, reason=why)
        return decision

    def _worth_a_call(self, text: str, near: list[Neighbour]) -> bool:
        """Does any close neighbour need the decider, or is the fact clearly new?

        Near-duplicates (above the merge threshold) and neighbours in a cheap-rule
        conflict (negation, changed numbers, another value of the same single-valued
        attribute) go to the model. Merely similar facts are added: the consolidation
        pass still judges them as borderline pairs, batched by cluster.
        """
        add = self.settings.add_threshold or 0.0
        merge = self.settings.consolidation.merge_threshold
        for n in near:
            if n.similarity < add:
                break
            if (n.similarity >= merge or self.language.text_rules.conflict(text, n.text)
                    or same_slot(text, n.text)):
                return True
        return False

    def _neighbours(self, namespace: str, version: int, vectors: np.ndarray,
                    scopes: Sequence[str]) -> list[list[Neighbour]]:
        """Top-s live neighbours of each vector among the memories of its own scope (the
        decider may only update or retire a memory of the same user, agent and run)."""
        s = self.settings.neighbours
        index = self.index_cache.get(namespace, version)
        if len(index) == 0:
            return [[] for _ in range(len(vectors))]
        hits = index.search(vectors, s * 3)
        ids = sorted({mid for row in hits for mid, _ in row})
        # Only texts and statuses are needed: skip decoding the vectors.
        records = dict(zip(ids, self.store.records.get_many(namespace, ids, vectors=False),
                           strict=True))
        out: list[list[Neighbour]] = []
        for row, scope in zip(hits, scopes, strict=True):
            near = [Neighbour(mid, rec.text, float(sim), rec.frame) for mid, sim in row
                    if (rec := records.get(mid)) is not None and rec.live and rec.scope == scope]
            out.append(near[:s])
        return out

    def _recent(self, namespace: str, version: int, scope: str, vec: np.ndarray
                ) -> list[Neighbour]:
        """The scope's latest live memories, newest first (a correction's candidates)."""
        index = self.index_cache.get(namespace, version)
        if len(index) == 0:
            return []
        ids = list(dict.fromkeys(reversed(index.ids_from(max(0, index.rows
                                                              - 4 * RECENT_FOR_CORRECTION)))))
        records = self.store.records.get_many(namespace, ids, vectors=False)
        out: list[Neighbour] = []
        for mid, rec in zip(ids, records, strict=True):
            if rec is None or not rec.live or rec.scope != scope or is_correction(rec.text):
                continue
            stored = index.vector_of(mid)
            similarity = float(np.dot(stored, vec)) if stored is not None else 0.0
            out.append(Neighbour(mid, rec.text, similarity, rec.frame))
            if len(out) == RECENT_FOR_CORRECTION:
                break
        return out

    def _verbatim_repeat(self, text: str, near: list[Neighbour]) -> str | None:
        if len(text.split()) < MINHASH_MIN_WORDS or not near:
            return None
        sig = self.minhash.signature(text)
        for n in near:
            if MinHasher.jaccard(sig, self.minhash.signature(n.text)) >= MINHASH_JACCARD:
                return n.memory_id
        return None

    def _decide(self, namespace: str,
                requests: list[tuple[int, ExtractedFact, np.ndarray, list[Neighbour]]],
                origin: dict[str, Episode], report: IngestReport) -> None:
        calls_before = self.instruments.thread_calls("decide")
        decisions = self.models.instrumented.decider.decide(
            [DecisionRequest(fact.text, near) for _, fact, _, near in requests])
        report.model_calls += self.instruments.thread_calls("decide") - calls_before
        report.decision_facts += len(requests)
        self._audit_model_errors(
            namespace, origin[requests[-1][1].source].timestamp,
            [f.source for _, f, _, _ in requests]
            + [n.memory_id for _, _, _, near in requests for n in near])
        if len(decisions) != len(requests):
            # Loses nothing: each fact is kept as a candidate.
            decisions = [Decision(Op.ADD, reason="decider answered the wrong number of items",
                                  candidate=True)] * len(requests)
        if self.settings.shadow_decisions:
            # The rules on the very requests the decider saw (no model call, not applied).
            report.compare(OfflineDecider().decide(
                [DecisionRequest(fact.text, near) for _, fact, _, near in requests]), decisions)
        for (index, fact, vec, near), decision in zip(requests, decisions, strict=True):
            self._apply(namespace, index, fact, vec, near, self._checked(fact, near, decision),
                        origin[fact.source], report)

    def _apply(self, namespace: str, index: int, fact: ExtractedFact, vec: np.ndarray,
               near: list[Neighbour], decision: Decision, episode: Episode,
               report: IngestReport) -> None:
        decision, target = _shown_target(decision, near)
        op = decision.op
        why = decision.reason or op.value
        if op in (Op.UPDATE, Op.DELETE) and self._garbled_rewrite(fact, decision):
            # The rules' rewrite is no sentence ("Rory works as a laters"): change nothing.
            report.garbled += 1
            report.count(Op.NOOP)
            return
        if op is Op.ADD and self._lone_correction(fact):
            report.count(Op.NOOP)
            return
        if op is Op.ADD or (op in (Op.UPDATE, Op.DELETE) and target is None):
            self._add(namespace, index, fact, vec, episode, why, op.value, report,
                      candidate=decision.candidate)
            return
        if op is Op.NOOP:
            if target is None and near:
                target = near[0]
            if target is not None:
                self.store.writes.reinforce(namespace, target.memory_id, source=fact.source,
                                            now=episode.timestamp,
                                            reason=why, metadata=inherited(episode))
                report.memory_ids.append(target.memory_id)
            report.count(Op.NOOP)
            return
        assert target is not None
        if op is Op.UPDATE:
            self._update(namespace, fact, vec, decision, target, episode.timestamp, why,
                         report)
            return
        memory = self._supersede(namespace, index, fact, vec, decision, target, episode, why,
                                 report)
        if _changes_value(memory.frame, target.frame):
            self._cut_down_dependents(namespace, target, near, episode, report)

    def _cut_down_dependents(self, namespace: str, replaced: Neighbour,
                             near: Sequence[Neighbour], episode: Episode,
                             report: IngestReport) -> None:
        """Neighbours that named the value just replaced, cut down to their own value
        (:mod:`memcore.ingest.dependents`); each cut version supersedes its fact."""
        assert replaced.frame is not None
        found = cut_down(replaced.frame, near, self.language.text_rules, replaced.memory_id)
        if not found:
            return
        now = episode.timestamp
        vectors = self._embed(namespace, [rest for _, rest in found], now)
        olds = self.store.records.get_many(namespace, [n.memory_id for n, _ in found])
        for (n, rest), vec, old in zip(found, vectors, olds, strict=True):
            if old is None or not old.live:
                continue
            memory = old.model_copy(update={
                "id": fact_memory_id(namespace, episode.id, -1, f"{old.id}/{rest}"),
                "text": rest, "content_hash": content_hash(rest, old.scope),
                "vector": [float(x) for x in vec], "created_at": now, "updated_at": now,
                "superseded_by": None, "valid_until": None})
            self.store.writes.supersede(
                namespace, old.id, memory, now=now, decision=Op.DELETE.value,
                reason=f"{replaced.frame.attribute} of {replaced.frame.subject} changed: "
                       f"{replaced.frame.value!r}; its {n.frame.attribute if n.frame else ''} "
                       "kept")
            report.count(Op.DELETE)
            report.memory_ids.append(memory.id)

    def _garbled_rewrite(self, fact: ExtractedFact, decision: Decision) -> bool:
        """A rules' decision rewrites the text into no well-formed sentence."""
        return bool(decision.text and decision.text != fact.text and self._rule_extraction
                    and self.language.problems([decision.text])[0])

    def _update(self, namespace: str, fact: ExtractedFact, vec: np.ndarray,
                decision: Decision, target: Neighbour, now: datetime, why: str,
                report: IngestReport) -> None:
        """Rewrite the target memory with the decision's text (or the fact's)."""
        text = decision.text or fact.text
        new_vec = vec if text == fact.text else self._embed(namespace, [text], now)[0]
        self.store.writes.update(namespace, target.memory_id, text=text,
                                 vector=[float(x) for x in new_vec], source=fact.source,
                                 now=now, reason=why, decision=decision.op.value)
        report.count(Op.UPDATE)
        report.memory_ids.append(target.memory_id)

    def _supersede(self, namespace: str, index: int, fact: ExtractedFact, vec: np.ndarray,
                   decision: Decision, target: Neighbour, episode: Episode, why: str,
                   report: IngestReport) -> Memory:
        """The fact's memory replaces the target (with the decision's text when it
        completes a correction or a move)."""
        now = episode.timestamp
        if decision.text and decision.text != fact.text and is_correction(fact.text):
            # A correction applied to the memory it corrects: the decider wrote the text.
            fact, vec = self._rewritten(namespace, fact, decision.text, target, now)
        elif decision.text and decision.text != fact.text and leans_on_recent(fact.text):
            # A move completed by its plan: the new text, the move's own kind and dates.
            fact = fact.model_copy(update={"text": decision.text,
                                           "relation": relation_for(decision.text),
                                           "frame": self.language.frames([decision.text])[0],
                                           "frame_read": self._reads_frames})
            vec = self._embed(namespace, [decision.text], now)[0]
        memory = self._memory(namespace, index, fact, vec, episode)
        self.store.writes.supersede(namespace, target.memory_id, memory, now=now, reason=why,
                                    decision=decision.op.value)
        report.count(Op.DELETE)
        report.memory_ids.append(memory.id)
        return memory

    def _rewritten(self, namespace: str, fact: ExtractedFact, text: str, target: Neighbour,
                   now: datetime) -> tuple[ExtractedFact, np.ndarray]:
        """The fact a superseding decision wrote (a correction applied to the memory it
        corrects): the corrected memory's kind and validity, stated explicitly."""
        old = self.store.records.get(namespace, target.memory_id)
        update: dict[str, object] = {"text": text, "explicit": True,
                                     "relation": relation_for(text),
                                     "frame": self.language.frames([text])[0],
                                     "frame_read": self._reads_frames}
        if old is not None:
            # The corrected value held over the same interval as the wrong one.
            update.update(kind=old.kind, importance=max(fact.importance,
                                                        round(old.importance * 10)),
                          valid_from=old.valid_from, valid_until=old.valid_until,
                          expires_at=old.expires_at)
        return (fact.model_copy(update=update), self._embed(namespace, [text], now)[0])

    def _memory(self, namespace: str, index: int, fact: ExtractedFact, vec: np.ndarray,
                episode: Episode) -> Memory:
        """The memory a fact creates: scopes and metadata come from its episode."""
        cfg = self.settings.consolidation
        now = episode.timestamp
        return Memory(
            user_id=episode.user_id, agent_id=episode.agent_id, run_id=episode.run_id,
            metadata=inherited(episode),
            id=fact_memory_id(namespace, fact.source, index, fact.text),
            namespace=namespace, text=fact.text, vector=[float(x) for x in vec],
            importance=fact.importance / 10.0, last_used=now, last_supported=now,
            # An explicit statement stands in for the second supporting episode.
            confidence=min(1.0, cfg.new_confidence + (cfg.support_step if fact.explicit else 0)),
            kind=fact.kind, sources=[fact.source], support=1,
            explicit=fact.explicit,
            status=Status.ACTIVE if fact.explicit else Status.CANDIDATE,
            valid_from=fact.valid_from or now, valid_until=fact.valid_until,
            # The caller's expiry (ttl_seconds / expires_at on add) wins over a guessed one.
            expires_at=episode.expires_at or fact.expires_at,
            expiry_given=episode.expires_at is not None,
            # Model-written facts come without one: the pass's change rules need the slot.
            relation=fact.relation or relation_for(fact.text), frame=fact.frame,
            frame_read=fact.frame_read, created_at=now, updated_at=now,
        )

    def _add(self, namespace: str, index: int, fact: ExtractedFact, vec: np.ndarray,
             episode: Episode, reason: str, decision: str | None, report: IngestReport,
             candidate: bool = False) -> None:
        memory = self._memory(namespace, index, fact, vec, episode)
        if candidate:
            memory.status = Status.CANDIDATE
        self.store.writes.add(namespace, memory, actor=Actor.INGEST, reason=reason,
                              decision=decision)
        report.count(Op.ADD)
        report.memory_ids.append(memory.id)

    def _embed(self, namespace: str, texts: list[str], at: datetime) -> np.ndarray:
        """Embed ``texts``; an embedder error is audited before it fails the batch."""
        try:
            return self.models.instrumented.embedder.embed(texts)
        finally:
            self._audit_model_errors(namespace, at)

    def _audit_model_errors(self, namespace: str, at: datetime,
                            refs: Sequence[str] = ()) -> None:
        """Write the model errors of this thread's last calls as MODEL_ERROR audit entries,
        citing the turns and memories the calls read (``refs``: erasing one redacts them)."""
        events = self.instruments.audit_events(namespace, Actor.INGEST, at, refs)
        if events:
            self.store.audit.append(events)

    def _count(self, namespace: str, report: IngestReport) -> None:
        counts: dict[str, float] = {
            # Turns stored for the first time: a resent turn id (a client's retry, a
            # redelivered task) is not a new turn.
            "turns": report.new_episodes, "facts": report.facts,
            "model_calls": report.model_calls, "embedding_calls": report.embedding_calls,
            "decision_facts": report.decision_facts, "facts_garbled": report.garbled,
            "facts_bare": report.bare,
        }
        for op, n in report.decisions.items():
            counts[f"decisions.{op}"] = n
        for key, n in report.shadow.items():
            counts[f"shadow.{key}"] = n
        self.store.coordination.incr_counters(namespace, counts)
        self.store.usage.record(namespace, "ingest", report.usage)
        _export(namespace, report)


# At most this many words of a sentence beside the withdrawal it said ("never mind the
# date format thing, ISO dates are fine"): what the extractor made of it is that
# withdrawal, said with an aside.
ASIDE_TERMS = 2


def _made_of(terms: frozenset[str], within: frozenset[str], aside: int) -> bool:
    """Is a fact with ``terms`` what the extractor made of the instruction whose words
    (and speaker) are ``within``: all of them, or the instruction's words and an aside
    of at most ``aside`` more?"""
    rest = terms - within
    return not rest or (len(rest) <= aside and len(terms & within) > len(rest))
