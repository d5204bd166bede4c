"""Forget requests said in a conversation (docs/design.md, Forget on request): what a
language pack reads and the language-free rules that match a request's target against memories.

A language pack (:meth:`memcore.language.LanguagePack.forget_requests`) reads a user
turn and gives a :class:`ForgetRequest`: where in the turn the request was said, what it
names (:class:`ForgetTarget`: an attribute such as ``contact:address``, or an entity or
topic by its words) and whether it refers back ("forget that", "I shouldn't have told
you that"). The write path (:mod:`memcore.ingest.forget`) resolves it against the
speaker's memories of the same scope and erases the clear matches.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from memcore.core.models import Frame

MAX_ERASED_BY_REQUEST = 20
"""At most this many memories are erased for one forget request (the best matches);
more matches are left alone and the audit says how many were over the limit."""

FORGET_AUDIT_PREFIX = "forget request on the request of "
"""How the one ERASE audit entry per forget request begins: then ``turn <id>`` (or ``the
API (forget)``), ``; kind: <kind>; <what was erased>`` -- never a text (the inspector
reads these back)."""

_WORDS = re.compile(r"[^\W_]+")


def words_of(text: str) -> frozenset[str]:
    """The lower-case word forms of a text (letters and digits), as targets match them."""
    return frozenset(_WORDS.findall(text.lower()))


@dataclass(frozen=True)
class ForgetTarget:
    """What a request names: "my home address", "everything about my ex"."""

    phrase: str
    """As written (for the caller; never written to the audit)."""
    attribute: str | None = None
    """The frame attribute the phrase names (``contact:address``), None: an entity/topic."""
    words: tuple[frozenset[str], ...] = ()
    """The phrase's content words, each as its forms: a memory mentioning one form of
    every word matches ("passport number")."""
    related: frozenset[str] = frozenset()
    """Words of the topic a general word names ("medical" -> diabetes, insulin, ...): a
    memory mentioning any of them matches."""
    person: bool = False
    """The phrase names a person ("my ex", "Daniel"): the names the matched memories give
    that person match too."""
    mine: bool = True
    """Said of the speaker's own ("my address"): a framed memory matches only when its
    subject is the speaker."""
    owner: frozenset[str] = frozenset()
    """Whose it is when not the speaker's ("my ex's phone number": the forms of "ex"): a
    memory matches only when it names the owner, however close in meaning."""
    message: bool = False
    """The phrase names a turn of the chat ("my last message"): a language pack reads
    it as a back-reference."""
    others: frozenset[str] = frozenset()
    """Words for the speaker's people ("sister", "colleague"): a memory of one of them
    ("Sam's sister is a doctor") is not the speaker's own topic (:func:`of_speaker`)."""
    plain: bool = False
    """The target names the attribute as facts say it unqualified ("my mobile number" is
    ``contact:phone``), never its qualified kinds (``contact:phone:home``)."""
    companions: tuple[tuple[str, frozenset[str]], ...] = ()
    """Words of :attr:`related` that name the topic only beside one of their companions
    in the same memory ("broke" with "up": "Sam broke up with Ana", never "Sam broke
    Sam's wrist"; "owes" with an amount, :data:`AMOUNT`)."""
    former: bool = False
    """"the old one" (of a value said in the turn): only versions already replaced
    match, never the value that replaced them ("Forget the old one, my new number is
    ...")."""
    compounds: frozenset[str] = frozenset()
    """Hyphenated compounds that still say the target by their first word ("ex-wife" is
    an ex); any other compound's first word is only a modifier of its last ("ex-boss"
    is a boss, "mother-in-law" is not the mother): :func:`compound_prefixes`."""
    numbered: frozenset[str] = frozenset()
    """How a memory that says what the target names goes on after the speaker, right
    before a number, as words of :func:`words_of` joined by spaces ("s new flat is at":
    "Sam's new flat is at 14 Kestrel Lane", never "Sam's flat is in Leeds"; "makes":
    "Sam makes 61,000 a year", never "Sam makes pottery")."""

    @property
    def kind(self) -> str:
        """``attribute`` or ``entity`` (what the audit records, never the words)."""
        return "attribute" if self.attribute else "entity"


