"""Forget on request, inside the conversation (docs/design.md, Forget on request).

A user turn that asks to forget something ("please forget my address", "I shouldn't
have told you that", "forget everything about my ex") is read by the language pack
(:meth:`LanguagePack.forget_requests`). Its request sentences never become facts: the
turn is stored and read for facts without them (and without the part of the same turn
a request refers back to: "My PIN is 4821, forget it"; a turn left empty is stored as
:data:`REQUEST_MARKER`). After the batch's facts are written, in the same task (so
before the task is acknowledged), the request is resolved against the speaker's live
and candidate memories, and their superseded versions, of the same namespace and scope
only:

- a target naming an attribute ("my address") matches memories framed with it
  (:class:`memcore.core.models.Frame`), of the speaker when it says "my";
- a target naming an entity or topic matches memories mentioning every word of it, a
  word of the topic a general word names ("medical information"), or close in meaning
  (cosine >= :data:`MEANING_MIN` against the embedded phrase, through the namespace's
  vector index); a person ("my ex") also matches the memories naming the names the
  matched ones give that person ("Ann's ex Daniel" -> memories about Daniel);
- "that" / "it" / "what I said" is the previous user turn of the scope (with the
  assistant turns after it), or the earlier part of the same turn;
- "forget everything (I told you)" is every memory of the scope;
- a target no memory matches (the facts say it in other words, or the turn gave none)
  is looked for in the scope's recent user turns: those whose words name it are the
  turns erased.

Each match is erased with the store's complete erase path
(:meth:`Eraser.erase_memory_and_sources`: the memory, what was merged into it,
its vectors, index blobs, snapshots and the turns it came from; a referred-back turn
with :meth:`Eraser.erase_episode`). At most :data:`MAX_ERASED_BY_REQUEST` memories
go per request (the best matches; the rest are kept and counted). One ERASE audit
entry per request says that it was a forget request, the turn id that asked, what kind
of thing (attribute, entity, turn, everything) and how many memories and turns were
erased, or that nothing matched; never a text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from memcore.core.config import Settings
from memcore.core.forget import (
    FORGET_AUDIT_PREFIX,
    MAX_ERASED_BY_REQUEST,
    ForgetMatch,
    ForgetRequest,
    ForgetTarget,
    compound_prefixes,
    conflicting_attribute,
    frame_matches,
    number_matches,
    of_speaker,
    others_own,
    topic_matches,
    value_shaped,
    words_match,
    words_of,
)
from memcore.core.interfaces import Embedder
from memcore.core.models import (
    LIVE_STATUSES,
    Actor,
    AuditAction,
    AuditEvent,
    Episode,
    Memory,
    Role,
    Status,
    as_utc,
    scope_key,
    utcnow,
    validate_namespace,
)
from memcore.core.secrets import MARKER_RE
from memcore.index.vector_index import IndexCache
from memcore.language import LanguagePack, language_pack
from memcore.store import MemoryStore

REQUEST_MARKER = "[forget request]"
"""What a turn that was nothing but a forget request is stored as (never a fact)."""
MEANING_MIN = 0.7
"""The cosine a memory needs with a target's embedded phrase to match by meaning alone."""
MEANING_K = 20
"""Nearest neighbours of the phrase looked at for a match by meaning."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
"""Where a stored turn's sentences end (to tell which of them a request meant)."""
REGRET_LOOKBACK = 3
"""User turns looked back over for the sensitive one a regret refers to."""
LOOKBACK = 32
"""Stored turns of the namespace looked back over for the turn "that" refers to."""
_MATCHED = LIVE_STATUSES | {Status.SUPERSEDED}
"""The memories a request is resolved against."""
_STRENGTH = {"frame": 1.0, "words": 0.9, "name": 0.8, "topic": 0.7, "everything": 0.5}


@dataclass
class ForgetOutcome:
    """What one forget request did (ids only: no text)."""

    turn_id: str | None
    kind: str
    erased: list[str] = field(default_factory=list)
    """Memory ids erased (the matches and what the erase path took with them)."""
    turns: list[str] = field(default_factory=list)
    """Turn (episode) ids erased."""
    matched: int = 0
    over_limit: int = 0
    """Matches left alone: more than :data:`MAX_ERASED_BY_REQUEST` matched."""

    def as_dict(self) -> dict[str, object]:
        """For a task result, the HTTP API and the MCP tool."""
        return {"turn_id": self.turn_id, "kind": self.kind, "matched": self.matched,
                "erased": len(self.erased), "memory_ids": self.erased,
                "turns_erased": self.turns, "over_limit": self.over_limit}


