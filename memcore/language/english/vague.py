"""Facts that say nothing lasting on their own: a feeling of the moment ("Sophie is
thrilled", "Tom feels awful about it") or a clause about something only a pronoun names
("Ann sold it", "It was great").

Such a fact stays a candidate (not an explicit statement) so that, unless it is said
again, the forgetting rules let it go; its text is still searchable meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.language.english.tables import SELF_VERBS

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# Feelings and states of the moment, predicated of someone ("is thrilled", "feels awful").
MOODS = frozenset({
    "thrilled", "happy", "sad", "worried", "stressed", "upset", "excited", "nervous",
    "gutted", "chuffed", "delighted", "relieved", "anxious", "annoyed", "angry", "cross",
    "furious", "tired", "exhausted", "knackered", "fine", "okay", "ok", "good", "great",
    "awful", "terrible", "rubbish", "quiet", "busy", "bored", "lonely", "proud", "glad",
    "pleased", "sorry", "scared", "frustrated", "overwhelmed", "devastated", "heartbroken",
    "shattered", "grumpy", "miserable", "content", "sick", "ill", "poorly",
})
_FEEL_VERBS = frozenset({"be", "feel", "seem", "look", "sound", "get"})
_PRONOUNS = frozenset({"it", "that", "this", "them", "her", "him", "they", "those",
                       "these", "she", "he", "one"})


def _content(tok: Token) -> bool:
    return tok.pos_ in ("NOUN", "PROPN", "NUM") and tok.lower_ not in _PRONOUNS


def vague(doc: Doc) -> bool:
    """Does the fact ``doc`` say only a passing feeling, or about something only a pronoun
    names?"""
    sents = list(doc.sents)
    if len(sents) != 1:
        return False
    root = sents[0].root
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        return False
    others = [t for t in root.subtree if t.i != subject.i and t not in subject.subtree
              and _content(t)]
    if _a_mood(root, subject) and not others:
        return True
    if _an_impression(root, subject):
        return True
    if subject.lower_ in _PRONOUNS and not any(_content(t) for t in subject.subtree):
        return not others  # "It was great", "She loved it"
    objects = [c for c in root.children if c.dep_ in ("dobj", "obj")]
    return bool(objects) and all(o.lower_ in _PRONOUNS for o in objects) and not others


def _an_impression(root: Token, subject: Token) -> bool:
    """Does the clause say how a thing was, in the past ("The conference in Tokyo was
    excellent", "the food was amazing, although ...")? An impression of a moment, not a
    lasting fact; a person ("Tom was furious", a name, a pronoun) or a negation is not
    one (that is a mood, or may end a fact)."""
    if root.lemma_ != "be" or root.tag_ != "VBD" or any(c.dep_ == "neg" for c in root.children):
        return False
    # the small tagger reads some nouns as adjectives ("The flat was tiny")
    return (any(c.dep_ == "acomp" and c.pos_ == "ADJ" for c in root.children)
            and subject.pos_ in ("NOUN", "ADJ") and subject.text.islower()
            and subject.lower_ not in _PERSONS
            and not any(c.dep_ == "poss" for c in subject.children))


def _a_mood(root: Token, subject: Token) -> bool:
    """Does the clause predicate a passing mood of its subject ("Tom feels awful about
    it", "the house is quiet", "Sophie is thrilled")? "Ben's German isn't good enough",
    "her kidneys weren't happy": a state of something of someone's, or negated, is no
    passing mood."""
    if any(c.dep_ == "neg" for c in root.children) or \
            any(c.dep_ == "poss" for c in subject.children):
        return False
    complements = [c for c in root.children if c.dep_ in ("acomp", "attr", "oprd")]
    if root.lemma_.lower() in _FEEL_VERBS and complements and all(
            c.lemma_.lower() in MOODS or c.lower_ in MOODS for c in complements):
        return True
    # "Sophie is thrilled" (parsed as a passive)
    return root.lower_ in MOODS and any(c.lemma_ == "be" for c in root.children)


_THINGS_NAMED = 3  # nouns a clause opening with a pronoun names to say something of its own


def names_things(doc: Doc) -> bool:
    """Does a sentence that opens with "it", "they", "that" ... still name what it is
    about? Its opening word determines a noun ("That roadtrip was insane": no pronoun at
    all), or it names at least three things ("It was a transgender poetry reading where
    people shared their stories"), where "It was great" or "They loved it" names none."""
    if len(doc) and doc[0].dep_ == "det" and doc[0].head.pos_ in ("NOUN", "PROPN"):
        return True
    return sum(1 for t in doc if _content(t)) >= _THINGS_NAMED


_BARE_BELOW = 2  # things a fact names to be found and told apart by them
_WORDS_BELOW = 3  # ... or content words it says of them
_INTENSIFIERS = frozenset({"so", "super", "really", "very", "totally", "pretty", "just",
                           "too", "all", "even", "always", "gonna", "wanna", "na"})
_ENDING = frozenset({"never", "longer", "anymore", "quit", "stopped", "over", "done",
                     "finished", "ended"})
_NAMING_DEPS = frozenset({"dobj", "pobj", "xcomp", "nsubj", "attr", "conj"})


def _a_thing(tok: Token) -> bool:
    """A noun, name or number, or an activity named by its "-ing" form ("likes rowing",
    "took up knitting")."""
    return _content(tok) or (tok.tag_ == "VBG" and tok.dep_ in _NAMING_DEPS)


def _a_word_of_content(tok: Token) -> bool:
    """Any word but a stop word or an intensifier, whatever its tag (the small tagger
    reads "allergic to shellfish" with a verb)."""
    return (tok.is_alpha or tok.like_num) and not tok.is_stop \
        and tok.lower_ not in _INTENSIFIERS


def things_named(doc: Doc) -> int:
    """How many things (nouns, names, numbers, activities) the text names: "Site start
    confirmed for 17 August" four, "Bit of a slow one here lately" one."""
    return sum(1 for t in doc if _a_thing(t))


def bare(doc: Doc) -> bool:
    """Does the fact name fewer than two things (nouns, names, numbers, activities) and
    say fewer than three content words ("Caroline is so grateful", "Jon is gonna make
    it")? Such a fact says how someone felt or what they hoped, nothing it could be
    found by or told from another fact by. A negation or an end may end another fact
    ("Sam is not vegetarian any more"): never bare."""
    if any(t.dep_ == "neg" or t.lower_ in _ENDING for t in doc):
        return False
    if any(t.dep_ == "ROOT" and t.lemma_.lower() in SELF_VERBS for t in doc):
        return False  # "Ben is freelancing now": how one lives and works, a profile fact
    return (things_named(doc) < _BARE_BELOW
            and len({t.lower_ for t in doc if _a_word_of_content(t)}) < _WORDS_BELOW)


_PRESENT = frozenset({"VBZ", "VBP", "MD"})
_PERSONS = frozenset({"i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his",
                      "she", "her", "they", "them", "their"})


def general(doc: Doc) -> bool:
    """Is the fact a general remark, about no one and nothing in particular: a present
    tense saying of an activity or a bare noun ("Staying positive is very important",
    "Life sure can be a roller coaster", "Kids are amazingly resilient")? Not one that
    names someone or a number, or says what has been ("Searching for a studio has been
    tricky": someone's own search), nor one that names three things ("Sunflowers mean
    warmth and happiness": what the speaker holds of them, which may be asked)."""
    sents = list(doc.sents)
    if len(sents) != 1 or _names_someone(doc) or _anchored_now(doc):
        return False
    if names_things(doc):
        return False  # "Sunflowers mean warmth and happiness": the speaker's view of them
    root = sents[0].root
    if not _present_not_perfect(root):
        return False
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "csubj")), None)
    return subject is not None and _general_subject(subject)


