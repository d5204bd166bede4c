"""Subjects chat leaves out: "Learning Spanish on Duolingo", "Doing couch to 5k, runs
Tue/Thu/Sat" say what the speaker is doing, with the "I'm" dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc

_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_NOT_DOING = frozenset({"morning", "evening", "nothing", "something", "anything",
                        "everything", "spring", "thing", "king", "wedding", "building"})


def dropped_progressive(doc: Doc) -> bool:
    """Does the sentence open with an "-ing" verb that heads a clause and has no subject
    anywhere ("Reading Middlemarch at the moment", "Training for the Leeds half")? Not a
    gerund that is itself a subject ("Running is great fun", "Swimming lessons start
    Monday")."""
    if not len(doc) or not doc[0].lower_.endswith("ing") or len(doc[0]) < 5:
        return False
    first = doc[0]
    if first.lower_ in _NOT_DOING or first.tag_ != "VBG":
        return False  # "Morning!", "Evening all": greetings, not doings
    return first.dep_ in ("ROOT", "advcl") and not any(t.dep_ in _SUBJECTS for t in doc)
