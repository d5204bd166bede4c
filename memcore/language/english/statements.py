"""First-person statements of a user turn as frames with a readable sentence.

"I'm 19, live in Manchester and work at a skate shop" -> age, residence, employer of
the speaker, each written from its frame ("Rory is 19 years old.", "Rory lives in
Manchester.", "Rory works at a skate shop."): grammatical by construction, whatever
the turn's spelling. Only the profile's core attributes are written this way
(:data:`TEMPLATES`); everything else is left to the extractor.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memcore.core.frames import is_single_valued
from memcore.core.models import Frame
from memcore.language.english import tables as T
from memcore.language.english.contacts import contacts
from memcore.language.english.kin import kin_names
from memcore.language.english.numbers import age_value
from memcore.language.english.places import is_place_name
from memcore.language.english.reader import (
    contact_value,
    is_job,
    read_clause,
    subject_of,
    surface,
    value_of,
    work_unit,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_WORD = re.compile(r"[^\W_][\w'+-]*")
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
# attribute -> sentence; {s} the speaker, {v} the value as written.
TEMPLATES: dict[str, str] = {
    "residence": "{s} lives in {v}.",
    "employer": "{s} works at {v}.",
    "job": "{s} works as {a} {v}.",
    "age": "{s} is {v} years old.",
    "name": "{s}'s name is {v}.",
    "contact:phone": "{s}'s phone number is {v}.",
    "contact:email": "{s}'s e-mail address is {v}.",
    "contact:address": "{s}'s address is {v}.",
    "diet": "{s} is {v}.",
    "school": "{s} studies at {v}.",
    "reading": "{s} is reading {v}.",
    "main_language": "{s}'s main language is {v}.",
    "relation:partner": "{s}'s partner is {v}.",
    "team": "{s} is in the {v}.",
    "project": "{s} works on the {v}.",
}
_CAPITALIZED = frozenset({"residence", "employer", "name", "school", "relation:partner"})


def _article(value: str) -> str:
    return "an" if value[:1].lower() in "aeiou" else "a"


def _value_token(clause: Token, value: str) -> Token | None:
    """The token of the clause heading ``value`` (the frame's normalized value)."""
    for tok in clause.subtree:
        if value_of(tok) == value or contact_value(tok).lower() == value \
                or (tok.like_num and age_value(tok) == value):  # "sixty-two": 62
            return tok
    return None


def _written(attribute: str, text: str) -> str:
    """A value as it goes into a sentence: names capitalized ("manchester")."""
    if attribute in _CAPITALIZED and text.islower():
        head, comma, rest = text.partition(",")  # "leeds, near the station"
        return " ".join(w[:1].upper() + w[1:] if w not in ("of", "the", "and") else w
                        for w in head.split()) + comma + rest
    return text


def _speaker_is(subject: tuple[str, Token | None]) -> bool:
    """The subject is the speaker ("I"), not something of theirs ("my husband")."""
    return subject[0] in FIRST_PERSON and subject[1] is None


def _clauses(sent: Span) -> list[tuple[Token, tuple[str, Token | None]]]:
    """The sentence's clauses with the subject a subject-less one shares: the root,
    its conjoined verbs, and clauses the speaker states inside a clause of their own
    ("I'm Bev, I teach Year 2": "'m" hangs under "teach"), not ones reported of
    someone else ("she thought I was the new carer")."""
    root = sent.root
    shared = subject_of(root)
    out: list[tuple[Token, tuple[str, Token | None]]] = [(root, ("", None))]
    for tok in root.subtree:
        if tok.i == root.i or tok.pos_ not in ("VERB", "AUX"):
            continue
        if tok.dep_ == "conj" and tok.head.i != tok.i:
            out.append((tok, shared))
        elif tok.dep_ in ("ccomp", "parataxis") and tok.head.i == root.i and \
                _speaker_is(shared) and _speaker_is(subject_of(tok)):
            out.append((tok, ("", None)))
    return out


def _introduced(sent: Span, speaker: str) -> Token | None:
    """The name a verbless self-introduction opens with ("Dave, 47, driver in Hull",
    "jade here, barista ...", "Name's Carl, 52, ..."), or None: the sentence has no
    verb, and its first word (after greetings) is a name that is the speaker's, or is
    followed by "here", or follows "name's"."""
    if any(t.tag_ in T.FINITE_TAGS for t in sent):  # "based in Leeds" is no clause of its own
        return None
    words = [t for t in sent if not t.is_punct and t.pos_ != "INTJ"]
    named = False
    while words and words[0].lower_ in T.INTRO_LEADS:
        named = named or words[0].lower_ == "name"
        words = words[1:]
    if not words or words[0].pos_ != "PROPN" or words[0].ent_type_ not in ("PERSON", ""):
        return None
    if words[0].text.islower() and is_job(words[0].lower_):
        return None  # "dev here, 31": a job said in lower case (:func:`_job_intro`)
    name = words[0]
    here = len(words) > 1 and words[1].lower_ == "here"
    if named or here or name.lower_ == speaker.lower().split(" ")[0]:
        return name
    return None


def _job_words(tok: Token) -> str:
    """A job noun with the words before it that modify it ("HGV driver", "machine
    learning engineer"), not its article, owner, number or an opening name."""
    start = tok.i
    while start > tok.sent.start:
        prev = tok.doc[start - 1]
        if prev.text == "-" and not prev.whitespace_ and start - 2 >= tok.sent.start \
                and not tok.doc[start - 2].whitespace_:
            start -= 2  # "first-year": a hyphenated word is one modifier
            continue
        named = prev.pos_ == "PROPN" and prev.dep_ not in ("compound", "amod")
        if not tok.is_ancestor(prev) or prev.dep_ in _NOT_JOB_WORDS or named:
            break
        start -= 1
    return tok.doc[start:tok.i + 1].text


_NOT_JOB_WORDS = frozenset({"det", "poss", "case", "punct", "nummod", "predet", "advmod",
                            "appos", "cc", "prep"})


def _age(tok: Token) -> bool:
    return tok.like_num and tok.text.isdigit() and 10 <= int(tok.text) <= 110


def _before_clause(sent: Span) -> Span:
    """``sent`` up to the clause with a subject of its own that follows an introduction
    ("Lena here, data scientist in Hamburg, I do demand forecasting": the part before
    ", I do ..."); all of it when there is none."""
    for tok in sent[1:]:
        start = tok.left_edge.i
        alone = start + 1 < sent.end and tok.doc[start + 1].is_punct  # "Priya." said alone
        if tok.dep_ in ("nsubj", "nsubjpass") and start > sent.start + 2 and \
                tok.doc[start - 1].is_punct and not alone:
            return tok.doc[sent.start:start - 1]
    return sent


def _intro(sent: Span, speaker: str, introduced: bool = False) -> list[tuple[Frame, str]]:
    """A verbless self-introduction: "jade here, 22, barista at grindhouse coffee",
    "Dave, 47, HGV driver out of Swindon": the name, an age, a job (with the employer
    it names) and the place the job or the speaker is in; a clause after it ("..., I do
    demand forecasting") is read as any other."""
    sent = _before_clause(sent)
    name = _introduced(sent, speaker)
    if name is None:
        return _job_intro(sent, speaker) or _fragments_intro(sent, speaker, introduced)
    out: list[tuple[Frame, str]] = [framed(speaker, "name", name.text.lower(), name.text)]
    parts = [p.strip(" .!") for p in _FRAGMENTS.split(sent.text.strip())][1:]
    for part in parts:  # "Rhys Morgan, 41, Cardiff": where the speaker is
        place = _place_fragment(part, known_only=True)
        if place is not None and not any(f.attribute == "residence" for f, _ in out):
            out.append(framed(speaker, "residence", place.lower(), place))
    for tok in sent:
        if tok.i == name.i or tok.dep_ in ("pobj", "compound", "amod", "poss"):
            continue
        if _age(tok) and tok.dep_ in ("appos", "npadvmod", "conj", "ROOT") and \
                tok.head.i in (name.i, sent.root.i, tok.i):
            out.append(framed(speaker, "age", tok.text, tok.text))
        elif (tok.pos_ == "NOUN" and is_job(tok.lemma_.lower())
              and tok.dep_ in ("ROOT", "appos", "conj", "npadvmod")):
            words = _job_words(tok)
            out.append(framed(speaker, "job", words.lower(), words))
            out += _employer(tok, tok, speaker)
            out += _place(tok, speaker)
    return out


_FRAGMENTS = re.compile(r"\s*(?:[,;]|\s-\s|\s\|\s)\s*")
_AGE_FRAGMENT = re.compile(r"^(\d{2,3})\s*(?:yo|y/o|yrs?(?: old)?|years? old)?$")
_HERE = ("here", "by trade")


def _planned(clause: Token) -> bool:
    """A change said in the future, no present state: "I'll join Acme", "I'm going to
    move to Leeds". (A progressive "I'm starting at X next month" is read as the state
    it starts: the profile keeps it once the month has come.)"""
    auxes = [c for c in clause.children if c.dep_ in ("aux", "auxpass")]
    if any(a.lower_ in T.FUTURE_AUX for a in auxes):
        return True
    return clause.dep_ == "xcomp" and clause.head.lemma_.lower() in T.PLAN_VERBS


_JOB_TAIL = re.compile(r"\s+(at|for|with)\s+", re.IGNORECASE)
_PLACE_TAIL = re.compile(r"\s+(in|out of|near|based in)\s+", re.IGNORECASE)


def _job_fragment(part: str, speaker: str) -> list[tuple[Frame, str]]:
    """A fragment naming the speaker's job, with where ("ICU nurse at the northern
    general in sheffield", "Auditor at one of the Big Four", "plumber in Hull"): the
    job (one to three words, the last a job noun), the employer after "at"/"for"/
    "with", the place (a place name) after "in"; [] for anything else."""
    place: str | None = None
    head, *tail = _PLACE_TAIL.split(part, maxsplit=1)
    if tail:
        place = _place_fragment(tail[-1], known_only=True) or _place_fragment(
            f"in {tail[-1]}")
        if place is None:
            head = part  # "in a band": no place; keep it in the job or employer
    job_part, *employer = _JOB_TAIL.split(head, maxsplit=1)
    words = job_part.split()
    if not words or len(words) > 3 or not is_job(words[-1].lower()) or any(
            w.lower().strip("-") in T.PAST_JOB_WORDS for w in words):
        return []
    # "Auditor at ...": the capital opens the sentence; "ICU" keeps its own
    job = " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)
    out = [framed(speaker, "job", job.lower(), job)]
    if employer:
        named = employer[-1].strip()
        value = re.sub(r"^the\s+", "", named.lower())  # as the parse's values are
        if 0 < len(named.split()) <= 5 and value not in T.NO_VALUE:
            out.append(framed(speaker, "employer", value, named))
    if place is not None:
        out.append(framed(speaker, "residence", place.lower(), place))
    return out


_NAME_FRAGMENT = re.compile(
    r"^(?:(?:hi|hey|hiya|hello|yo)\W+)?(?:(?:i'?m|i am|my name is|name'?s|call me)\s+"
    r"([^\W\d_]+)(?:\s+(?:btw|by the way|here))?|([^\W\d_]+)\s+here)$", re.IGNORECASE)
# A greeting that opens an introduction's fragments ("hi. priya. 34. nurse.")
_GREETING = re.compile(r"^(?:hi|hey|hiya|hello|yo|heya|hi there|hey there)$", re.IGNORECASE)


def _name_fragment(part: str, speaker: str) -> str | None:
    """The name in "im niamh btw", "I'm Cal", "name's Dot": the speaker's first name, a
    short form of it ("cal" for Callum), or a capitalized word; None for anything else
    ("im knackered")."""
    found = _NAME_FRAGMENT.match(part)
    if found is None:
        return None
    name = found.group(1) or found.group(2)
    if _speakers_name(name, speaker):
        return name
    # "marco here": "here" says it is a name however it is written
    here = found.group(2) is not None and _BARE_NAME.match(name) is not None
    return name if (name[:1].isupper() or here) and name.lower() not in T.NO_VALUE else None


# A word that may be a name said alone ("priya" in "hi. priya. 34. nurse."): no
# participle, adverb or word of how one feels.
_BARE_NAME = re.compile(r"(?i)^(?!(?:tired|knackered|bored|sorry|thanks|thx|ok|okay|yes|yeah|"
                        r"no|nope|sure|morning|evening|night|back|still|also|just|new|me|"
                        r"sick|ill|busy|stressed|here|there)$)(?![a-z]+(?:ed|ing|ly)$)"
                        r"[^\W\d_]{2,20}$")


def _speakers_name(name: str, speaker: str) -> bool:
    """``name`` is the speaker's first name or a short form of it ("cal" for Callum)."""
    first, said = speaker.lower().split(" ")[0], name.lower()
    return said == first or (len(said) >= 3 and first.startswith(said))


# Fragments, and sentences the parser left joined ("im jade btw. 34, nurse").
_INTRO_PARTS = re.compile(r"\s*(?:[,;]|\.\s+|\s-\s|\s\|\s)\s*")


def _fragments_intro(sent: Span, speaker: str, introduced: bool
                     ) -> list[tuple[Frame, str]]:
    """A self-introduction as a list of fragments in any order: "34, ICU nurse at the
    northern general in sheffield", "im cal btw, 15, play on ps5 mostly", "Auditor at
    one of the Big Four." (after "Rhys Morgan, 41, Cardiff."). Read from the start:
    "I'm <name>", an age, a job (with its employer and place) or a place name, up to the
    first fragment that is none of them (a clause of its own, read as one). An
    introduction needs two kinds of them, or the speaker's own name, or one after the
    turn introduced the speaker (``introduced``); a fragment with a finite verb other
    than the name's "I'm" ends it."""
    out: list[tuple[Frame, str]] = []
    kinds: set[str] = set()
    bare: str | None = None
    offset = sent.start_char
    for part in _INTRO_PARTS.split(sent.text.strip()):
        at = sent.doc.text.find(part, offset)
        offset = max(offset, at + len(part)) if at >= 0 else offset
        part = part.strip(" .!")
        if not part or (not kinds and _GREETING.match(part)):
            continue
        name = _name_fragment(part, speaker) if not kinds else None
        if name is not None:
            out.append(framed(speaker, "name", name.lower(), name[:1].upper() + name[1:]))
            kinds.add("name")
            continue
        if not kinds and bare is None and _BARE_NAME.match(part) \
                and not _fragment_facts(part, speaker):
            bare = part  # a name said alone, if what follows is an introduction
            continue
        span = sent.doc.char_span(at, at + len(part), alignment_mode="expand") \
            if at >= 0 else None
        if span is None or (len(part.split()) > 1 and any(t.tag_ in T.FINITE_TAGS for t in span)):
            break
        found = _fragment_facts(part, speaker)
        if not found:
            break
        out += [f for _, f in found]
        kinds |= {kind for kind, _ in found}
    if kinds == {"age"} and len(out) == 1 and _AGE_NOW.match(sent.text.strip(" .!")):
        return out  # "16 as of yesterday": a new age, said alone
    if bare is not None and len(kinds) >= 2:  # "priya. 34. nurse. leeds.": her name
        out.insert(0, framed(speaker, "name", bare.lower(), bare[:1].upper() + bare[1:]))
        kinds.add("name")
    own_name = kinds == {"name"} and any(_speakers_name(f.value, speaker) for f, _ in out)
    if len(kinds) >= 2 or own_name or (introduced and kinds & {"job", "age"}):
        return out
    return []


# An age said to be new: "16 as of yesterday", "officially 30 today!".
_AGE_NOW = re.compile(r"(?i)^(?:officially |just |finally )?(\d{2,3})\s*(?:yo|years? old)?\s+"
                      r"(?:as of (?:yesterday|today|\w+day)|today|now|since (?:yesterday|"
                      r"\w+day))$")


def _fragment_facts(part: str, speaker: str) -> list[tuple[str, tuple[Frame, str]]]:
    """What one fragment of an introduction says, as (kind, fact): an age, a job (with
    its employer and place) or a place name; [] for anything else."""
    age = _AGE_FRAGMENT.match(part.lower()) or _AGE_NOW.match(part)
    if age is not None and 10 <= int(age.group(1)) <= 110:
        return [("age", framed(speaker, "age", age.group(1), age.group(1)))]
    job = _job_fragment(part, speaker)
    if job:
        return [("job", fact) for fact in job]
    place = _place_fragment(part, known_only=True)
    if place is not None:
        return [("place", framed(speaker, "residence", place.lower(), place))]
    return []


def _job_intro(sent: Span, speaker: str) -> list[tuple[Frame, str]]:
    """A self-introduction opened by the speaker's job, as fragments: "nurse here, 44,
    leeds", "designer, 29, based in lisbon". Read fragment by fragment, not from the
    parse (which makes a lower-case "leeds" a verb): the first fragment is a job noun
    (then "here" or nothing), every other one an age or a place (a capitalized name,
    or a city or country name in any case: :mod:`.places`). Anything else, or a job
    that is over ("retired teacher"), and it is no introduction."""
    parts = [p.strip(" .!") for p in _FRAGMENTS.split(sent.text.strip())]
    parts = [p for p in parts if p]
    if len(parts) < 2:
        return []
    opener = parts[0].split()
    while opener and (" ".join(opener[-2:]).lower() in _HERE
                      or opener[-1].lower() in _HERE):
        opener = opener[:-2] if " ".join(opener[-2:]).lower() in _HERE else opener[:-1]
    if not opener or len(opener) > 3 or not is_job(opener[-1].lower()) or any(
            w.lower().strip("-") in T.PAST_JOB_WORDS for w in opener):
        return []
    job = " ".join(opener)
    # A job guessed from its ending ("-er", "-ee") may be no job ("Nice reminder, Gina!",
    # "I totally agree, Caroline."): then a capitalized word after it is whom the
    # speaker addresses, and only a known place name says where they live.
    guessed = opener[-1].lower() not in T.JOB_NOUNS | T.STUDY_NOUNS
    out = [framed(speaker, "job", job.lower(), job)]
    for part in parts[1:]:
        age = _AGE_FRAGMENT.match(part.lower())
        if age is not None and 10 <= int(age.group(1)) <= 110:
            out.append(framed(speaker, "age", age.group(1), age.group(1)))
            continue
        place = _place_fragment(part, known_only=guessed)
        if place is None:
            return []
        out.append(framed(speaker, "residence", place.lower(), place))
    return out if len(out) > 1 else []


def _place_fragment(part: str, known_only: bool = False) -> str | None:
    """The place a fragment names ("leeds", "based in Lisbon", "from Cardiff"), or None;
    ``known_only``: a place name of :mod:`.places`, not any capitalized word."""
    words = part.split()
    lead = next((n for n in (2, 1) if len(words) > n
                 and " ".join(words[:n]).lower() in T.PLACE_LEADS), 0)
    place = " ".join(words[lead:])
    if not place or len(words) - lead > 3:
        return None
    if is_place_name(place) or (not known_only and all(w[:1].isupper() for w in words[lead:])):
        return place
    return None


def _place(head: Token, speaker: str) -> list[tuple[Frame, str]]:
    """Where a job is: "driver *out of Swindon*", "plumber *in Hull*", "nurse ..., *based
    in Leeds*" (a place name, not "in a band")."""
    for tok in head.subtree:
        if tok.dep_ == "pobj" and tok.head.lower_ in T.PLACE_PREPS and (
                (tok.pos_ == "PROPN" and not (tok.head.lower_ == "of"  # "CEO of Basil": no place
                                              and is_job(tok.head.head.lemma_.lower())))
                or is_place_name(tok.text)):  # "... in manchester"
            prep = tok.head
            if prep.head.lemma_.lower() == "base" or _through_phrases(prep, head):
                return [framed(speaker, "residence", value_of(tok), surface(tok))]
    return []


def _through_phrases(prep: Token, head: Token) -> bool:
    """Is ``prep`` attached to ``head`` through prepositional phrases only ("barista *at
    grindhouse coffee* in manchester")?"""
    node = prep.head
    while node.i != head.i:
        if node.dep_ not in ("prep", "pobj") or node.head.i == node.i:
            return False
        node = node.head
    return True


def _name_token(clause: Token) -> Token | None:
    return next((c for c in clause.children if c.dep_ in ("attr", "acomp")
                 and c.pos_ == "PROPN"), None)


def _appositive_job(name: Token, speaker: str) -> list[tuple[Frame, str]]:
    """The job (and employer) set beside a name: "Marcus, political reporter at X"."""
    for tok in name.children:
        if tok.dep_ == "appos" and tok.pos_ == "NOUN" and is_job(tok.lemma_.lower()):
            words = _job_words(tok)
            return [framed(speaker, "job", words.lower(), words), *_employer(tok, tok, speaker)]
    return []


def _unnamed(tok: Token) -> bool:
    """"a school", "an agency": a kind of place, no name to write."""
    return tok.pos_ != "PROPN" and any(c.dep_ == "det" and c.lower_ in ("a", "an")
                                       for c in tok.children)


def _prep_objects(head: Token) -> list[tuple[str, Token]]:
    """``(preposition, object)`` under ``head``, and the names under a unit of work once
    more ("for the booking platform at Ryanair": for-platform, at-Ryanair)."""
    out: list[tuple[str, Token]] = []
    for prep in (c for c in head.children if c.dep_ == "prep"):
        for pobj in (c for c in prep.children if c.dep_ == "pobj"):
            out.append((prep.lower_, pobj))
            if work_unit(pobj) is not None:  # the employer named after the unit
                out += [(inner.lower_, o) for inner in pobj.children if inner.dep_ == "prep"
                        for o in inner.children if o.dep_ == "pobj" and o.pos_ == "PROPN"]
    return out


def _employer(clause: Token, job: Token, speaker: str) -> list[tuple[Frame, str]]:
    """The employer named with a job ("a nurse at St James's", "barista at X"); for a
    student, the school ("a law student at Edinburgh"); and the unit of work, a team or
    a project, named with it ("designer for the booking platform at Ryanair")."""
    studies = job.lemma_.lower() in T.STUDY_NOUNS or job.lower_ in T.STUDY_NOUNS
    places = ("at",) if studies else ("at", "for", "with")
    found: dict[str, tuple[Frame, str]] = {}
    for prep, pobj in (pair for head in (job, clause) for pair in _prep_objects(head)):
        unit = work_unit(pobj)
        attribute = unit or ("school" if studies else "employer")
        if attribute in found or value_of(pobj) in T.NO_VALUE or _unnamed(pobj):
            continue
        if unit is not None or prep in places:
            found[attribute] = framed(speaker, attribute, value_of(pobj), surface(pobj))
    return list(found.values())


def framed(speaker: str, attribute: str, value: str, written: str) -> tuple[Frame, str]:
    """The frame of the speaker's ``attribute`` = ``value`` and its sentence."""
    if not attribute.startswith("contact:"):  # compared by words, as frames are
        # Hyphens apart, as the parse reads them ("second-year" is "second year").
        value = " ".join(_WORD.findall(value.lower().replace("-", " ")))
    frame = Frame(subject=speaker.lower()[:256], attribute=attribute, value=value[:256],
                  single=is_single_valued(attribute))
    template = TEMPLATES[attribute]
    if attribute == "job" and value.split()[-1:] and value.split()[-1] in T.STUDY_NOUNS:
        template = "{s} is {a} {v}."  # "Sam is a law student.", not "works as"
    text = template.format(s=speaker, v=_written(attribute, written), a=_article(written))
    return frame, text


def _clause_statements(sent: Span, speaker: str) -> list[tuple[Frame, str]]:
    """The statements of core attributes in the sentence's first-person clauses."""
    found: list[tuple[Frame, str]] = []
    for clause, inherited in _clauses(sent):
        raw = read_clause(clause, inherited)
        if raw is None:
            continue
        subject, attribute, value, polarity, event = raw
        if (subject not in FIRST_PERSON or attribute not in TEMPLATES or polarity < 0
                or event or not value or _planned(clause)):
            continue
        tok = _name_token(clause) if attribute == "name" else _value_token(clause, value)
        if tok is not None:
            found += _written_statements(clause, tok, speaker, attribute, value)
    return found


def _written_statements(clause: Token, tok: Token, speaker: str, attribute: str,
                        value: str) -> list[tuple[Frame, str]]:
    """The statements one clause makes of ``attribute`` (its value at ``tok``)."""
    if attribute == "name":  # "I'm Marcus, political reporter at the Courier"
        return [framed(speaker, attribute, value, tok.text), *_appositive_job(tok, speaker)]
    if attribute in ("contact:phone", "contact:email"):
        return []  # found by the value's shape (:mod:`.contacts`)
    if attribute.startswith("contact:"):  # an address as written
        return [framed(speaker, attribute, value, contact_value(tok))]
    if attribute == "job":  # the noun and its own modifiers ("staff nurse")
        words = _job_words(tok)
        return [framed(speaker, attribute, words.lower(), words),
                *_employer(clause, tok, speaker)]
    if attribute == "age":  # "I am seventy-four": 74
        years = age_value(tok)
        return [framed(speaker, attribute, years, years)] if years is not None else []
    if _unnamed(tok):
        return []  # "at a school in Leeds": no name to write
    return [framed(speaker, attribute, value, surface(tok))]


def _restored(sent: Span, parse: Callable[[Sequence[str]], list[Doc]]) -> Span | None:
    """A sentence that opens with a past-tense verb, or a present one of how the speaker
    lives (:data:`~memcore.language.english.tables.SELF_VERBS`: "work part time at X"),
    and names no subject ("Just moved to Cardiff!", "Joined Monzo in May": chat drops
    the "I"), read again with the "I" put back; None for any other sentence. The caller
    asks only where the turn is the speaker's: at its start, or after a sentence of the
    speaker's ("My brother had a rough year. Moved back to Leeds." is the brother's)."""
    start = _past_greeting(sent)
    present = _opens_without_subject(sent, start)
    if present is None:
        return None
    text = sent[start:].text.strip()
    if not text[:1].isalpha() or len(text) > 200:
        return None
    first = text.split(" ", 1)[0]
    lowered = text if first.isupper() and len(first) > 1 else text[:1].lower() + text[1:]
    again = next(iter(parse([f"I {lowered}"])[0].sents))
    return again if _opens_with_i_and_verb(again, present) else None


def _opens_without_subject(sent: Span, start: int) -> bool | None:
    """Does the sentence (from ``start``) open with a verb that has no subject of its
    own: a past tense (or one the parser took for a name), False, or a present one of
    how the speaker lives, True? None for any other opening."""
    opener = next((t for t in sent[start:] if t.pos_ not in ("ADV", "INTJ", "PUNCT")), None)
    if opener is None or any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in opener.children) \
            or any(t.dep_ in ("nsubj", "nsubjpass", "expl") and t.i < opener.i for t in sent):
        return None  # the opening verb has a subject of its own
    present = opener.lemma_.lower() in T.SELF_VERBS and opener.tag_ in (
        "VB", "VBP", "NN")  # "work part time at X": no imperative to the listener
    if not (present or opener.tag_ in ("VBD", "VBN") or (
            opener.pos_ == "PROPN" and opener.lower_.endswith("ed"))):
        return None  # only a past tense (or one the parser took for a name) is parsed again
    return present


