"""The deterministic, rule-based fact extractor (the offline default).

Per allowed turn: split into sentences, drop greetings, small talk, questions
and requests, resolve the first person to the speaker's name, then rate kind,
importance and explicitness from content cues and resolve time phrases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

from memcore.adapters.timephrases import resolve
from memcore.core.compare import relation_of
from memcore.core.interfaces import ExtractedFact
from memcore.core.lexicon import content_terms, fold, word_set
from memcore.core.models import Episode, Kind, Relation, Role
from memcore.observability.usage import Metered

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|;\s+|\s+-\s+(?=[A-Z])")
_MAX_FACT_CHARS = 400

# Leading interjections and discourse fillers stripped before judging a sentence.
_LEADING_FILLER = re.compile(
    r"^(?:(?:hey|hi|hello|hiya|yo|oh|ooh|wow|whoa|yeah|yes|yep|no|nope|ok|okay|so|well|um|uh|"
    r"hmm|haha|lol|omg|aw+|ah|thanks|thank you|sure|right|anyway|anyways|btw|by the way|"
    r"honestly|actually|also|plus|and|but|great|cool|nice|awesome|good|totally|true|"
    r"exactly|absolutely|definitely|of course)\b[\s,!.:-]*)+",
    re.IGNORECASE,
)
_SMALL_TALK = re.compile(
    r"^(?:good (?:morning|afternoon|evening|night|to see you|to hear|luck)|nice to (?:meet|see)|"
    r"see you|talk (?:to you )?(?:soon|later)|take care|bye|goodbye|have a (?:good|great|nice)|"
    r"you'?re welcome|no problem|no worries|congrat|that'?s (?:so |really |very )?"
    r"(?:cool|great|awesome|amazing|nice|good|wonderful|lovely|sweet|fun|interesting|funny|sad|"
    r"tough|true|right)|sounds (?:great|good|fun|amazing|awesome|lovely)|me too|same here|"
    r"i (?:\w+ )?(?:agree|see|know|understand|hear you)|"
    r"glad (?:to hear|you)|i'?m (?:so )?(?:glad|happy) "
    r"(?:for you|to hear)|how (?:are|have) you|what'?s up|how'?s it going|miss you|love (?:that|it|"
    r"this)|take a look|look at this|check (?:this|it) out)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|why|how|where|who|which|whose|do|does|did|are|is|was|were|can|could|would|will|"
    r"should|shall|have|has|any|anything|wanna)\b(?:'s|'re)?\s+(?:you|your|u|we|it|that|there|"
    r"this|they|he|she|anyone|anybody|i)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|tell me|show me|give me|help me|"
    r"let'?s|let me know|make sure|don'?t forget)\b",
    re.IGNORECASE,
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you'?re|you'?ve|you'?d|you'?ll)\b",
                            re.I)
# Sentences opening with a vague pronoun say nothing self-contained unless the
# speaker is the subject somewhere in them.
_VAGUE_START = re.compile(r"^(?:it|it's|that|that's|this|this's|those|these|they|they're|he|"
                          r"she|there|there's|here|here's)\b", re.I)
_FIRST_SUBJECT = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|we|we're|our)\b", re.I)
# Short reactions anywhere in a short sentence ("That race sounds great, Mel").
_REACTION = re.compile(r"\b(?:sounds?|looks?|seems?) (?:so |really |super )?(?:great|good|fun|"
                       r"amazing|awesome|lovely|cool|nice|interesting|wonderful)\b", re.I)
_REACTION_WORDS = 8
_VOCATIVE = re.compile(r"^[A-Z][a-z]+,\s+")
_SUBJECTLESS = re.compile(r"^(?:gonna|going to|planning|hoping|trying|thinking|researching|"
                          r"working|heading|looking|off to|currently|still|just)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|us)\b", re.I)

# Verbs that stay as they are after the subject (modals, past tense, already 3rd person).
_KEEP_VERB = word_set(
    """
    can could will would should shall might must may was did had went got made took saw
    felt found thought knew told said gave came began bought brought ran met left lost won
    kept heard read wrote grew became used can't won't couldn't wouldn't didn't wasn't
    shouldn't chose spoke drove flew ate drank wore sang swam fell held built sent spent
    taught caught sold paid slept stood understood forgot began rode threw broke woke
    fought hid lent led meant put set cut let hit hurt quit shut sat
    """
)
_ADVERBS = word_set(
    """
    really also just still always never usually often actually totally definitely kinda
    sometimes even truly absolutely so already finally recently mostly rarely only
    personally genuinely seriously
    """
)
_CONTRACTIONS = {
    "i'm": "{n} is", "i am": "{n} is", "i've": "{n} has", "i'd": "{n} would",
    "i'll": "{n} will", "i was": "{n} was", "i have": "{n} has", "i do": "{n} does",
    "i don't": "{n} doesn't", "i dont": "{n} doesn't", "im": "{n} is",
    "we're": "{n} and others are", "we've": "{n} and others have", "we'll": "{n} and others will",
    "we'd": "{n} and others would",
}

_KIND_CUES: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (Kind.GOAL, re.compile(
        r"\b(?:want(?:s)? to|wants|plan(?:s|ning)? to|going to|gonna|hope(?:s)? to|aim(?:s|ing)? "
        r"to|trying to|tries to|try to|goal|dream|revising|studying for|preparing for|saving "
        r"(?:up )?for|working (?:on|towards)|learning|would love to|'d love to|intend|"
        r"decided to|wish(?:es)? to|keen on|thinking (?:of|about)|looking forward|will start|"
        r"about to|need(?:s)? to|has to|have to)\b", re.I)),
    (Kind.PREFERENCE, re.compile(
        r"\b(?:likes?|loves?|enjoys?|prefers?|favou?rite|hates?|dislikes?|can't stand|"
        r"(?:is|am) (?:a )?(?:big )?fan of|into|fond of|passionate about|adores?)\b", re.I)),
    (Kind.TEMPORARY, re.compile(
        r"\b(?:today|tonight|right now|at the moment|this (?:morning|afternoon|evening|week)|"
        r"(?:is|am|'m|feels?|feeling) (?:so |really |a bit |very )?(?:tired|sick|ill|busy|swamped|"
        r"stressed|exhausted|hungry|bored|sleepy|anxious|nervous|excited)|for now)\b", re.I)),
    (Kind.EVENT, re.compile(
        r"\b(?:went|visited|attended|moved|started|finished|graduated|got (?:married|engaged|a|"
        r"an|my|the)|bought|joined|won|met|adopted|traveled|travelled|took|had a|was born|"
        r"ran|participated|celebrated|on \d{1,2} \w+ \d{4}|around \d{1,2} \w+ \d{4}|"
        r"yesterday|ago|last (?:week|month|year|night))\b", re.I)),
)
_IMPORTANT = re.compile(
    r"\b(?:name|live[sd]?|moved|work(?:s|ed)? (?:at|for|as)|job|career|married|divorced|wife|"
    r"husband|partner|kids?|children|son|daughter|birthday|born|allerg\w*|diagnos\w*|health|"
    r"vegan|vegetarian|religio\w*|transgender|identity|graduat\w*|degree|pregnan\w*|died|"
    r"passed away|adopt\w*|phone|address|email|password|medication|disease|cancer)\b", re.I)
_EMOTIONAL = re.compile(r"\b(?:love|hate|dream|passion\w*|important|afraid|scared|proud)\b", re.I)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|i think|i guess|not sure|kinda|sort of)\b",
                    re.I)
_EXPLICIT = re.compile(
    r"^(?:remember(?: that)?|note that|fyi|for the record)\b|^(?:i am|i'm|i like|i love|i prefer|"
    r"i hate|i dislike|i enjoy|i live|i work|i have|i own|i need|i want|i was born|i don't|"
    r"i never|i always|my \w+(?: \w+)? (?:is|are|was))\b",
    re.I,
)


def _third_person(verb: str) -> str:
    """``love`` -> ``loves``, ``go`` -> ``goes``, ``try`` -> ``tries``."""
    low = verb.lower()
    if low in _KEEP_VERB or low.endswith("ed") or low.endswith("n't"):
        return verb
    if low == "have":
        return "has"
    if low == "do":
        return "does"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def resolve_first_person(sentence: str, name: str) -> str:
    """Rewrite the first person as ``name`` ("I love hiking" -> "Caroline loves hiking")."""
    text = sentence
    for phrase, repl in sorted(_CONTRACTIONS.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"\b{re.escape(phrase)}\b", repl.format(n=name), text, flags=re.I)

    def _subject(match: re.Match[str]) -> str:
        adverbs, verb = match.group(1) or "", match.group(2)
        return f"{name} {adverbs}{_third_person(verb)}"

    text = re.sub(
        rf"\bI ((?:(?:{'|'.join(sorted(_ADVERBS))}) )*)([A-Za-z']+)", _subject, text
    )
    replacements = (
        (r"\bmyself\b", name), (r"\bmy\b", f"{name}'s"), (r"\bmine\b", f"{name}'s"),
        (r"\bme\b(?!-)", name), (r"\bwe\b", f"{name} and others"), (r"\bour\b", f"{name}'s"),
        (r"\bus\b", f"{name} and others"), (r"\bI\b", name),
    )
    for pattern, repl in replacements:
        text = re.sub(pattern, repl, text, flags=re.I)
    return text[:1].upper() + text[1:]


def split_sentences(text: str) -> list[str]:
    """Sentences of a turn (on ``.!?``, semicolons, new lines and dash breaks)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _is_noise(sentence: str) -> bool:
    """Greetings, small talk, questions, requests and sentences about the listener."""
    if sentence.endswith("?") or _QUESTION_START.match(sentence):
        return True
    if _SMALL_TALK.match(sentence) or _REQUEST.match(sentence):
        return True
    if _SECOND_PERSON.search(sentence):
        return True
    if _VAGUE_START.match(sentence) and not _FIRST_SUBJECT.search(sentence):
        return True
    return len(sentence.split()) <= _REACTION_WORDS and bool(_REACTION.search(sentence))


