"""A fact text's independent clauses: "Sam banks with Nationwide, and the PIN for Sam's
card is [redacted: pin]" -> "Sam banks with Nationwide.", "The PIN for Sam's card is
[redacted: pin].". Only verbs joined to the root with a subject of their own split; a
shared subject ("Sam lives in Leeds and works at Acme") keeps one clause."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.language.english import tables as T

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_SUBJECTS = ("nsubj", "nsubjpass", "expl", "csubj")
# Words that only join two clauses ("..., and ...", "..., but then ...")
_JOINERS = frozenset({"and", "but", "so", "or", "plus", "also", "then", "while", "whereas"})


def _own_clause(tok: Token) -> bool:
    return tok.dep_ == "conj" and tok.pos_ in ("VERB", "AUX") and any(
        c.dep_ in _SUBJECTS for c in tok.children)


def _comma_joined(sent: Span) -> list[int]:
    """Where ", and" / ", but" starts a clause with a finite verb and its own subject
    (the parser may miss it: "User banks with Nationwide, and the PIN ... is ...")."""
    cuts: list[int] = []
    for tok in sent:
        if tok.lower_ not in _JOINERS or tok.i == sent.start or tok.nbor(-1).text != ",":
            continue
        rest = sent.doc[tok.i + 1:sent.end]
        verb = next((t for t in rest if t.tag_ in T.FINITE_TAGS), None)
        # a subject of its own: a noun before the verb (the parser may hang it elsewhere)
        if verb is None or verb.dep_ in ("relcl", "acl") or any(
                t.tag_ in ("WDT", "WP") for t in rest if t.i < verb.i):
            continue  # "..., and Berlin, which were lovely": no clause of its own
        if any(t.pos_ in ("NOUN", "PROPN", "PRON") and t.i < verb.i for t in rest):
            cuts.append(tok.i)
    return cuts


def _sentence(text: str) -> str:
    text = text.strip(" ,;:-")
    words = text.split(" ", 1)
    while words and words[0].lower() in _JOINERS and len(words) > 1:
        text = words[1].strip(" ,;:-")
        words = text.split(" ", 1)
    head, _, last = text.rpartition(" ")
    while head and last.lower().strip(",.") in _JOINERS:
        text = head.strip(" ,;:-")
        head, _, last = text.rpartition(" ")
    if not text or text.lower().strip(" ,.") in _JOINERS:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def clauses(doc: Doc) -> list[str]:
    """The independent clauses of each sentence of ``doc``, each as a sentence of its own;
    one item (the text) when nothing splits."""
    out: list[str] = []
    for sent in doc.sents:
        cuts = sorted({t.left_edge.i for t in sent.root.children if _own_clause(t)}
                      | set(_comma_joined(sent)))
        if not cuts:
            out.append(_sentence(sent.text))
            continue
        starts = [sent.start, *cuts]
        ends = [*cuts, sent.end]
        out += [s for a, b in zip(starts, ends, strict=True)
                if (s := _sentence(doc[a:b].text))]
    return [c for c in out if c] or [doc.text]
