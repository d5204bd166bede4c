"""The English language pack: frames read from spaCy's dependency parse.

A fact text ("Kenji moved to Munich.", "Kenji's phone number is 0171 555 0199.",
"Ben asks the assistant to stop suggesting jQuery.") is parsed once (the facts of a
batch in one ``nlp.pipe`` call); its first clause's root, subject, objects and
negation give the frame. The tables in :mod:`.tables` only say which lemmas name
which attribute.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memcore.core.forget import ForgetRequest
from memcore.core.frames import is_single_valued
from memcore.core.models import Frame
from memcore.core.secrets import SecretCues
from memcore.core.text_rules import TextRules
from memcore.language.english.answers import answer
from memcore.language.english.clauses import clauses
from memcore.language.english.corrections import correction
from memcore.language.english.forget import (
    REQUEST_VOCABULARY,
    as_written,
    forget_request,
    in_turn,
    linked_names,
    may_ask_to_forget,
    sensitive,
)
from memcore.language.english.grammar import agreed, problem
from memcore.language.english.instructions import instructions
from memcore.language.english.listener import listener_aside
from memcore.language.english.pipeline import load_pipeline
from memcore.language.english.reader import read_frame
from memcore.language.english.referents import PRONOUNS, mentions, opening_subject
from memcore.language.english.referents import resolve as resolve_referents
from memcore.language.english.respelling import respelled
from memcore.language.english.secret_cues import ENGLISH_SECRET_CUES
from memcore.language.english.spelling import spelled, without_listener_tags
from memcore.language.english.statements import statements
from memcore.language.english.subjects import dropped_progressive
from memcore.language.english.text_rules import ENGLISH_TEXT
from memcore.language.english.things import last_things
from memcore.language.english.things import resolve as resolve_things
from memcore.language.english.updates import updated
from memcore.language.english.vague import bare, general, names_things, things_named, vague
from memcore.language.reading import Reading

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

_MAX_CHARS = 400  # a fact longer than this is read by its start only
_MAX_TURN_CHARS = 4000  # a turn longer than this is read by its start only
_PARSE_CACHE = 4096  # recent parses kept (a worker thread's last few batches)
_HE_OR_SHE = re.compile(r"\b(?:he|she)\b", re.I)
# A turn worth reading for an "it" that points back: an opening "it"/"that"/"this" (after
# at most one opener word), or "it" liked ("I love it").
# A turn the value-update reading may rewrite: "it" and a word that says now (the cheap
# screen before two parses on every ingested turn; updates.py reads the same words).
_ANY_IT = re.compile(r"\bit\b", re.I)
_SAYS_NOW = re.compile(r"\b(?:now|nowadays|currently|instead|these days)\b", re.I)
_IT = re.compile(r"(?:^|[.!?]\s+)[\"'(\s]*(?:\w+,?\s+)?(?:it|that|this)\b"
                 r"|\b(?:love|like|hate|adore|enjoy|dislike|loathe|detest|miss)\s+it\b", re.I)
_CONTEXT_CHARS = 800  # the turn before is read by its end (its last sentence is used)




class EnglishPack:
    """English frames (spaCy ``en_core_web_sm``: tagger, parser, lemmatizer)."""

    name = "english"
    text_rules: TextRules = ENGLISH_TEXT
    secret_cues: SecretCues | None = ENGLISH_SECRET_CUES

    def __init__(self, pipeline: str | None = None) -> None:
        self._pipeline_name = pipeline
        self._nlp: Language | None = None
        self._docs: dict[str, Doc] = {}  # recent parses by text (see parse)
        self._known: frozenset[str] | None = None  # the vocabulary as loaded (is_word)

    def parse(self, texts: Sequence[str]) -> list[Doc]:
        """The parses of ``texts``: a text parsed lately (a turn read for statements,
        then for a forget request, then as an answer) is not parsed again; the others
        in one batch (a single text without ``pipe``'s per-call set-up)."""
        out: list[Doc | None] = [self._docs.get(t) for t in texts]
        todo = list(dict.fromkeys(t for t, d in zip(texts, out, strict=True) if d is None))
        if todo:
            docs = ([self.nlp(todo[0])] if len(todo) == 1
                    else list(self.nlp.pipe(todo, batch_size=64)))
            fresh = dict(zip(todo, docs, strict=True))
            if len(self._docs) + len(fresh) > _PARSE_CACHE:
                self._docs.clear()  # rare: a cache of the last few batches is enough
            self._docs.update(fresh)
            out = [d if d is not None else fresh[t] for t, d in zip(texts, out, strict=True)]
        return [d for d in out if d is not None]

    def prepare(self, turns: Sequence[str], facts: Sequence[str]) -> None:
        """Parse a batch's user turns and facts in one call, ahead of the reads that
        need them (each ``nlp`` call has a set-up cost of several documents' parse)."""
        self.parse([*(self.spelled(t)[:_MAX_TURN_CHARS] for t in turns),
                    *(f[:_MAX_CHARS] for f in facts)])

    def is_word(self, word: str) -> bool:
        """Does the pipeline's vocabulary know ``word`` (84k strings of its training)?
        Read as loaded: every parsed text adds its words to spaCy's string store, so a
        typo once seen ("adress") would become a word of it."""
        if self._known is None:
            self.nlp  # noqa: B018 - loading it reads the vocabulary
        assert self._known is not None
        return word in self._known

    def spelled(self, text: str) -> str:
        """``text`` with chat spellings written out and the listener tags its sentences
        end with left out ("..., can you believe it"): :mod:`.spelling`."""
        return without_listener_tags(spelled(text, self.is_word))

    def load(self) -> None:
        """Load the spaCy pipeline now (about 0.6 s) and run it once."""
        self.parse(["I live in Leeds."])

    @property
    def nlp(self) -> Language:
        """The spaCy pipeline, loaded on first use (about 0.6 s)."""
        if self._nlp is None:
            self._nlp = load_pipeline(self._pipeline_name)
            self._known = frozenset(self._nlp.vocab.strings)  # before any text is parsed
        return self._nlp

    def frames(self, texts: Sequence[str]) -> list[Frame | None]:
        """One frame per text (None: no known attribute), parsed in one batch."""
        return [r.frame for r in self.read(texts)]

    def problems(self, texts: Sequence[str]) -> list[str | None]:
        """Per fact text, why it is not a well-formed sentence (None: it is)."""
        return [r.problem for r in self.read(texts)]

    def listener_asides(self, texts: Sequence[str]) -> list[bool]:
        """Per sentence, whether it speaks of the speaker and names the listener only in
        an aside ("I've been reading the book you recommended"): :mod:`.listener`."""
        return [listener_aside(doc) for doc in self.parse(texts)]

    def name_things(self, texts: Sequence[str]) -> list[bool]:
        """Per sentence opening with a pronoun ("it", "they", "that"), whether it still
        names what it is about (:func:`.vague.names_things`)."""
        return [names_things(doc) for doc in self.parse(texts)]

    def dropped_progressive(self, texts: Sequence[str]) -> list[bool]:
        """Per sentence, whether it says what the speaker is doing with its "I'm"
        dropped (:func:`.subjects.dropped_progressive`)."""
        return [dropped_progressive(doc) for doc in self.parse(texts)]

    def things_named(self, texts: Sequence[str]) -> list[int]:
        """Per sentence, how many things it names (:func:`.vague.things_named`)."""
        return [things_named(doc) for doc in self.parse(texts)]

    def corrections(self, texts: Sequence[str]) -> list[str | None]:
        """Per fact text, the correction it makes as "It's X[, not Y]." ("Sorry, Ann
        meant Thursday." -> "It's Thursday."), or None (:mod:`.corrections`)."""
        return [r.correction for r in self.read(texts)]

    def read(self, texts: Sequence[str]) -> list[Reading]:
        """Each text's frame, grammar problem and correction from one parse (one
        batched call)."""
        if not texts:
            return []
        out: list[Reading] = []
        for doc in self.parse([t[:_MAX_CHARS] for t in texts]):
            raw = read_frame(doc)
            frame = None
            if raw is not None:
                subject, attribute, value, polarity, event = raw
                frame = Frame(subject=subject[:256], attribute=attribute[:128],
                              value=value[:256], polarity=polarity,
                              single=is_single_valued(attribute), event=event)
            fixed = agreed(doc)
            out.append(Reading(frame, problem(doc, agreement=False), correction(doc),
                               vague(doc), fixed, bare(doc), general(doc)))
        return out

    def answers(self, pairs: Sequence[tuple[str, str, str]]
                ) -> list[tuple[Frame | None, str] | None]:
        """Per ``(speaker, question, reply)``: the fact a bare reply to the assistant's
        wh-question states (its frame when the question asks for a core attribute),
        or None (:mod:`.answers`)."""
        if not pairs:
            return []
        texts = [t for _, q, a in pairs for t in (q[-_MAX_CHARS:], self.spelled(a)[:_MAX_CHARS])]
        docs = self.parse(texts)
        return [answer(docs[2 * i], docs[2 * i + 1], speaker)
                for i, (speaker, _, _) in enumerate(pairs)]

    def statements(self, turns: Sequence[tuple[str, str]]) -> list[list[tuple[Frame, str]]]:
        """Per ``(speaker, text)`` turn, its first-person statements of core attributes
        (residence, work, age, name, contact, ...) as frames with a sentence each."""
        if not turns:
            return []
        docs = self.parse([self.spelled(text)[:_MAX_TURN_CHARS] for _, text in turns])
        return [statements(doc, speaker, self.parse)
                for (speaker, _), doc in zip(turns, docs, strict=True)]

    def instructions(self, turns: Sequence[tuple[str, str, str]]
                     ) -> list[list[tuple[str, str]]]:
        """Per ``(speaker, text, question)`` user turn, its terse standing instructions
        to the assistant (:mod:`.instructions`)."""
        if not turns:
            return []
        docs = self.parse([self.spelled(text)[:_MAX_TURN_CHARS] for _, text, _ in turns])
        return [instructions(doc, speaker, question, self.parse)
                for (speaker, _, question), doc in zip(turns, docs, strict=True)]

    def forget_requests(self, turns: Sequence[str]) -> list[ForgetRequest | None]:
        """Per user turn, its request to forget (:mod:`.forget`), or None. Spans index
        the turn's own text (chat spellings are not rewritten here)."""
        if not turns:
            return []
        # Read with chat words and typos written out ("pls delte my adress"), the spans
        # mapped back to the turn's own characters.
        texts = [respelled(t[:_MAX_TURN_CHARS], self.is_word, REQUEST_VOCABULARY)
                 for t in turns]
        # Only a turn with a forgetting word (or a negated keeping/telling one) can ask:
        # the others (nearly all) are not parsed for it.
        screened = [i for i, t in enumerate(texts) if may_ask_to_forget(t.text)]
        out: list[ForgetRequest | None] = [None] * len(turns)
        docs = self.parse([texts[i].text for i in screened])
        for i, doc in zip(screened, docs, strict=True):
            request = forget_request(doc)
            if request is not None:
                written = texts[i]
                request = as_written(in_turn(request, written.original), [
                    (written.text[a:b], turns[i][c:d]) for a, b, c, d in written.replaced])
            out[i] = request
        return out

    def pronoun_led(self, turns: Sequence[str]) -> list[bool]:
        """Per user turn, whether its first sentence opens with "he"/"she" as the subject
        and the turn names nobody (:func:`.referents.mentions`): it goes on about the
        person of the turn before (docs/design.md, Forget on request)."""
        out = [False] * len(turns)
        todo = [i for i, t in enumerate(turns) if len(t) <= _MAX_CHARS and _HE_OR_SHE.search(t)]
        for i, doc in zip(todo, self.parse([turns[i] for i in todo]), strict=True):
            first = next(iter(doc.sents), None)
            out[i] = first is not None and opening_subject(first, PRONOUNS) is not None \
                and not mentions(doc)
        return out

    def linked_names(self, texts: Sequence[str], words: frozenset[str]) -> list[set[str]]:
        """Per text, the names it gives a person it names by one of ``words``."""
        if not texts:
            return []
        return [linked_names(doc, words)
                for doc in self.parse([t[:_MAX_CHARS] for t in texts])]

    def sensitive(self, texts: Sequence[str]) -> list[bool]:
        """Per turn, whether it says something a speaker may regret having said
        (:func:`.forget.sensitive`)."""
        return [sensitive(t) for t in texts]

    def clauses(self, texts: Sequence[str]) -> list[list[str]]:
        """Per fact text, its independent clauses (:mod:`.clauses`)."""
        if not texts:
            return []
        return [clauses(doc) for doc in self.parse([t[:_MAX_CHARS] for t in texts])]

    def referents(self, turns: Sequence[str], previous: Sequence[str] | None = None,
                  just_before: Sequence[str] | None = None) -> list[str]:
        """Per turn, its opening "he"/"she" subjects replaced by the one person the turn
        named before them, or else the one its ``previous`` turn (the speaker's turn
        before, "" for none) named (see :mod:`memcore.language.english.referents`); then
        its opening "it" (and "that"/"this" that "is the one ...") by the one thing the
        sentence before introduced, in the turn or else the last sentence of the turn
        ``just_before`` it (see :mod:`memcore.language.english.things`)."""
        out = list(turns)
        before = list(previous) if previous is not None else [""] * len(turns)
        todo = [i for i, t in enumerate(turns) if len(t) <= _MAX_CHARS and _HE_OR_SHE.search(t)]
        docs = self.parse([turns[i] for i in todo])
        earlier = self.parse([before[i][:_MAX_CHARS] for i in todo if before[i]])
        named = iter(earlier)
        for i, doc in zip(todo, docs, strict=True):
            # Across turns only a one-word name or a kin word ("Little Acorns", a
            # nursery, may be the subject of a sentence too).
            # Exactly one person named, and that one of those kinds: "Our CTO is Grace
            # Adeyemi" names one (the name) that is not, so "She ..." stays.
            named_before = list(dict.fromkeys(mentions(next(named)))) if before[i] else []
            people = [m for m in named_before if " " not in m or m.startswith("my ")]
            one = len(named_before) == 1 and len(people) == 1
            out[i] = resolve_referents(doc, people if one else ())
        return self._updates(self._things(out, before, just_before), before)

    def _updates(self, turns: list[str], previous: Sequence[str]) -> list[str]:
        """``turns`` with their "it's <value> now" said of the attribute the speaker's
        previous turn gave a value (see :mod:`memcore.language.english.updates`)."""
        todo = [i for i, t in enumerate(turns) if previous[i] and len(t) <= _MAX_CHARS
                and _ANY_IT.search(t) and _SAYS_NOW.search(t)]
        docs = self.parse([turns[i] for i in todo])
        earlier = self.parse([previous[i][:_MAX_CHARS] for i in todo])
        for i, doc, before in zip(todo, docs, earlier, strict=True):
            turns[i] = updated(doc, before) or turns[i]
        return turns

    def _things(self, turns: list[str], previous: Sequence[str],
                just_before: Sequence[str] | None) -> list[str]:
        """``turns`` with the opening "it"/"that"/"this" they refer back with named (a
        turn just before that is not the speaker's previous one is the assistant's)."""
        prior = list(just_before) if just_before is not None else [""] * len(turns)
        todo = [i for i, t in enumerate(turns) if len(t) <= _MAX_CHARS and _IT.search(t)]
        docs = self.parse([turns[i] for i in todo])
        earlier = iter(self.parse([prior[i][-_CONTEXT_CHARS:] for i in todo if prior[i]]))
        for i, doc in zip(todo, docs, strict=True):
            if not prior[i]:
                turns[i] = resolve_things(doc)
                continue
            context = next(earlier)
            cut = len(prior[i]) > _CONTEXT_CHARS and len(list(context.sents)) < 2
            found = [] if cut else last_things(context, prior[i] != previous[i])
            if not found and previous[i] and prior[i] != previous[i]:
                # The assistant's "Thanks!" introduces nothing: the speaker's own turn
                # before it does ("x@y.com" - "Thanks!" - "that's the one I check").
                found = last_things(self.parse([previous[i][-_CONTEXT_CHARS:]])[0])
            turns[i] = resolve_things(doc, found)
        return turns