@dataclass(frozen=True)
class ForgetRequest:
    """One user turn's request to forget (a turn carries at most one, its targets many)."""

    sentences: tuple[tuple[int, int], ...]
    """Character spans of the turn's sentences that carry the request (never facts)."""
    targets: tuple[ForgetTarget, ...] = ()
    refers_back: bool = False
    """"that", "it", "what I said": what the speaker said just before."""
    earlier: tuple[int, int] | None = None
    """When the request refers back inside its own turn ("My PIN is 4821, forget it."):
    the span of that turn it refers to; None: the previous user turn."""
    everything: bool = False
    """"forget everything (I told you)": the scope's memories, up to the limit."""
    bare: bool = False
    """Only a plain "forget it" referring back to an earlier turn: right after the
    assistant asked something it dismisses the question and erases nothing."""
    guarded: bool = False
    """Only a removing verb's "delete that" / "I'd like this deleted" referring back: it
    may be about code or a list the assistant gave, so it is honoured only when the turn
    it refers to said something of the speaker's and no code or list came since."""
    regret: bool = False
    """The speaker regrets having said it ("I shouldn't have told you that"): "that" is
    the latest of the last few user turns that said something sensitive, when the turn
    just before said nothing so (a remark may come between the secret and the regret)."""

    @property
    def kind(self) -> str:
        """What the request is about, for the audit: ``attribute``, ``entity``,
        ``turn`` (a back-reference) or ``everything``."""
        if self.targets:
            kinds = sorted({t.kind for t in self.targets})
            return "+".join(kinds)
        if self.everything:
            return "everything"
        return "turn"


@dataclass
class ForgetMatch:
    """A memory a target matched and how."""

    memory_id: str
    how: str  # "frame" | "words" | "topic" | "name" | "meaning"
    strength: float = 1.0
    names: set[str] = field(default_factory=set)


_DIGIT = re.compile(r"\d")
_HOUSE_NUMBER = re.compile(r"[£$€¥]?\d+[A-Za-z]?,? [A-Z][a-z]")
# an amount, not a year ("by 1 March 2026")
_AMOUNT = re.compile(r"[£$€¥]\s?\d|\d{1,3}(?:,\d{3})+\b|\d+(?:\.\d+)?k\b"
                     r"|(?!(?:19|20)\d\d\b)\d{4,}\b")


def frame_matches(target: ForgetTarget, frame: Frame | None, speakers: Collection[str],
                  text: str = "") -> bool:
    """The memory's frame gives the attribute the target names (of the speaker, when the
    target says "my"). An address is also where one lives with a house number ("lives at
    22 Wexford Crescent"), not a town alone ("lives in Leeds")."""
    if target.attribute is None:
        return False
    if frame is None:  # "Sam's new flat is at 14 Kestrel Lane" (see ``numbered``)
        return number_matches(target, text, speakers)
    # the house number must be in the value: a date in the text ("moved to York on 5
    # May") makes no address
    same = _same_attribute(frame.attribute, target.attribute, target.plain) or (
        target.attribute == "contact:address" and frame.attribute == "residence"
        and bool(_DIGIT.search(frame.value)))
    return same and (not target.mine or frame.subject in speakers)


def number_matches(target: ForgetTarget, text: str, speakers: Collection[str]) -> bool:
    """The memory opens with the speaker and one of ``target.numbered`` and goes on
    with a number right after it ("Sam makes 61,000", "Sam's new flat is at 14 Kestrel
    Lane"; not "Sam's wife makes", "Sam's ex Jo's flat", "Sam moved to Leeds on 3
    May"): a house number for an address, else an amount ("61,000", "$900", "45k"; not
    "3 cakes", not a year)."""
    if not target.numbered or not target.mine:
        return False
    words = _WORDS.findall(text.lower())
    if not words or words[0] not in speakers:
        return False
    number = _HOUSE_NUMBER if target.attribute == "contact:address" else _AMOUNT
    for phrase in target.numbered:
        said = re.match(r"\W*" + r"\W+".join(map(re.escape, [words[0], *phrase.split()]))
                        + r"[^\w£$€¥]+", text, re.IGNORECASE)
        if said is not None and number.match(text, said.end()) is not None:
            return True
    return False


_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)+")


def compound_prefixes(text: str, keep: Collection[str] = ()) -> frozenset[str]:
    """The words ``text`` says only as the first parts of hyphenated compounds ("ex" in
    "Sam's ex-boss Terry"), but for the compounds of ``keep``: such a word modifies the
    compound's last word and names nothing of its own (docs/design.md, Forget on
    request)."""
    lowered = text.lower()
    inside: set[str] = set()
    for found in _COMPOUND.finditer(lowered):
        if found.group(0) not in keep:
            inside.update(found.group(0).split("-")[:-1])
    if not inside:
        return frozenset()
    alone = words_of(_COMPOUND.sub(lambda m: m.group(0).rsplit("-", 1)[-1]
                                   if m.group(0) not in keep else m.group(0), lowered))
    return frozenset(inside - alone)


