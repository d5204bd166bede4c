"""Rule-based comparison of two short facts: same, contradicting, extending or distinct.

Shared by the offline decider and merger so both judge pairs the same way.
Contradictions are only declared between facts about the same subject (the
Graphiti lesson: an over-eager check retires unrelated facts).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from memcore.core.models import Relation as MemoryRelation
from memcore.language.english.lexicon import (
    canonical_terms,
    fold,
    numbers,
    polarity,
    stem,
    word_set,
)
from memcore.language.english.tables import DWELLINGS

# Exclusive predicates: a subject has one value at a time, so a new value
# retires the old one. Each pattern captures (subject, value).
_ADV = (r"(?:(?:has|have|is|was|just|now|currently|still|finally|recently|officially|also|"
        r"no longer|not|never|does not|doesn't|isn't) )*")
# Nouns that name an occupation ("a nurse", "a senior architect", "team lead").
_JOB = (r"(?:[a-z-]+(?:er|or|ist|ian|ant|ent|eer|ect|ive|ic)|nurse|chef|doctor|lead|manager|"
        r"waitress|postdoc|intern|ceo|cto|cfo|founder|barista|cook|clerk|pilot|surgeon|tutor|"
        r"coach|editor|artist|assistant|nanny|carer|accountant)")
_NOT_JOB = word_set("""vegetarian vegan pescatarian pescetarian flexitarian carnivore omnivore
    member fan beginner user owner customer brother sister
    mother father daughter son partner person lover reader player other introvert extrovert
    christian believer smoker drinker speaker learner parent grandparent grandmother
    grandfather neighbour neighbor friend fighter survivor perfectionist optimist pessimist
    morning evening night early ex former native regular her other together over ever never
    later after sooner better longer rather either neither whether further""")


# Posts named by the post itself ("accepted a lectureship at ..."); not "role", which
# is also a part in a play.
_POST = (r"(?:lectureship|professorship|fellowship|readership|postdoc|residency|internship|"
         r"apprenticeship|traineeship|position|post|job)")
_AGES = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen", "twenty")
_AGE_WORDS = "(?:" + "|".join(_AGES) + ")"

_LANGUAGES = ("(?:english|german|french|spanish|italian|portuguese|dutch|polish|swedish|norwegian|"
              "danish|finnish|greek|turkish|russian|ukrainian|czech|hungarian|romanian|"
              "arabic|hebrew|hindi|chinese|mandarin|cantonese|japanese|korean|vietnamese|thai|"
              "indonesian|catalan|basque|galician)")


# "ann's son leo" and "leo" are one person: a named relative or pet is its name.
_KIN = (r"(?:(?:little|older|younger|eldest|youngest|baby|best) )?"
        r"(?:son|daughter|kid|child|boy|girl|brother|sister|wife|husband|"
        r"partner|boyfriend|girlfriend|friend|dog|cat|puppy|kitten|mother|mom|"
        r"mum|father|dad|niece|nephew|grandson|granddaughter)")
_NAMED_KIN = re.compile(rf"^[^ ]+'s? {_KIN} (?P<name>[^ ]+)$")
# "ann's son": someone of their own, not a thing of Ann's ("ann's car").
_UNNAMED_KIN = re.compile(rf"^[^ ]+'s? {_KIN}$")


_POSSESSIVE_END = re.compile(r"'s$")


def _subject(raw: str) -> str:
    """The subject as compared: folded, single-spaced, without a trailing possessive;
    a named relative or pet ("ann's son leo") is compared by the name ("leo")."""
    subject = _POSSESSIVE_END.sub("", " ".join(raw.split()))
    kin = _NAMED_KIN.match(subject)
    return kin.group("name") if kin else subject

# Exclusive predicates: a subject has one value at a time, so a new value
# retires the old one. Each pattern captures (subject, value).
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern))
    for slot, pattern in (
        ("answer_language", rf"^(?P<s>[^ ]+) asks the assistant to (?:[a-z]+ )*?"
                            rf"(?:in|to) (?P<v>{_LANGUAGES})\b"),
        ("residence", rf"^(?P<s>.+?) {_ADV}(?:lives|live|living|moved|relocated|based|resides|"
                      r"reside|settled|back|moving) (?:back )?(?:in|to|at) (?:the )?"
                      r"(?P<v>[^,.;]+)"),
        ("residence", r"^(?P<s>.+?)'s? (?:home|home town|hometown) is (?:in )?(?P<v>[^,.;]+)"),
        ("employer", rf"^(?P<s>.+?) {_ADV}(?:works|work|working|started working|joined|"
                     r"employed) (?:at|for) (?P<v>[^,.;]+)"),
        # "started at Manchester Royal Infirmary on Monday", "is now at Lumen": a new
        # workplace (not a time, "started at 9", nor a place one is at for a while)
        ("employer", rf"^(?P<s>.+?) {_ADV}(?:started|starts|began|is starting|will start) at "
                     r"(?!\d|the (?:gym|bottom|top|beginning|start|end)\b|home\b|school\b|"
                     r"noon\b|midnight\b|dawn\b)(?P<v>[^,.;]+)"),
        ("employer", r"^(?P<s>[^ ]+) is now at (?P<v>(?:a|an) (?:new )?(?:startup|company|firm|"
                     r"bank|hospital|agency|lab|university|studio|consultancy|clinic|"
                     r"law firm)\b[^,.;]*)"),
        ("employer", r"^(?P<s>.+?)'s? (?:new |current )?(?:employer|company) is (?:now )?"
                     r"(?P<v>[^,.;]+)"),
        ("job", r"^(?P<s>.+?)'s? (?:job|profession|occupation|role) is (?:as )?(?:an? )?"
                r"(?P<v>[^,.;]+)"),
        ("job", rf"^(?P<s>.+?) {_ADV}(?:works|work|working|started working|started a new job|"
                r"started a job|got a job|started|starts|is starting) as (?:an? )?"
                r"(?P<v>[^,.;]+?)(?: (?:at|for|in) [^,.;]+)?$"),
        ("job", rf"^(?P<s>[^ ]+(?: [^ ]+)?) {_ADV}is {_ADV}(?:an? )?"
                rf"(?P<v>(?:[a-z-]+ ){{0,3}}{_JOB})(?: now)?"
                r"(?: (?:at|for|in) [^,.;]+)?$"),
        # Taking up a post is a job change even when the post is the only noun
        # ("accepted a lectureship at Leeds", "took a job at Ikea").
        ("job", rf"^(?P<s>.+?) {_ADV}(?:accepted|took|took up|landed|got|was offered|"
                r"has been offered|secured) (?:a |an |the )?(?:new )?"
                rf"(?P<v>(?:[a-z-]+ ){{0,2}}{_POST}) (?:at|with|in|from) [^,.;]+"),
        ("job", rf"^(?P<s>.+?) {_ADV}(?:accepted a (?:new )?(?:job|position|post|offer)|"
                r"took a (?:new )?(?:job|position)|landed a (?:new )?(?:job|position)|"
                r"got hired|was hired|has been hired|is hired|joined [^,.;]+?|"
                r"is joining [^,.;]+?) as (?:an? )?(?P<v>[^,.;]+?)"
                r"(?: (?:at|for|in|with) [^,.;]+)?$"),
        # "joined Bosch": an organisation named without an article ("joined the choir",
        # "joined a gym" are memberships, several at a time).
        ("employer", rf"^(?P<s>.+?) {_ADV}(?:joined|is joining|will join) "
                     r"(?!(?:the|a|an|my|his|her|their|our|some|another)\b)"
                     r"(?P<v>[^,.;]+?)(?: (?:last|this|in|on|as|after|because|since|"
                     r"recently|\d)\b.*)?$"),
        ("name", r"^(?P<s>.+?)'s? name is (?P<v>[^,.;]+)"),
        # "Budget went up to 6000", "Sam's rent is now 950": one amount at a time.
        ("amount", r"^(?P<s>(?:[^ ]+'s )?(?P<k>budget|rent|salary|pay|mortgage|deposit|"
                   r"allowance|savings|price)) (?:is|was|went up to|went down to|has gone up to|"
                   r"has gone down to|increased to|decreased to|dropped to|rose to|fell to|"
                   r"was raised to|was cut to)(?: now)? (?:about |around |roughly |"
                   r"approximately |only |just )?(?P<v>[£$€]?\d[\d,.]*k?)\b"),
        ("age", rf"^(?P<s>.+?) {_ADV}(?:is|turned|is turning|will turn) (?P<v>\d+)"
                r"(?: years old)?\b"),
        ("age", rf"^(?P<s>.+?) {_ADV}(?:is|turned|is turning) (?P<v>{_AGE_WORDS})"
                r"(?: years old)?(?: now)?$"),
        # "She has now 5 years": a calque of how many languages say an age.
        ("age", r"^(?P<s>.+?) (?:has|have) (?:now |just )?(?P<v>\d+) years(?: old)?(?: now)?"
                r"(?:,.*)?$"),
        ("age", r"^(?P<s>.+?) celebrated (?:her|his|their|its) (?P<v>\d+)(?:st|nd|rd|th) "
                r"birthday"),
        ("partner", r"^(?P<s>.+?) (?:is married to|is dating|is engaged to) (?P<v>[^,.;]+)"),
        ("favorite", r"^(?P<s>.+?)'s? favou?rite (?P<k>[a-z ]+?) is (?:now )?(?P<v>[^,.;]+)"),
        ("favorite", r"^(?P<s>.+?)'s? favou?rite is (?:now )?(?P<v>[^,.;]+)"),
        ("school", r"^(?P<s>.+?) (?:studies|study|is studying|goes to school) at (?P<v>[^,.;]+)"),
        # One diet at a time: "is pescatarian" after "is vegetarian" is a change.
        ("diet", rf"^(?P<s>.+?) {_ADV}(?:is|has become|became|went|has gone) {_ADV}(?:an? )?"
                 r"(?:strict |full |fully )?(?P<v>vegetarian|vegan|pescatarian|pescetarian|"
                 r"omnivore|omnivorous|flexitarian|carnivore|keto|paleo)\b"),
    )
)


class Relation(StrEnum):
    """How a new fact relates to an existing one."""

    SAME = "same"
    CONTRADICTS = "contradicts"
    EXTENDS = "extends"  # the new fact says the old one plus more
    SUBSUMED = "subsumed"  # the old fact already says more than the new one
    DISTINCT = "distinct"


@dataclass(frozen=True)
class Slot:
    """A single-valued attribute of a subject, e.g. residence(Caroline) = Berlin."""

    name: str
    subject: str
    value: str
    raw: str = ""  # the value as written (``value`` is stemmed for comparison)


_VALUE_END = re.compile(
    r" (?:last|next|this|in|on|with|for|because|since|and|but|after|before|when|while|"
    r"now|recently|ago|years?|months?|weeks?|as|from|though|although|\d{4})\b.*$"
)


# The dot of an abbreviation is no clause end: "at st. mary's" is compared as "at st mary's".
_ABBREVIATION_DOT = re.compile(r"\b(mr|mrs|ms|mx|dr|prof|st|mt|ft|jr|sr|etc|vs|approx|no)\."
                               r"(?=\s|$)|(?<=\b[a-z])\.(?=[a-z]\b\.?)|(?<=\b[a-z]\.[a-z])\.")


# A time adverb in front of the subject ("Now Sam works at Bosch") is not the subject.
_FRONTED = re.compile(r"^(?:(?:now|currently|nowadays|these days|at the moment|right now|"
                      r"today|so|and|but|also|anyway|well),? )+")


_SPACES = re.compile(r"\s+")
# The words a _FRONTED match starts with.
_FRONT_WORDS = ("now", "currently", "nowadays", "these days", "at the moment", "right now",
                "today", "so", "and", "but", "also", "anyway", "well")


def _clean(text: str) -> str:
    # Each step is skipped only where it would change nothing (the fast common case).
    text = fold(text).strip().rstrip(".!")
    if not text.isascii():  # ASCII has no decompositions and no combining marks
        # Accents dropped: "Tomás's degree" must tokenize like "Tomas's degree".
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    if "." in text:  # every abbreviation dot match is a dot
        text = _ABBREVIATION_DOT.sub(lambda m: m.group(1) or "", text)
    # Every whitespace character but " " is unprintable: a printable text without "  "
    # has only single spaces to squeeze.
    if "  " in text or not text.isprintable():
        text = _SPACES.sub(" ", text)
    return _FRONTED.sub("", text) if text.startswith(_FRONT_WORDS) else text


# How long the assistant's answers should be: said many ways ("keep answers short",
# "don't give me long answers", "answer in more detail from now on"), one value at a time.
# Only a preference about length itself: "code examples over long explanations" prefers
# something else and keeps no length slot.
_ANSWER_ASK = re.compile(r"^(?P<s>[^ ]+) (?:asks the assistant|asks for|wants|prefers|likes)\b"
                         r"(?P<rest>.*)$")
_SHORT_WORDS = r"short|shorter|brief|briefer|concise|succinct|terse"
_LONG_WORDS = (r"long|longer|lengthy|detailed|more detailed|thorough|elaborate|comprehensive|"
               r"in-depth")
_ANSWERS = r"(?:answers?|responses?|replies|reply|explanations?)"
_ANSWER_SHORT = re.compile(rf"\b(?:(?:{_SHORT_WORDS}) {_ANSWERS}|(?:keep|make) (?:it|things|them|"
                           rf"(?:\w+'s |your |its )?{_ANSWERS}) (?:{_SHORT_WORDS}|to the point)|"
                           rf"answer (?:briefly|in short|in brief))\b")
_ANSWER_LONG = re.compile(rf"\b(?:(?:{_LONG_WORDS}) {_ANSWERS}|(?:answer|explain|reply|respond)"
                          rf"(?: \w+)? (?:in (?:more )?detail|in (?:more )?depth|at length|"
                          rf"thoroughly))\b")
_ANSWER_WORDS = re.compile(r"answer|respons|repl|expla|(?:keep|make) (?:it|things|them)", re.I)
_CONTRAST_BEFORE = re.compile(r"\b(?:over|rather than|instead of|than)\s+$")


def answer_length(text: str) -> Slot | None:
    """``answer_length`` = short | long of a preference about the length of the
    assistant's answers (a negated ask flips it: "not to give long answers" is short)."""
    if not _ANSWER_WORDS.search(text):
        return None  # most texts: no need to clean and parse them
    m = _ANSWER_ASK.match(_clean(text))
    if not m:
        return None
    rest = m.group("rest")
    short, long_ = _ANSWER_SHORT.search(rest), _ANSWER_LONG.search(rest)
    if bool(short) == bool(long_):
        return None  # neither, or both ("short, not long"): not for a rule to read
    cue = short or long_
    if cue is None or _CONTRAST_BEFORE.search(rest[:cue.start()]):
        return None  # "examples over long explanations": a preference for something else
    value = "short" if short else "long"
    if polarity(text) < 0:
        value = "long" if value == "short" else "short"
    return Slot("answer_length", _subject(m.group("s")), value, value)


