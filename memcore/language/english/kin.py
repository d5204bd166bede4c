"""The speaker's people named with their relation: "my wife, Helen", "my son Sam is 18",
"our grandson Tobias", "me and my girlfriend Zoe"; and pets by their names: "our cat
Miso" ("Tom's cat is Miso.", owned).

A kin or partner noun the speaker owns ("my", "our") with a name set beside it (an
apposition, or a name right after it) gives ``relation:<noun>`` = the name, written
"Richard's wife is Helen."; a number the clause gives that person ("my son Sam is 18")
gives their age, "Sam is 18 years old.". Partner nouns share one single-valued
attribute, ``relation:partner``; children, siblings and friends are multi-valued.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.core.frames import is_single_valued
from memcore.core.models import Frame
from memcore.language.english import tables as T
from memcore.language.english.numbers import age_value

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

PARTNERS = frozenset({"wife", "husband", "partner", "girlfriend", "boyfriend", "fiance",
                      "fiancee", "fiancé", "fiancée", "spouse"})
_OWN = frozenset({"my", "our"})
# Family, not the people around (a colleague or neighbour named in passing is no profile
# fact of the speaker's).
FAMILY = T.KIN - frozenset({"friend", "colleague", "boss", "manager", "neighbour",
                            "neighbor"})
_NOT_NAMES = frozenset({"mum", "mom", "dad", "mam", "nan", "gran", "grandad", "grandpa",
                        "grandma", "i", "he", "she", "they"})


def _name_of(noun: Token) -> Token | None:
    """The name set beside a kin noun: "my wife, Helen", "my son Sam", "grandson Thomas"."""
    for child in noun.children:
        if child.dep_ in ("appos", "compound", "npadvmod") and _a_name(child) \
                and child.i > noun.i and child.lower_ not in _NOT_NAMES:
            return child
    after = noun.doc[noun.i + 1] if noun.i + 1 < len(noun.doc) else None
    if after is not None and _a_name(after) and after.lower_ not in _NOT_NAMES and \
            after.dep_ in ("nsubj", "appos", "compound", "dobj", "pobj", "conj"):
        return after
    return None


def _a_name(tok: Token) -> bool:
    """A proper noun, or a capitalized word the tagger does not know as one ("our cat
    Miso": "Miso" is tagged a common noun)."""
    return tok.pos_ == "PROPN" or (tok.pos_ == "NOUN" and tok.i > 0 and tok.is_alpha
                                   and tok.text[:1].isupper() and not tok.text.isupper())


def _full_name(name: Token) -> str:
    """"Sam" or "Sam Okafor": the name with the names set before ("Tom" of "Tom Smith",
    where the parser hangs the last name on the noun) and right after it."""
    start = name.i
    while start - 1 >= 0 and name.doc[start - 1].pos_ == "PROPN" and \
            name.doc[start - 1].dep_ == "compound" and name.doc[start - 1].head.i == name.i:
        start -= 1
    end = name.i
    while end + 1 < len(name.doc) and name.doc[end + 1].pos_ == "PROPN" and \
            name.doc[end + 1].dep_ in ("flat", "compound", "appos") and \
            name.doc[end + 1].head.i in (name.i, end):
        end += 1
    return name.doc[start:end + 1].text


def _age_of(noun: Token, name: Token) -> str | None:
    """The age the clause gives the named person: "my son Sam is 18"."""
    verb = noun.head if noun.dep_ in ("nsubj", "nsubjpass") else name.head \
        if name.dep_ == "nsubj" else None
    if verb is None or verb.lemma_ != "be":  # "turns seven in April": not yet
        return None
    for child in verb.children:
        if child.dep_ in ("attr", "acomp", "dobj") and child.i > verb.i:
            value = age_value(child)
            if value is not None:
                return value
    return None


def kin_names(doc: Doc, speaker: str) -> list[tuple[Frame, str]]:
    """The speaker's named people in ``doc`` as frames and sentences."""
    out: list[tuple[Frame, str]] = []
    for noun in doc:
        lemma = noun.lemma_.lower()
        if noun.pos_ != "NOUN" or not (lemma in FAMILY or lemma in PARTNERS
                                       or lemma in T.PETS):
            continue
        # "my dog Rex": the parser may make the noun a compound of the name, which then
        # holds the "my".
        named_head = noun.dep_ == "compound" and noun.head.pos_ == "PROPN" \
            and noun.head.i == noun.i + 1 and noun.head.lower_ not in _NOT_NAMES
        owners = (noun, noun.head) if named_head else (noun,)
        if not any(c.dep_ == "poss" and c.lower_ in _OWN for o in owners for c in o.children):
            continue
        name = noun.head if named_head else _name_of(noun)
        if name is None:
            continue
        written = _full_name(name)
        # A pet is owned, by its name: "Rex died" then ends it (docs/design.md, Frames).
        attribute = "relation:partner" if lemma in PARTNERS else "owns" if lemma in T.PETS \
            else f"relation:{lemma}"
        frame = Frame(subject=speaker.lower()[:256], attribute=attribute,
                      value=written.lower()[:256], single=is_single_valued(attribute))
        out.append((frame, f"{speaker}'s {noun.lower_} is {written}."))
        age = _age_of(noun, name)
        if age is not None:
            out.append((Frame(subject=written.lower()[:256], attribute="age", value=age,
                              single=True), f"{written} is {age} years old."))
    return out