def others_own(target: ForgetTarget, text: str, speakers: Collection[str]) -> bool:
    """The memory is a value of one of the speaker's people ("Sam's wife's birthday is 19
    October"), not of the speaker, as a value the speaker calls "my birthday" must be."""
    if not target.mine or target.owner or not target.others:
        return False
    words = _WORDS.findall(text.lower())
    if not words or words[0] not in speakers:
        return False
    # "Sam's company's address", "Sam's cat's birthday": a double possessive is the
    # second one's, whoever it is
    double = words[1:2] == ["s"] and words[3:4] == ["s"] and not _names_again(words, speakers)
    return double or not of_speaker(target, text, speakers)


_PHONE_DIGITS = re.compile(r"(?:\d[\s().-]*){7,}")


def value_shaped(target: ForgetTarget, text: str) -> bool:
    """A memory that says a contact by words only also holds a value of its shape (a
    phone number's seven digits or more, an e-mail's "@"): "Sam's lucky number is 7" is
    no phone number."""
    if target.attribute is None or not target.attribute.startswith("contact:"):
        return True
    if target.attribute.startswith("contact:phone"):
        return _PHONE_DIGITS.search(text) is not None
    if target.attribute.startswith("contact:email"):
        return "@" in text
    return True


def words_match(target: ForgetTarget, words: frozenset[str]) -> bool:
    """Every content word of the target is in ``words`` (one of its forms)."""
    return bool(target.words) and all(forms & words for forms in target.words)


def of_speaker(target: ForgetTarget, text: str, speakers: Collection[str]) -> bool:
    """The memory is about the speaker, as a topic of the speaker's own must be ("my
    medical info" is not "Sam's sister is a doctor", "my breakup" not "Sam's colleague
    Bea got divorced"): it opens with the speaker, not with one of the speaker's people,
    or names the speaker again on its own ("Sam's girlfriend Ana dumped Sam")."""
    if not target.mine or target.owner:
        return True  # someone else's topic: the owner decides (:attr:`ForgetTarget.owner`)
    words = _WORDS.findall(text.lower())
    if not words or words[0] not in speakers:
        return False
    # a word of the target itself names no other person ("date" of "date of birth")
    others = target.others - words_of(target.phrase) - frozenset().union(*target.words)
    if words[1:2] != ["s"] or not (set(words[2:4]) & others):
        return True
    return _names_again(words, speakers)


def _names_again(words: list[str], speakers: Collection[str]) -> bool:
    """The speaker is named again on their own, past the opening ("Sam's girlfriend Ana
    dumped Sam")."""
    return any(w in speakers and words[i + 1:i + 2] != ["s"]
               for i, w in enumerate(words) if i > 0)


AMOUNT = "#amount"
"""A companion (:attr:`ForgetTarget.companions`) met by any word with a digit ("12k")."""


def topic_matches(target: ForgetTarget, words: frozenset[str]) -> bool:
    """A word of the target's topic is in ``words``, beside one of its companions when
    it has some (:attr:`ForgetTarget.companions`)."""
    found = target.related & words
    if not found:
        return False
    weak = dict(target.companions)
    amount = any(c.isdigit() for w in words for c in w)
    return any(w not in weak or bool(weak[w] & words) or (AMOUNT in weak[w] and amount)
               for w in found)


def conflicting_attribute(target: ForgetTarget, frame: Frame | None) -> bool:
    """The memory is framed as another attribute than the one the target names ("my
    address" is not the e-mail address, though both say "address"; "my personal email"
    is not the work one), not a general one of it (an e-mail address said without
    "personal" may still be named by other means)."""
    return (target.attribute is not None and frame is not None
            and not _same_attribute(frame.attribute, target.attribute, target.plain)
            and not target.attribute.startswith(frame.attribute + ":")
            and frame.attribute.split(":")[0] == target.attribute.split(":")[0])


def _same_attribute(framed: str, named: str, plain: bool = False) -> bool:
    """The frame's attribute is the named one or a kind of it ("contact:email:personal"
    is a "contact:email"; not when the target is :attr:`ForgetTarget.plain`)."""
    return framed == named or (not plain and framed.startswith(named + ":"))