def slot_of(text: str) -> Slot | None:
    """The exclusive slot ``text`` fills, if it matches one of the known predicates."""
    return next(_slots(text), None)


# The strings one of which each pattern of ``_SLOTS`` (same order) cannot match without,
# in the cleaned text: a text with none of a pattern's cues is not tried on it (most
# texts have none at all). tests/adapters/test_hashing_fast.py holds every pattern to its cues.
_SLOT_CUES: tuple[tuple[str, ...], ...] = (
    ("assistant",),  # answer_language: "asks the assistant to"
    ("liv", "mov", "relocated", "based", "resid", "settled", "back"),  # residence
    ("home",),  # residence: "'s home town is"
    ("work", "join", "employ"),  # employer: "works at", "joined at", "employed by"
    ("start", "began"),  # employer: "started at"
    (" is ",),  # employer: "is now at"
    ("employ", "company"),  # employer: "'s employer is"
    ("job", "profession", "occupation", "role"),  # job: "'s job is"
    ("work", "start", "job"),  # job: "works as", "started as", "got a job as"
    (" is ",),  # job: "is a nurse" (after the subject's space or an adverb's)
    ("accepted", "took", "landed", "got", "offered", "secured"),  # job: "took a post at"
    ("accepted", "took", "landed", "hired", "join"),  # job: "was hired as"
    ("join",),  # employer: "joined Bosch"
    ("name is",),  # name
    ("budget", "rent", "salary", "pay", "mortgage", "deposit", "allowance", "savings",
     "price"),  # amount
    (" is ", "turn"),  # age: "is 7", "turned 7"
    (" is ", "turn"),  # age: "is seven"
    (" years",),  # age: "has 5 years"
    ("celebrated",),  # age: "celebrated her 7th birthday"
    (" is ",),  # partner: "is married to"
    ("favo",),  # favorite: "favourite colour is"
    ("favo",),  # favorite: "favourite is"
    ("stud", "goes to school"),  # school: "studies at"
    ("veg", "pesc", "omnivor", "flexitarian", "carnivore", "keto", "paleo"),  # diet
)
_CUES = tuple(sorted({cue for cues in _SLOT_CUES for cue in cues}))
# Cue -> the indices in ``_SLOTS`` of the patterns it lets through.
_CUED: dict[str, tuple[int, ...]] = {
    cue: tuple(i for i, cues in enumerate(_SLOT_CUES) if cue in cues) for cue in _CUES}