def _past_greeting(sent: Span) -> int:
    """Where the sentence starts past a greeting or a label: "Hi! Moved ...", "Update:
    moved ..."."""
    start = 0
    while start < len(sent) and (sent[start].pos_ in ("INTJ", "PUNCT") or (
            start + 1 < len(sent) and sent[start + 1].text == ":")):
        start += 2 if start + 1 < len(sent) and sent[start + 1].text == ":" else 1
    return start


def _opens_with_i_and_verb(again: Span, present: bool) -> bool:
    """"I <verb> ...": the "I" put back is the subject of a past-tense verb (or, with
    ``present``, a present one of how one lives), and only adverbs ("just", "finally",
    ...) come between them."""
    speaker = again[0]
    verb = speaker.head
    if verb.tag_ not in (("VBD", "VBP") if present else ("VBD",)) or speaker.dep_ != "nsubj":
        return False
    return not any(t.pos_ not in ("ADV", "INTJ", "PUNCT") for t in again[1:verb.i - again.start])


def _parts(sent: Span) -> list[Span]:
    """``sent`` cut at its fragments' commas and full stops."""
    out, start = [], sent.start
    for tok in sent:
        if tok.text in (",", ";", ".", "!") or tok.i == sent.end - 1:
            end = tok.i if tok.is_punct else tok.i + 1
            if end > start:
                out.append(sent.doc[start:end])
            start = tok.i + 1
    return out


