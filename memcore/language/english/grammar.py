"""Is a fact's sentence well formed? A checker over the parse, not over strings.

A fact is a statement the profile shows people and a model: "Richard cannots think
...", "Javier is but everybody call ...", "Lena asks for back to short answers" or
a verbless scrap ("Same trust but other building.") helps nobody. The checker names
the first problem it finds; the write path drops the rule extractor's facts that have
one, and a test holds every fact of the benchmarks to it.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from memcore.language.english.tables import VERB_FRAMES

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_AUXILIARIES = ("can", "cannot", "could", "would", "should", "must", "might", "shall",
                "may", "are", "were", "was", "have", "do", "did", "is", "am")
# An auxiliary given a third-person "-s" ("cannots", "ares"): a broken verb form.
BROKEN_FORMS = frozenset(a + "s" for a in _AUXILIARIES) | {"haves", "doeses", "wases"}
_COMPLEMENTS = frozenset({"attr", "acomp", "oprd", "prep", "xcomp", "ccomp", "advmod",
                          "npadvmod", "dobj", "agent", "advcl", "neg"})
_FOLLOWS_ASK_FOR = frozenset({"DET", "NOUN", "PROPN", "ADJ", "NUM", "PRON"})
_DOUBLED_OK = frozenset({"that", "had", "very", "so", "bye", "ha", "no"})
_SCRAP_WORDS = 6
# Verbs the frame tables know ("works at", "lives in"), read as verbs however tagged.
_FRAME_VERBS = frozenset(verb for verb, _ in VERB_FRAMES)


def _asks_for_a_thing(tok: Token) -> bool:
    """ "asks for X": X must start a noun phrase ("asks for back to ..." does not)."""
    nxt = tok.nbor(1) if tok.i + 1 < len(tok.doc) else None
    if nxt is None or nxt.is_punct:  # "... didn't ask for.": the thing came before
        return True
    return nxt.pos_ in _FOLLOWS_ASK_FOR and nxt.lower_ not in ("it", "ye")


def _verb_read_as_noun(tok: Token) -> bool:
    """"Rory works at Boardroom", "Rory lives in Leeds": the tagger reads a short
    sentence's "works" as a plural noun (and "lives" as lives); right after the name that
    opens it, a verb of the frame tables is a verb."""
    word = tok.lower_
    return (tok.i == 1 and tok.tag_ == "NNS" and tok.nbor(-1).text[:1].isupper()
            and (word[:-1] in _FRAME_VERBS or word[:-2] in _FRAME_VERBS))


def problem(doc: Doc, *, agreement: bool = True) -> str | None:
    """The first problem of a parsed fact sentence, or None when it reads well
    (``agreement=False``: verbs that do not agree are no problem, :func:`agreed` mends
    them)."""
    words = [t for t in doc if not t.is_punct and not t.is_space]
    if not words:
        return "empty"
    found = _word_problem(doc, words)
    if found is not None:
        return found
    for sent in doc.sents:
        found = _clause_problem(sent, agreement)
        if found is not None:
            return found
    return None


def _word_problem(doc: Doc, words: list[Token]) -> str | None:
    """A broken verb form, a doubled word, or a short scrap with no verb."""
    for tok in words:
        if tok.lower_ in BROKEN_FORMS and tok.pos_ != "PROPN":
            return f"broken verb form {tok.text!r}"
    for a, b in pairwise(doc):
        if a.lower_ == b.lower_ and a.is_alpha and a.lower_ not in _DOUBLED_OK:
            return f"doubled word {a.text!r}"
    if (len(words) <= _SCRAP_WORDS and not any(t.pos_ in ("VERB", "AUX") or _verb_read_as_noun(t)
                                               for t in words)
            and not any(t.lower_ in ("'s", "\u2019s") for t in words)):
        return "no verb"  # a short scrap ("Bit terrified."); longer ones may be mis-tagged
    return None


def _clause_problem(sent: Span, agreement: bool) -> str | None:
    """A 'be' without a complement, or an ask without what is asked."""
    root = sent.root
    if root.pos_ == "AUX" and root.lemma_ == "be" and not any(
            c.dep_ in _COMPLEMENTS for c in root.children):
        return "'be' without a complement"
    for tok in sent:
        if tok.lower_ == "for" and tok.head.lemma_ == "ask" and tok.i > 0 \
                and tok.nbor(-1).lemma_ == "ask" and not _asks_for_a_thing(tok):
            return "'asks for' without a thing asked for"
        if _asks_to_do_nothing(tok):
            return f"'asks the assistant to {tok.text}' with nothing to {tok.text}"
        if agreement and _disagrees_with_its_head(tok):
            return f"{tok.text!r} does not agree with {tok.head.text!r}"
    return None


def third_singular(verb: str) -> str:
    """The third person singular of a base form: ``love`` -> ``loves``, ``go`` ->
    ``goes``, ``try`` -> ``tries``, ``have`` -> ``has``."""
    low = verb.lower()
    if low in ("have", "do", "be"):
        return {"have": "has", "do": "does", "be": "is"}[low]
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def agreed(doc: Doc) -> str | None:
    """The text with each verb that :func:`_disagrees_with_its_head` made to agree
    ("Richard is 74 and live with Helen" -> "... and lives with Helen"), or None when
    every verb agrees."""
    wrong = [t for t in doc if _disagrees_with_its_head(t)]
    if not wrong:
        return None
    fixed = {t.i: third_singular(t.text) for t in wrong}
    return "".join(fixed.get(t.i, t.text) + t.whitespace_ for t in doc)


def _disagrees_with_its_head(tok: Token) -> bool:
    """"Richard is 74 and live with ...", "Sam left Google and now work at Meta": a verb
    joined to a third-person singular one (or a past one of one named subject), sharing
    its subject, in the base form (a first-person clause rewritten by halves)."""
    head = tok.head
    return (tok.dep_ == "conj" and tok.tag_ in ("VB", "VBP")
            and (head.tag_ == "VBZ" or (head.tag_ == "VBD" and _one_named(head)))
            and any(c.dep_ == "cc" and head.i < c.i < tok.i for c in head.children)
            and not any(c.dep_ in ("nsubj", "nsubjpass", "aux", "auxpass") for c in tok.children))


def _one_named(verb: Token) -> bool:
    """A past verb whose subject is one named person or thing ("Sam left Google and now
    work at Meta"), not several ("Sam and Ann left ...") nor a pronoun ("they")."""
    subject = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    return subject is not None and subject.tag_ in ("NNP", "NN") and not any(
        c.dep_ == "conj" for c in subject.children)


def _asks_to_do_nothing(tok: Token) -> bool:
    """"asks the assistant to use": the verb asked for has no object of its own ("from
    now" is none)."""
    if not (tok.dep_ == "xcomp" and tok.head.lemma_ == "ask" and tok.pos_ == "VERB"):
        return False
    kept = [c for c in tok.children if c.dep_ not in ("aux", "punct")
            and not (c.dep_ == "prep" and c.lower_ == "from"
                     and any(g.lower_ == "now" for g in c.children))]
    return not kept and tok.lemma_ not in _ASKS_ALONE


# Asks that need no object ("asks the assistant to slow down" has a particle; these not).
_ASKS_ALONE = frozenset({"stop", "relax", "wait", "hurry", "listen", "smile", "rhyme"})