def _finder(needles: Sequence[str]) -> re.Pattern[str]:
    """A pattern whose ``findall`` lists every occurrence of ``needles`` (none a prefix of
    another, so at most one starts at a place), as one zero-width match per place;
    branches grouped by first letter (faster)."""
    if any(a != b and b.startswith(a) for a in needles for b in needles):
        raise ValueError("a needle is a prefix of another")
    by_first: dict[str, list[str]] = {}
    for needle in needles:
        by_first.setdefault(needle[0], []).append(re.escape(needle[1:]))
    return re.compile("(?=(" + "|".join(f"{re.escape(first)}(?:{'|'.join(rests)})"
                                        for first, rests in by_first.items()) + "))")


_CUE_FINDER = _finder(_CUES)


def _slots(text: str) -> Iterator[Slot]:
    """Every slot ``text`` fills, in the order of ``_SLOTS`` (the first is its slot)."""
    clean = _clean(text)
    cues = _CUE_FINDER.findall(clean)
    if not cues:
        return  # most texts: no pattern could match
    for i in sorted({i for cue in cues for i in _CUED[cue]}):
        name, pattern = _SLOTS[i]
        match = pattern.search(clean)
        if match:
            key = name + (":" + match.group("k") if "k" in pattern.groupindex else "")
            raw = _VALUE_END.sub("", " " + match.group("v")).strip() or match.group("v")
            value = " ".join(stem(w) for w in raw.split() if w not in {"the", "a", "an"})
            if name == "age" and raw in _AGES:
                value = str(_AGES.index(raw) + 1)  # "seven" and "7" are one age
            if name == "job" and raw.split()[-1:] and raw.split()[-1] in _NOT_JOB:
                continue
            if name == "residence" and not _homelike(raw):
                continue  # "moved to another project": not a home
            if (name == "job" and raw.split()[0].endswith("ing")
                    and not re.search(rf"\b(?:a|an|as) {re.escape(raw)}", clean)):
                continue  # "is visiting her": a verb, not a "visiting" post
            yield Slot(key, _subject(match.group("s")), value.strip(), raw.strip())


# A place name is not preceded by these ("moved to *another* project", "to a new team");
# a dwelling noun after them is still a home ("moved to a new flat").
_NOT_A_NAME_START = word_set("another other a an new different my his her our their "
                             "its some one")


def _homelike(raw: str) -> bool:
    words = raw.split()
    return not (words and words[0] in _NOT_A_NAME_START
                and not any(w in DWELLINGS for w in words))


# The employer named in a job statement ("is a nurse at St Mary's", "works as a tax
# advisor for Deloitte"): a new employer makes that statement stale too.
_EMPLOYER_IN_JOB = re.compile(r" (?:at|for|with) (?P<v>[^,.;]+)$")
_NOT_EMPLOYER = word_set("home night nights weekends weekend present moment times least")


def slots_of(text: str) -> list[Slot]:
    """:func:`slot_of` plus, for a job held at a named place, that employer."""
    out: list[Slot] = []
    for slot in _slots(text):
        if all(slot.name != o.name for o in out):
            out.append(slot)
    if not out:
        return []
    slot = out[0]
    if slot.name == "job" and all(o.name != "employer" for o in out):
        m = _EMPLOYER_IN_JOB.search(_clean(text))
        raw = _VALUE_END.sub("", " " + m.group("v")).strip() if m else ""
        if raw and raw.split()[-1] not in _NOT_EMPLOYER:
            value = " ".join(stem(w) for w in raw.split() if w not in {"the", "a", "an"})
            out.append(Slot("employer", slot.subject, value, raw))
    return out


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


# Everyday paraphrases said as one wording before two facts' words are compared ("learning
# Rust on the side" is "learning Rust in Sam's spare time"; a standing request for code
# examples over explanations is the preference for them).
_PARAPHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), r) for p, r in (
        (r"\b(?:on the side|in (?:[\w-]+'s |my |his |her |their |our )?(?:spare|free|own) time|"
         r"as a side (?:project|thing|hobby))\b", "sparetime"),
        (r"\basks the assistant to (?:keep |always |please )*(?:giving|give|showing|show|sending|"
         r"send) (?:me |him |her |them |[A-Z][\w'-]* )?", "prefers "),
        (r"\basks the assistant to (?:keep |always |please )*(?:using|use|providing|provide|"
         r"writing|write) ", "prefers "),
        (r"\brather than\b|\binstead of\b", "over"),
    ))


def _paraphrased(text: str) -> str:
    for pattern, wording in _PARAPHRASES:
        text = pattern.sub(wording, text)
    return text


def relate(new: str, old: str) -> tuple[Relation, str]:
    """How ``new`` relates to ``old``, with a one-line reason."""
    terms_new = canonical_terms(_paraphrased(new))
    terms_old = canonical_terms(_paraphrased(old))
    pol_new, pol_old = polarity(new), polarity(old)
    by_slot = _relate_slots(new, old, terms_old < terms_new, pol_new, pol_old)
    if by_slot is not None:
        return by_slot
    change = change_of(new)
    if change is not None and ends(change, old):
        return Relation.CONTRADICTS, change.reason
    return _relate_wording(new, old, terms_new, terms_old, pol_new != pol_old)