def read_requests(language: LanguagePack, episodes: Sequence[Episode]
                  ) -> tuple[list[Episode], dict[str, ForgetRequest]]:
    """The user turns' forget requests (by turn id), and the turns as they are stored and
    read for facts: without their request sentences and the part of the same turn a
    request refers back to (:data:`REQUEST_MARKER` when nothing else is left)."""
    users = [ep for ep in episodes if ep.role is Role.USER and ep.text.strip()]
    if not users:
        return list(episodes), {}
    found = language.forget_requests([ep.text for ep in users])
    requests = {ep.id: r for ep, r in zip(users, found, strict=True) if r is not None}
    if not requests:
        return list(episodes), {}
    out: list[Episode] = []
    for ep in episodes:
        request = requests.get(ep.id)
        if request is None:
            out.append(ep)
            continue
        spans = sorted([*request.sentences, *([request.earlier] if request.earlier else [])])
        kept, last = [], 0
        for start, end in spans:
            kept.append(ep.text[last:max(start, last)])
            last = max(last, end)
        kept.append(ep.text[last:])
        text = " ".join(" ".join(kept).split())
        out.append(ep.model_copy(update={"text": text if text.strip(" .,;:!?-")
                                         else REQUEST_MARKER}))
    return out, requests


def _replies(earlier: Sequence[Episode], erased: set[str]) -> list[str]:
    """The assistant turns of ``earlier`` (newest first) that answered an erased user
    turn, up to the next user turn: a reply may repeat what was said ("Dr. Lee, noted")."""
    out: list[str] = []
    after_erased = False
    for e in reversed(earlier):  # oldest first
        if e.role is Role.USER:
            after_erased = e.id in erased
        elif after_erased and e.id not in erased:
            out.append(e.id)
    return out


_CODE_OR_LIST = re.compile(r"```|^\s*(?:[-*\u2022]|\d+[.)])\s+\S", re.M)


def _code_or_list(text: str) -> bool:
    """An assistant turn with a code block or a list: "delete that" edits it."""
    return bool(_CODE_OR_LIST.search(text))


def _marked_only(text: str) -> bool:
    """A stored turn that was nothing but a forget request."""
    return text == REQUEST_MARKER


