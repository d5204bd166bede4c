"""The speaker's phone numbers and e-mail addresses, found by the value's shape.

A contact value is recognisable whatever the sentence around it ("my mobile number for
the docs is 06-28417730, you can put it in the template", "new number, it's 0171 555
0199", "I got a new phone number ... New one is 06-51930462"); the parse of such
sentences is often poor. So the value is found by its shape (an e-mail address; a run of
7-15 digits that is no date) and the sentence only has to say whose it is: the
speaker's ("my number", "I got a new number", "new one is ..." after a sentence about
the speaker's number), not someone else's ("my wife's number") and not an old one ("the
old number was ..."). The frame (``contact:phone``, ``contact:email``, qualified by
"work"/"home" when said) is single-valued, so a new number retires the old one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memcore.core.frames import is_single_valued
from memcore.core.models import Frame
from memcore.language.english import tables as T

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_PHONE = re.compile(r"(?<![\w.@/:-])\+?\d[\d ()./-]{5,22}\d(?![\w@/:-])")
_DATE = re.compile(r"^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MIN_DIGITS, _MAX_DIGITS = 7, 15
# Words that qualify which contact ("work e-mail", "home number").
_QUALIFIERS = frozenset({"work", "office", "home", "personal", "private", "business",
                         "landline"})
# A value said to be no longer in use ("the old one", "my previous number").
_PAST = frozenset({"old", "previous", "former", "last", "ex"})
_OWN = frozenset({"my", "our"})
PHONE_MODIFIERS = _QUALIFIERS | _PAST | frozenset({
    "phone", "mobile", "cell", "contact", "new", "current", "landline", "direct", "main",
    "telephone", "whatsapp"})
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "we", "our", "us"})
# People a speaker has ("my ex", "my boss"): a number said beside one may be theirs.
_PEOPLE = T.KIN | frozenset({"ex", "wife", "husband", "partner", "girlfriend",
                             "boyfriend", "landlord", "landlady", "dentist", "doctor",
                             "gp", "client", "flatmate", "roommate", "mate", "pal"})
_NOUN_WORDS = {"phone": "phone number", "email": "e-mail address"}


def contact_kind(noun: Token) -> str | None:
    """``phone`` or ``email`` when ``noun`` names a contact ("number", "e-mail")."""
    attribute = T.NOUN_FRAMES.get(noun.lemma_.lower()) or T.CONTACT_COMPOUNDS.get(
        noun.lower_)
    if noun.lemma_.lower() == "number" and any(
            c.dep_ in ("compound", "amod", "nmod") and c.lower_ not in PHONE_MODIFIERS
            for c in noun.children):
        return None  # "order number", "flight number": not a phone
    if attribute in ("contact:phone", "contact:email"):
        return attribute.partition(":")[2]
    return None


def values(sent: Span) -> list[tuple[str, str, int]]:
    """``(kind, value, character offset in the doc)`` of the contact values in ``sent``."""
    text, base = sent.text, sent.start_char
    out = [("email", m.group(0).rstrip("."), base + m.start()) for m in _EMAIL.finditer(text)]
    masked = _EMAIL.sub(lambda m: " " * len(m.group(0)), text)
    for m in _PHONE.finditer(masked):
        value = m.group(0).strip()
        digits = sum(c.isdigit() for c in value)
        if _MIN_DIGITS <= digits <= _MAX_DIGITS and not _DATE.match(value):
            out.append(("phone", value, base + m.start()))
    return sorted(out, key=lambda v: v[2])


def _anchor(sent: Span, kind: str, at: int) -> Token | None:
    """The word the value at ``at`` is the value of: the nearest contact noun of its kind
    (or a "one" standing for it) before it, else the first such noun after it ("0171 555
    0199 is my new number")."""
    def names_it(t: Token) -> bool:
        return contact_kind(t) == kind or (t.lower_ == "one" and t.pos_ in ("NOUN", "NUM"))
    before = [t for t in sent if t.idx < at and names_it(t)]
    if before:
        return before[-1]
    return next((t for t in sent if t.idx > at and contact_kind(t) == kind), None)


def _owner(tok: Token) -> str:
    """``self``, ``other`` or ``""`` (not said) for a contact noun's possessor."""
    for child in tok.children:
        if child.dep_ == "poss":
            return "self" if child.lower_ in _OWN else "other"
    return ""


# Contact nouns that are qualified by themselves: a landline is a phone of its own, which
# neither retires the mobile nor is retired by it.
_SELF_QUALIFIED = frozenset({"landline"})


def qualifier(tok: Token) -> str:
    """Which contact of its kind ``tok`` names ("work", "home", "landline"), or ""."""
    if tok.lower_ in _SELF_QUALIFIED:
        return tok.lower_
    for child in tok.children:
        if child.dep_ in ("compound", "amod") and child.lower_ in _QUALIFIERS:
            return "work" if child.lower_ in ("office", "business") else child.lower_
    return ""


def _past(tok: Token) -> bool:
    return any(c.dep_ == "amod" and c.lower_ in _PAST for c in tok.children)


def _holder(tok: Token) -> str:
    """Who the clause of ``tok`` says has it: ``self`` ("I got a new number"), ``other``
    ("Marco has a new number", "she gave me her number") or ``""`` ("new one is ...")."""
    verb = tok.head
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head
    subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None or subject.i == tok.i or contact_kind(subject) is not None:
        return ""
    if subject.lower_ in _FIRST_PERSON:
        return "self"
    if subject.lower_ in ("it", "this", "that", "one", "mine"):
        return ""
    return "other"


def _reach_me(sent: Span) -> bool:
    """"reach me on ...", "call me at ...", "text us on ...": the speaker's number."""
    return any(t.lemma_.lower() in _REACH and any(c.dep_ == "dobj" and c.lower_ in ("me", "us")
                                                  for c in t.children) for t in sent)


_REACH = frozenset({"reach", "call", "text", "ring", "contact", "message", "email", "phone",
                    "whatsapp"})


def _about_someone_else(sent: Span) -> bool:
    """Does ``sent`` name another person: a third-person pronoun, a name's possessive, or
    a person the speaker has ("my ex", "my sister")?"""
    return any(t.lower_ in ("he", "she", "they", "his", "her", "their") for t in sent) or \
        any(t.pos_ == "PROPN" and t.dep_ == "poss" for t in sent) or \
        any(t.lemma_.lower() in _PEOPLE and any(c.lower_ in _OWN for c in t.children)
            for t in sent)


def contacts(doc: Doc, speaker: str) -> list[tuple[Frame, str]]:
    """The speaker's current phone numbers and e-mail addresses stated in ``doc``, each as
    its frame and a sentence ("Arjun's phone number is 06-51930462.")."""
    out: list[tuple[Frame, str]] = []
    carried: dict[str, str] = {}  # kind -> qualifier, from an earlier sentence's own noun
    for sent in doc.sents:
        for kind, value, at in values(sent):
            found = _stated(sent, speaker, kind, value, _anchor(sent, kind, at), carried)
            if found is not None:
                out.append(found)
        for kind in ("phone", "email"):
            for noun in (t for t in sent if contact_kind(t) == kind):
                if _owner(noun) == "self" or (_owner(noun) == "" and _holder(noun) == "self"):
                    carried[kind] = qualifier(noun)
    return out


def _stated(sent: Span, speaker: str, kind: str, value: str, anchor: Token | None,
            carried: dict[str, str]) -> tuple[Frame, str] | None:
    """The speaker's contact ``value`` of ``kind`` in ``sent`` (``anchor``: the noun it
    is said of, if any), or None when it is someone else's or a past one."""
    if anchor is None:
        if _reach_me(sent):
            return contact_frame(speaker, kind, value)
        if kind in carried and not _about_someone_else(sent):
            return contact_frame(speaker, kind, value, carried[kind])
        return None
    if _owner(anchor) == "other" or _past(anchor):
        return None  # "my wife's number is ...", "the old number was ..."
    stands_for = contact_kind(anchor) is None  # "one": a noun said before
    said_before = kind in carried or any(
        contact_kind(t) == kind and t.idx < anchor.idx for t in sent)
    if stands_for and not said_before and _owner(anchor) != "self":
        return None  # "the new one is ..." with nothing before it to stand for
    holder = _holder(anchor)
    if holder == "other":
        return None  # "Marco, my ex, has a new number: ..."
    if _owner(anchor) == "self" or holder == "self" or not _about_someone_else(sent):
        which = qualifier(anchor) or (carried.get(kind, "") if stands_for else "")
        return contact_frame(speaker, kind, value, which)
    return None


def contact_frame(speaker: str, kind: str, value: str, qualifier: str = ""
                  ) -> tuple[Frame, str]:
    """The frame ``contact:<kind>[:<qualifier>]`` and its sentence."""
    attribute = f"contact:{kind}" + (f":{qualifier}" if qualifier else "")
    frame = Frame(subject=speaker.lower()[:256], attribute=attribute,
                  value=value.lower()[:256], single=is_single_valued(attribute))
    noun = (f"{qualifier} " if qualifier else "") + _NOUN_WORDS[kind]
    return frame, f"{speaker}'s {noun} is {value}."