def _relate_slots(new: str, old: str, adds_terms: bool, pol_new: int,
                  pol_old: int) -> tuple[Relation, str] | None:
    """The relation of two facts that fill the same slot of the same subject, or None.
    Only the first slot of each side can be the same or extend; the employer named in a
    job statement only ever contradicts (two facts about one employer may still say
    different things)."""
    pairs = [(x, y, not (i or j)) for i, x in enumerate(slots_of(new))
             for j, y in enumerate(slots_of(old))]
    for slot_new, slot_old, primary in pairs:
        if not (_same_slot_name(slot_new.name, slot_old.name)
                and slot_new.subject == slot_old.subject):
            continue
        found = _relate_slot_pair(slot_new, slot_old, primary and pol_new == pol_old,
                                  adds_terms, pol_new > 0 and pol_old > 0)
        if found is not None:
            return found
    return None


def _relate_slot_pair(slot_new: Slot, slot_old: Slot, may_agree: bool, adds_terms: bool,
                      both_positive: bool) -> tuple[Relation, str] | None:
    """Two fillings of one slot: one value inside the other is the same fact or more
    detail (``may_agree``: primary slots of equal polarity), two unrelated values
    contradict (``both_positive``: neither is negated)."""
    a, b = slot_new.value, slot_old.value
    if not (a and b):
        return None
    if (a in b or b in a) and may_agree:
        if adds_terms or (a != b and b in a):
            return Relation.EXTENDS, f"same {slot_new.name}, more detail"
        return Relation.SAME, f"same {slot_new.name} of {slot_new.subject}"
    if a not in b and b not in a and both_positive:
        return Relation.CONTRADICTS, (
            f"{slot_new.name} of {slot_new.subject} changed: "
            f"{slot_old.value!r} -> {slot_new.value!r}")
    return None


def _relate_wording(new: str, old: str, terms_new: frozenset[str], terms_old: frozenset[str],
                    flipped: bool) -> tuple[Relation, str]:
    """The relation of two facts by their words and numbers (no slot decided it);
    ``flipped``: their polarities differ."""
    nums_new, nums_old = numbers(new), numbers(old)
    differ = len(terms_new ^ terms_old)
    # A flip only contradicts the *same* statement: "likes hiking and hates
    # swimming" must not retire "likes hiking".
    if flipped and (differ == 0 or (differ == 1 and len(terms_new | terms_old) >= 6)):
        return Relation.CONTRADICTS, "negation flip of the same statement"
    # A changed number retires only the same statement ("has 2 kids" -> "has 3 kids");
    # facts that also differ in words are different things ("item1 ... 2019" and
    # "item2 ... 2020" are two possessions).
    if nums_new and nums_old and nums_new != nums_old and differ == 0:
        return Relation.CONTRADICTS, (
            f"changed number {sorted(nums_old)} -> {sorted(nums_new)}")
    if flipped:
        return Relation.DISTINCT, "different polarity, different content"
    if terms_new == terms_old and nums_new == nums_old:
        return Relation.SAME, "same statement"
    if terms_old < terms_new and nums_old <= nums_new:
        return Relation.EXTENDS, "new fact adds detail to the old one"
    if terms_new < terms_old and nums_new <= nums_old:
        return Relation.SUBSUMED, "already known in more detail"
    overlap = _jaccard(terms_new, terms_old)
    if overlap >= 0.85 and nums_new == nums_old and not names_differ(new, old):
        return Relation.SAME, f"near-identical wording (overlap {overlap:.2f})"
    return Relation.DISTINCT, "different content"


_PREDICATES = {"residence": "lives_in", "employer": "works_at", "job": "works_as",
               "name": "is_named", "age": "has_age", "partner": "partner_of",
               "school": "studies_at"}


_NAMED = re.compile(r"\b(?:called|named)\s+([\w'-]+)", re.I)


def names_differ(a: str, b: str) -> bool:
    """Both texts name what they talk about ("a bike called item1") and the names differ:
    two things, however alike the rest of the wording."""
    na = {m.lower() for m in _NAMED.findall(a)}
    nb = {m.lower() for m in _NAMED.findall(b)}
    return bool(na and nb and na != nb)


def relation_for(text: str) -> MemoryRelation | None:
    """:func:`relation_of` as the memory model's relation, or None."""
    found = relation_of(text)
    if found is None:
        return None
    subject, predicate, obj = found
    return MemoryRelation(subject=subject[:256], predicate=predicate[:128], object=obj[:256])


def relation_of(text: str) -> tuple[str, str, str] | None:
    """``(subject, predicate, object)`` when ``text`` fills a known single-valued slot,
    e.g. "Sam works at Acme" -> ("sam", "works_at", "acme")."""
    style = answer_length(text)
    if style is not None:
        return style.subject, style.name, style.value
    slot = slot_of(text)
    if slot is None or not slot.raw or polarity(text) < 0:
        return None  # "no longer lives in Lisbon" is not lives_in(..., Lisbon)
    base, _, detail = slot.name.partition(":")
    predicate = _PREDICATES.get(base, base)
    if detail:
        predicate = f"{predicate}_{detail.replace(' ', '_')}"
    return slot.subject, predicate, slot.raw


# --- changes: what a fact says has ended --------------------------------------------

# Verbs that carry no object of their own ("no longer *lives* in Lisbon": Lisbon is the key).
_GENERIC_VERBS = frozenset(stem(w) for w in word_set("""live work use have own be do play
    take go eat drink make get keep attend study learn run sing dance visit drive ride wear
    going
    doing using having taking working living playing"""))
_PREP = re.compile(r" (?:in|on|at|during|before|with|from|to|so|when|while)\b")
_CUT = re.compile(r"(?:,|;| (?:after|because|since|as|for|but|and now|now|last|this|yesterday|"
                  r"today|anymore|any more|again|in (?:january|february|march|april|may|june|"
                  r"july|august|september|october|november|december|\d{4})|too|either)\b).*$")