def _kind(sentence: str) -> Kind:
    for kind, pattern in _KIND_CUES:
        if pattern.search(sentence):
            return kind
    return Kind.KNOWLEDGE


def _importance(sentence: str, kind: Kind, explicit: bool, timed: bool) -> int:
    score = 5
    score += 2 if _IMPORTANT.search(sentence) else 0
    score += 1 if _EMOTIONAL.search(sentence) else 0
    score += 1 if explicit else 0
    score += 1 if kind is Kind.GOAL or timed else 0
    score -= 2 if kind is Kind.TEMPORARY else 0
    score -= 1 if _HEDGE.search(sentence) else 0
    score -= 1 if len(content_terms(sentence)) < 4 else 0
    return max(1, min(10, score))


class OfflineExtractor(Metered):
    """Deterministic rule-based extraction; one "call" per batch of turns.

    Only user turns give facts unless ``allow_assistant`` is set; tool and
    system turns never do (their text is untrusted or not about the user).
    """

    def __init__(self, allow_assistant: bool = False, min_terms: int = 2,
                 temporary_days: float = 3.0) -> None:
        super().__init__()
        self.allow_assistant = allow_assistant
        self.min_terms = min_terms
        self.temporary_days = temporary_days

    def _allowed(self, episode: Episode) -> bool:
        if episode.role is Role.USER:
            return True
        return episode.role is Role.ASSISTANT and self.allow_assistant

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        """Facts of all allowed ``episodes``, in turn and sentence order."""
        self.count_call()
        facts: list[ExtractedFact] = []
        for episode in episodes:
            if self._allowed(episode):
                facts.extend(self.extract_turn(episode))
        return facts

    def extract_turn(self, episode: Episode) -> list[ExtractedFact]:
        """Facts of one turn (no role check)."""
        default = "User" if episode.role is Role.USER else "Assistant"
        name = episode.speaker.strip() or default
        seen: set[str] = set()
        out: list[ExtractedFact] = []
        for raw in split_sentences(episode.text):
            sentence = _LEADING_FILLER.sub("", raw).strip(" ,.!-:")
            if _VOCATIVE.match(sentence) and not sentence.startswith("I,"):
                sentence = _LEADING_FILLER.sub("", _VOCATIVE.sub("", sentence, count=1))
            if not sentence or _is_noise(sentence) or _is_noise(raw.strip()):
                continue
            fact = self._fact(sentence, name, episode)
            if fact is not None and fold(fact.text) not in seen:
                seen.add(fold(fact.text))
                out.append(fact)
        return out

    def _fact(self, sentence: str, name: str, episode: Episode) -> ExtractedFact | None:
        first_person = bool(_FIRST_PERSON.search(sentence))
        # Third-person chatter needs more substance than a first-person statement.
        if len(content_terms(sentence)) < (self.min_terms if first_person else self.min_terms + 2):
            return None
        now = episode.timestamp
        timing = resolve(sentence, now)
        explicit = bool(_EXPLICIT.match(sentence)) and not _HEDGE.search(sentence)
        rewritten = timing.rewritten
        if _SUBJECTLESS.match(rewritten):  # "Gonna continue my edu" has no subject
            rewritten = f"I'm {rewritten[:1].lower()}{rewritten[1:]}"
        text = resolve_first_person(rewritten, name).rstrip(" ,;:-")
        kind = _kind(text)
        if not text.endswith((".", "!")):
            text += "."
        text = text.replace("!", ".")[:_MAX_FACT_CHARS]
        valid_until = expires_at = timing.deadline
        if kind is Kind.TEMPORARY and expires_at is None:
            expires_at = now + timedelta(days=self.temporary_days)
        if timing.happened is not None and kind is Kind.KNOWLEDGE:
            kind = Kind.EVENT
        if timing.deadline is not None and kind in (Kind.KNOWLEDGE, Kind.PREFERENCE):
            kind = Kind.EVENT if timing.happened else Kind.GOAL
        valid_from = timing.happened
        if valid_from is not None and valid_until is not None and valid_until < valid_from:
            valid_from = None
        return ExtractedFact(
            text=text,
            kind=kind,
            importance=_importance(sentence, kind, explicit, timing.deadline is not None),
            explicit=explicit,
            source=episode.id,
            valid_from=valid_from,
            valid_until=valid_until,
            expires_at=expires_at,
            relation=_relation(text),
        )


def _relation(text: str) -> Relation | None:
    """The subject-predicate-object form of a fact, when it has one."""
    found = relation_of(text)
    if found is None:
        return None
    subject, predicate, obj = found
    return Relation(subject=subject[:256], predicate=predicate[:128], object=obj[:256])
