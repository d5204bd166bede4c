"""A bare answer read with the assistant's question before it.

"Which part of Kyoto will you be living in?" -> "Sakyo ward, near the Kamo river."
alone says nothing; with its question it is the speaker's residence. A wh-question
about a core attribute (name, age, residence, work, contact, ...) gives the answer
that attribute's frame and sentence; another wh-question keeps the pair as one
readable fact ('Asked "How long is each class?", Bree answered: 75 minutes.').
Yes/no questions and answers that are sentences of their own are left to the
extractor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.core.models import Frame
from memcore.language.english import tables as T
from memcore.language.english.contacts import contact_frame, contact_kind
from memcore.language.english.contacts import qualifier as contact_qualifier
from memcore.language.english.contacts import values as contact_values
from memcore.language.english.statements import TEMPLATES, framed

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

MAX_ANSWER_WORDS = 8
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
_LEADING = frozenset({"yes", "yeah", "yep", "no", "nope", "oh", "um", "uh", "well", "just",
                      "ok", "okay", "so", "hmm", "erm", "it", "it's", "its", "that's"})
_TRAILING = frozenset({"lol", "lmao", "haha", "thanks", "thx", "cheers", "x", "xx", "ty"})
# (verb lemma) -> attribute, for "where do you live?", "where do you work?".
_WHERE_VERBS = {"live": "residence", "base": "residence", "stay": "residence",
                "move": "residence", "work": "employer"}


def _question(doc: Doc) -> Span | None:
    """The last sentence of the assistant's turn, if it is a wh-question."""
    sents = list(doc.sents)
    if not sents or not sents[-1].text.rstrip().endswith("?"):
        return None
    last = sents[-1]
    if not any(t.tag_ in _WH_TAGS for t in last):
        return None
    return last


def _attribute(question: Span) -> str | None:
    """The core attribute a wh-question asks the listener for, if any."""
    words = [t.lower_ for t in question]
    if "how" in words and "old" in words:
        # "how old are you?"; not "how many children do you have, and how old are they?"
        after = words[words.index("old") + 1:words.index("old") + 3]
        return "age" if {"you", "u"} & set(after) else None
    for tok in question:
        if tok.dep_ == "poss" and tok.lower_ == "your":
            attribute = _yours(tok.head)
            if attribute is not None:
                return attribute
    return _asked_by_verb(question, words)


def _yours(noun: Token) -> str | None:
    """The attribute "your <noun>" names ("your favourite book", "your job")."""
    attribute = T.NOUN_FRAMES.get(noun.lemma_.lower())
    mods = {c.lemma_.lower() for c in noun.children}
    if mods & T.FAVOURITE:
        return f"favorite:{noun.lemma_.lower()}"
    return attribute if attribute in TEMPLATES else None


def _asked_by_verb(question: Span, words: list[str]) -> str | None:
    """The attribute the question's verb and wh-word ask for ("where do you live",
    "what do you do", "what are you reading")."""
    root = question.root
    wh = {t.lower_ for t in question if t.tag_ in _WH_TAGS}
    if {"where", "which"} & wh and root.lemma_.lower() in _WHERE_VERBS:
        return _WHERE_VERBS[root.lemma_.lower()]
    if "what" in wh and root.lemma_.lower() == "do" and "you" in words and (
            "living" in words or words[-2:-1] == ["do"]):
        return "job"
    if "what" in wh and root.lemma_.lower() == "read":
        return "reading"
    return None


def _value(doc: Doc) -> str:
    """The answer's words without fillers and sign-offs ("yes, Sakyo ward lol")."""
    first = next(iter(doc.sents), None)
    words = (first.text if first is not None else doc.text).strip().rstrip(".!").split()
    while words and words[0].lower().strip(",.!") in _LEADING:
        words = words[1:]
    while words and words[-1].lower().strip(",.!") in _TRAILING:
        words = words[:-1]
    return " ".join(words).strip(" ,;")


def is_bare(doc: Doc) -> bool:
    """A short answer with no clause of its own (no subject) and no question."""
    words = [t for t in doc if not t.is_punct]
    return (0 < len(words) <= MAX_ANSWER_WORDS and "?" not in doc.text
            and not any(t.dep_ in ("nsubj", "nsubjpass") for t in doc)
            and not _a_request(words))


def _a_request(words: list[Token]) -> bool:
    """"(please) send spreadsheets as Excel files": an imperative is a request of its
    own (to "How can I help?"), read by the extractor, not an answer's value."""
    rest = [t for t in words if t.dep_ != "intj" and t.lower_ != "please"]
    return bool(rest) and rest[0].dep_ == "ROOT" and rest[0].tag_ == "VB"


def _offered_contact(question: Doc, reply: Doc, speaker: str
                     ) -> tuple[Frame | None, str] | None:
    """"Do you want your work e-mail in the template too?" - "yes, a@b.example": the
    value the reply gives for the speaker's contact the question names."""
    sents = list(question.sents)
    if not sents or not sents[-1].text.rstrip().endswith("?"):
        return None
    asked = [t for t in sents[-1] if contact_kind(t) is not None
             and any(c.dep_ == "poss" and c.lower_ == "your" for c in t.children)]
    if not asked:
        return None
    kind = contact_kind(asked[0])
    for sent in reply.sents:
        for found, value, _ in contact_values(sent):
            if found == kind and kind is not None:
                return contact_frame(speaker, kind, value, contact_qualifier(asked[0]))
    return None


def answer(question: Doc, reply: Doc, speaker: str) -> tuple[Frame | None, str] | None:
    """The fact a bare ``reply`` to ``question`` states, or None."""
    if not is_bare(reply):
        return None
    offered = _offered_contact(question, reply, speaker)
    if offered is not None:
        return offered
    asked = _question(question)
    if asked is None:
        return None
    value = _value(reply)
    if not value:
        return None
    attribute = _attribute(asked)
    if attribute in TEMPLATES:
        frame, text = framed(speaker, attribute, value.lower(), value)
        return frame, text
    if attribute is not None and attribute.startswith("favorite:"):
        kind = attribute.partition(":")[2]
        frame = Frame(subject=speaker.lower(), attribute=attribute, value=value.lower(),
                      single=True)
        return frame, f"{speaker}'s favourite {kind} is {value}."
    return None, f'Asked "{asked.text.strip()}", {speaker} answered: {value}.'