_C = r"(?P<s>[^ ]+(?:'s [^ ]+)?) "  # the subject: "sam", "sam's phone"
# "left" as a verb, not a side after a possessive ("broke Ann's left wrist", "her left knee")
_LEFT = r"(?<!'s )(?<!my )(?<!her )(?<!his )(?<!our )(?<!your )(?<!their )left"
# (pattern, which group names what ended, whether the subject must match)
_CHANGES: tuple[tuple[re.Pattern[str], str, bool], ...] = tuple(
    (re.compile(p), g, same) for p, g, same in (
        # Graduating ends studying, and whatever says the degree is still to finish.
        # "Sam's wrist is fine now", "Sam recovered from the flu": an ailment that ended
        # ("!": only a fact reporting an ailment of it is stale, not "Sam's back garden").
        (r"^(?P<s>[^ ]+?)'s (?P<x>[a-z]+) (?:is|are|feels|has|have) (?:now |finally |all |much |"
         r"a lot |completely |fully |totally )?(?:fine|better|healed|recovered|okay|ok|"
         r"good as new|back to normal)\b", "x!", True),
        (rf"^{_C}{_ADV}(?:recovered|healed) from (?P<x>.+)$", "x!", True),
        (rf"^{_C}{_ADV}(?:graduated|finished (?P<x>(?:[a-z]+'s |my |the )?(?:degree|studies|"
         r"bachelor'?s|master'?s|phd|course)))\b", "x=study", True),
        # "cut down to one coffee a day": the old amount of the same thing.
        (rf"^{_C}{_ADV}(?:cut (?:down|back)|reduced|is down) to (?:about |only |just )?"
         r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|an) (?P<x>[a-z]+)", "x#",
         True),
        (rf"^{_C}{_ADV}(?:switched|moved|changed|went|migrated|converted) (?:over )?from "
         r"(?P<x>.+?) to ", "x", True),
        (rf"^{_C}{_ADV}(?:replaced|swapped|traded|exchanged) (?P<x>.+?) (?:with|for) ", "x", True),
        (rf"^{_C}{_ADV}(?:dropped|ditched|abandoned) (?P<x>.+?) for ", "x", True),
        (r"^(?P<s>[^ ]+) .*? instead of (?P<x>[^,.;]+)", "x", True),
        (rf"^{_C}.*?\bno (?:longer|more) (?P<x>.+)$", "x", True),
        # Taking a habit up (again): "eats meat again", "started smoking again".
        (rf"^{_C}{_ADV}(?:(?:started|began|has started|is back to|went back to|took up) )?"
         r"(?P<x>[^,;]+?) again\b", "x+", True),
        (rf"^{_C}{_ADV}(?:started|began|took up) (?P<x>[a-z]+ing\b[^,;]*)", "x+", True),
        (rf"^{_C}(?:is|does|do|has|was) not (?:an? )?(?P<x>.+?) (?:any ?more|any longer)\b",
         "x", True),
        (rf"^{_C}(?:doesn't|does not|isn't|is not|don't) (?:an? )?(?P<x>.+?) "
         r"(?:any ?more|any longer)\b", "x", True),
        (rf"^{_C}(?:is )?not (?P<x>[a-z]+ing .+?) (?:any ?more|any longer)\b", "x", True),
        (rf"^{_C}{_ADV}(?:quit|{_LEFT}|stopped|gave up|given up|finished|completed|sold|ended|"
         r"cancelled|canceled|retired from|dropped out of|moved out of|got rid of|lost|passed) "
         r"(?P<x>.+)$", "x", True),
        # "The Lyon project is over", "anatomy exam done", "Biscuit died ...": the thing
        # that ended is the subject, a short one, and the clause says nothing else.
        (r"^(?P<x>(?:[^ ,;]+ ){0,3}[^ ,;]+) (?:is |are |was )?(?:now )?(?:over|done|finished|"
         r"completed)$", "x", False),
        (r"^(?P<x>(?:[^ ,;]+ ){0,2}[^ ,;]+) (?:has |have )?(?:died|passed away)\b", "x", False),
        (r"(?:^|, )(?:actually |sorry |correction )?(?:it's|it is|they're|that's|that is) "
         r"(?P<y>[^,;]+), not (?P<x>[^,.;]+)", "x", False),
        (r"^(?P<s>[^ ]+) .*?, not (?P<x>[^,.;]+?)(?:,|$)", "x", True),
        (r"^(?P<s>[^ ]+) (?P<x>.+?),? no wait\b", "x", True),
    )
)


# Cheap filter before change_of: words every change pattern needs.
_CHANGE_HINT = re.compile(r"\b(?:no longer|no more|any ?more|any longer|quit|left|stopped|gave up|"
                          r"given up|finished|completed|sold|ended|cancel+ed|retired|dropped|"
                          r"moved out|got rid|lost|passed|switched|moved|changed|went|migrated|"
                          r"converted|replaced|swapped|traded|exchanged|ditched|abandoned|"
                          r"instead of|over|died|passed away|done|not|no wait|graduated|"
                          r"cut down|cut back|reduced|down to|again|started|began|took up|"
                          r"fine|better|healed|recovered|okay|ok)\b",
                          re.I)
# The first word of every hint above (a pass screens every live fact each time: a set
# lookup per word is ~10x cheaper than the alternation's scan of every position).
_HINT_WORDS = word_set("""no any anymore quit left stopped gave given finished completed sold
    ended retired dropped moved got lost passed switched changed went migrated converted
    replaced swapped traded exchanged ditched abandoned instead over died done not graduated
    cut reduced down again started began took fine better healed recovered okay ok""")
_LETTER_RUNS = re.compile(r"[^\W\d_]+")


def _may_change(text: str) -> bool:
    """False only if ``_CHANGE_HINT`` cannot match ``text``: none of its words (maximal
    runs of letters, as the hint's word boundaries delimit them) starts a hint."""
    lower = text.lower()
    return "cancel" in lower or not _HINT_WORDS.isdisjoint(_LETTER_RUNS.findall(lower))


def _object_phrase(phrase: str) -> str:
    """``phrase`` up to the first preposition that follows its object ("the band in the
    week before ..." -> "the band"; "lives in lisbon" keeps "in lisbon": no object yet)."""
    for m in _PREP.finditer(phrase):
        if any(t not in _GENERIC_VERBS for t in canonical_terms(phrase[:m.start()])):
            return phrase[:m.start()]
    return phrase


@dataclass(frozen=True)
class Change:
    """A fact saying something has ended or been replaced: ``ended`` are the key terms
    (stems) a superseded fact must contain."""

    subject: str | None  # None: any subject (the ended thing is itself the subject)
    ended: frozenset[str]
    phrase: str
    amount: bool = False  # only a fact stating an amount of it ("four coffees a day")
    alternatives: tuple[frozenset[str], ...] = ()  # other term sets that also match
    # Negative facts this makes stale ("doesn't eat meat" after "not vegetarian any more"
    # or "eats meat again"): a negative fact saying no more than one of these sets.
    negated: tuple[frozenset[str], ...] = ()
    resumes: bool = False  # a habit taken up: ``ended`` names it, only negations end
    ailment: bool = False  # a recovery: only a fact reporting an ailment of it ends
    # The words before the verb ("investor updates"): a thing whose value changed, which
    # an older fact of another owner must name in full to be ended by it.
    thing: frozenset[str] = frozenset()

    @property
    def term_sets(self) -> tuple[frozenset[str], ...]:
        """``ended`` and the alternatives: a stale fact contains all terms of one."""
        return (self.ended, *self.alternatives)

    @property
    def reason(self) -> str:
        """One line for the audit: what ended or was taken up."""
        return f"{'taken up again' if self.resumes else 'ended'}: {self.phrase!r}"

    @property
    def screen_sets(self) -> tuple[frozenset[str], ...]:
        """Every term set a stale fact may contain (a cheap screen before :func:`ends`)."""
        return (*self.term_sets, *self.negated)


# Identities that are abstaining from something: being vegetarian is not eating meat.
# Ending one (or taking the thing up again) makes "doesn't eat meat" stale.
_ABSTAINING = {
    "vegetarian": ("meat",), "veggie": ("meat",), "pescatarian": ("meat",),
    "vegan": ("meat", "dairy", "egg", "cheese", "milk", "animal"),
    "teetotal": ("alcohol", "drink", "booze"), "teetotaler": ("alcohol", "drink", "booze"),
    "teetotaller": ("alcohol", "drink", "booze"), "sober": ("alcohol", "drink", "booze"),
    "nonsmoker": ("smok", "cigarett"), "non-smoker": ("smok", "cigarett"),
}
_ABSTAINED = {stem(k): frozenset(frozenset({stem(v)}) for v in vs) for k, vs in _ABSTAINING.items()}


def _negations_of(terms: frozenset[str], resumes: bool) -> tuple[frozenset[str], ...]:
    """The negative facts a change retires: an ended abstaining identity's abstentions
    ("vegetarian" -> "meat"), or what a resumed habit names ("meat", "smok")."""
    out: set[frozenset[str]] = set()
    for term in terms:
        out |= _ABSTAINED.get(term, frozenset())
    if resumes and terms:
        out.add(terms)
    return tuple(sorted(out, key=sorted))


def may_change(text: str) -> bool:
    """False when :func:`change_of` of ``text`` is None for sure (none of the words
    every change pattern needs): the screen a pass runs over every live fact."""
    return _may_change(text) and _CHANGE_HINT.search(text) is not None


def change_of(text: str) -> Change | None:
    """What ``text`` says has ended ("Sam quit the band" -> {band}), if anything."""
    if not may_change(text):
        return None  # cheap exit: every pattern below needs one of these words
    clean = _clean(text)
    for pattern, group, same in _CHANGES:
        m = pattern.search(clean)
        found = _change_in(m, group, same) if m else None
        if found is not None:
            return found
    return None