class Forgetter:
    """Resolves forget requests against a scope's memories and erases the matches."""

    def __init__(self, store: MemoryStore, embedder: Embedder, language: LanguagePack,
                 index_cache: IndexCache | None = None,
                 limit: int = MAX_ERASED_BY_REQUEST) -> None:
        self.store = store
        self.embedder = embedder
        self.language = language
        self.index_cache = index_cache or IndexCache(store.records.vectors_since, embedder.dim)
        self.limit = limit

    # -- the write path's entry ------------------------------------------------------

    def apply(self, namespace: str, episodes: Sequence[Episode],
              requests: dict[str, ForgetRequest]) -> list[ForgetOutcome]:
        """Resolve and erase each request of the batch (in turn order), audited."""
        out = []
        for ep in episodes:
            request = requests.get(ep.id)
            if request is not None:
                out.append(self.resolve_and_erase(namespace, request, scope=ep.scope,
                                                  speaker=ep.speaker, turn=ep,
                                                  now=ep.timestamp))
        return out

    # -- the HTTP API's and MCP tool's entry --------------------------------------------

    def forget_text(self, namespace: str, text: str, *, now: datetime,
                    user_id: str | None = None, agent_id: str | None = None,
                    run_id: str | None = None, speaker: str = "") -> ForgetOutcome:
        """Forget what ``text`` asks or names ("please forget my address", "my address",
        "that"), in the scope ``user_id/agent_id/run_id``: as a request said in a turn of
        that scope (a back-reference is the scope's latest user turn)."""
        request = self.language.forget_requests([text])[0]
        if request is None:
            request = self.language.forget_requests([f"Forget {text.strip()}"])[0]
        scope = scope_key(user_id, agent_id, run_id)
        if request is None:
            self._audit(namespace, None, "unread", 0, [], [], 0, now)
            return ForgetOutcome(turn_id=None, kind="unread")
        return self.resolve_and_erase(namespace, request, scope=scope, speaker=speaker,
                                      turn=None, now=now)

    # -- resolution ------------------------------------------------------------------

    def resolve_and_erase(self, namespace: str, request: ForgetRequest, *, scope: str,
                          speaker: str, turn: Episode | None, now: datetime
                          ) -> ForgetOutcome:
        """Resolve ``request`` within ``scope`` and erase what it names (audited)."""
        now = as_utc(now)
        turn_id = turn.id if turn is not None else None
        if request.bare and turn is not None and self._after_a_question(namespace, scope, turn):
            # "Forget it" right after the assistant asked: it dismisses the question.
            return ForgetOutcome(turn_id=turn_id, kind="dismissal")
        if request.guarded and not self._personal_before(namespace, scope, turn):
            # "delete that" after code or a list, or after nothing of the speaker's: an
            # edit of what the assistant gave, not a request to forget (audited).
            self._audit(namespace, turn_id, "not-personal", 0, [], [], 0, now)
            return ForgetOutcome(turn_id=turn_id, kind="not-personal")
        outcome = ForgetOutcome(turn_id=turn_id, kind=request.kind)
        before = self._earlier_turns(namespace, scope, turn)  # as they were before erasing
        # Superseded versions too: "forget my phone number" is every number said, not
        # only the latest (a superseded record keeps its text for history).
        memories = [m for m in self.store.records.iter_memories(namespace, _MATCHED,
                                                        vectors=False) if m.scope == scope]
        episodes, said, matches = self._resolve(namespace, request, scope=scope,
                                                speaker=speaker, turn=turn, before=before,
                                                memories=memories)
        outcome.matched = len(matches) + len(episodes)
        chosen = matches[:self.limit]
        outcome.over_limit = len(matches) - len(chosen)
        reason = f"forget request{f' in turn {turn_id}' if turn_id else ''} ({request.kind})"
        erased: set[str] = set()
        gone: set[str] = set()
        for episode_id in episodes:
            self._erase_turn(namespace, episode_id, said.get(episode_id), memories,
                             now, reason, erased, gone)
        for match in chosen:
            self._erase_match(namespace, match, now, reason, erased, gone, request.targets)
        for reply in _replies(before, gone):
            if self.store.eraser.erase_episode(namespace, reply, now, reason=reason):
                gone.add(reply)
        outcome.erased = sorted(erased)
        outcome.turns = sorted(gone)
        self._audit(namespace, turn_id, request.kind, outcome.matched, outcome.erased,
                    outcome.turns, outcome.over_limit, now, unstored=request.earlier is not None)
        return outcome

    def _resolve(self, namespace: str, request: ForgetRequest, *, scope: str, speaker: str,
                 turn: Episode | None, before: Sequence[Episode], memories: Sequence[Memory]
                 ) -> tuple[list[str], dict[str, list[str]], list[ForgetMatch]]:
        """What ``request`` names: the turns it refers to or that say it, per such turn the
        memories of the sentences meant, and the memories it names (best first)."""
        referred = request.refers_back and request.earlier is None
        episodes = self._referred_turns(namespace, scope, turn, request.regret) \
            if referred else []
        matches: list[ForgetMatch] = []
        if request.targets or request.everything:
            matches = self._matches(namespace, request, memories, speaker)
        said: dict[str, list[str]] = {}  # turn id -> the memories of its sentences meant
        if referred:
            said = self._of_sentences(before, episodes, memories, speaker,
                                      lambda sentences: [sentences[-1]])
        if matches and any(t.person for t in request.targets):
            episodes += self._going_on(before, matches, memories)
        if request.targets and not matches and not episodes:
            # Nothing extracted names it (the facts say it in other words, or the turn
            # gave none): the turns that say it are what the user asks to forget.
            episodes = self._saying_turns(namespace, scope, turn, request.targets, memories,
                                          speaker)
            said = self._of_sentences(before, episodes, memories, speaker, lambda sentences: [
                s for s in sentences if _names_target(s, request.targets)])
        return episodes, said, matches

    def _erase_turn(self, namespace: str, episode_id: str, meant: Sequence[str] | None,
                    memories: Sequence[Memory], now: datetime, reason: str,
                    erased: set[str], gone: set[str]) -> None:
        """Erase the memories ``meant`` of a turn's sentences (not the turn's other facts),
        then the turn itself (its text goes), adding to ``erased`` and ``gone``; with
        ``meant`` None (no sentence told apart), the turn and what it alone supports; with
        ``meant`` empty (the meant sentence gave no memory: "I grew up in Whitby. My door
        code is [redacted: pin]."), only the turn's text."""
        if meant is not None and not meant:
            if self.store.episodes.drop(namespace, episode_id):
                gone.add(episode_id)
            return
        for memory_id in meant or ():
            if self.store.records.get(namespace, memory_id) is not None:
                report = self.store.eraser.erase_memory_and_sources(
                    namespace, memory_id, now, reason=reason)
                erased.update(report.removed)
                gone.update(report.episodes)
        if episode_id in gone:
            return
        carried = [m.id for m in memories if episode_id in m.sources]
        if self.store.eraser.erase_episode(namespace, episode_id, now, reason=reason):
            gone.add(episode_id)
            erased.update(i for i in carried if self.store.records.get(namespace, i) is None)

    def _erase_match(self, namespace: str, match: ForgetMatch, now: datetime, reason: str,
                     erased: set[str], gone: set[str],
                     targets: Sequence[ForgetTarget] = ()) -> None:
        """Erase a matched memory and its sources unless already gone, adding to
        ``erased`` and ``gone``; the clauses of its text that name none of ``targets``
        stay as a memory of their own (:meth:`_clauses_kept`)."""
        if match.memory_id in erased:
            return
        memory = self.store.records.get(namespace, match.memory_id)
        if memory is None:
            return
        kept = self._clauses_kept(memory, match, targets)
        report = self.store.eraser.erase_memory_and_sources(namespace, match.memory_id, now,
                                                            reason=reason)
        erased.update(report.removed)
        gone.update(report.episodes)
        if kept:
            self._keep_rest(namespace, memory, kept, now, reason)

    def _clauses_kept(self, memory: Memory, match: ForgetMatch,
                      targets: Sequence[ForgetTarget]) -> str:
        """The clauses of ``memory`` that name none of ``targets``, when another of its
        clauses names one ("Sam banks with Nationwide, and the PIN for Sam's card is
        5831": "forget the PIN" leaves "Sam banks with Nationwide."), else "". A match
        by meaning or of everything names no clause: it goes whole."""
        if match.how not in ("frame", "words", "topic") or not targets or not memory.live:
            return ""  # (a superseded memory's rest is no current fact either)
        (parts,) = self.language.clauses([memory.text])
        if len(parts) < 2:
            return ""
        naming = [_names_target(p, targets) for p in parts]
        if not any(naming) or all(naming):
            return ""
        return " ".join(p for p, named in zip(parts, naming, strict=True) if not named)

    def _keep_rest(self, namespace: str, memory: Memory, text: str, now: datetime,
                   reason: str) -> None:
        """Store ``text`` (what an erased memory said beside the erased thing) as a
        memory of the same scope, kind and standing, without the erased turns as
        sources; audited as an ADD of the request."""
        (reading,) = self.language.read([text])
        rest = Memory(
            namespace=namespace, text=text, vector=self.embedder.embed([text])[0].tolist(),
            importance=memory.importance, confidence=memory.confidence, kind=memory.kind,
            explicit=memory.explicit, pinned=memory.pinned, valid_from=memory.valid_from,
            valid_until=memory.valid_until, status=memory.status,
            frame=reading.frame, frame_read=True, last_used=memory.last_used,
            created_at=memory.created_at, updated_at=now, metadata=memory.metadata,
            user_id=memory.user_id, agent_id=memory.agent_id, run_id=memory.run_id)
        self.store.writes.add(namespace, rest, actor=Actor.INGEST,
                              reason=f"{reason}: the rest of an erased memory")

    def _earlier_turns(self, namespace: str, scope: str, turn: Episode | None
                       ) -> list[Episode]:
        """The scope's recent turns before ``turn`` (all of them without one: the API),
        newest first."""
        recent = [e for e in self.store.episodes.recent(namespace, LOOKBACK) if e.scope == scope]
        if turn is None:
            return recent
        ids = [e.id for e in recent]
        return recent[ids.index(turn.id) + 1:] if turn.id in ids else []

    def _after_a_question(self, namespace: str, scope: str, turn: Episode) -> bool:
        """The scope's turn just before ``turn`` is the assistant's, asking or offering."""
        earlier = self._earlier_turns(namespace, scope, turn)
        return bool(earlier) and earlier[0].role is Role.ASSISTANT \
            and earlier[0].text.rstrip().endswith("?")

    def _personal_before(self, namespace: str, scope: str, turn: Episode | None) -> bool:
        """Did the user turn "that" refers to say something of the speaker's (it left a
        memory, or a secret was masked in it), with no code or list from the assistant
        since?"""
        earlier = {e.id: e for e in self._earlier_turns(namespace, scope, turn)}
        referred = self._referred_turns(namespace, scope, turn)
        if not referred or any(_code_or_list(earlier[i].text) for i in referred
                               if earlier[i].role is Role.ASSISTANT):
            return False
        said = referred[-1]  # the user turn; the assistant's replies come before it
        if MARKER_RE.search(earlier[said].text):
            return True
        return any(said in m.sources for m in self.store.records.iter_memories(
            namespace, _MATCHED, vectors=False) if m.scope == scope)

    def _referred_turns(self, namespace: str, scope: str, turn: Episode | None,
                        regret: bool = False) -> list[str]:
        """The turns "that" refers to: the scope's previous user turn that was not itself
        only a forget request, and the scope's assistant turns after it (its reply may
        repeat it). Without a turn (the API), the scope's latest user turn. A ``regret``
        ("I shouldn't have told you that") after a turn that said nothing sensitive
        refers to the latest of the last :data:`REGRET_LOOKBACK` user turns that did
        (the diagnosis, not "I love jazz" said after it)."""
        replies: list[str] = []  # assistant turns after the user turn found next
        users: list[tuple[Episode, list[str]]] = []  # a user turn and the replies after it
        for e in self._earlier_turns(namespace, scope, turn):  # newest first
            if e.role is not Role.USER:
                replies.append(e.id)
                continue
            if _marked_only(e.text):
                continue
            users.append((e, replies))
            replies = []
            if not regret or len(users) >= REGRET_LOOKBACK:
                break
        if not users:
            return []  # no user turn to refer to: erase nothing
        chosen = users[0]
        if regret and len(users) > 1:
            said = self.language.sensitive([e.text for e, _ in users])
            if not said[0]:
                chosen = next((u for u, s in zip(users, said, strict=True) if s), users[0])
        episode, after = chosen
        return [*after, episode.id]

    def _of_sentences(self, turns: Sequence[Episode], ids: Sequence[str],
                      memories: Sequence[Memory], speaker: str,
                      meant: Callable[[list[str]], list[str]]) -> dict[str, list[str]]:
        """Per user turn of ``ids`` said in several sentences, the memories that came from
        the sentences ``meant`` picks ("I live in Leeds. My PIN is 4821." + "forget that":
        the PIN, not Leeds): each memory of the turn goes with the sentence sharing most of
        its words (with a tie, with each of them). A turn of one sentence, or without
        memories, is left out (the whole turn is erased); one whose meant sentence no
        memory came from maps to no memory (its text goes, its other facts stay)."""
        skip = words_of(speaker) | {"user"}
        out: dict[str, list[str]] = {}
        for e in turns:
            if e.id not in ids or e.role is not Role.USER:
                continue
            sentences = [s for s in _SENTENCE_END.split(e.text) if words_of(s)]
            if len(sentences) < 2:
                continue
            chosen = set(meant(sentences))
            keys = [frozenset(w for w in words_of(s) if len(w) > 2) - skip for s in sentences]
            picked, carried = [], False
            for m in memories:
                if e.id not in m.sources:
                    continue
                carried = True
                mine = frozenset(w for w in words_of(m.text) if len(w) > 2) - skip
                overlap = [len(mine & k) for k in keys]
                best = max(overlap)
                if best and any(n == best and s in chosen
                                for n, s in zip(overlap, sentences, strict=True)):
                    picked.append(m.id)
            if carried:
                out[e.id] = picked
        return out

    def _going_on(self, before: Sequence[Episode], matches: Sequence[ForgetMatch],
                  memories: Sequence[Memory]) -> list[str]:
        """The user turns right after a turn a matched memory came from that go on about
        its person by an opening pronoun only ("My ex Marcus cheated on me" then "He's a
        dentist in Bath now"), each after such a turn; a turn with a memory not matched
        is left alone (its other facts stay)."""
        matched = {m.memory_id for m in matches}
        sources = {s for m in memories if m.id in matched for s in m.sources}
        users = [e for e in reversed(before)  # oldest first
                 if e.role is Role.USER and not _marked_only(e.text)]
        led = dict(zip([e.id for e in users],
                       self.language.pronoun_led([e.text for e in users]), strict=True))
        own = {m.id: set(m.sources) for m in memories}
        out: list[str] = []
        after_person = False
        for e in users:
            going_on = after_person and e.id not in sources and led[e.id] and all(
                mid in matched for mid, src in own.items() if e.id in src)
            if going_on:
                out.append(e.id)
            after_person = e.id in sources or going_on
        return out

    def _saying_turns(self, namespace: str, scope: str, turn: Episode | None,
                      targets: Sequence[ForgetTarget], memories: Sequence[Memory],
                      speaker: str) -> list[str]:
        """The scope's recent user turns before ``turn`` whose own words name one of
        ``targets`` (every word of it, or a word of its topic, and its owner if it has
        one), newest first; not a turn whose every fact is one of the speaker's people's
        (:func:`_of_others`)."""
        out: list[str] = []
        speakers = {s for s in {(speaker or "").strip().lower(), "user"} if s}
        for e in self._earlier_turns(namespace, scope, turn):
            if e.role is not Role.USER or _marked_only(e.text):
                continue
            facts = [m.text for m in memories if e.id in m.sources]
            if facts and all(_of_others(t, f, speakers) for t in targets for f in facts):
                continue  # "My dad has diabetes": his, not "my medical info"
            words = words_of(e.text)
            # "my mum's diagnosis": a turn naming no one of the owner's is not hers (the
            # speaker's own asthma had been erased)
            if any(words_match(t, words) or topic_matches(t, words) for t in targets
                   if (t.words or t.related) and (not t.owner or t.owner & words)):
                out.append(e.id)
        return out

    def _matches(self, namespace: str, request: ForgetRequest, memories: Sequence[Memory],
                 speaker: str) -> list[ForgetMatch]:
        """The memories ``request`` names, best first."""
        if request.everything and not request.targets:
            return [ForgetMatch(m.id, "everything", _STRENGTH["everything"])
                    for m in sorted(memories, key=lambda m: m.created_at, reverse=True)]
        speakers = {s for s in {(speaker or "").strip().lower(), "user"} if s}
        words = {m.id: words_of(m.text) for m in memories}
        found = _Strongest()
        for target in request.targets:
            self._match_target(namespace, target, memories, words, speakers, found)
        return found.best_first()

    def _match_target(self, namespace: str, target: ForgetTarget, memories: Sequence[Memory],
                      words: dict[str, frozenset[str]], speakers: set[str],
                      found: _Strongest) -> None:
        """Add the memories ``target`` names to ``found``: by frame, words or topic, by
        meaning, and (a person) by the names the matched ones give them."""
        by_id = {m.id: m for m in memories}
        target = _former_or_current(target, memories, speakers)
        owner = target.owner | self._owner_names(target, memories, words, speakers)
        # "ex" in "ex-boss" names a boss, not the ex: a compound's first word is no word
        # of its own (but in "ex-wife", and in a compound the target says itself).
        said = {m.id: words[m.id] - compound_prefixes(m.text, target.compounds)
                for m in memories}
        hits = _match_by_frame_or_words(target, memories, owner, said, speakers, found)
        hits += self._match_by_meaning(namespace, target, by_id, owner, said, speakers, found)
        if target.person and hits:
            self._names(target, [by_id[i] for i in dict.fromkeys(hits)], memories, said,
                        speakers, found.take)

    def _match_by_meaning(self, namespace: str, target: ForgetTarget,
                          by_id: dict[str, Memory], owner: frozenset[str],
                          said: dict[str, frozenset[str]], speakers: set[str],
                          found: _Strongest) -> list[str]:
        """Add the memories close in meaning to ``target`` to ``found``; their ids."""
        hits: list[str] = []
        for mid, similarity in self._by_meaning(namespace, target, by_id):
            if target.owner and not owner & said[mid]:
                continue
            if not _meaning_fits(target, by_id[mid], speakers):
                continue  # "my birthday" is not "Sam's wife's birthday", however close
            found.take(mid, "meaning", similarity)
            hits.append(mid)
        return hits

    def _owner_names(self, target: ForgetTarget, memories: Sequence[Memory],
                     words: dict[str, frozenset[str]], speakers: set[str]) -> frozenset[str]:
        """The names the scope's memories give the owner of a target ("my ex's address":
        "My ex is Danielle" -> danielle), so a fact naming the owner by name is theirs."""
        if not target.owner:
            return frozenset()
        texts = [m.text for m in memories if target.owner & words[m.id]]
        names: set[str] = set()
        for found in self.language.linked_names(texts, target.owner):
            names |= found
        return frozenset(names - speakers)

    def _names(self, target: ForgetTarget, hits: Sequence[Memory],
               memories: Sequence[Memory], words: dict[str, frozenset[str]],
               speakers: set[str], take: Callable[[str, str], None]) -> None:
        """Memories naming the names the matched ones give the target's person."""
        forms = frozenset().union(*target.words) if target.words else frozenset()
        names: set[str] = set()
        for found in self.language.linked_names([m.text for m in hits], forms):
            names |= found
        names -= speakers | forms  # "Ann's ex Orla": the parse may call "ex" a name too
        if not names:
            return
        naming = [m for m in memories if names & words[m.id]]
        # A name another of the speaker's people has here ("my ex Jo" and "my friend Jo
        # Smith") is that other person's: not theirs unless the memory says it is.
        others = target.others - forms
        theirs = self.language.linked_names([m.text for m in naming], forms)
        someone = self.language.linked_names([m.text for m in naming], others) if others \
            else [set() for _ in naming]
        for m, own, other in zip(naming, theirs, someone, strict=True):
            if names & other and not names & own:
                continue
            take(m.id, "name")

    def _by_meaning(self, namespace: str, target: ForgetTarget, by_id: dict[str, Memory]
                    ) -> list[tuple[str, float]]:
        """Memories of the scope (``by_id``) within :data:`MEANING_MIN` of the phrase."""
        if not by_id:
            return []
        index = self.index_cache.get(namespace, self.store.current_version(namespace),
                                     epoch=self.store.snapshots.generation(namespace))
        if len(index) == 0:
            return []
        vec = np.asarray(self.embedder.embed([target.phrase])[0], dtype=np.float32)
        hits = index.search(vec[None, :], MEANING_K)[0]
        return [(mid, float(sim)) for mid, sim in hits if mid in by_id and sim >= MEANING_MIN]

    def _audit(self, namespace: str, turn_id: str | None, kind: str, matched: int,
               erased: list[str], turns: list[str], over: int, now: datetime, *,
               unstored: bool = False) -> None:
        who = f"turn {turn_id}" if turn_id else "the API (forget)"
        if unstored and not erased and not turns:
            what = "what it referred to in its own turn was never stored"
        elif not erased and not turns:
            what = ("nothing matched: nothing erased" if matched == 0
                    else f"{matched} matched, nothing erased")
        else:
            what = f"{len(erased)} memories and {len(turns)} turns erased"
        if over:
            what += (f"; {over} more matches kept (over the limit of {self.limit} "
                     "a request may erase)")
        self.store.audit.append([AuditEvent(
            action=AuditAction.ERASE, namespace=namespace, before=list(erased),
            reason=f"{FORGET_AUDIT_PREFIX}{who}; kind: {kind}; {what}",
            actor=Actor.USER, at=now)])