# Words that tie a present tense to now, not to always ("reports go out fortnightly now").
_NOW_WORDS = frozenset({"now", "currently", "anymore"})


def _anchored_now(doc: Doc) -> bool:
    """Does the text say its present holds now, as a change or a current state ("Snagging
    reports go out fortnightly now, not weekly")? Then it is no general remark, whatever
    its subject ("Kids nowadays are lazy" still is one)."""
    return any(t.lower_ in _NOW_WORDS for t in doc)


def _names_someone(doc: Doc) -> bool:
    """Does the fact name someone or a number (a name, a numeral, a personal pronoun)?"""
    return any(t.pos_ in ("PROPN", "NUM") or t.lower_ in _PERSONS for t in doc)


def _present_not_perfect(root: Token) -> bool:
    """Is the clause headed by ``root`` in the present tense, not a perfect one ("has
    been tricky" says what has been)?"""
    tenses = [root.tag_, *(c.tag_ for c in root.children if c.dep_ in ("aux", "auxpass"))]
    return any(t in _PRESENT for t in tenses) and "VBN" not in tenses[1:] and not (
        root.tag_ == "VBN" and any(c.lemma_ == "have" for c in root.children))


def _general_subject(subject: Token) -> bool:
    """Is ``subject`` an activity ("Taking risks is scary") or a bare common noun
    ("Kids are amazingly resilient"), no one's and no number of them?"""
    if subject.dep_ == "csubj" or subject.tag_ == "VBG":
        return True  # "Taking risks is scary"
    return subject.pos_ == "NOUN" and _common(subject) and not any(
        c.dep_ in ("det", "poss", "nummod") for c in subject.children)


_ABSTRACT = ("ness", "ity", "ion", "ment", "ance", "ence", "ship", "dom", "ism", "hood")


def _common(noun: Token) -> bool:
    """A noun surely common, not a name the small tagger read as one ("Ann runs
    marathons"): plural, written in lower case, or abstract by its ending."""
    return noun.tag_ == "NNS" or noun.text[:1].islower() or noun.lower_.endswith(_ABSTRACT)