_GERUND = re.compile(r"[a-z]+ing")


def change_from_end(subject: str, attribute: str, thing: str) -> Change | None:
    """The change an end frame reports: ``subject`` (a one-word name, as a fact's first
    word) ended ``thing`` (its normalized value); a thing that is its own subject
    ("Rex died") ended for whoever's facts name it; a healed ``health`` thing ends only
    facts that report an ailment of it ("Ann's wrist has mended" ends "broke her wrist",
    not "wrist guards"). None for a subject of several words ("ann's son"): whose facts
    those are is not a fact's first word."""
    if not subject or " " in subject or not thing:
        return None
    owner = set(canonical_terms(subject)) if subject != thing else set()
    terms = frozenset(t for t in canonical_terms(thing)
                      if t not in owner and t not in _GENERIC_VERBS)
    if not terms:
        return None
    return Change(None if subject == thing else subject, terms, thing,
                  ailment=attribute == "health")


def _change_in(m: re.Match[str], group: str, same: bool) -> Change | None:
    """The change one of :data:`_CHANGES` matched (``group``: which group names what
    ended, with its marks; ``same``: the subject must match), or None when it names
    nothing."""
    resumes = group.endswith("+")
    name, _, consequence = group.rstrip("#+!").partition("=")
    raw = m.group(name) if m.group(name) else ""
    phrase = _object_phrase(_CUT.sub("", raw).strip())
    subject = _subject(m.group("s")) if same and "s" in m.re.groupindex else None
    owner = set(canonical_terms(subject)) if subject else set()
    # The subject's own name is not what ended ("sam's car": the key is "car").
    terms = frozenset(t for t in canonical_terms(phrase)
                      if t not in owner and t not in _GENERIC_VERBS)
    if not terms and _GERUND.fullmatch(phrase) and subject and "'s" not in subject:
        # "stopped running", "quit drinking": the activity itself is what ended (the
        # subject's own: "Ann's son stopped cycling" is not Ann's)
        terms = frozenset(canonical_terms(phrase)) - owner
    # A fixed consequence ("graduated" ends "studying") is another way to match.
    alternatives = tuple(a for a in (terms, frozenset(canonical_terms(consequence))) if a)
    if not alternatives:
        return None
    who = (subject if _UNNAMED_KIN.match(subject) else subject.split("'s")[0]) if subject \
        else None
    if resumes:
        # Whoever took a habit up again is no longer an abstainer from it either.
        identities = tuple(frozenset({k}) for k, sets in _ABSTAINED.items()
                           if any(s <= terms for s in sets))
        return Change(who, terms, phrase, alternatives=identities,
                      negated=_negations_of(terms, True), resumes=True)
    return Change(who, alternatives[0], phrase or consequence, amount=group.endswith("#"),
                  alternatives=alternatives[1:], negated=_negations_of(alternatives[0], False),
                  ailment=group.endswith("!"), thing=_subject_phrase(m.string))


def _has_term(term: str, terms: frozenset[str]) -> bool:
    """``term`` among ``terms``, allowing the stemmer's plural slips ("coffe"/"coff")."""
    return term in terms or any(
        min(len(t), len(term)) >= 3 and abs(len(t) - len(term)) <= 2
        and (t.startswith(term) or term.startswith(t)) for t in terms)


_AILMENT = re.compile(r"\b(?:hurt|hurts|injur\w*|broke|broken|sprain\w*|strain\w*|pain\w*|ach\w*|"
                      r"sore|fractur\w*|sick|ill|flu|cold|covid|surgery|operation|twisted|"
                      r"pulled|tore|torn|bruised|swollen|infect\w*|bad|stiff|killing)\b")
_AMOUNT = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|a few|several|"
                     r"many|lots of|a lot of)\b")


# 'Asked "What do you drive?", Mira answered: a 2015 Golf.' (the answers module's form):
# the fact is the one who answered.
_ANSWERED = re.compile(r'^asked ".*?",? (?P<who>[^ ]+) answered:')


def _owner(text: str) -> str:
    """The first word of a fact (its speaker or subject), possessive dropped; for a
    question and its answer, who answered."""
    clean = _clean(text)
    answered = _ANSWERED.match(clean)
    first = answered.group("who") if answered else clean.split(" ", 1)[0]
    return first[:-2] if first.endswith("'s") else first


_NOT_A_THING = word_set("""the a an this that these those it its i we you he she they my our
    your his her their there here""")


# Where a clause's subject ends, without a parse: its verb or a break.
_SUBJECT_END = re.compile(r"[:,;]|\b(?:is|are|was|were|go|goes|went|stay|stays|run|runs|come|"
                          r"comes|get|gets|has|have|had|will|now|be|being|been)\b")


def _subject_phrase(clean: str) -> frozenset[str]:
    """The content stems before the verb of a folded fact ("investor updates go
    quarterly ..." -> {investor, updat}); empty when nothing comes before it."""
    end = _SUBJECT_END.search(clean)
    return canonical_terms(clean[:end.start()]) if end else frozenset()


def _thing_named(change: Change, terms: frozenset[str]) -> bool:
    """Is the change's subject a thing the older fact names in full ("investor updates
    go quarterly from now on, not monthly" and the answer "monthly, 14 angels" to "how
    often do you send updates to your investors?")? A change of a thing's value ends a
    fact of whoever's that names the thing and the value, not one that names only the
    value, nor another thing of the same words ("investor meetings")."""
    word = (change.subject or "").strip(" :;,")
    if " " in word or len(word) < 3 or word in _NOT_A_THING or not change.thing:
        return False
    return all(_has_term(t, terms) for t in change.thing)


def ends(change: Change, old: str) -> bool:
    """Does ``change`` make the older fact ``old`` stale?

    ``old`` must be affirmative, about the same subject (unless the ended thing is the
    subject itself), contain every key term, and not itself report the same change.
    """
    terms = canonical_terms(_clean(old))
    if change.subject is not None and _owner(old) != change.subject \
            and not _thing_named(change, terms):
        return False
    if polarity(old) < 0:
        return _negation_ended(change, old, terms)
    if change.resumes:
        # Affirmative facts a resumption ends: an abstaining identity ("is vegetarian")
        # or an earlier change that ended the habit ("quit smoking").
        previous = change_of(old)
        if previous is not None and not previous.resumes and any(
                all(_has_term(t, change.ended) for t in s) for s in previous.term_sets):
            return True
        return any(all(_has_term(t, terms) for t in s) for s in change.alternatives)
    if not any(all(_has_term(t, terms) for t in ended) for ended in change.term_sets):
        return False
    if change.amount and not (numbers(old) or _AMOUNT.search(_clean(old))):
        return False
    if change.ailment and not _AILMENT.search(_clean(old)):
        return False
    return not _reports_change(change, old)


_WORD_START = re.compile(r"(?<=[ ,;(])(?=[^\W\d_])")


def _reports_change(change: Change, old: str) -> bool:
    """Does ``old`` itself report ``change``, in its first clause or a later one ("Gina
    has been down 'cause Gina lost Gina's job" reports the loss of the job too)?"""
    clean = _clean(old)
    if not _may_change(clean):
        return False
    for start in (0, *(m.start() for m in _WORD_START.finditer(clean))):
        previous = change_of(clean[start:])
        # A fact taking the thing up ("started learning Rust") is what an ending retires.
        if previous is not None and not previous.resumes and any(
                a & b for a in change.term_sets for b in previous.term_sets):
            return True
    return False