class _Strongest:
    """Per memory id, its strongest match."""

    def __init__(self) -> None:
        self.found: dict[str, ForgetMatch] = {}

    def take(self, mid: str, how: str, strength: float | None = None) -> None:
        """Keep ``mid``'s strongest match."""
        score = _STRENGTH[how] if strength is None else strength
        if mid not in self.found or self.found[mid].strength < score:
            self.found[mid] = ForgetMatch(mid, how, score)

    def best_first(self) -> list[ForgetMatch]:
        """The matches, strongest first (ties by memory id)."""
        return sorted(self.found.values(), key=lambda x: (-x.strength, x.memory_id))


def _matched_how(target: ForgetTarget, m: Memory, words: frozenset[str],
                 speakers: set[str]) -> str | None:
    """How memory ``m`` (its words ``words``) matches ``target``: "frame", "words" or
    "topic"; None: it does not (or its attribute conflicts)."""
    if target.former and m.status is not Status.SUPERSEDED:
        return None  # "the old one": the value that replaced it stays
    if _former_home(target, m, speakers) or frame_matches(target, m.frame, speakers, m.text):
        return "frame"
    if conflicting_attribute(target, m.frame):
        return None
    if _of_others(target, m.text, speakers):
        return None  # a value of one of the speaker's people ("Sam's wife's birthday")
    if (words_match(target, words) and value_shaped(target, m.text)) or (
            target.attribute is None and number_matches(target, m.text, speakers)):
        return "words"
    if topic_matches(target, words) and of_speaker(target, m.text, speakers):
        return "topic"
    return None