def _a_clause(part: Span) -> bool:
    """A fragment with a finite verb, of more than a word ("leeds" tagged as a verb is
    none)."""
    return len(part) > 1 and any(t.tag_ in T.FINITE_TAGS for t in part)


def _fragment_runs(doc: Doc) -> list[Span]:
    """``doc``'s sentences, with each run of verbless ones joined into one span ("hi.
    priya. 34. nurse." is one introduction, whichever way the parser split it)."""
    out: list[Span] = []
    run_start: int | None = None
    for sent in doc.sents:
        parts = _parts(sent)
        verbless = bool(parts) and all(len(p) <= 4 and not _a_clause(p) for p in parts)
        if verbless and run_start is not None:
            out[-1] = doc[run_start:sent.end]
            continue
        out.append(sent)
        run_start = sent.start if verbless else None
    return out


def statements(doc: Doc, speaker: str,
               parse: Callable[[Sequence[str]], list[Doc]] | None = None
               ) -> list[tuple[Frame, str]]:
    """The speaker's first-person statements of core attributes in ``doc``, each as
    its frame and a sentence written from it. Negated ones are left out (the
    extractor's change rules read them). With ``parse``, a sentence that drops its
    subject ("Just moved to Cardiff!") is read as the speaker's where the turn is
    (:func:`_restored`)."""
    out: list[tuple[Frame, str]] = []
    seen: set[tuple[str, str]] = set()
    seen_people: set[tuple[str, str, str]] = set()
    about_speaker: bool | None = None  # was the sentence before the speaker's?
    introduced = False  # did a sentence before introduce the speaker?
    for sent in _fragment_runs(doc):
        found = _intro(sent, speaker, introduced) + _clause_statements(sent, speaker)
        introduced = introduced or any(
            f.attribute in ("name", "age", "job") for f, _ in found)
        restored = _restored(sent, parse) if parse is not None and about_speaker is not \
            False and not found else None
        if restored is not None:
            found = _clause_statements(restored, speaker)
        if restored is not None or any(t.pos_ in ("VERB", "AUX") for t in sent):
            # A greeting ("Hi!") or a verbless remark says nothing about whose turn it is.
            about_speaker = restored is not None or _speaker_is(subject_of(sent.root))
        for frame, text in found:
            key = (frame.attribute, frame.value)
            if key not in seen:
                seen.add(key)
                out.append((frame, text))
    for frame, text in [*kin_names(doc, speaker), *contacts(doc, speaker)]:
        if (frame.subject, frame.attribute, frame.value) not in seen_people:
            seen_people.add((frame.subject, frame.attribute, frame.value))
            out.append((frame, text))
    return out