def _negation_ended(change: Change, old: str, terms: frozenset[str]) -> bool:
    """Does ``change`` end the negative fact ``old`` ("doesn't eat meat")? Only when
    ``old`` says no more than the abstention: its subject, one of ``change.negated``
    and verbs without an object of their own ("doesn't like meat" is a taste, kept)."""
    owner = set(canonical_terms(_owner(old)))
    for negated in change.negated:
        if not all(_has_term(t, terms) for t in negated):
            continue
        rest = {t for t in terms if t not in owner and t not in _GENERIC_VERBS
                and not any(_has_term(t, frozenset({n})) for n in negated)}
        if not rest or rest <= _HABIT_WORDS:
            return True
    return False


# Words a negative habit statement may carry besides the habit ("doesn't smoke at all").
_HABIT_WORDS = frozenset(stem(w) for w in word_set("""ever anything since years months
    weeks any smoke smoking cigarettes alcohol meat fish"""))


def _same_slot_name(a: str, b: str) -> bool:
    """Equal slots; a favourite without a kind ("favourite is X") matches any kind."""
    return a == b or (a.partition(":")[0] == b.partition(":")[0] == "favorite"
                      and (":" not in a or ":" not in b))


def supersessions(ids: Sequence[str], texts: Sequence[str], times: Sequence[float],
                  slotted: Sequence[bool] | None = None, *,
                  hints: Sequence[bool] | None = None,
                  ended: Sequence[tuple[str, str, str] | None] | None = None
                  ) -> list[tuple[str, str, str]]:
    """``(old_id, new_id, reason)`` for every older fact a newer one makes stale.

    ``ids``, ``texts`` and ``times`` describe the live facts; ``slotted`` (optional)
    marks the ones that fill a single-valued slot (the others are not parsed for one).
    A newer fact retires an older one when it gives another value of the same
    single-valued slot of the same subject (residence, job, employer, ...) or says the
    older one's thing has ended or been replaced ("no longer", "quit", "switched from",
    "X instead of Y", "actually X, not Y"). Multi-valued facts (things owned, hobbies,
    friends, places) have no slot, so they never retire each other.

    ``hints`` (optional): :func:`may_change` of each text, computed before (a caller
    that keeps it per row screens only the texts that changed).

    ``ended`` (optional): per text, the ``(subject, attribute, thing)`` of an end its
    frame reads ("Ann is leaving Lotus Loft": ``("ann", "end", "lotus loft")``), for the
    texts no pattern here reads as a change: the parse finds ends in more forms than the
    patterns do, and the older facts are matched by their words as a pattern's change
    matches them.
    """
    n = len(ids)
    by_key = _filled_slots(texts, slotted)
    screened = range(n) if hints is None else [i for i in range(n) if hints[i]]
    changes = {i: c for i in screened if (c := change_of(texts[i])) is not None}
    for i, end in enumerate(ended or ()):
        if end is not None and i not in changes and (c := change_from_end(*end)) is not None:
            changes[i] = c
    folded = [fold(t) for t in texts] if changes else []
    retired = _Retirements(times)
    for members in by_key.values():
        for j, a in members:
            for i, b in members:
                if i != j and _values_differ(a, b):
                    retired.retire(i, j,
                                   f"{a.name} of {a.subject} changed: {b.raw!r} -> {a.raw!r}",
                                   at_once=False)
    for j, change in changes.items():
        for i in range(n):
            if i != j and _may_end(change, folded[i]) and ends(change, texts[i]):
                retired.retire(i, j, change.reason)
    return [(ids[i], ids[j], reason) for i, (j, reason) in sorted(retired.by_old.items())]


def _filled_slots(texts: Sequence[str], slotted: Sequence[bool] | None
                  ) -> dict[tuple[str, str], list[tuple[int, Slot]]]:
    """The slots the affirmative texts fill (with the text's index), by (slot, subject);
    ``slotted``: only the texts it marks."""
    by_key: dict[tuple[str, str], list[tuple[int, Slot]]] = {}
    for i, text in enumerate(texts):
        if slotted is not None and not slotted[i]:
            continue
        style = answer_length(text)
        if style is not None:
            by_key.setdefault((style.name, style.subject), []).append((i, style))
        elif polarity(text) > 0:
            for slot in slots_of(text):
                if slot.value:
                    by_key.setdefault((slot.name.partition(":")[0], slot.subject),
                                      []).append((i, slot))
    return by_key


def _may_end(change: Change, folded: str) -> bool:
    """A cheap screen before :func:`ends`: the folded text holds the start of every
    term of one of the things ``change`` ends."""
    return any(all(t[:3] in folded for t in ended) for ended in change.screen_sets)


def _values_differ(a: Slot, b: Slot) -> bool:
    """Two fillings of one slot with values neither of which holds the other."""
    return (_same_slot_name(a.name, b.name) and a.value not in b.value
            and b.value not in a.value)


class _Retirements:
    """Which newer fact retires each older one (by index), and why."""

    def __init__(self, times: Sequence[float]) -> None:
        self.times = times
        self.by_old: dict[int, tuple[int, str]] = {}

    def retire(self, old: int, new: int, reason: str, *, at_once: bool = True) -> None:
        """The newest retiring fact wins; a fact never retires one from its own time on.
        ``at_once=False``: nor one said at the same time ("founder and CEO": two values
        stated together are both current)."""
        times = self.times
        earlier = times[old] < times[new] or (at_once and times[old] == times[new]
                                              and old < new)
        if earlier and (old not in self.by_old or times[self.by_old[old][0]] < times[new]):
            self.by_old[old] = (new, reason)


# --- corrections: "it's X, not Y" applied to the fact it corrects --------------------

_CORRECTION_FACT = re.compile(r"^it'?s (?P<x>[^,;]+?)(?:, not (?P<y>[^,;]+?))?\.?$", re.I)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_MONTH_NAMES = ("january|february|march|april|may|june|july|august|september|october|"
                "november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_DATE = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTH_NAMES})\b|"
                   rf"(?:{_MONTH_NAMES}) \d{{1,2}}(?:st|nd|rd|th)?\b|"
                   r"(?:the )?\d{1,2}(?:st|nd|rd|th)\b)(?:,? \d{4})?", re.I)
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_PROPER = re.compile(r"(?<!^)(?<![.!?] )\b[A-Z][\w\u00c0-\u024f-]*(?:\s+[A-Z][\w\u00c0-\u024f-]*)*"
                     r"(?!'s\b)")


_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WEEKDAY = re.compile(rf"(?i:{_WEEKDAYS})")
# A weekday in a fact, with the calendar date the extractor resolved it to, if any.
_WEEKDAY_IN = re.compile(rf"\b(?i:{_WEEKDAYS})\b(?: \(\d{{1,2}} [A-Z][a-z]+ \d{{4}}\))?")
_WEEKDAY_PART = re.compile(rf"(?i:(?:{_WEEKDAYS})s? (?:morning|afternoon|evening|night)s?)")
_WEEKDAY_PART_IN = re.compile(rf"\b(?i:(?:{_WEEKDAYS})s? (?:morning|afternoon|evening|night)s?)\b")
_NAME_VALUE = re.compile(r"[A-Z][\w\u00c0-\u024f-]*(?:\s+[A-Z][\w\u00c0-\u024f-]*){0,3}")
_CALENDAR_WORD = re.compile(rf"(?i:{_MONTH_NAMES}|monday|tuesday|wednesday|thursday|friday|"
                            r"saturday|sunday)")


def is_correction(text: str) -> bool:
    """Is ``text`` a correction as the extractor keeps it ("It's X[, not Y].")?"""
    return bool(_CORRECTION_FACT.match(text.strip()))


def _core(phrase: str) -> str:
    return _ARTICLE.sub("", phrase.strip())