def _names_target(sentence: str, targets: Sequence[ForgetTarget]) -> bool:
    """A sentence whose words name one of ``targets`` (every word of it, or its topic)."""
    return any(words_match(t, words_of(sentence)) or topic_matches(t, words_of(sentence))
               for t in targets)


def forget_text(store: MemoryStore, embedder: Embedder, settings: Settings, namespace: str,
                text: str, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None) -> ForgetOutcome:
    """Forget what ``text`` asks or names in the scope ``user_id/agent_id/run_id``, as a
    request said in a turn would (the HTTP API's ``POST .../forget`` and the MCP tool
    ``forget``), with the settings' language pack."""
    validate_namespace(namespace)
    language = language_pack(settings.language, settings.spacy_pipeline)
    return Forgetter(store, embedder, language).forget_text(
        namespace, text, now=utcnow(), user_id=user_id, agent_id=agent_id, run_id=run_id)


def _of_others(target: ForgetTarget, text: str, speakers: set[str]) -> bool:
    """A thing of the speaker's own ("my birthday", "my salary", "my allergy") that
    ``text`` gives one of the speaker's people ("Sam's wife's birthday is 19 October",
    "Sam's colleague Raj is allergic to cats"); a person the target names ("my
    boyfriend") is the speaker's relation however the memory opens."""
    return not target.person and others_own(target, text, speakers)


