"""Who a sentence is about: the first person rewritten as the speaker's name
("I love hiking" -> "Caroline loves hiking"), and the cues of first and second person."""

from __future__ import annotations

import re

from memcore.language.english.grammar import third_singular
from memcore.language.english.lexicon import stem, word_set

# The listener named ("you", chat's "ya", "ur"): a sentence about the listener.
SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you'?re|you'?ve|you'?d|you'?ll|ya|"
                           r"y'all|ur)\b", re.I)
# The speaker named: a sentence about the speaker (or about "us", the speaker included).
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|us)\b", re.I)

# Irregular past forms: they stay as they are after the subject, and they tell a clause
# about someone ("... and she sang a solo").
IRREGULAR_PAST = word_set(
    """
    was did had went got made took saw
    felt found thought knew told said gave came began bought brought ran met left lost won
    kept heard read wrote grew became used can't won't couldn't wouldn't didn't wasn't
    shouldn't chose spoke drove flew ate drank wore sang swam fell held built sent spent
    taught caught sold paid slept stood understood forgot began rode threw broke woke
    fought hid lent led meant put set cut let hit hurt quit shut sat
    tore swore bore froze stole shook bit drew blew dug hung lit slid spun struck stuck
    stung swung bent bled bred fed fled sped dealt dreamt knelt leapt wept shot sought
    sank shrank sprang stank rang hid forgave overcame undertook mistook upset
    """
) - word_set("can't won't couldn't wouldn't didn't wasn't shouldn't read put set cut let "
             "hit hurt quit shut upset")
# Verbs that stay as they are after the subject (modals, past tense, already 3rd person).
_KEEP_VERB = IRREGULAR_PAST | word_set(
    """
    can could will would should shall might must may can't won't couldn't wouldn't didn't
    wasn't shouldn't read put set cut let hit hurt quit shut upset
    """
)
_ADVERBS = word_set(
    """
    really also just still always never usually often actually totally definitely kinda
    sometimes even truly absolutely so already finally recently mostly rarely only
    personally genuinely seriously now currently not officially basically normally
    generally mainly hardly barely nearly almost occasionally regularly frequently seldom
    typically eventually soon then once later happily luckily sadly both all last first
    """
)
ADVERB_STEMS = frozenset(stem(a) for a in _ADVERBS)
# Multi-word adverbs between a subject and its verb ("I no longer live").
_ADVERB_PHRASES = ("no longer", "not really", "kind of", "sort of", "at last", "right now",
                   "from now on", "these days", "nowadays")
# The user is one of "we": a fact about "us" is a fact about the speaker.
_CONTRACTIONS = {
    "i'm": "{n} is", "i am": "{n} is", "i've": "{n} has", "i'd": "{n} would",
    "i'll": "{n} will", "i was": "{n} was", "i have": "{n} has", "i do": "{n} does",
    "i don't": "{n} doesn't", "i dont": "{n} doesn't", "im": "{n} is", "ive": "{n} has",
    "i do not": "{n} does not", "i did not": "{n} did not",
    "we're": "{n} is", "we've": "{n} has", "we'll": "{n} will", "we'd": "{n} would",
    "we are": "{n} is", "we were": "{n} was", "we have": "{n} has", "we don't": "{n} doesn't",
}


_ADVERB_RE = "|".join(sorted([*_ADVERB_PHRASES, *_ADVERBS], key=len, reverse=True))
# "I <adverbs> <verb>" and "we <adverbs> <verb>", any case of "i" (lower-case typing).
_SUBJECT_VERB = re.compile(rf"\b(?:[Ii]|[Ww]e) ((?:(?:{_ADVERB_RE}) )*)([A-Za-z']+)")


def third_person(verb: str) -> str:
    """``love`` -> ``loves``, ``go`` -> ``goes``, ``try`` -> ``tries``; a modal, a past
    form or a negation stays as it is."""
    low = verb.lower()
    if low in _KEEP_VERB or (low.endswith("ed") and not low.endswith("eed")) or low.endswith("n't"):
        return verb
    return third_singular(verb)


# Verbs whose past tense is their base form: "I split up last month" is past, not
# "Priya splits up".
_SAME_PAST = frozenset({"split", "put", "cut", "hit", "quit", "set", "let", "hurt", "shut",
                        "cost", "spread", "bet", "burst", "cast", "read", "upset"})


def resolve_first_person(sentence: str, name: str, *, past: bool = False) -> str:
    """Rewrite the first person as ``name`` ("I love hiking" -> "Caroline loves hiking").
    ``past``: the sentence tells of a past time ("last month"), so a verb whose past is
    its base form keeps it ("I split up last month" -> "Caroline split up ...")."""
    text = sentence
    for phrase, repl in sorted(_CONTRACTIONS.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"\b{re.escape(phrase)}\b", repl.format(n=name), text, flags=re.I)

    def _subject(match: re.Match[str]) -> str:
        adverbs, verb = match.group(1) or "", match.group(2)
        kept = past and verb.lower() in _SAME_PAST
        return f"{name} {adverbs}{verb if kept else third_person(verb)}"

    text = _SUBJECT_VERB.sub(_subject, text)
    replacements = (
        (r"\bmyself\b", name), (r"\bmy\b", f"{name}'s"), (r"\bmine\b", f"{name}'s"),
        (r"\bme\b(?!-)", name), (r"\bwe\b", name), (r"\bour\b", f"{name}'s"),
        (r"\bus\b", name), (r"\bourselves\b", name), (r"\bI\b", name),
    )
    for pattern, repl in replacements:
        text = re.sub(pattern, repl, text, flags=re.I)
    return text[:1].upper() + text[1:]