def corrected(correction: str, old: str) -> str | None:
    """``old`` with the value ``correction`` replaces, or None if it does not apply.

    "It's Anne, not Anna" replaces "Anna" in "Sam's sister's name is Anna"; "It's May 5"
    (no old value named) replaces the only value of its own type in ``old``: a date, a
    number or a name ("Sam's birthday is on May 3" -> "... on May 5").
    """
    m = _CORRECTION_FACT.match(correction.strip())
    if not m:
        return None
    new, wrong = _core(m.group("x")), m.group("y")
    body = old.strip()
    if wrong and re.match(r"an?\s", wrong.strip(), re.I):
        # "an electrician, not a plumber": the role with its article; never "the plumber"
        # someone went to.
        role = re.search(rf"\b(?:a|an)\s+{re.escape(_core(wrong))}\b", body, re.I)
        if role is not None:
            return _spliced(body, role, m.group("x").strip())
        if re.search(rf"\bthe\s+{re.escape(_core(wrong))}\b", body, re.I):
            return None
    if wrong and _WEEKDAY.fullmatch(new.strip()) and _WEEKDAY.fullmatch(_core(wrong).strip()):
        # "Thursday, not Tuesday": the weekday and the date resolved from it move together
        days = [d for d in _WEEKDAY_IN.finditer(body)
                if d.group(0).split()[0].lower() == _core(wrong).strip().lower()]
        return _spliced(body, days[0], _moved_weekday(days[0].group(0), new.strip())) \
            if len(days) == 1 else None
    if wrong:
        return _replace_named(body, new, _core(wrong))
    new = m.group("x").strip()
    counted = re.fullmatch(r"(?P<n>\d+(?:\.\d+)?) (?P<what>[a-z]+)(?: [a-z]+)*", new, re.I)
    if counted:
        return _recount(body, counted)
    if _WEEKDAY.fullmatch(new) or _WEEKDAY_PART.fullmatch(new):
        # "It's Thursday" corrects the only weekday, and the date resolved from it;
        # "Wednesday mornings" the weekday with its part of the day.
        days = list(_WEEKDAY_PART_IN.finditer(body)) if _WEEKDAY_PART.fullmatch(new) \
            else []
        if days:
            return _spliced(body, days[0], new) if len(days) == 1 else None
        days = list(_WEEKDAY_IN.finditer(body))
        return _spliced(body, days[0], _moved_weekday(days[0].group(0), new)) \
            if len(days) == 1 else None
    return _replace_typed(body, new)


_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _moved_weekday(said: str, new: str) -> str:
    """``new`` (a weekday) in place of ``said`` ("Tuesday (3 March 2026)"), with the
    date resolved from the old one moved to the nearest such day ("Thursday (5 March
    2026)"); without a date, ``new`` alone."""
    day, _, date = said.partition(" ")
    if not date:
        return new
    try:
        when = datetime.strptime(date.strip("()"), "%d %B %Y")
    except ValueError:
        return new
    # the nearest such day: "Sunday (8 March)" -> "Monday (9 March)", not the 2nd
    shift = (_WEEKDAY_NAMES.index(new.lower()) - _WEEKDAY_NAMES.index(day.lower()) + 3) % 7 - 3
    moved = when + timedelta(days=shift)
    return f"{new} ({moved.day} {moved:%B %Y})"


def _spliced(body: str, span: re.Match[str], new: str) -> str | None:
    """``body`` with ``new`` in place of ``span``; None when that changes nothing."""
    text = body[:span.start()] + new + body[span.end():]
    return text if fold(text) != fold(body) else None


def _replace_named(body: str, new: str, wrong: str) -> str | None:
    """"It's X, not Y": Y replaced by X. The new value may repeat words before the old
    one ("a ThinkPad T14, not an X1" in "... is a ThinkPad X1"): replace from the first
    repeated word on."""
    first = re.escape(new.split()[0])
    span = re.search(rf"\b{first}\b(?:\s+\S+){{0,3}}?\s+{re.escape(wrong)}\b", body, re.I)
    span = span or re.search(rf"\b{re.escape(wrong)}\b", body, re.I)
    if span is None:
        return None
    return _spliced(body, span, new)


def _recount(body: str, counted: re.Match[str]) -> str | None:
    """"3 kids" corrects the count of the same thing ("has 2 kids"), nothing else."""
    what = re.escape(counted.group("what")[:4])
    spans = list(re.finditer(rf"\b\d+(?:\.\d+)?(?= {what})", body, re.I))
    if len(spans) != 1:
        return None
    return _spliced(body, spans[0], counted.group("n"))


# A time on the clock or a race time: "7:30", "1:24:57", "3:04:51".
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?\b", re.I)


def _replace_typed(body: str, new: str) -> str | None:
    """The only value of ``new``'s type (a date, a number, a name) replaced by it."""
    for kind in (_CLOCK, _DATE, _NUMBER, _PROPER):
        if kind is _PROPER:
            fits = bool(_NAME_VALUE.fullmatch(new))
        else:
            fits = bool(kind.fullmatch(_ARTICLE.sub("", new)) or kind.fullmatch(new))
        if not fits:
            continue
        values = [v for v in kind.finditer(body)
                  if kind is not _PROPER or not _CALENDAR_WORD.fullmatch(v.group(0))]
        if len(values) != 1:
            return None
        value = values[0]
        year = re.search(r",? \d{4}$", value.group(0)) if kind is _DATE else None
        if year and not re.search(r"\d{4}$", new):
            new += year.group(0)  # "5 May" corrects the day of "3 May 1990", not the year
        return _spliced(body, value, new)
    return None


# --- a planned move that happened: "moving to Manchester in June", then "we moved" ----

_MOVED_NOWHERE = re.compile(r"^(?P<s>[^ ]+(?: [^ ]+)??) (?P<adv>(?:(?:has|have|just|finally|"
                            r"officially|now|also) )*)(?:moved|relocated)"
                            r"(?P<rest>(?! (?:to|into|back|out|from|house|home|on|in with|"
                            r"in together|here|there|away|abroad|in (?=(?-i:[A-Z])))\b)"
                            r"(?:[ ,].*)?)$", re.I)
_PLANNED_MOVE = re.compile(r"^(?P<s>[^ ]+(?: [^ ]+)??) (?:is|are|will be|was|were|plans to be|has "
                           r"been)? ?(?:(?:thinking (?:of|about)|planning (?:on|to)|going to|"
                           r"about to|hoping to) )?(?:moving|relocating|move|relocate) "
                           r"(?:back )?to (?P<place>[A-Z][^,.;()]*?)"
                           r"(?= (?:in|on|by|next|this|soon|after|before|with|for)\b|[,.;(]|$)")


def completed_move(fact: str, plan: str) -> str | None:
    """``fact`` with the destination ``plan`` named, when ``fact`` says its subject moved
    without saying where and ``plan`` is the same subject's plan to move somewhere
    ("Priya moved in the week before 4 June" + "Priya is moving to Manchester in June"
    -> "Priya moved to Manchester in the week before 4 June"); else None."""
    done = _MOVED_NOWHERE.match(fact.strip().rstrip("."))
    planned = _PLANNED_MOVE.match(plan.strip())
    if not done or not planned or fold(done.group("s")) != fold(planned.group("s")):
        return None
    verb = "relocated" if "relocated" in fact.lower() else "moved"
    return (f"{done.group('s')} {done.group('adv')}{verb} to {planned.group('place').strip()}"
            f"{done.group('rest')}.")


def leans_on_recent(text: str) -> bool:
    """Whether ``text`` completes or fixes what its speaker said lately (a correction, a
    move that names no place): the write path shows the decider the speaker's latest
    memories for it, however unlike them its words are."""
    return is_correction(text) or bool(_MOVED_NOWHERE.match(text.strip().rstrip(".")))