def _former_home(target: ForgetTarget, m: Memory, speakers: set[str]) -> bool:
    """"My old address" said of a home that was replaced: the superseded residence is
    the old address even when it names only a town ("Sam lives in Leeds")."""
    return (target.former and target.attribute == "contact:address"
            and m.status is Status.SUPERSEDED and m.frame is not None
            and m.frame.attribute == "residence"
            and (not target.mine or m.frame.subject in speakers))


def _former_or_current(target: ForgetTarget, memories: Sequence[Memory],
                       speakers: set[str]) -> ForgetTarget:
    """``target``, asking for the current value when it asks for a former one that was
    never replaced."""
    if target.former and not any(m.status is Status.SUPERSEDED and (
            _former_home(target, m, speakers) or frame_matches(target, m.frame, speakers,
                                                               m.text))
            for m in memories):
        # nothing was replaced (the new value was never framed): "my old address" is
        # then the one framed, as any request for it
        return replace(target, former=False)
    return target


def _match_by_frame_or_words(target: ForgetTarget, memories: Sequence[Memory],
                             owner: frozenset[str], said: dict[str, frozenset[str]],
                             speakers: set[str], found: _Strongest) -> list[str]:
    """Add the memories ``target`` names by frame, words or topic to ``found``; their ids."""
    hits: list[str] = []
    for m in memories:
        if target.owner and not owner & said[m.id]:
            continue  # someone else's, and this memory does not name them
        how = _matched_how(target, m, said[m.id], speakers)
        if how is not None:
            found.take(m.id, how)
            hits.append(m.id)
    return hits


def _meaning_fits(target: ForgetTarget, memory: Memory, speakers: set[str]) -> bool:
    """May a memory close in meaning be ``target``'s: the speaker's own (or the owner's),
    of the value's tense and shape, and no conflicting attribute?"""
    if _of_others(target, memory.text, speakers) or (
            target.former and memory.status is not Status.SUPERSEDED) \
            or not value_shaped(target, memory.text):
        return False
    return not conflicting_attribute(target, memory.frame)
