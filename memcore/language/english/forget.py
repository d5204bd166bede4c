"""Requests to forget, read from a user turn's dependency parse
(docs/design.md, Forget on request).

A request is a clause addressed to the assistant (imperative, "you" as the subject,
"I'd like you to", "would you mind", "I'd appreciate it if you", "let's", "can we", or a
passive asked for: "Please forget my address", "Can you delete my medical information?",
"Can my address be removed?") whose predicate, read with its particle
(:func:`_verb_class`), is a forgetting verb, a removing one ("delete", "get rid of",
"throw out", "take X off your list"), a keeping verb declined ("don't remember that",
"don't hold on to my address"), or the speaker's regret of having said it ("I shouldn't
have told you that"). A removing verb asks only for what is kept of the speaker
(:func:`_kept_thing`), what was said, or what comes "from your memory / notes"; never a
thing of the world ("remove my name from the mailing list", "delete my last email to
Tom", "drop me off"). Not requests: the speaker's own forgetting ("I always forget my
keys"), a reminder ("don't forget my dentist appointment"), the past ("you forgot my
birthday"), a condition ("if you delete my address, ..."), and "forget it" dismissing
something ("forget it, it doesn't matter", "forget it, let's move on"). The object gives
the target: a noun phrase ("my home address", "everything about my ex", "what I said
about my breakup") or a back-reference ("that", "it", "what I told you"). Turns are read
respelled (:mod:`.respelling`: "pls delte my adress").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from memcore.core.forget import AMOUNT, ForgetRequest, ForgetTarget, words_of
from memcore.language.english import tables as T
from memcore.language.english.contacts import qualifier

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# Verbs that ask to forget: addressed to the assistant, whatever they name is to go.
FORGET_VERBS = frozenset({"forget", "erase", "unlearn", "disregard", "expunge"})
# Verbs that remove or throw away. They also name code, files, lists and things in the
# world ("delete the email from my boss", "drop me off"), so they ask to forget only
# what is kept of the speaker (:func:`_kept_thing`), what was said ("what I told you
# about ..."), or anything taken "from your memory / notes / list".
REMOVE_VERBS = frozenset({"delete", "remove", "wipe", "clear", "purge", "ignore", "scrub",
                          "strike", "drop", "ditch", "bin", "trash", "discard", "dump",
                          "toss", "nuke", "chuck", "obliterate", "scratch", "scrap",
                          "nix"})
# Removing verbs that take back what was just said ("scratch that", "strike that", "scrap
# that"), so their "that" asks without "from your memory" ("scratch my back" names no
# such thing).
RETRACT_VERBS = frozenset({"scratch", "strike", "scrap", "nix"})
# Verbs that remove only with a particle ("throw out", "take X off your list", "cross
# off", "get X out of your head", "leave / keep X out of your notes"); "down" writes down
# ("take down my address").
PARTICLE_VERBS = frozenset({"throw", "take", "cross", "rub", "blot", "cut", "get", "knock",
                            "leave", "keep"})
REMOVE_PARTICLES = frozenset({"out", "away", "off", "outta"})
KEEP_VERBS = frozenset({"remember", "keep", "store", "save", "record", "note", "memorize",
                        "memorise", "retain", "log"})
# Keeping said with a particle: "hold on to", "hang onto", "write / jot / take down".
KEEP_PARTICLES = {"hold": frozenset({"on", "onto"}), "hang": frozenset({"on", "onto"}),
                  "write": frozenset({"down"}), "jot": frozenset({"down"}),
                  "take": frozenset({"down"}), "put": frozenset({"down"})}
SAY_VERBS = frozenset({"tell", "say", "share", "mention", "give", "write", "type"})
KNOW_VERBS = frozenset({"know", "have", "learn", "hear", "remember"})
# Heads that negate a keeping verb under them ("please stop remembering my address").
STOP_VERBS = frozenset({"stop", "quit", "cease"})
# Heads under which the speaker's "I never said that" takes it back.
UNSAY_HEADS = frozenset({"pretend", "act", "imagine"})
# Heads under which the speaker's saying is regretted: "I regret telling you about my
# debt", "I wish I hadn't mentioned my ex".
REGRET_HEADS = frozenset({"regret", "wish"})
# Heads of a wish that something not be in the assistant's memory ("I don't want that
# in your notes").
WANT_HEADS = frozenset({"want", "need"})
# Nouns that name a turn of the chat: "delete my last message" refers back.
MESSAGE_NOUNS = frozenset({"message", "msg", "text", "comment", "post", "reply", "answer"})
# Where the assistant keeps things: "from your memory / notes / list", "out of your
# head"; the first set also without "your" ("off the record"), the rest only with it
# ("from the mailing list" is somewhere else).
MEMORY_WORDS = frozenset({"memory", "memories", "record", "records", "note", "notes",
                          "mind"})
YOUR_MEMORY_WORDS = MEMORY_WORDS | frozenset({
    "database", "file", "files", "list", "lists", "head", "brain", "system", "log", "logs",
    "knowledge", "profile", "storage", "data", "bank", "archive", "archives", "history"})
# The screen before parsing a turn for a request (:func:`may_ask_to_forget`): a word
# starting like a verb of the classes above, or a keeping/telling verb with a negation.
_FORGET_STEMS = ("forg", "eras", "scratch", "unlearn", "disregard", "delet", "remov", "wip",
                 "clear", "purg", "ignor", "pretend", "expung", "scrub", "strik", "struck",
                 "drop", "ditch", "bin", "trash", "discard", "dump", "toss", "nuk", "chuck",
                 "obliterat", "rid", "scrap", "nix", "regret", "gone")
_NEGATIONS = frozenset({"not", "never", "no", "dont", "shouldnt", "wouldnt", "cannot",
                        "stop", "quit", "cease", "bother", "need"})
# Words a request is read by, for typos of them (:mod:`.respelling`): "delte", "adress".
REQUEST_VOCABULARY = frozenset({
    *FORGET_VERBS, *REMOVE_VERBS, *KEEP_VERBS, "please", "everything", "anything",
    "about", "information", "details", "address", "number", "phone", "password",
    "passport", "salary", "birthday", "diagnosis", "medical", "memory", "shouldn't",
    "mentioned", "told", "said", "forgetting", "deleting", "removing", "remembering"})


def may_ask_to_forget(text: str) -> bool:
    """False when ``text`` cannot hold a request to forget (no verb of
    ``FORGET_VERBS``/``REMOVE_VERBS`` in any form, no removing particle, and no negated
    keeping or telling): most turns are not parsed for one."""
    words = text.lower().replace("\u2019", "'").split()
    bare = [w.strip("\"'.,!?:;()") for w in words]
    if any(w.startswith(_FORGET_STEMS) or w in REMOVE_PARTICLES for w in bare):
        return True
    return any(w in _NEGATIONS or w.endswith("n't") for w in bare)


ASK_HEADS = frozenset({"want", "like", "need", "ask", "would", "love", "prefer"})
BACK = frozenset({"that", "it", "this", "those", "these"})
EVERYTHING = frozenset({"everything", "all", "anything", "any"})
ABOUT = frozenset({"about", "regarding", "on", "concerning", "of"})
# Participles whose "to" says what a thing is about ("everything relating to my divorce").
RELATING = frozenset({"relate", "relating", "related", "pertain", "pertaining", "connect",
                      "connected", "link", "linked"})
# Nouns that only point at what follows ("the part about", "my medical information").
GENERIC = frozenset({"information", "info", "detail", "details", "stuff", "thing", "data",
                     "part", "bit", "fact", "facts", "record", "records", "mention",
                     "everything", "anything", "all", "memory", "memories", "mentions",
                     "note", "notes", "reference", "references", "entry", "entries",
                     "trace", "traces"})
# Head nouns that only frame what their modifier names ("my visa situation", "my court
# case", "the weed thing", "my drinking problem"): with a modifier, the modifier is the
# target (the facts say "visa", not "situation").
LIGHT_NOUNS = frozenset({"situation", "case", "issue", "issues", "matter", "business",
                         "story", "incident", "episode", "saga", "drama", "problem",
                         "problems", "mess", "trouble", "troubles", "thing", "things",
                         "stuff", "view", "views", "opinion", "opinions", "habit",
                         "history", "status"})
PERSON_NOUNS = (T.KIN | frozenset({"ex", "wife", "husband", "partner", "girlfriend",
                                   "boyfriend", "fiance", "fiancee", "spouse", "crush",
                                   "date", "doctor", "therapist", "stepdad", "stepmum",
                                   "stepmom", "stepfather", "stepmother", "stepbrother",
                                   "stepsister", "landlord", "landlady", "roommate",
                                   "flatmate", "housemate", "coworker", "teacher", "coach",
                                   "mentor", "lawyer", "ex-wife", "ex-husband", "dentist",
                                   "gp", "nurse", "vet", "tutor", "trainer", "client"}))
# Who has things of their own beside the speaker (:attr:`ForgetTarget.others`): people
# and pets ("Sam's dog's name is Rex" is not the speaker's name).
THEIRS = PERSON_NOUNS | T.PETS
# General words that name a topic, and the words its facts use.
_MEDICAL = frozenset({
    "medical", "health", "condition", "diagnosis", "diagnose", "diagnosed", "illness", "disease",
    "disorder", "diabetes", "diabetic", "insulin", "asthma", "asthmatic", "cancer", "chemo",
    "chemotherapy", "depression", "depressed", "anxiety", "adhd", "autism", "autistic", "bipolar",
    "epilepsy", "migraine", "migraines", "allergy", "allergic", "medication", "medications",
    "medicine", "pill", "pills", "prescription", "prescribed", "dose", "surgery", "therapy",
    "symptom", "symptoms", "pregnant", "pregnancy", "hiv", "std", "infection", "arthritis", "ibs",
    "crohn", "ptsd", "ocd", "insomnia", "blood", "cholesterol", "antidepressant",
    "antidepressants", "sertraline", "metformin", "inhaler",
    # common long-term conditions by name (the forms facts say: "has Parkinson's")
    "dementia", "alzheimer", "parkinson", "eczema", "psoriasis", "stroke", "sclerosis",
    "lupus", "copd", "angina", "hypertension", "thyroid", "hypothyroidism", "anaemia", "anemia",
    "endometriosis", "pcos", "fibromyalgia", "gout", "glaucoma", "tumour", "tumor",
    "leukaemia", "leukemia", "lymphoma", "hepatitis", "tinnitus", "coeliac", "celiac",
    "schizophrenia", "anorexia", "bulimia", "dyslexia", "osteoporosis", "osteoarthritis",
    "sciatica", "apnoea", "apnea", "miscarriage", "concussion", "addiction", "alcoholism"})
_BREAKUP = frozenset({"ex", "breakup", "broke", "split", "divorce", "divorced",
                      "separated", "dumped", "heartbreak"})
# A topic's words say the speaker's state, not a profession or a workplace ("my medical
# info" is not "Sam is a doctor", "my finances" not "Sam works at a bank").
_MONEY = frozenset({"salary", "debt", "debts", "loan", "loans", "mortgage", "income",
                    "iban", "savings", "finances", "overdraft", "owe", "owes", "owed",
                    "bankrupt", "bankruptcy", "earn", "earns", "earned"})
_BANKING = frozenset({"account", "iban", "sort", "routing", "card", "overdraft", "pin"})
_IDENTITY = frozenset({"passport", "ssn", "social", "security", "insurance", "licence",
                       "license", "national", "id", "identity"})
# The speaker's trouble with the law (not its professions: "my sister is a lawyer").
_LEGAL = frozenset({"legal", "lawsuit", "lawsuits", "sue", "sued", "suing", "court",
                    "trial", "arrest", "arrested", "charged", "charges", "convicted",
                    "conviction", "probation", "parole", "jail", "prison", "bail", "dui",
                    "dwi", "offence", "offense", "custody", "fined"})
_RELIGION = frozenset({"religion", "religious", "faith", "belief", "beliefs", "god",
                       "church", "catholic", "protestant", "christian", "muslim", "islam",
                       "jewish", "judaism", "hindu", "buddhist", "sikh", "atheist",
                       "agnostic", "mosque", "synagogue", "temple", "pray", "prayer",
                       "bible", "quran"})
_IMMIGRATION = frozenset({"visa", "immigration", "immigrant", "undocumented", "asylum",
                          "deported", "deportation", "residency", "overstayed", "refugee",
                          "citizenship"})
_ADDICTION = frozenset({"drug", "drugs", "addiction", "addicted", "addict", "cocaine",
                        "heroin", "meth", "cannabis", "weed", "marijuana", "opioid",
                        "opioids", "overdose", "overdosed", "rehab", "relapse", "relapsed",
                        "alcoholic", "alcoholism", "sober", "sobriety", "gambling"})
_POLITICS = frozenset({"political", "politics", "voted", "voting", "voter",
                       "election", "labour", "conservative", "conservatives", "tory",
                       "tories", "democrat", "democrats", "republican", "republicans",
                       "socialist", "communist", "brexit", "leftist", "right-wing",
                       "left-wing"})
_SEXUALITY = frozenset({"sexuality", "orientation", "gay", "lesbian", "bisexual", "bi",
                        "queer", "trans", "transgender", "asexual", "closeted", "pansexual"})
TOPICS: dict[str, frozenset[str]] = {
    "medical": _MEDICAL, "health": _MEDICAL, "condition": _MEDICAL, "diagnosis": _MEDICAL,
    "illness": _MEDICAL, "medication": _MEDICAL, "breakup": _BREAKUP,
    "relationship": _BREAKUP, "divorce": _BREAKUP, "financial": _MONEY, "finance": _MONEY,
    "money": _MONEY, "bank": _BANKING, "banking": _BANKING, "identity": _IDENTITY,
    "id": _IDENTITY,
    "legal": _LEGAL, "lawsuit": _LEGAL, "court": _LEGAL, "arrest": _LEGAL,
    "criminal": _LEGAL, "conviction": _LEGAL, "religion": _RELIGION,
    "religious": _RELIGION, "faith": _RELIGION, "belief": _RELIGION,
    "visa": _IMMIGRATION, "immigration": _IMMIGRATION, "asylum": _IMMIGRATION,
    "residency": _IMMIGRATION, "sexuality": _SEXUALITY, "orientation": _SEXUALITY,
    "drug": _ADDICTION, "drugs": _ADDICTION, "addiction": _ADDICTION,
    "substance": _ADDICTION, "political": _POLITICS, "politics": _POLITICS,
    "vote": _POLITICS, "voting": _POLITICS,
}
# Topic words with an everyday sense besides the topic's: they name the topic only beside
# a companion in the same memory ("broke up", never "broke Sam's wrist"; "owes 2k", never
# "owes a favour"; "bank card", never "birthday card"). AMOUNT: any word with a digit.
_ABOUT_MONEY = frozenset({AMOUNT, "debt", "debts", "loan", "loans", "money", "bank", "rent",
                          "mortgage", "pounds", "dollars", "euros", "grand"})
_LEGAL_SENSE = frozenset({"court", "trial", "charged", "charges", "arrested", "police",
                          "judge", "jury", "lawyer", "solicitor", "case", "hearing", "guilty",
                          "sued", "lawsuit", "prison", "jail", "sentence", "sentenced"})
_VOTING = frozenset({"vote", "voted", "voting", "voter", "party", "election", "mp", "member"})
_BANK = frozenset({"bank", "banking", "credit", "debit", "number", "iban", "pin", "savings",
                   "current", "overdraft", "code"})
TOPIC_COMPANIONS: dict[str, frozenset[str]] = {
    "broke": frozenset({"up"}), "split": frozenset({"up"}),
    "owe": _ABOUT_MONEY, "owes": _ABOUT_MONEY, "owed": _ABOUT_MONEY,
    "earn": _ABOUT_MONEY, "earns": _ABOUT_MONEY, "earned": _ABOUT_MONEY,
    "court": _LEGAL_SENSE - {"court"}, "trial": _LEGAL_SENSE - {"trial"},
    "charged": _LEGAL_SENSE - {"charged"} | {"with"}, "charges": _LEGAL_SENSE - {"charges"},
    "sentence": _LEGAL_SENSE - {"sentence"}, "case": _LEGAL_SENSE - {"case"},
    "labour": _VOTING, "conservative": _VOTING, "conservatives": _VOTING,
    "card": _BANK, "account": _BANK, "sort": frozenset({"code"}),
    "god": frozenset({"believe", "believes", "pray", "prays", "faith", "church", "religion"}),
    "blood": frozenset({"type", "pressure", "test", "tests", "sugar", "clot", "transfusion"}),
}

# What dismisses an offer in the same or the next sentence ("forget it, it doesn't
# matter", "never mind", "no worries").
_DISMISS_NEG = frozenset({"matter", "worry", "need", "bother", "important"})


# Words a fact uses for a value the target names by a noun ("my salary": "Sam earns
# 48,000"; "my date of birth": "Sam was born in 1990"); any of them stands for the noun.
_EARN = frozenset({"earn", "earns", "earned", "earning", "income", "paid", "wage", "wages",
                   "salary", "salaries", "compensation"})
# Where one lives: an address only beside a house number (:attr:`ForgetTarget.numbered`).
DWELLING = frozenset(
    {f"s {mod}{noun} is {prep}" for mod in ("", "new ", "current ", "rented ")
     for noun in ("flat", "house", "apartment", "home", "place") for prep in ("at", "on")}
    | {f"{adverb}{verb}" for adverb in ("", "just ", "recently ", "now ")
       for verb in ("moved into", "moved to", "lives at", "is moving to", "is moving into",
                    "has moved into", "has moved to")})
# Words that say a value only beside a number ("Sam makes 61,000 a year", never "Sam
# makes pottery"): :attr:`ForgetTarget.numbered`.
_MAKE = frozenset(f"{adverb}{verb}{about}" for adverb in ("", "now ", "currently ", "also ")
                  for verb in ("makes", "made", "brings home", "takes home")
                  for about in ("", " about", " around", " roughly"))
SAID_WITH_NUMBER: dict[str, frozenset[str]] = {
    "salary": _MAKE, "income": _MAKE, "wage": _MAKE, "pay": _MAKE, "compensation": _MAKE,
}
_WEIGH = frozenset({"weight", "weigh", "weighs", "weighed", "weighing"})
_OWE = frozenset({"debt", "debts", "owe", "owes", "owed", "owing", "indebted"})
SAID_AS: dict[str, frozenset[str]] = {
    "salary": _EARN, "income": _EARN, "wage": _EARN, "pay": _EARN,
    "birthday": frozenset({"birthday", "birth", "born"}),
    "birth": frozenset({"birthday", "birth", "born"}),
    "email": frozenset({"email", "mail"}), "e-mail": frozenset({"email", "mail"}),
    "compensation": _EARN, "weight": _WEIGH, "height": frozenset({"height", "tall"}),
    "debt": _OWE,
    "wedding": frozenset({"wedding", "married", "marry", "marries", "marrying"}),
}


def _forms(tok: Token) -> frozenset[str]:
    lemma, lower = tok.lemma_.lower(), tok.lower_
    stem = lemma[:-1] if lemma.endswith(("y", "e")) else lemma
    # Memories keep the words as said: "arrest" -> "arrested", "allergy" -> "allergic".
    derived = {lemma + "ed", lemma + "d", stem + "ing", stem + "ic", stem + "ies",
               stem + "ied"} if len(lemma) > 3 and tok.pos_ in ("NOUN", "VERB") else set()
    if tok.pos_ == "NOUN" and len(lemma) > 5:
        # "pregnancy" -> "pregnant", "bankruptcy" -> "bankrupt", "addiction" -> "addicted",
        # "deportation" -> "deported"
        if lemma.endswith("cy"):
            derived.add(lemma[:-2] if lemma.endswith("tcy") else lemma[:-2] + "t")
        if lemma.endswith("ation"):
            derived.add(lemma[:-5] + "ed")
        elif lemma.endswith("tion"):
            derived.add(lemma[:-3] + "ed")
    return frozenset({lemma, lower, lemma + "s", lower.rstrip("s") or lower, *derived,
                      *SAID_AS.get(lemma, ())})


def _attribute(noun: Token) -> str | None:
    """The frame attribute a target noun names ("home address" -> contact:address), a
    contact qualified as the facts qualify it ("my personal email" ->
    contact:email:personal, never the work one); numbers and ids of something else
    ("passport number") name none."""
    attribute = _named_attribute(noun)
    if attribute in ("contact:email", "contact:phone") and qualifier(noun):
        return f"{attribute}:{qualifier(noun)}"
    return attribute


def _named_attribute(noun: Token) -> str | None:
    """The frame attribute a target noun names, unqualified."""
    lemma = noun.lemma_.lower()
    # "my old / new number" is still the phone number: which one is for the match
    mods = {c.lemma_.lower() for c in noun.children if c.dep_ in ("amod", "compound")
            and c.lower_ not in FORMER | {"new", "current"}}
    if lemma in ("address", "number", "id") and mods & T.CONTACT_COMPOUNDS.keys():
        return T.CONTACT_COMPOUNDS[sorted(mods & T.CONTACT_COMPOUNDS.keys())[0]]
    if lemma == "number" and mods & PHONE_NUMBER_MODS:
        return "contact:phone"  # "my contact number", "my home number"
    if lemma in ("number", "id") and mods:
        return None
    if lemma in NAME_NOUNS and any(c.dep_ in ("compound", "nmod") and c.pos_ in ("NOUN", "PROPN")
                                   for c in noun.children):
        return None  # "the company name", "the school name": a thing's, not the speaker's
    if lemma in T.KIN or lemma in ("ex",):
        return None
    return T.NOUN_FRAMES.get(lemma) or T.CONTACT_COMPOUNDS.get(lemma)  # "the landline"


# Contact words that name the phone facts say without a qualifier ("my mobile number" is
# not the home number): :attr:`ForgetTarget.plain`.
PLAIN_CONTACTS = frozenset({"mobile", "cell", "cellphone"})


def _plain(noun: Token, attribute: str | None) -> bool:
    """``noun`` names the unqualified contact ("my mobile", "my cell number")."""
    said = {noun.lower_, *(c.lower_ for c in noun.children if c.dep_ in ("amod", "compound"))}
    return attribute == "contact:phone" and bool(said & PLAIN_CONTACTS)


# What makes "number" a phone number besides "phone" ("contact number", "work number").
PHONE_NUMBER_MODS = frozenset({"contact", "cell", "telephone", "tel", "home", "work",
                               "landline", "personal", "private"})


# "N of X" where N is a value of X ("the name of my therapist", "date of birth").
OF_VALUES = frozenset({"name", "number", "address", "date", "details", "detail", "age",
                       "birthday", "email", "phone", "figure", "amount", "sum", "total"})
_OF_FRAMES = {"birth": "birthday"}


def _of_object(noun: Token) -> Token | None:
    """X of "the N of X" when N is a value of X (:data:`OF_VALUES`) or a general word."""
    if noun.lemma_.lower() not in OF_VALUES | GENERIC:
        return None
    for prep in noun.children:
        if prep.dep_ == "prep" and prep.lower_ == "of":
            return next((c for c in prep.children if c.dep_ == "pobj"), None)
    return None


def _names_nothing(noun: Token) -> bool:
    """A pronoun, or a word naming nothing alone ("my medical stuff" names something,
    "stuff" alone does not)."""
    described = any(c.dep_ in ("amod", "compound") for c in noun.children)
    return noun.lower_ in BACK or (noun.lower_ in T.NO_VALUE - EVERYTHING and not described)


def _of_target(noun: Token, of: Token) -> ForgetTarget | None:
    """"date of birth": an attribute of the speaker; "the name of my therapist" names the
    therapist, not the speaker's name."""
    if of.lemma_.lower() in _OF_FRAMES:
        return ForgetTarget(phrase=noun.doc[noun.left_edge.i:of.i + 1].text,
                            attribute=_OF_FRAMES[of.lemma_.lower()],
                            words=(_forms(of),), mine=True, others=THEIRS)
    return _target(of)


def _content_words(noun: Token, parts: Sequence[Token]) -> list[Token]:
    """The words of the phrase that say what it names."""
    content = [t for t in (*parts, noun) if t.lemma_.lower() not in GENERIC
               and t.pos_ in ("NOUN", "PROPN", "ADJ", "NUM", "VERB")]
    if len(content) > 1 and noun in content and noun.lemma_.lower() in LIGHT_NOUNS:
        content.remove(noun)  # "my visa situation" is the visa
    return content


# Compounds of "ex" that still name an ex ("my ex" is "Sam's ex-wife Jo", never "Sam's
# ex-boss Terry"): :attr:`ForgetTarget.compounds`.
EX_PARTNERS = frozenset(f"ex-{p}" for p in (
    "wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee", "spouse",
    "gf", "bf"))


def _compounds(noun: Token, content: Sequence[Token]) -> frozenset[str]:
    """The hyphenated compounds that still say the target ("ex-wife" for "my ex"; those
    of its own phrase, "my mother-in-law")."""
    text = noun.doc.text.lower()
    said: set[str] = set()
    for t in (noun, *content):
        start = text.rfind(" ", 0, t.idx) + 1
        end = text.find(" ", t.idx)
        word = text[start:end if end >= 0 else len(text)].strip(".,!?;:'\"()")
        if "-" in word.strip("-"):
            said.add(word)
    if any(t.lower_ == "ex" for t in content):
        said |= EX_PARTNERS
    return frozenset(said)


FORMER = frozenset({"old", "former", "previous"})


def _former_value(noun: Token, attribute: str | None) -> bool:
    """"my old address", "my previous number": a value of an attribute replaced since."""
    return attribute is not None and any(
        c.dep_ in ("amod", "compound") and c.lower_ in FORMER for c in noun.children)


def _former(noun: Token) -> ForgetTarget | None:
    """"the old one" standing for a value the turn names ("I changed numbers. Forget the
    old one, my new number is ..."): that attribute's replaced versions only
    (:attr:`ForgetTarget.former`); None when it is no such "one" or the turn names no
    value it could stand for."""
    mods = {c.lemma_.lower() for c in noun.children if c.dep_ in ("amod", "compound")}
    if noun.lower_ != "one" or not mods or not mods <= FORMER:
        return None
    said = [t for t in noun.doc if t.i != noun.i and t.pos_ == "NOUN"
            and _named_attribute(t) is not None]
    if not said:
        return None
    stands_for = min(said, key=lambda t: abs(t.i - noun.i))
    return ForgetTarget(phrase=_phrase(noun), attribute=_named_attribute(stands_for),
                        words=(_forms(stands_for),), others=THEIRS, former=True)


def _compound_tail(noun: Token) -> Token | None:
    """The last word of a hyphenated compound ``noun`` opens ("boss" of "ex-boss", "law"
    of "mother-in-law"), or None."""
    doc, i = noun.doc, noun.i
    last = None
    while i + 2 < len(doc) and doc[i + 1].text == "-" and not doc[i].whitespace_ \
            and not doc[i + 1].whitespace_:
        i += 2
        last = doc[i]
    return last


def _phrase(noun: Token) -> str:
    """The noun with its possessor, determiner and modifiers before it."""
    first = min([noun.i, *(c.i for c in noun.children if c.dep_ in ("poss", "det", "amod",
                                                                     "compound"))])
    return noun.doc[first:noun.i + 1].text


def _owned_target(noun: Token, owner: Token, content: Sequence[Token],
                  related: set[str]) -> ForgetTarget:
    """"my ex's phone number" is the ex's, never the speaker's: named by the owner and a
    word that says what value it is ("number" or "phone": a fact may say either), never
    the owner alone ("Kofi's number" is not "Kofi got engaged"). It is a value of a
    person, not the person: the person's other facts stay."""
    phrase = _phrase(noun)
    values = [t for t in content if t.lemma_.lower() in OF_VALUES | VALUE_NOUNS]
    if noun in values:  # "Olga's home address": any word of the value says it
        values = [t for t in content if t.i == noun.i or t.dep_ == "compound"]
    if values and all(t.lemma_.lower() in NAME_NOUNS for t in values):
        # "my ex's name" is said by the name itself ("my ex Daniel"), wherever it is
        return ForgetTarget(phrase=phrase, words=(_forms(owner),), related=frozenset(related),
                            owner=_forms(owner), compounds=_compounds(noun, [owner]),
                            person=owner.pos_ == "PROPN"
                            or owner.lemma_.lower() in PERSON_NOUNS, mine=False)
    value = frozenset().union(*(_forms(t) for t in values))
    words = (_forms(owner), *((value,) if value else ()),
             *(_forms(t) for t in content if t not in values))
    return ForgetTarget(phrase=phrase, attribute=_attribute(noun), words=words,
                        related=frozenset(related), owner=_forms(owner),
                        compounds=_compounds(noun, [owner, *content]), mine=False)


def _own_target(noun: Token, content: Sequence[Token], related: set[str]) -> ForgetTarget:
    """The target of a phrase with no owner but (perhaps) the speaker."""
    mine = any(c.dep_ == "poss" and c.lower_ in ("my", "mine") for c in noun.children)
    attribute = _attribute(noun)
    numbered = DWELLING if attribute == "contact:address" else SAID_WITH_NUMBER.get(
        noun.lemma_.lower(), frozenset())
    return ForgetTarget(phrase=_phrase(noun), attribute=attribute,
                        plain=_plain(noun, attribute), former=_former_value(noun, attribute),
                        words=tuple(_forms(t) for t in content), numbered=numbered,
                        # "the Lena stuff" is about Lena, whoever's people she is
                        others=frozenset() if any(t.pos_ == "PROPN" for t in content)
                        else THEIRS, compounds=_compounds(noun, content),
                        related=frozenset(related),
                        person=noun.pos_ == "PROPN" or noun.lemma_.lower() in PERSON_NOUNS,
                        mine=mine or noun.pos_ != "PROPN",
                        message=noun.lemma_.lower() in MESSAGE_NOUNS)


def _target(noun: Token) -> ForgetTarget | None:
    """The target a noun phrase names, or None (a pronoun or a word naming nothing)."""
    if _names_nothing(noun):
        return None
    if noun.pos_ in ("VERB", "AUX"):  # a free relative "about" took (:func:`_about_clause`)
        return _clause_target(noun)
    if _last_said(noun):  # "that last part": a back-reference (:attr:`ForgetTarget.message`)
        return ForgetTarget(phrase=_phrase(noun), message=True)
    former = _former(noun)
    if former is not None:
        return former
    of = _of_object(noun)
    if of is not None and of.lower_ not in BACK:
        return _of_target(noun, of)
    return _noun_target(noun)


def _noun_target(noun: Token) -> ForgetTarget | None:
    """The target a plain noun phrase names, by its words and topics, or None (it says
    neither)."""
    parts = [c for c in noun.children if c.dep_ in ("compound", "amod", "nmod", "nummod")]
    content = _content_words(noun, parts)
    tail = _compound_tail(noun)
    if tail is not None and tail not in content:
        content.append(tail)  # "my ex-boss" is a boss: the memory must say both
    related = _related_topics((*parts, noun))
    if not content and not related:
        return None
    owner = next((c for c in noun.children if c.dep_ == "poss" and c.pos_ in ("NOUN", "PROPN")),
                 None)
    target = (_owned_target(noun, owner, content, related) if owner is not None
              else _own_target(noun, content, related))
    weak = tuple((w, TOPIC_COMPANIONS[w]) for w in sorted(related) if w in TOPIC_COMPANIONS)
    return replace(target, companions=weak) if weak else target


def _related_topics(tokens: Sequence[Token]) -> set[str]:
    """The topic words (:data:`TOPICS`) the ``tokens`` stand for, by lemma or form."""
    related: set[str] = set()
    for t in tokens:
        related |= TOPICS.get(t.lemma_.lower(), TOPICS.get(t.lower_, frozenset()))
    return related


# Nouns of a speaker owning up beside a request ("delete it, my mistake").
APOLOGIES = frozenset({"bad", "mistake", "fault", "error", "apology", "apologies", "blunder"})


def _negated_beside(tok: Token) -> bool:
    """"my address, not the postcode": a thing set beside the target by "not" is kept."""
    before = tok.doc[tok.left_edge.i - 1] if tok.left_edge.i > 0 else None
    return (before is not None and before.lower_ == "not") or any(
        c.dep_ == "neg" for c in tok.children)


def _targets(noun: Token) -> list[ForgetTarget]:
    """``noun``, its conjuncts ("my address and my phone number") and the names set
    beside it ("my cousin Mark") as targets."""
    out = []
    # a conjunct or apposition names a thing only as a noun that is no apology
    # ("..., my bad", "..., my mistake" name none)
    for tok in (noun, *(c for c in noun.subtree if c.dep_ in ("conj", "appos")
                        and c.head.i != c.i and c.pos_ in ("NOUN", "PROPN")
                        and c.lemma_.lower() not in APOLOGIES and not _negated_beside(c))):
        target = _target(tok)
        if target is not None:
            out.append(target)
    return out


def _about_preps(tok: Token) -> list[Token]:
    """The "about" prepositions under ``tok`` or its adverb, not a fronted "on" or "of"
    ("On second thought, forget about my ex")."""
    preps = [*tok.children, *(p for c in tok.children if c.dep_ == "advmod"
                               for p in c.children)]
    # "everything relating / related / pertaining to my divorce": its "to" is an "about"
    relating = [p for c in tok.children if c.dep_ in ("acl", "amod")
                and c.lemma_.lower() in RELATING for p in c.children
                if p.dep_ == "prep" and p.lower_ == "to"]
    return [p for p in preps if p.dep_ == "prep" and p.lower_ in ABOUT
            and not (p.i < tok.i and p.lower_ in ("on", "of"))] + relating


def _about_pobj(prep: Token) -> Token | None:
    """The preposition's object: not "what" the parser may hang there ("what I told you
    about the lawsuit"), nor where it is kept ("keep the bankruptcy thing on file")."""
    return next((c for c in prep.children if c.dep_ == "pobj" and c.lower_ != "what"
                 and not (prep.lower_ != "about" and _kept_in(c))), None)


def _about_telling(tok: Token, prep: Token) -> Token | None:
    """"forget about me telling you about my debt": the telling (not ``tok`` itself)."""
    told = next((c for c in prep.children if c.dep_ == "pcomp"
                 and c.lemma_.lower() in SAY_VERBS), None)
    return told if told is not None and told.i != tok.i else None


def _about_clause(prep: Token) -> Token | None:
    """A free relative "about" takes ("about what my therapist thinks", "about how much
    my rent is"), not one of the speaker's own saying ("about what I told you")."""
    clause = next((c for c in prep.children if c.dep_ == "pcomp"
                   and c.pos_ in ("VERB", "AUX")), None)
    if clause is None or clause.lemma_.lower() in SAY_VERBS:
        return None
    wh = any(t.lower_ in _WH and t.i < clause.i for t in clause.subtree)
    # it must name something beside its verb ("what happened" names nothing)
    named = any(c.dep_ in ("nsubj", "nsubjpass", "dobj", "attr") and c.pos_ in ("NOUN", "PROPN")
                for c in clause.children)
    return clause if wh and named else None


def _about(tok: Token) -> Token | None:
    """The object of "about" under ``tok`` ("everything about my ex"), or under its
    adverb ("what I said earlier about my mortgage"): the first such preposition with an
    object or a telling decides."""
    for prep in _about_preps(tok):
        pobj = _about_pobj(prep)
        if pobj is not None:
            return pobj
        clause = _about_clause(prep)
        if clause is not None:  # "the thing about what my therapist thinks"
            return clause
        told = _about_telling(tok, prep)
        if told is not None:  # what the telling was about
            return _about(told) or next((o for o in told.children if o.dep_ in (
                "dobj", "obj") and o.lower_ not in BACK | _WH | {"you", "u"}), None)
    return None


def _kept_in(place: Token) -> bool:
    """``place`` is where the assistant keeps things ("on file", "on record", "in your
    notes"), not a topic ("my medical history")."""
    owner = next((c.lower_ for c in place.children if c.dep_ == "poss"), None)
    lemma = place.lemma_.lower()
    return (owner == "your" and lemma in YOUR_MEMORY_WORDS) or (
        owner is None and lemma in MEMORY_WORDS | {"file"})


def _about_said(tok: Token) -> Token | None:
    """The object of "about" under ``tok`` or under a clause on it that says or knows
    ("everything I said about Lisa", "everything you know about my brother")."""
    found = _about(tok)
    if found is not None:
        return found
    for c in tok.children:
        if c.dep_ in ("relcl", "acl", "ccomp") and c.lemma_.lower() in SAY_VERBS | KNOW_VERBS:
            found = _about(c)
            if found is not None:
                return found
            # "the part where I mentioned my rehab", "the thing I said my son did"
            if c.lemma_.lower() in SAY_VERBS and tok.lemma_.lower() in GENERIC:
                found = next((o for o in c.children if o.dep_ in ("dobj", "obj")
                              and o.lower_ not in BACK | _WH | {"you", "u"}), None)
                if found is not None:
                    return found
    return None


def _said(tok: Token) -> Token | None:
    """A clause "(what) I said/told you ..." under ``tok``."""
    for c in tok.children:
        if c.dep_ in ("ccomp", "relcl", "acl") and c.lemma_.lower() in SAY_VERBS \
                and any(s.dep_ == "nsubj" and s.lower_ == "i" for s in c.children):
            return c
    return None


def _of_back(tok: Token) -> bool:
    """"all of that": ``tok`` is of a back-reference."""
    return any(p.dep_ == "prep" and p.lower_ == "of" and any(
        c.dep_ == "pobj" and c.lower_ in BACK for c in p.children) for p in tok.children)


def _wanted_declined(verb: Token, negated: bool) -> bool | None:
    """"I don't want my address in your notes": the speaker's own negated want."""
    if verb.lemma_.lower() not in WANT_HEADS:
        return None
    return negated and _wanter(verb)


def _wanter(head: Token) -> bool:
    """The speaker is who wants (or not): "I" as the subject, or no subject at all
    in the present ("don't want that saved": chat drops the "I"; a want is never an
    order to the assistant)."""
    subjects = [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")]
    if subjects:
        return any(c.lower_ == "i" for c in subjects)
    return head.lemma_.lower() in WANT_HEADS and any(
        c.dep_ == "aux" and c.lower_ in ("do", "dont") for c in head.children)


def _known_declined(verb: Token, negated: bool) -> bool | None:
    """"I don't want you to know about my arrest" (:func:`_unwanted`); "I don't want my
    diagnosis stored" (the parser may say "VBD")."""
    if verb.lemma_.lower() in KNOW_VERBS - KEEP_VERBS:
        return True
    if verb.tag_ in ("VBN", "VBD") and verb.dep_ in ("ccomp", "xcomp", "oprd") \
            and not any(c.dep_ in ("aux", "auxpass") for c in verb.children) \
            and _unwanted(verb):
        return True
    return None


def _stopped(verb: Token, negated: bool) -> bool | None:
    """"please stop remembering my address", "don't bother keeping it": as the head is
    addressed; "no need to remember that"."""
    head = verb.head
    head_lemma = head.lemma_.lower()
    head_negated = any(c.dep_ == "neg" for c in head.children)
    if verb.dep_ == "xcomp" and (head_lemma in STOP_VERBS
                                 or (head_lemma == "bother" and head_negated)):
        return _addressed(head)
    if verb.dep_ in ("acl", "relcl") and head_lemma == "need" and any(
            c.lower_ == "no" for c in head.children):
        return True
    return None


def _you_declined(verb: Token, negated: bool) -> bool | None:
    """"I don't want you to remember my address", "I'd rather you didn't remember
    that", "I'd prefer you didn't keep that", "I'd like you not to keep it"."""
    head = verb.head
    head_lemma = head.lemma_.lower()
    you = any(c.dep_ == "nsubj" and c.lower_ == "you" for c in verb.children)
    if verb.dep_ in ("ccomp", "xcomp") and head_lemma in ASK_HEADS and you \
            and any(c.dep_ == "neg" for c in head.children):
        return True
    if negated and you and any(c.lower_ in ("rather", "prefer") for c in verb.children):
        return True
    if negated and verb.dep_ in ("ccomp", "xcomp") and head_lemma in ASK_HEADS | {"rather"} \
            and (you or any(c.dep_ == "dobj" and c.lower_ in ("you", "u")
                            for c in head.children)):
        return True
    return None


# Whether a keeping verb is declined: the first rule that decides (in order).
_DECLINE_RULES: tuple[Callable[[Token, bool], bool | None], ...] = (
    _wanted_declined, _known_declined, _stopped, _you_declined,
)


def _kept_declined(verb: Token, negated: bool) -> bool:
    """A keeping verb the assistant is asked not to do: "don't remember that", "please
    stop remembering my address", "don't bother keeping it", "no need to remember that",
    "I don't want you to remember my address", "I'd rather you didn't keep that"."""
    for rule in _DECLINE_RULES:
        decided = rule(verb, negated)
        if decided is not None:
            return decided
    return negated and _addressed(verb)


def _stated(verb: Token) -> list[ForgetTarget]:
    """What a statement said under ``verb`` gives ("forget that I'm pregnant": pregnant;
    "forget that my son has autism": autism): its complements, not its subject (the
    speaker's son stays)."""
    for c in verb.children:
        if c.dep_ == "ccomp" and c.lemma_.lower() not in SAY_VERBS and c.tag_ != "VBD":
            out: list[ForgetTarget] = []
            for comp in c.children:
                if comp.dep_ in ("acomp", "attr", "dobj", "oprd"):
                    out += _targets(comp)
            if not out and c.tag_ == "VBN" and c.lemma_.lower() not in _LIGHT_VERBS:
                # "forget that Eli was expelled": what happened, not who it happened to
                out = [ForgetTarget(phrase=c.text, words=(_forms(c),), mine=True)]
            if not out:
                out = _said_where(c)
            if not any(s.dep_ in ("nsubj", "nsubjpass") and s.lower_ in ("i", "me")
                       for s in c.children):
                # "that my son has autism": said of one of the speaker's people, whose
                # memory it is ("Sam's son has autism")
                out = [replace(t, others=frozenset()) for t in out]
            return out
    return []


def _said_where(clause: Token) -> list[ForgetTarget]:
    """"forget that I go to therapy", "that I live in Leeds": the first thing the
    speaker's clause goes to or is in, as a thing of the speaker's own (never a time:
    "on Mondays")."""
    if not any(s.dep_ == "nsubj" and s.lower_ == "i" for s in clause.children):
        return []
    for prep in (c for c in clause.children if c.dep_ == "prep"):
        place = next((o for o in prep.children if o.dep_ == "pobj"
                      and o.pos_ in ("NOUN", "PROPN") and o.lemma_.lower() not in _TIMES
                      and o.ent_type_ not in ("DATE", "TIME")), None)
        if place is not None:
            return [ForgetTarget(phrase=clause.doc[clause.i:place.i + 1].text,
                                 words=(_forms(place),), mine=True, others=THEIRS)]
    return []


def _container(prep: Token) -> Token | None:
    """What ``prep`` takes something out of: "from your notes", "off the list", "out of
    your head" (the object of "of" under "out")."""
    if prep.lower_ not in ("from", "off", "out", "outta"):
        return None
    pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
    if pobj is None and prep.lower_ == "out":
        of = next((c for c in prep.children if c.dep_ == "prep" and c.lower_ == "of"), None)
        pobj = next((c for c in of.children if c.dep_ == "pobj"), None) if of else None
    return pobj


def _source(verb: Token, obj: Token | None = None) -> str | None:
    """Where the request takes its object out of: ``"memory"`` (the assistant's: "from
    your memory", "off your list", "off the record", "from you"), ``"elsewhere"`` (a
    thing in the world: "from the mailing list", "from my calendar"), None: unsaid.
    Read on the verb and on its object (the parser hangs "from ..." on either)."""
    found = None
    for head in (verb, obj):
        if head is None:
            continue
        for prep in head.children:
            if prep.dep_ != "prep":
                continue
            place = _container(prep)
            if place is None:
                continue
            owner = next((c.lower_ for c in place.children if c.dep_ == "poss"), None)
            # with its compounds: "your memory please" is parsed with "please" as the noun
            lemmas = {place.lemma_.lower(), *(c.lemma_.lower() for c in place.children
                                              if c.dep_ == "compound")}
            if place.lower_ in ("you", "yourself", "u") or (
                    owner == "your" and lemmas & YOUR_MEMORY_WORDS) or (
                    owner is None and lemmas & MEMORY_WORDS):
                return "memory"
            found = "elsewhere"
    return found


def _from_memory(verb: Token) -> bool:
    """"... from your memory / records / notes"."""
    return _source(verb) == "memory"


# A noun's modifiers that make it one thing among others in the world ("my last email",
# "my new phone"), not what is known of the speaker.
INSTANCE_MODS = frozenset({"last", "latest", "recent", "previous", "next", "new", "old",
                           "first", "second", "third", "other", "spare", "current"})
# What is known of a person by a value ("my address", "my passport number", "my PIN").
VALUE_NOUNS = frozenset({
    "name", "surname", "nickname", "age", "birthday", "birthdate", "dob", "phone",
    "number", "mobile", "address", "postcode", "zipcode", "job", "occupation",
    "profession", "employer", "workplace", "salary", "income", "wage", "wages", "diet",
    "medication", "medications", "dose", "password", "passcode", "pin", "passport", "ssn",
    "iban", "pronouns", "weight", "height", "religion", "sexuality", "orientation",
    "landline"})
NAME_NOUNS = frozenset({"name", "surname", "nickname"})
# Values only with a word saying of what ("door code", "account id"): alone they are
# code or a document.
NAMED_VALUE_NOUNS = frozenset({"code", "id", "combination", "login", "username"})
INFO_NOUNS = frozenset({"information", "info", "details", "detail", "facts", "fact"})
# "email" alone is as often a message as an address: no value alone.
_MESSAGE_OR_VALUE = frozenset({"email", "e-mail", "mail"})


def _kept_of(noun: Token, of: Token) -> bool:
    """"my date of birth"; "the name of my psychiatrist": a value of someone or something
    of the speaker's."""
    if of.lemma_.lower() in _OF_FRAMES:
        return _mine(noun)
    return _mine(of) and (noun.lemma_.lower() in VALUE_NOUNS or _kept_thing(of))


def _speakers(noun: Token, owner: Token) -> bool:
    """The speaker's, or a named person's value; not "my ex's phone number" or "Kofi's
    number" (a value of a person)."""
    named = owner.pos_ == "PROPN" and noun.lemma_.lower() in VALUE_NOUNS
    return owner.lower_ in ("my", "mine") or named or (
        owner.lemma_.lower() in PERSON_NOUNS and _mine(owner))


def _placed(noun: Token) -> bool:
    """"my email to Tom", "my address in the form": a thing somewhere."""
    return any(c.dep_ in ("relcl", "acl") or (c.dep_ == "prep" and c.lower_ not in ABOUT)
               for c in noun.children)


def _known_kind(noun: Token) -> bool:
    """The word (with its modifiers) names a kind of thing known of someone, not one
    instance ("my last name" is, "my first car" is not)."""
    lemma = noun.lemma_.lower()
    mods = {c.lemma_.lower() for c in noun.children
            if c.dep_ in ("amod", "compound", "nummod", "nmod")}
    kinds = {"first", "last", "middle"} if lemma == "name" else set()  # "my last name"
    if lemma in VALUE_NOUNS and (mods - kinds) & INSTANCE_MODS and (
            mods - kinds) & INSTANCE_MODS <= FORMER:
        return True  # "my old number": a value replaced since (:attr:`ForgetTarget.former`)
    if (mods - kinds) & INSTANCE_MODS or any(c.dep_ == "nummod" for c in noun.children):
        return False
    if lemma in _MESSAGE_OR_VALUE:
        return False
    if lemma in VALUE_NOUNS or lemma in INFO_NOUNS or lemma in TOPICS:
        return True
    if lemma in NAMED_VALUE_NOUNS:
        return bool(mods)
    # "my medical stuff / history": a general word of a topic
    # "my legal trouble", "my money problems": a light head noun of a topic
    return (lemma in GENERIC | LIGHT_NOUNS) and bool(mods & TOPICS.keys())


def _kept_thing(noun: Token) -> bool:
    """``noun`` names something known of the speaker ("my address", "my allergy info",
    "my medical stuff", "my diagnosis", "my ex's phone number", "the name of my
    therapist"), not a thing in the world ("my last email to Tom", "my bank account",
    "my shoes", "my schedule"): the object a removing verb must have when it does not
    say "from your memory"."""
    of = _of_object(noun)
    if of is not None:
        return _kept_of(noun, of)
    owner = next((c for c in noun.children if c.dep_ == "poss"), None)
    if owner is None:
        return _the_kept(noun)
    if not _speakers(noun, owner) or _placed(noun):
        return False
    if noun.lemma_.lower() in MESSAGE_NOUNS:
        return True  # "my last message": the turn said in this chat (no "to Tom")
    return _known_kind(noun)


# Heads that, with "the" and a modifier, name what was said of something ("the epilepsy
# info", "the poker stuff", "the visa situation").
_SAID_HEADS = INFO_NOUNS | frozenset({"stuff", "thing", "things", "bit", "part", "situation",
                                      "matter", "business", "story", "issue"})


def _the_kept(noun: Token) -> bool:
    """"the X" with no owner names what is kept of the speaker only as a value word
    ("the password", "the school name", "the landline") or a head of what was said with
    a modifier naming its subject ("the epilepsy info", "the poker stuff"); never
    "that info", "the part about the weather", "the old stuff", "the config file", nor
    a thing somewhere ("the password on the router")."""
    if not any(c.dep_ == "det" and c.lower_ == "the" for c in noun.children) or _placed(noun):
        return False
    lemma = noun.lemma_.lower()
    if lemma in _SAID_HEADS:
        return any(c.dep_ in ("amod", "compound", "nmod") and c.pos_ in ("NOUN", "PROPN", "ADJ")
                   and c.lemma_.lower() not in INSTANCE_MODS | GENERIC for c in noun.children)
    return lemma in VALUE_NOUNS and _known_kind(noun)


def _mine(noun: Token) -> bool:
    """``noun`` is the speaker's ("my X")."""
    return any(c.dep_ == "poss" and c.lower_ in ("my", "mine") for c in noun.children)


_POLITE_ADJ = frozenset({"great", "nice", "good", "helpful", "grateful", "thankful",
                         "better", "best", "ideal", "lovely", "ok", "okay", "fine", "cool",
                         "awesome", "appreciated", "glad", "happy"})


# Heads whose "that" clause, with a bare "be", is a demand ("I ask that it be deleted").
MANDATIVE_HEADS = ASK_HEADS | frozenset({"request", "demand", "insist", "require", "urge"})


_CONDITIONS = frozenset({"if", "when", "whenever", "unless", "because", "since", "whether",
                         "before", "after", "until", "once", "while"})


def _asked_if(verb: Token) -> bool:
    """"I'd appreciate it if you deleted ...", "it would be great if you could forget
    ...": ``verb`` with "you" in an "if" clause of a head that asks politely."""
    if verb.dep_ != "advcl" or not any(c.dep_ == "mark" and c.lower_ == "if"
                                       for c in verb.children):
        return False
    if not any(c.dep_ == "nsubj" and c.lower_ in ("you", "u") for c in verb.children):
        return False
    head = verb.head
    return head.lemma_.lower() in ASK_HEADS | {"appreciate"} or any(
        c.dep_ == "acomp" and c.lower_ in _POLITE_ADJ for c in head.children)


def _demanded(verb: Token, auxes: Sequence[Token]) -> bool:
    """"I request that my file be erased": the bare "be" of a demand."""
    head = verb.head
    return verb.dep_ == "ccomp" and head.lemma_.lower() in MANDATIVE_HEADS and all(
        a.lemma_ == "be" and a.tag_ == "VB" for a in auxes) and any(
        c.dep_ == "nsubj" and c.lower_ == "i" for c in head.children)


def _made_sure(verb: Token, auxes: Sequence[Token]) -> bool:
    """"please make sure my address is removed", as "make" is addressed."""
    head = verb.head
    return verb.dep_ == "ccomp" and head.lower_ == "sure" and head.head.i != head.i \
        and head.head.lemma_.lower() == "make" and _addressed(head.head) \
        and all(a.tag_ in ("VBZ", "VBP", "VB") for a in auxes)


def _asked_passive(verb: Token) -> bool:
    """A passive asked of the assistant: "can my phone number be deleted?", "I want my
    address deleted", "please make sure my address is removed"; not a report of one
    ("my address was deleted")."""
    auxes = [a for a in verb.children if a.dep_ in ("aux", "auxpass")]
    subject = next((c for c in verb.children if c.dep_ in ("nsubjpass", "nsubj")), None)
    if subject is None:
        # "I'd like that deleted actually": the parser may hang the participle on its
        # object ("that" + acl) rather than on the wanting verb
        thing = verb.head
        return (verb.dep_ == "acl" and not auxes and thing.dep_ in ("dobj", "obj")
                and thing.head.lemma_.lower() in ASK_HEADS and _wanter(thing.head))
    if any(a.lower_ in ("can", "could", "would") and a.i < subject.i for a in auxes):
        return True  # a question: the modal before the subject
    if verb.dep_ in ("ccomp", "oprd", "xcomp") and not auxes:
        # "I'd like my salary removed"; not "she wants that deleted" (hers, not a request)
        return verb.head.lemma_.lower() in ASK_HEADS and _wanter(verb.head)
    return _demanded(verb, auxes) or _made_sure(verb, auxes)


def _you_subject(tok: Token) -> bool:
    """``tok`` has "you" as its subject."""
    return any(c.dep_ == "nsubj" and c.lower_ in ("you", "u") for c in tok.children)


def _if_addressed(verb: Token) -> bool | None:
    """"I'd appreciate it if you deleted ..." asks; "... if you had deleted" does not."""
    if not _asked_if(verb):
        return None
    return not any(a.dep_ == "aux" and a.lemma_ == "have" for a in verb.children)


def _rather_addressed(verb: Token) -> bool | None:
    """"I'd rather you forgot my address"."""
    return True if _rather(verb) else None


def _conditional(verb: Token) -> bool | None:
    """"if you delete my address, I'll be upset": a condition."""
    if any(c.dep_ == "mark" and c.lower_ in _CONDITIONS for c in verb.children):
        return False
    return None


def _mind_addressed(verb: Token) -> bool | None:
    """"would you mind forgetting ..."."""
    head = verb.head
    if verb.tag_ == "VBG" and verb.dep_ == "xcomp" and head.lemma_.lower() == "mind" \
            and _you_subject(head):
        return True
    return None


def _rid_addressed(verb: Token) -> bool | None:
    """"(I want you to) get rid of ...": "get" is its aux."""
    if verb.lemma_.lower() != "rid":
        return None
    if any(c.dep_ == "aux" and c.tag_ == "VBD" for c in verb.children):
        return False
    subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is not None:
        return subject.lower_ in ("you", "u")
    return verb.dep_ not in ("xcomp",) or verb.head.lemma_.lower() == "let"


def _passive_addressed(verb: Token) -> bool | None:
    """"can my phone number be deleted?" (:func:`_asked_passive`)."""
    # "I want my salary removed" may be tagged as a past ("VBD") under the want
    participle = verb.tag_ == "VBN" or (
        verb.tag_ == "VBD" and verb.dep_ in ("ccomp", "xcomp", "oprd")
        and not any(c.dep_ in ("aux", "auxpass") for c in verb.children))
    return True if participle and _asked_passive(verb) else None


def _make_sure_addressed(verb: Token) -> bool | None:
    """"make sure to delete ...": as "make" is addressed."""
    head = verb.head
    if verb.dep_ == "xcomp" and head.lower_ == "sure" and head.head.i != head.i \
            and head.head.lemma_.lower() == "make":
        return _addressed(head.head)
    return None


def _past_form(verb: Token) -> bool | None:
    """A past, third person or gerund form asks nothing (left: the rules above); a verb
    opening its sentence with an object and no subject is an order whatever its tag
    ("Delete that." tagged as a participle)."""
    if verb.tag_ not in ("VBD", "VBN", "VBZ", "VBG"):
        return None
    opening_order = (verb.dep_ == "ROOT" and verb.i == verb.sent.start
                     and any(c.dep_ in ("dobj", "obj") for c in verb.children)
                     and not any(c.dep_ in ("nsubj", "nsubjpass") for c in verb.children))
    return None if opening_order else False


def _you_object_addressed(verb: Token) -> bool | None:
    """"I'd like you to wipe ..." (the parser's "you" is the object)."""
    head = verb.head
    if verb.dep_ == "xcomp" and head.lemma_.lower() in ASK_HEADS and any(
            c.dep_ == "dobj" and c.lower_ in ("you", "u") for c in head.children):
        return True
    return None


def _did_you(verb: Token) -> bool | None:
    """"did you forget": a question about the past."""
    if any(a.dep_ == "aux" and a.tag_ == "VBD" and a.lemma_ == "do" for a in verb.children):
        return False
    return None


def _subject_addressed(verb: Token) -> bool | None:
    """"you" as the subject asks; so do "let's forget ..." and "can we forget ..."."""
    subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        return None
    if subject.lower_ in ("'s", "us") and verb.head.lemma_.lower() == "let":
        return True  # "let's forget what I said about ..."
    if subject.lower_ == "we" and any(a.dep_ == "aux" and a.i < subject.i and a.lower_
                                      in ("can", "could", "shall") for a in verb.children):
        return True  # "can we forget I said that?"
    return subject.lower_ in ("you", "u")


# Whether a clause asks the assistant: the first rule that decides (in order).
_ADDRESS_RULES: tuple[Callable[[Token], bool | None], ...] = (
    _if_addressed, _rather_addressed, _conditional, _mind_addressed, _rid_addressed,
    _passive_addressed, _make_sure_addressed, _past_form, _you_object_addressed, _did_you,
    _subject_addressed,
)


def _addressed(verb: Token) -> bool:
    """The clause asks the assistant: imperative ("forget ...", "please delete ..."),
    "you" as its subject in the present ("can you forget", "you should not keep"), or
    "I want/need/would like you to ...", "would you mind deleting ...", "let's forget
    ...", "I'd appreciate it if you deleted ..."; not the past, not the speaker's own."""
    for rule in _ADDRESS_RULES:
        decided = rule(verb)
        if decided is not None:
            return decided
    return verb.dep_ != "xcomp"  # "I want to forget about him": the speaker's own wish


def _dismissal(doc: Doc, verb: Token, tok: Token) -> bool:
    """``tok`` says the "forget it" dismisses (see :func:`_dismissed`)."""
    lemma = tok.lemma_.lower()
    neg = any(c.dep_ == "neg" or c.lower_ == "no" for c in tok.children)
    if lemma in _DISMISS_NEG and (neg or tok.head.lower_ == "no"
                                  or any(c.lower_ == "no" for c in tok.children)):
        return True
    if lemma == "mind" and any(c.lower_ in ("never", "nevermind") for c in tok.children) \
            and not any(c.dep_ in ("dobj", "ccomp") for c in tok.children):
        return True  # not "never mind what I said about ...": that retracts it
    if tok.lower_ in ("nevermind", "whatever"):
        return True
    if tok.lower_ in ("fine", "ok", "okay", "alright") and tok.dep_ == "acomp":
        return True  # "forget about it, it's fine"
    if tok.lower_ in ("myself", "ourselves") and tok.head.i != verb.i:
        return True  # "forget it, I'll do it myself": the speaker takes it over
    return tok.i > verb.i and _moves_on(doc, tok)


def _moves_on(doc: Doc, tok: Token) -> bool:
    """"let's ...", "move on": on to something else."""
    return (tok.lower_ == "let" and tok.i + 1 < len(doc)
            and doc[tok.i + 1].lower_ in ("'s", "us")) \
        or (tok.lemma_.lower() == "move" and any(c.lower_ == "on" for c in tok.children))


def _dismissed(sent: Span, verb: Token) -> bool:
    """"forget it" dismissing something: said with "(it) doesn't matter", "never mind",
    "no worries", "no need", "let's move on" in the same sentence or the next one."""
    doc = sent.doc
    nxt = next((s for s in doc.sents if s.start == sent.end), None)
    return any(_dismissal(doc, verb, tok)
               for span in (sent, nxt) if span is not None for tok in span)


def _rather(verb: Token) -> bool:
    """"(I'd) rather you ...": a past form that asks ("I'd rather you forgot that")."""
    return any(c.dep_ == "nsubj" and c.lower_ in ("you", "u") for c in verb.children) and any(
        c.lower_ == "rather" for c in verb.children)


def _speakers_own(verb: Token) -> bool:
    """No complement of a want: the speaker's own doing ("I saved my money, I don't
    want it wasted")."""
    return verb.head.i >= verb.i or any(
        c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in ("i", "we") for c in verb.children)


def _known_by_others(verb: Token) -> bool:
    """"I don't want my kids to know about it": knowing, not by the assistant."""
    return verb.lemma_.lower() in KNOW_VERBS and verb.tag_ in ("VB", "VBG") and not any(
        c.lower_ in ("you", "u") and c.dep_ in ("nsubj", "dobj")
        for c in (*verb.children, *verb.head.children))


def _unwanted(verb: Token) -> bool:
    """``verb`` is what the speaker does not want done: "I don't want you to know",
    "I'd rather not have my address stored", "I don't want my diagnosis stored"."""
    head = verb.head
    if _speakers_own(verb):
        return False
    if any(c.dep_ == "aux" and c.tag_ == "VBD" for c in head.children):
        return False  # "I didn't want you to know": what the speaker wanted then
    if _known_by_others(verb):
        return False
    negated = any(c.dep_ == "neg" for c in head.children)
    return negated and _wanter(head) and (head.lemma_.lower() in ASK_HEADS or (
        head.lemma_.lower() == "have" and any(c.lower_ == "rather" for c in head.children)))


def _verb_class(tok: Token) -> str | None:
    """The class of the predicate ``tok`` heads, read with its particle: ``"forget"``,
    ``"remove"`` ("delete", "throw out", "take X off your list", "get rid of"),
    ``"keep"`` ("remember", "hold on to", "write down") or ``"say"``; None: none."""
    lemma = tok.lemma_.lower()
    parts = {c.lower_ for c in tok.children if c.dep_ in ("prt", "advmod", "prep")}
    if lemma in FORGET_VERBS or (tok.lower_ == "forgot" and (_rather(tok) or _asked_if(tok))):
        return "forget"  # "I'd rather you forgot about my debt" (its lemma as parsed)
    if lemma in KNOW_VERBS and tok.dep_ in ("ccomp", "xcomp") and _unwanted(tok):
        return "keep"  # "I don't want you to know about my arrest"
    if parts & KEEP_PARTICLES.get(lemma, frozenset()):
        return "keep"
    if lemma in REMOVE_VERBS or (lemma in PARTICLE_VERBS and parts & REMOVE_PARTICLES):
        return "remove"
    if lemma == "go" and tok.tag_ == "VBN" and tok.head.lemma_.lower() in WANT_HEADS \
            and _from_memory(tok):
        return "remove"  # "I want every trace of that guy gone from your memory"
    if lemma == "rid" and "of" in parts:
        return "remove"
    if lemma in KEEP_VERBS or (lemma in WANT_HEADS and _in_memory(tok)):
        return "keep"  # "I don't want that in your notes" declines its keeping too
    if lemma in SAY_VERBS:
        return "say"
    return None


def _anchor(verb: Token) -> Token:
    """The word that carries a predicate's subject, auxiliaries and negation: "get" of
    "(can you) get rid of"; else the verb itself."""
    if verb.lemma_.lower() == "rid" and verb.head.lemma_.lower() == "get" \
            and verb.head.i != verb.i:
        return verb.head
    return verb


def _direct_object(verb: Token) -> Token | None:
    """The direct object, or a determined noun after the verb the parser took for an
    adverb ("Disregard my ..."); never "you" or "me"; else "that last one / part" right
    after the verb, however the parser hung it ("forget that last part please")."""
    found = next((c for c in verb.children if (c.dep_ in ("dobj", "obj", "dative") or (
                 c.dep_ == "npadvmod" and c.i > verb.i and c.lemma_.lower() not in _TIMES
                 and any(d.dep_ in ("poss", "det") for d in c.children)))
                 and c.lower_ not in ("you", "me", "u")), None)
    if found is not None:
        return found
    if verb.dep_ == "relcl" and verb.head.i < verb.i and _you_subject(verb) \
            and verb.head.pos_ in ("NOUN", "PROPN"):
        return verb.head  # "this number you should not save": the object set first
    return next((t for t in verb.subtree if 0 < t.i - verb.i <= 4 and _last_said(t)), None)


# Words that stand for the thing said last ("that last one", "the last part").
PLACEHOLDERS = frozenset({"one", "part", "bit", "thing", "sentence", "point"})
LAST_SAID = frozenset({"last", "latest", "previous"})


def _last_said(noun: Token) -> bool:
    """``noun`` is "that last one", "the last part": a placeholder whose only modifier
    says it was said last (docs/design.md, Forget on request)."""
    mods = {c.lemma_.lower() for c in noun.children if c.dep_ in ("amod", "compound", "nmod")}
    return noun.lemma_.lower() in PLACEHOLDERS and bool(mods) and mods <= LAST_SAID \
        and not any(c.dep_ in ("prep", "relcl", "acl", "poss") for c in noun.children)


def _misparsed_head(verb: Token) -> Token | None:
    """"Delete all memories about X", parsed with "Delete" as a name: the noun."""
    if verb.i == verb.sent.start and verb.dep_ in ("nsubj", "compound") \
            and verb.head.pos_ == "NOUN":
        return verb.head
    return None


def _passive_subject(verb: Token) -> Token | None:
    """A passive's subject: "can my phone number be deleted?" ("want my PIN saved" may
    be tagged "VBD")."""
    small = verb.tag_ == "VBD" and verb.dep_ in ("ccomp", "xcomp", "oprd") and not any(
        c.dep_ in ("aux", "auxpass") for c in verb.children)
    if not (verb.tag_ == "VBN" or small) or verb.lemma_.lower() == "rid":
        return None
    if verb.dep_ == "acl" and verb.head.dep_ in ("dobj", "obj"):
        return verb.head  # "I'd like that deleted actually": the participle hangs on it
    return next((c for c in verb.children if c.dep_ in ("nsubjpass", "nsubj")
                 and c.lower_ not in ("you", "me", "u", "i")), None)


def _back_after(verb: Token) -> Token | None:
    """"Scratch that, please" (parsed with "that" under "please"): the "that"."""
    nxt = verb.doc[verb.i + 1] if verb.i + 1 < len(verb.doc) else None
    if nxt is not None and nxt.lower_ in BACK and nxt.dep_ in ("dobj", "nsubj"):
        return nxt
    return None


def _particle_object(verb: Token) -> tuple[Token | None, Token | None]:
    """The object of the phrasal verb's preposition after the verb ("rid of", "hold on
    to"; not "On second thought, forget ..."), or its "what I said" clause."""
    for prep in verb.children:
        if prep.dep_ != "prep" or prep.lower_ not in ("of", "to", "onto", "on") \
                or prep.i <= verb.i:
            continue
        for c in prep.children:
            if c.dep_ == "pobj" and c.lower_ not in ("you", "me", "u"):
                return c, None
            if c.dep_ == "pcomp" and c.lemma_.lower() in SAY_VERBS and any(
                    s.dep_ == "nsubj" and s.lower_ == "i" for s in c.children):
                return None, c  # "get rid of what I said about my job"
    return None, None


def _object(verb: Token) -> tuple[Token | None, Token | None]:
    """The predicate's object and the "(what) I said" clause it names: the direct
    object, else the object of the phrasal verb's preposition ("rid of my address",
    "hold on to that", "get rid of what I said ...")."""
    obj = _direct_object(verb)
    lingering = _lingering(verb) if obj is None else None
    if lingering is not None and _in_memory(verb):  # "the test result sitting in ..."
        obj = next(g for g in lingering.children if g.dep_ in ("nsubj", "nsubjpass"))
    if obj is None:
        obj = _misparsed_head(verb)
    if obj is None:
        obj = _passive_subject(verb)
    said = _said(verb)
    if obj is not None or said is not None:
        return obj, said
    back = _back_after(verb)
    if back is not None:
        return back, None
    return _particle_object(verb)


def _for_later(verb: Token) -> bool:
    """The removing is an action in the world: done to someone ("delete my message to
    Tom") or at a time ("drop my name when you call them")."""
    return any((c.dep_ == "prep" and c.lower_ in ("to", "for")) or (
        c.dep_ == "advcl" and any(m.lower_ in ("when", "whenever", "while", "before", "after")
                                  for m in c.children if m.dep_ in ("mark", "advmod")))
        for c in verb.children)


def _tells_of(tok: Token) -> bool:
    """A "(that) I told you / you know" clause under ``tok`` ("everything I told you")."""
    return any(c.dep_ in ("relcl", "acl", "ccomp") and c.lemma_.lower() in SAY_VERBS
               | KNOW_VERBS for c in tok.children)


# How long something is set aside: "let's forget about work for a minute" puts it off,
# it asks nothing to be erased.
_WHILE = frozenset({"minute", "minutes", "moment", "second", "sec", "while", "bit", "now",
                    "today", "tonight", "day", "hour", "weekend", "evening", "night", "time"})


# Nouns of time the parser may hang on a verb as its object ("forget it this week").
_TIMES = (_WHILE - {"bit"}) | frozenset({
    "week", "month", "year", "morning", "afternoon", "weekend", "monday", "tuesday",
    "wednesday", "thursday", "friday", "saturday", "sunday", "once", "way"})


def _for_a_while(verb: Token) -> bool:
    """The forgetting is for a time only ("forget about it for now / for a minute")."""
    other = {t.i for c in verb.children if c.dep_ in ("conj", "advcl", "ccomp")
             for t in c.subtree}  # "... for a minute and talk about X" is still its own
    if any(c.dep_ in ("npadvmod", "advmod") and c.lemma_.lower() in _WHILE - {"now", "bit"}
           for c in verb.children):
        return True  # "let's forget about work tonight" ("forget it now" asks now)
    return any(t.dep_ == "prep" and t.lower_ == "for" and t.i not in other and any(
        c.lemma_.lower() in _WHILE for c in t.children if c.dep_ in ("pobj", "pcomp", "advmod"))
        for t in verb.subtree)


def _told_me(verb: Token) -> bool:
    """A saying said to the assistant: no one else is its hearer ("told you", "mentioned
    it"; not "told my boss", "mentioned it to my mum")."""
    hearers = [c for c in verb.children if c.dep_ in ("dative", "iobj")]
    if not hearers and verb.lemma_.lower() == "tell":  # "told my boss (about it)"
        hearers = [c for c in verb.children if c.dep_ == "dobj"]
    hearers += [o for p in verb.children if p.dep_ in ("prep", "dative")
                and p.lower_ in ("to", "with") for o in p.children if o.dep_ == "pobj"]
    return all(h.lower_ in ("you", "u") or h.lower_ in BACK | _WH for h in hearers)


def _mine_asked(verb: Token) -> bool:
    """The assistant is asked to forget something of the speaker's, even for a while
    ("could you forget about my pregnancy for now"), not "we" ("let's forget about my
    exams tonight") nor a thing of the conversation ("forget about the deadline")."""
    if any(c.dep_ == "nsubj" and c.lower_ in ("we", "us", "'s") for c in verb.children) \
            or verb.head.lemma_.lower() == "let":
        return False
    about = _about(verb)
    obj = next((c for c in verb.children if c.dep_ in ("dobj", "obj")), None)
    return any(t is not None and _mine(t) for t in (about, obj))


def _regretted(verb: Token, negated: bool) -> bool:
    """The speaker regrets having said it: "I regret telling you about my debt", "kinda
    regret mentioning the weed thing", "I wish I hadn't told you that"."""
    head = verb.head
    if head.i == verb.i or head.lemma_.lower() not in REGRET_HEADS:
        return False
    if head.lemma_.lower() == "wish":
        return verb.dep_ == "ccomp" and negated and any(
            c.dep_ == "nsubj" and c.lower_ == "i" for c in verb.children) and any(
            c.dep_ == "aux" and c.lemma_ == "have" for c in verb.children)
    subject = next((c for c in head.children if c.dep_ == "nsubj"), None)
    # "(kinda) regret telling you": the parser may read "regret" as a noun ("acl")
    return verb.dep_ in ("xcomp", "ccomp", "acl") and not negated and (
        subject is None or subject.lower_ == "i" or subject.pos_ != "PRON")


_WH = frozenset({"where", "what", "who", "whom", "how", "when"})
_LIGHT_VERBS = frozenset({"be", "have", "do", "get"})


def _free_relative(verb: Token) -> Token | None:
    """A clause the predicate takes as its object that says something of the speaker
    ("remove where I'm staying", "forget who I'm dating", "delete how much I earn")."""
    for c in verb.children:
        if c.dep_ not in ("ccomp", "advcl", "xcomp", "dobj") or c.pos_ not in ("VERB", "AUX"):
            continue
        wh = [t for t in c.subtree if t.lower_ in _WH and t.i < c.i]
        if wh and any(s.dep_ in ("nsubj", "nsubjpass") and s.lower_ == "i"
                      for s in c.children):
            return c
    return None


def _clause_target(clause: Token) -> ForgetTarget | None:
    """What a free relative names: its verb ("where I'm staying": stay) and what it says
    beside the speaker ("what my salary is": salary)."""
    content = [clause] if clause.lemma_.lower() not in _LIGHT_VERBS else []
    content += [c for c in clause.children if c.dep_ in ("dobj", "attr", "acomp", "nsubj")
                and c.lower_ not in _WH and c.pos_ in ("NOUN", "PROPN", "ADJ")]
    if not content:
        return None
    return ForgetTarget(phrase=clause.doc[clause.left_edge.i:clause.right_edge.i + 1].text,
                        words=tuple(_forms(t) for t in content), mine=True,
                        others=THEIRS)


def _lingering(verb: Token) -> Token | None:
    """The -ing verb a wish is about: "I don't want the test result *sitting* in your
    memory", "... *hanging around* in your notes"."""
    if verb.lemma_.lower() not in WANT_HEADS:
        return None
    return next((c for c in verb.children if c.dep_ in ("ccomp", "xcomp") and c.tag_ == "VBG"
                 and any(g.dep_ in ("nsubj", "nsubjpass") for g in c.children)), None)


def _in_memory(verb: Token) -> bool:
    """Something wished out of the assistant's keeping "in / on your memory, notes, file"
    (on the verb or its object: "I don't want that thing in your memory")."""
    obj = next((c for c in verb.children if c.dep_ in ("dobj", "obj")), None)
    for head in (verb, obj, _lingering(verb)):
        for prep in (head.children if head is not None else ()):
            if prep.dep_ != "prep" or prep.lower_ not in ("in", "on", "inside"):
                continue
            for place in prep.children:
                if place.dep_ != "pobj":
                    continue
                owner = next((c.lower_ for c in place.children if c.dep_ == "poss"), None)
                lemma = place.lemma_.lower()
                if (owner == "your" and lemma in YOUR_MEMORY_WORDS) or (
                        owner is None and lemma in MEMORY_WORDS):
                    return True
    return False


# What one request verb asks: its targets, whether it refers back, whether it asks for
# everything, and whether it asks only beside another request.
_Ask = tuple[list[ForgetTarget], bool, bool, bool]
_Found = tuple["Token", list[ForgetTarget], bool, bool, bool]


@dataclass(frozen=True)
class _Reading:
    """One request verb of a sentence, with what it acts on."""

    sent: Span
    verb: Token
    cls: str
    lemma: str
    obj: Token | None
    said: Token | None
    relative: Token | None
    source: str | None
    removing: bool
    worldly: bool


def _verb_may_ask(sent: Span, verb: Token, lemma: str) -> bool:
    """A verb, or a noun or adjective only where the parser missed an imperative."""
    if lemma == "rid":
        return True
    if verb.pos_ not in ("VERB", "NOUN", "PROPN", "AUX", "ADJ"):
        return False
    return verb.pos_ == "VERB" or verb.i == sent.start or verb.dep_ == "ROOT"


def _is_negated(verb: Token, anchor: Token) -> bool:
    """The verb or its anchor is negated ("don't", "never")."""
    return any(c.dep_ == "neg" or c.lower_ in ("never",)
               for c in (*verb.children, *anchor.children))


def _unsaid(verb: Token, negated: bool) -> bool:
    """A saying verb that takes back what was said here: "I shouldn't have told you
    that" (the speaker regrets having said it), "pretend I never said that"."""
    subject = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    auxes = {c.lemma_.lower() for c in verb.children if c.dep_ == "aux"}
    mine = negated and subject is not None and subject.lower_ == "i"
    if not (mine and (("have" in auxes and auxes & {"should", "would", "must"})
                      or verb.head.lemma_.lower() in UNSAY_HEADS)) \
            and not _regretted(verb, negated):
        return False
    return _told_me(verb)  # "I shouldn't have told my boss about it": not said here


def _class_asks(verb: Token, anchor: Token, cls: str, negated: bool) -> bool:
    """The verb's class, its negation and its addressee make it a request."""
    if cls == "say":
        return _unsaid(verb, negated)
    if cls == "keep":
        return _kept_declined(verb, negated)
    if negated or not _addressed(anchor):  # "don't forget my appointment"
        return False
    # "let's forget about work for a minute": put off, not erased
    return not (_for_a_while(verb) and not _mine_asked(verb))


def _said_over(verb: Token) -> Token | None:
    """"Forget I said that." (parsed with "Forget" under "said"): the saying verb."""
    head = verb.head
    if verb.dep_ in ("intj", "advmod", "dep", "advcl") \
            and head.lemma_.lower() in SAY_VERBS and any(
                c.dep_ == "nsubj" and c.lower_ == "i" for c in head.children):
        return head
    return None


def _reading(sent: Span, verb: Token, cls: str) -> _Reading:
    """What the request verb acts on, and whether it removes things of the world."""
    lemma = verb.lemma_.lower()
    obj, said = _object(verb)
    relative = _free_relative(verb) if obj is None and said is None else None
    if said is None:
        over = _said_over(verb)
        if over is not None:
            said, obj = over, None
    source = _source(verb, obj if obj is not None else relative)
    # A removing verb asks to forget only what is kept or said, never a thing taken
    # out of somewhere else ("remove my name from the mailing list").
    removing = cls == "remove" and source != "memory"
    # "don't hold on to / write down X" also says things of the world ("the past").
    worldly = removing or (cls == "keep" and lemma not in KEEP_VERBS | WANT_HEADS)
    return _Reading(sent=sent, verb=verb, cls=cls, lemma=lemma, obj=obj, said=said,
                    relative=relative, source=source, removing=removing, worldly=worldly)


def _ignored_only(r: _Reading) -> bool:
    """"ignore my typo" asks nothing; "ignore what I said / the bit about my ex"
    retracts."""
    if r.lemma != "ignore" or r.said is not None or r.source == "memory":
        return False
    obj = r.obj
    return not (obj is not None and (obj.lower_ == "what" or (
        obj.lemma_.lower() in GENERIC
        and _mine(_about_said(obj) or _about(r.verb) or obj))))


def _everything_back(r: _Reading) -> _Ask | None:
    """"erase all of that" refers back; "drop all of that" asks nothing."""
    if r.removing:
        return None
    return [], True, False, False


def _everything_unread(r: _Reading, obj: Token) -> bool:
    """"everything" with nothing it is about that cannot be the whole scope: "drop
    everything and come here"; "everything <prep> X" unread."""
    if r.removing and not _tells_of(obj):
        return True
    return any(p.dep_ == "prep" and not any(_kept_in(o) for o in p.children)
               for p in obj.children)


def _everything_about(r: _Reading) -> _Ask | None:
    """"forget everything (you know) about X": X, or the whole scope."""
    obj = r.obj
    assert obj is not None
    about = _about_said(obj) or _about(r.verb)
    if about is None and _just_said(obj):
        return [], True, False, False  # "everything I just said": the turn before, not all
    if about is None:
        return None if _everything_unread(r, obj) else ([], False, True, False)
    if r.removing and about.head.lower_ == "of" and not _tells_of(obj) \
            and not _kept_thing(about):
        return None  # "delete all of my old files": the files, things of the world
    if about.lower_ in ("me", "myself") and (not r.removing or _tells_of(obj)):
        return [], False, True, False  # "forget everything you know about me": the whole scope
    targets = _targets(about)
    if not targets:
        return None
    return targets, False, False, False


def _what_said(r: _Reading) -> _Ask | None:
    """"forget what I said (about X)", "forget that I mentioned my loan"."""
    clause = r.said if r.said is not None else r.obj
    assert clause is not None
    about = _about(clause)
    if about is None and r.said is not None:  # "forget that I mentioned my loan"
        about = next((c for c in r.said.children if c.dep_ in ("dobj", "obj")
                      and c.lower_ not in BACK | {"you", "what"}), None)
    if about is not None and about.lower_ in _SOMETHING:  # "anything about my job"
        about = _about(about)
    targets = _targets(about) if about is not None else []
    reported = next((c for c in r.said.children if c.dep_ == "ccomp"), None) \
        if r.said is not None else None
    if about is None and reported is not None:
        # "forget I said I love chess", "forget I told you I was fired": what the saying
        # reported, never the turn before (it had erased an unrelated fact)
        return _reported(reported)
    return targets, not targets, False, False


_SOMETHING = frozenset({"anything", "something", "everything", "stuff", "things"})


def _reported(clause: Token) -> _Ask | None:
    """What a reported clause said ("I love chess": loving chess, not everything about
    chess; "my sister is pregnant": pregnant), or None: nothing to find it by."""
    head = clause.head
    targets = _stated(head) or _said_where(clause)
    if clause.lemma_.lower() not in _LIGHT_VERBS and clause.pos_ == "VERB":
        verb = _forms(clause)
        targets = [replace(t, words=(*t.words, verb)) if verb not in t.words else t
                   for t in targets]
    return (targets, False, False, False) if targets else None


def _back_object(r: _Reading) -> _Ask | None:
    """"forget it", "delete that": what it refers to, in the sentence or before."""
    obj = r.obj
    assert obj is not None
    if r.lemma == "forget" and obj.lower_ == "it" and _dismissed(r.sent, r.verb):
        return None
    along = r.removing and r.lemma not in RETRACT_VERBS  # "delete that" may be code or a list
    # "Never mind what I said about my ex, please forget it": "it" is that.
    told = next((t for t in r.sent if t.lemma_.lower() in SAY_VERBS
                 and any(c.dep_ == "nsubj" and c.lower_ == "i" for c in t.children)
                 and _about(t) is not None), None)
    targets = _targets(_about(told)) if told is not None else []  # type: ignore[arg-type]
    # "About the address I gave you, please forget it": "it" is what it is about
    fronted = _about(r.verb)
    if not targets and fronted is not None and fronted.i < r.verb.i \
            and fronted.lower_ not in BACK:
        targets = _targets(fronted)
    # "Going back to Leila, please forget that", "this thing with the interview, you must
    # forget it": a topic set before the request and a comma is what "it" means, not the
    # turn before (which said something else: the cats, the standing desk)
    topic = _dislocated_topic(r) if not targets else None
    if topic is not None:
        targets = _targets(topic)
    return targets, not targets, False, along


_TOPIC_PREPS = frozenset({"to", "with", "about", "of", "on", "regarding", "re"})


def _last_comma_before(sent: Span, verb: Token) -> int | None:
    """The index of the last comma of ``sent`` before ``verb``, or None."""
    return next((t.i for t in reversed(sent) if t.text == "," and t.i < verb.i), None)


def _dislocated_topic(r: _Reading) -> Token | None:
    """The topic set before the request's verb (:func:`_topic_before`)."""
    return _topic_before(r.sent, r.verb)


_INTERJECTIONS = frozenset({"ugh", "argh", "urgh", "omg", "oh", "ah", "ahh", "oops", "hmm",
                            "hm", "meh", "ok", "okay", "god", "gosh", "damn", "dammit", "jeez",
                            "yikes", "welp", "lol", "lmao", "wow", "whoa", "sigh"})


def _topic_before(sent: Span, verb: Token) -> Token | None:
    """The noun a request's sentence sets before a comma ahead of its verb, as what the
    request is about: a name or a thing ("Going back to Leila, ..."), or the thing a
    generic head is about ("this thing with the interview, ..."), or None."""
    comma = _last_comma_before(sent, verb)
    if comma is None:
        return None
    span = [t for t in sent if t.i < comma]
    if any(t.tag_ in T.FINITE_TAGS for t in span):
        return None  # "My blood type is O negative, please don't remember it": a clause
    # a name, or a noun its determiner or owner makes a thing ("the interview", "my ex");
    # not a discourse phrase ("on second thought", "omg wait")
    nouns = [t for t in span if t.lower_ not in BACK and t.lower_ not in ("i", "you", "me")
             and t.lower_ not in _INTERJECTIONS  # "Ugh, ...": tagged a name at times
             and (t.pos_ == "PROPN" or (t.pos_ == "NOUN" and any(
                 c.dep_ in ("det", "poss") for c in t.children)))]
    for noun in reversed(nouns):
        if any(_verb_class(a) is not None for a in noun.ancestors if a.i < comma):
            continue  # "get rid of the reg plate, don't want that saved": a request's own
        inner = next((o for prep in noun.children if prep.dep_ == "prep"
                      and prep.lower_ in _TOPIC_PREPS for o in prep.children
                      if o.dep_ == "pobj"), None)
        if inner is not None and inner.lower_ not in BACK:
            return inner  # "that business with the interview": the interview
        if noun.lemma_.lower() not in GENERIC:
            return noun
    return None


def _info_back(r: _Reading) -> _Ask | None:
    """"please remove that info": what was just said, as information, or (alone: no
    request) what the assistant just gave."""
    return [], True, False, r.removing


def _named_object(r: _Reading) -> _Ask | None:
    """"forget my address"; "erase the bit about my debt" (the parser may hang "about"
    on the verb)."""
    obj = r.obj
    assert obj is not None
    about = (_about_said(obj) or _about(r.verb)) if obj.lemma_.lower() in GENERIC else None
    targets = _targets(about if about is not None else obj)
    if not targets:
        return None
    if r.worldly and about is None and not _kept_thing(obj):
        return None  # "delete my last email to Tom", "throw out my old shoes"
    if about is None and _topic_dropped(r, obj):
        return None  # "Forget the weather, how are you?"
    return targets, False, False, False


def _topic_dropped(r: _Reading, obj: Token) -> bool:
    """"Forget the weather, how are you?", "forget the traffic, let's eat": a thing of
    the conversation, nothing of the speaker's, dropped to ask or go on to something
    else (a question or a dismissal in the sentence)."""
    if r.lemma != "forget" or _mine(obj) or _kept_thing(obj) \
            or any(c.dep_ == "poss" for c in obj.children):
        return False
    asks = r.sent.text.rstrip().endswith("?") and r.verb.i == r.sent.start
    return asks or _dismissed(r.sent, r.verb)


def _relative_clause(r: _Reading) -> _Ask | None:
    """"forget where I live"; "remove where I put it" moves a thing."""
    assert r.relative is not None
    found = _clause_target(r.relative)
    if found is None or (r.removing and r.source != "memory"):
        return None  # "remove where I put it" moves a thing; "... from your notes"
    return [found], False, False, False


def _said_back(r: _Reading) -> _Ask | None:
    """"I shouldn't have told you (that), sorry"."""
    return [], True, False, False


def _stated_clause(r: _Reading) -> _Ask | None:
    """"please forget that I'm pregnant"."""
    return _stated(r.verb), False, False, False


def _about_verb(r: _Reading) -> _Ask | None:
    """"forget about my ex", "don't want you to know about it"."""
    about = _about(r.verb)
    if about is None or not (r.cls in ("forget", "say") or r.lemma in KNOW_VERBS):
        return None
    back = False
    if about.lower_ in BACK:  # "please forget about it"
        if _dismissed(r.sent, r.verb):
            return None
        back = True
        about = None
    targets = _targets(about) if about is not None else []
    if not targets and not back:
        return None
    return targets, back, False, False


def _just_said(obj: Token) -> bool:
    """"everything I just said / told you": said just now (a saying under ``obj`` with
    "just"), what the turn before said, not the whole scope."""
    return any(c.dep_ in ("relcl", "acl", "ccomp") and c.lemma_.lower() in SAY_VERBS
               and any(a.lower_ in ("just", "now") and a.dep_ == "advmod" for a in c.children)
               for c in obj.children)


def _is_everything(r: _Reading) -> bool:
    return r.obj is not None and r.obj.lower_ in EVERYTHING


def _is_info_back(r: _Reading) -> bool:
    obj = r.obj
    return obj is not None and obj.lemma_.lower() in INFO_NOUNS and _about_said(obj) is None \
        and any(c.dep_ == "det" and c.lower_ in BACK for c in obj.children)


def _what_follows(r: _Reading) -> _Ask | None:
    """"Don't remember this bit, I just need to vent: ...": what follows the colon (the
    gathered request reads where, :func:`_ahead`)."""
    return [], True, False, False


# What the verb acts on decides how it is read: the first row that holds (in order).
_READERS: tuple[tuple[Callable[[_Reading], bool], Callable[[_Reading], _Ask | None]], ...] = (
    (lambda r: _is_everything(r) and _of_back(r.obj), _everything_back),  # type: ignore[arg-type]
    (_is_everything, _everything_about),
    (lambda r: (r.obj is not None and r.obj.lower_ == "what")
     or (r.obj is None and r.said is not None), _what_said),
    (lambda r: r.obj is not None and r.obj.lower_ in BACK, _back_object),
    (lambda r: r.obj is not None and not r.removing and _ahead(r.obj.doc, r.verb) is not None,
     _what_follows),
    (_is_info_back, _info_back),
    (lambda r: r.obj is not None, _named_object),
    (lambda r: r.relative is not None, _relative_clause),
    (lambda r: r.cls == "say" and _about(r.verb) is None, _said_back),
    (lambda r: r.cls == "forget" and bool(_stated(r.verb)), _stated_clause),
    (lambda r: True, _about_verb),
)


def _asked(r: _Reading) -> _Ask | None:
    """What the request verb asks (by what it acts on), or None: it asks nothing."""
    handler = next(h for holds, h in _READERS if holds(r))
    found = handler(r)
    if found is None:
        return None
    targets, back, everything, along = found
    if targets and all(t.message for t in targets):  # "delete my last message"
        targets, back = [], True
    if r.cls == "say" and not back and not targets:
        return None
    return targets, back, everything, along


def _verb_request(sent: Span, verb: Token) -> _Found | None:
    """The request ``verb`` makes in ``sent`` (see :func:`_request_in`), or None."""
    cls = _verb_class(verb)
    if cls is None or not _verb_may_ask(sent, verb, verb.lemma_.lower()):
        return None
    anchor = _anchor(verb)
    if not _class_asks(verb, anchor, cls, _is_negated(verb, anchor)):
        return None
    r = _reading(sent, verb, cls)
    if r.removing and (r.source == "elsewhere" or _for_later(verb)):
        return None
    if _ignored_only(r):
        return None  # "ignore my typo"; "ignore what I said / the bit about my ex" retracts
    found = _asked(r)
    if found is None:
        return None
    return (anchor, *found)


# Heads of a wish the thing not be kept ("I'd prefer it not exist ...", "I would rather
# my diagnosis were not held on record").
_PRESENCE_WISHES = WANT_HEADS | frozenset({"like", "prefer", "rather", "would"})
_BEING = frozenset({"be", "exist", "hold", "keep", "store", "stay", "remain"})


def _in_the_assistants_keeping(clause: Token) -> bool:
    """``clause`` places its subject in what the assistant knows: "part of what you
    remember", "something you know", "as far as you're concerned", "on record", "in your
    memory"."""
    for tok in clause.subtree:
        lemma = tok.lemma_.lower()
        if lemma in ("remember", "know", "concern") and any(
                c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in ("you", "u")
                for c in tok.children):
            return True
        if tok.dep_ == "pobj" and tok.head.lower_ in ("on", "in", "inside") and (
                lemma in MEMORY_WORDS or (lemma in YOUR_MEMORY_WORDS and any(
                    c.dep_ == "poss" and c.lower_ in ("your", "ur") for c in tok.children))):
            return True
    return False


def _topic_deed(sent: Span, verb: Token) -> ForgetTarget | None:
    """What a topic set before the comma says happened ("the bit about getting fired,
    ..."): the verb of its "about" clause as the words to find; None without one."""
    comma = _last_comma_before(sent, verb)
    if comma is None:
        return None
    for prep in (t for t in sent if t.i < comma and t.lower_ == "about"):
        deed = next((c for c in prep.children if c.dep_ == "pcomp" and c.pos_ == "VERB"), None)
        if deed is None:
            continue
        done = next((c for c in deed.children if c.dep_ in ("acomp", "xcomp", "oprd",
                                                             "ccomp", "dobj")), deed)
        if done.pos_ in ("VERB", "ADJ", "NOUN"):
            return ForgetTarget(phrase=sent.doc[prep.i:comma].text,
                                words=(_forms(done),), others=THEIRS)
    return None


def _unwished_presence(sent: Span) -> _Found | None:
    """A wish, or a question to the assistant, that the thing not be in what it knows:
    "I'd prefer it not exist as far as you're concerned", "I'd like it to not be part of
    what you remember", "I would rather my diagnosis were not held on record anywhere",
    "can the surgery thing just not be something you know?". The clause's subject is
    the target ("it"/"that": what was said before)."""
    for clause in sent:
        if clause.lemma_.lower() not in _BEING or not any(c.dep_ == "neg"
                                                           for c in clause.children):
            continue
        head = clause.head
        wished = clause.dep_ in ("ccomp", "xcomp") and (
            head.lemma_.lower() in _PRESENCE_WISHES or any(
                c.lower_ == "rather" for c in (*head.children, *clause.children)))
        asked = clause.dep_ == "ROOT" and any(
            c.dep_ == "aux" and c.lower_ in ("can", "could") and c.i < clause.i
            for c in clause.children)
        if wished and not _wanter(head) and head.lemma_.lower() != "would":
            continue  # "she'd prefer it not exist": hers
        if not (wished or asked) or not _in_the_assistants_keeping(clause):
            continue
        subject = next((c for c in clause.children if c.dep_ in ("nsubj", "nsubjpass")),
                       None)
        if subject is None:
            continue
        if subject.lower_ in ("it", "that", "this"):
            # "the bit about getting fired, I'd prefer it not exist ...": the topic
            topic = _topic_before(sent, clause)
            named = _targets(topic) if topic is not None else []
            if named:
                return clause, named, False, False, False
            done = _topic_deed(sent, clause)
            if done is not None:
                return clause, [done], False, False, False
            return clause, [], True, False, False
        targets = _targets(subject)
        if targets:
            return clause, targets, False, False, False
    return None


def _request_in(sent: Span) -> _Found | None:
    """The sentence's request: its verb, targets, whether it refers back, whether it
    asks for everything, and whether it asks only beside another request (a removing
    verb's "delete that", which may be code or a list: "I don't want that in your notes.
    Delete it.", "My locker code is 4471, delete that."); None when the sentence asks
    nothing to be forgotten."""
    later: _Found | None = None
    for verb in sent:
        found = _verb_request(sent, verb)
        if found is None:
            continue
        if not found[4]:
            return found
        # "No wait, delete that, I don't want you to have that": a later verb may ask alone
        later = later or found
    return later or _unwished_presence(sent)


def _bare(sent: Span, verb: Token) -> bool:
    """A plain "forget it" / "forget that" with nothing that says memory ("please", "from
    your memory", "what I said"): after the assistant's question it dismisses the
    question rather than asking to forget (decided where the turns are known)."""
    if verb.lemma_.lower() != "forget" or _from_memory(verb):
        return False
    return not any(t.lower_ in ("please", "pls", "plz") or t.lemma_.lower() in SAY_VERBS
                   for t in sent)


_REQUEST_DEPS = frozenset({"aux", "neg", "intj", "dobj", "obj", "dative", "prep", "advmod",
                           "punct", "ccomp", "xcomp", "prt", "npadvmod", "nsubj", "cc",
                           "discourse", "mark", "acomp", "auxpass", "nsubjpass"})


def _content(tokens: Sequence[Token]) -> bool:
    """Something was said (a noun, a number or a verb other than a greeting)."""
    return any(t.pos_ in ("NOUN", "PROPN", "NUM", "VERB") or
               (t.pos_ == "AUX" and t.lemma_ == "be") for t in tokens)


_FRAME_HEADS = ASK_HEADS | STOP_VERBS | frozenset({"mind", "let", "rather", "bother",
                                                   "appreciate"})
_FRAME_DEPS = frozenset({"nsubj", "aux", "neg", "advmod", "intj", "dobj", "acomp", "expl",
                         "punct", "discourse"})


def _request_words(verb: Token) -> set[int]:
    """The words of the request: the verb with its asking dependents, and the asking
    around it ("I'd prefer you didn't keep that", "I'd appreciate it if you deleted
    that", "would you mind forgetting it")."""
    own = {verb.i} | {t.i for c in verb.children if c.dep_ in _REQUEST_DEPS
                      and not (c.dep_ == "nsubj" and c.lower_ != "you")
                      and not (c.dep_ == "ccomp"
                               and c.lemma_.lower() not in SAY_VERBS | ASK_HEADS)
                      for t in c.subtree}
    frame = verb
    while frame.dep_ in ("xcomp", "ccomp", "advcl") and frame.head.i != frame.i and (
            frame.head.lemma_.lower() in _FRAME_HEADS or _asked_if(frame)):
        frame = frame.head
        own |= {frame.i} | {t.i for c in frame.children if c.dep_ in _FRAME_DEPS
                            for t in c.subtree}
    return own


def _statement_left(sent: Span, verb: Token) -> tuple[int, int] | None:
    """The rest of the request's sentence before the request when it is a statement
    with a subject or a number, not a framing phrase ("Hmm, on second thought, I'd like
    this deleted", "No wait, delete that")."""
    if verb.dep_ == "acl" and verb.head.lower_ in BACK \
            and verb.head.head.lemma_.lower() in ASK_HEADS:
        return None  # "I'd like that deleted actually": all of it is the asking
    own = _request_words(verb)
    left = [t for t in sent if t.i < verb.i and t.i not in own and not t.is_punct
            and not (t.lower_ in BACK and t.head.i == verb.i)]
    if left and _content(left) and any(t.dep_ in ("nsubj", "nsubjpass") or t.pos_ == "NUM"
                                       for t in left) and not _asks_too(sent, left):
        return sent.start_char, left[-1].idx + len(left[-1].text)
    return None


def _asks_too(sent: Span, left: Sequence[Token]) -> bool:
    """The words before a request are a request of their own ("shouldn't have said
    that, delete it"): a back-reference then goes past them, to the turn before."""
    return any(t.pos_ in ("VERB", "AUX") and (_verb_request(sent, t) is not None
                                              or _regrets_saying(t)) for t in left)


def _regrets_saying(tok: Token) -> bool:
    """``tok`` is a saying regretted ("shouldn't have said", "regret telling") or the
    regretting itself, however the parser hung what follows."""
    if tok.lemma_.lower() in REGRET_HEADS:
        return True
    negated = any(c.dep_ == "neg" for c in tok.children)
    should = any(c.dep_ == "aux" and c.lower_ in ("should", "shouldn't") for c in tok.children)
    return tok.lemma_.lower() in SAY_VERBS and (
        tok.head.lemma_.lower() in REGRET_HEADS or (negated and should))


# Words that point ahead when a colon follows: "don't save this: my PIN is 4821".
_AHEAD_WORDS = frozenset({"this", "following"})


def _ahead(doc: Doc, verb: Token) -> tuple[int, int] | None:
    """What a request points ahead to in its own turn: its object "this" ("this bit",
    "the following") and a colon after it: the rest of the turn after the colon ("Don't
    save this: my gym locker code is 4821"); None otherwise."""
    obj = next((c for c in verb.children if c.dep_ in ("dobj", "obj", "nsubjpass")), None)
    if obj is None or not (obj.lower_ in _AHEAD_WORDS or any(
            c.dep_ in ("det", "amod") and c.lower_ in _AHEAD_WORDS for c in obj.children)):
        return None
    colon = next((t for t in doc[obj.i + 1:] if t.text == ":"), None)
    if colon is None or colon.i + 1 >= len(doc) or not doc[colon.i + 1:].text.strip():
        return None
    return doc[colon.i + 1].idx, len(doc.text)


def _earlier(doc: Doc, sent: Span, verb: Token) -> tuple[int, int] | None:
    """What a back-reference refers to inside its own turn: the rest of the request's
    sentence before the request ("My PIN is 4821, forget it"), else the sentence before
    it when that says something; None: the previous turn."""
    left = _statement_left(sent, verb)
    if left is not None:
        return left
    before = [s for s in doc.sents if s.end_char <= sent.start_char and s.text.strip()]
    if before and _content(list(before[-1])):
        return before[-1].start_char, before[-1].end_char
    return None


def _last_clause(doc: Doc, span: tuple[int, int]) -> tuple[int, int]:
    """The last of the coordinated clauses in ``span`` ("my landlord put the rent up, I
    adopted a dog, and my doctor thinks X": "my doctor thinks X"), else ``span``."""
    start, end = span
    clauses = [t for t in doc if start <= t.idx < end and t.dep_ == "conj"
               and t.pos_ in ("VERB", "AUX") and t.left_edge.idx > start
               and any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children)]
    if not clauses:
        return span
    return clauses[-1].left_edge.idx, end


_PEOPLE_PRONOUNS = frozenset({"he", "she", "they", "it", "that", "this", "him", "her",
                              "them", "you", "u"})


def _asking_words(verb: Token) -> set[int]:
    """The words of the request itself: the verb's subtree less the clauses that follow
    it ("Forget the old one, my new number is ...": "is", the root, is no part of it)."""
    clauses = ("conj", "parataxis", "advcl", "ccomp")
    own = {t.i for t in verb.subtree} - {t.i for c in verb.children
                                         if c.dep_ in clauses and c.i > verb.i
                                         for t in c.subtree}
    if verb.head.i != verb.i and verb.i < verb.head.i and verb.dep_ in clauses:
        own -= {verb.head.i}
    return own


def _tail(sent: Span, verb: Token) -> list[Token]:
    """The words of the sentence after the request, less leading punctuation and
    conjunctions."""
    own = _asking_words(verb)
    last = max((i for i in own if not (sent.doc[i].is_punct or sent.doc[i].dep_ == "cc")),
               default=verb.i)
    rest = [t for t in sent if t.i > last and not t.is_space]
    while rest and (rest[0].is_punct or rest[0].dep_ == "cc" or rest[0].pos_ == "CCONJ"):
        rest = rest[1:]
    return rest


def _says_of_request(rest: Sequence[Token], targets: Sequence[ForgetTarget]) -> bool:
    """The tail is about what is forgotten ("..., I gave it by mistake"), or says
    nothing of its own: no subject, nothing said, a pronoun or a word of a target."""
    # the words of "the old one" name the value that replaces it ("my new number is ...")
    named = frozenset().union(*(w for t in targets if not t.former for w in t.words))
    subjects = [t for t in rest if t.dep_ in ("nsubj", "nsubjpass") and t.head in rest]
    said = any(t.pos_ in ("NOUN", "PROPN", "NUM") or (t.pos_ == "ADJ" and t.dep_ == "acomp")
               for t in rest if t.dep_ not in ("nsubj", "nsubjpass"))
    return not subjects or not said or any(s.lower_ in _PEOPLE_PRONOUNS for s in subjects) \
        or any(t.lower_ in named or t.lemma_.lower() in named for t in rest) \
        or any(t.lower_ in BACK and t.pos_ == "PRON" for t in rest)


def _request_end(sent: Span, verb: Token, targets: Sequence[ForgetTarget]) -> int:
    """Where the request's sentence stops asking: the end of the sentence, or the start
    of a statement of its own that follows ("Forget the old one, my new number is 07700
    900555"; "Please forget my address, but remember that I'm vegetarian"). Such a tail
    is stored and read for facts; it never says what the request names (no word of a
    target) and is no reply about it ("he'd hate that I shared it", "it doesn't
    matter")."""
    rest = _tail(sent, verb)
    if not rest or _says_of_request(rest, targets):
        return sent.end_char
    if any(_request_in_tokens(t) for t in rest):
        return sent.end_char  # the tail asks too ("..., please don't keep it either")
    return rest[0].idx


def _kept_left(sent: Span, verb: Token, targets: Sequence[ForgetTarget]
               ) -> list[tuple[int, int]]:
    """The statements before a request that names its target, in the request's sentence,
    that say something else ("My PIN is 4821, my cat is called Tom, forget the PIN": the
    cat): each stays a fact. A statement naming a target is cut with the request, and so
    is what says nothing of its own ("Oh, and", "hmm on second thought")."""
    named = frozenset().union(*(w for t in targets for w in t.words), *(t.related
                                                                        for t in targets))
    # by stem too: "my therapist says ..." says of "the therapy stuff"
    stems = {w[:6] for w in named if len(w) >= 5}
    own = _request_words(verb)
    out: list[tuple[int, int]] = []
    for chunk in _chunks_before(sent, verb):
        words = [t for t in chunk if t.i not in own]
        if words == chunk and _a_statement_of_its_own(words, named, stems):
            out.append((words[0].idx, words[-1].idx + len(words[-1].text)))
    return out


def _chunks_before(sent: Span, verb: Token) -> list[list[Token]]:
    """The runs of ``sent``'s tokens before ``verb`` between punctuation and
    coordinators (a run may be empty)."""
    chunks: list[list[Token]] = []
    chunk: list[Token] = []
    for tok in [*(t for t in sent if t.i < verb.i), None]:
        if tok is not None and not tok.is_punct and tok.dep_ != "cc":
            chunk.append(tok)
            continue
        chunks.append(chunk)
        chunk = []
    return chunks


def _a_statement_of_its_own(words: Sequence[Token], named: frozenset[str],
                            stems: set[str]) -> bool:
    """Do ``words`` say something with a subject of their own, naming no target word
    (of ``named``, or by one of its ``stems``)?"""
    subjects = [t for t in words if t.dep_ in ("nsubj", "nsubjpass")]
    if not (words and _content(words) and subjects):
        return False
    # a subject that refers back ("it's 4821") says of what went before: cut with it
    if any(t.lower_ in _PEOPLE_PRONOUNS for t in subjects):
        return False
    return not any(t.lower_ in named or t.lemma_.lower() in named
                   or (len(t.lower_) >= 5 and t.lower_[:6] in stems) for t in words)


def _without(start: int, end: int, kept: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``start``-``end`` without the ``kept`` spans inside it (the pieces left)."""
    out, at = [], start
    for a, b in sorted(kept):
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < end:
        out.append((at, end))
    return out


def _request_in_tokens(tok: Token) -> bool:
    """``tok`` heads a predicate of a request class (a tail that asks is no statement)."""
    return _verb_class(tok) in ("forget", "remove") or tok.lemma_.lower() in _NEGATIONS


# Verbs whose "delete that" may ask to forget what was just said, in context (a guarded
# request); "bin that", "drop it" never do on their own.
_ERASE_VERBS = frozenset({"delete", "remove", "erase", "wipe", "scrub"})


@dataclass
class _Gathered:
    """A turn's request sentences, gathered in order (see :func:`forget_request`)."""

    spans: list[tuple[int, int]] = field(default_factory=list)
    targets: list[ForgetTarget] = field(default_factory=list)
    named: list[tuple[int, int]] = field(default_factory=list)  # sentences naming a target
    back: bool = False
    everything: bool = False
    bare: bool = True
    alone: bool = True  # every request sentence is a removing verb's "delete that"
    plain_erase: bool = True  # ... and every such verb says erase ("delete", not "bin")
    earlier: tuple[int, int] | None = None

    def add(self, doc: Doc, sent: Span, found: _Found) -> None:
        """Gather one sentence's request."""
        verb, targets, back, everything, along = found
        # "My locker code is 4471, delete that": what it deletes was just said
        # ("shouldn't have said that, delete it": a regret beside it asks with it)
        self.alone = self.alone and along and _earlier(doc, sent, verb) is None \
            and not any(_regrets_saying(t) for t in sent if t.i < verb.i)
        self.plain_erase = self.plain_erase and verb.lemma_.lower() in _ERASE_VERBS \
            and not _moves_on(doc, doc[sent.start])
        start = sent.start_char
        end = _request_end(sent, verb, targets) if not back else sent.end_char
        pieces = _without(start, end, _kept_left(sent, verb, targets) if targets and not back
                          else [])
        self.spans += pieces
        if targets:
            self.named += pieces
        self.targets += targets
        self.everything = self.everything or everything
        if back and not self.back:
            self._refer(doc, sent, verb, targets)
        elif not back:
            self.bare = False

    def _refer(self, doc: Doc, sent: Span, verb: Token, targets: Sequence[ForgetTarget]
               ) -> None:
        """The first back-reference: what it refers to, unless a request sentence before
        named it ("I don't want my PIN in your notes. Delete it.": "it" is the PIN)."""
        ahead = _ahead(doc, verb) if _verb_class(verb) != "remove" else None
        if ahead is not None:  # "don't save this: ...": what follows, not the turn before
            self.back, self.earlier = True, ahead
            self.bare = False
            return
        refers = _earlier(doc, sent, verb)
        if refers is not None and any(a < refers[1] and refers[0] < b for a, b in self.named):
            return
        obj = _object(verb)[0]
        if refers is not None and obj is not None and _last_said(obj):
            # "..., and my doctor thinks X. Forget that last part": that clause only
            refers = _last_clause(doc, refers)
        self.bare = self.bare and not targets and _bare(sent, verb)
        self.back = True
        self.earlier = refers

    def request(self) -> ForgetRequest | None:
        """The turn's request, or None; only a "delete that" beside nothing just said is
        ``guarded`` (decided where the turns are known)."""
        if not self.spans or (self.alone and not self.plain_erase):
            return None  # "bin that", "let's drop it": nothing to forget on its own
        return ForgetRequest(sentences=tuple(self.spans), targets=tuple(self.targets),
                             refers_back=self.back, earlier=self.earlier,
                             everything=self.everything and not self.targets,
                             bare=self.back and self.bare and self.earlier is None,
                             guarded=self.alone)


def forget_request(doc: Doc) -> ForgetRequest | None:
    """The turn's request to forget, or None."""
    gathered = _Gathered()
    for sent in doc.sents:
        found = _request_in(sent)
        if found is not None:
            gathered.add(doc, sent, found)
    if gathered.spans and gathered.back and not gathered.targets:
        _clarified(doc, gathered)
    request = gathered.request()
    if request is not None and request.refers_back and not request.targets \
            and _REGRET.search(doc.text):
        request = replace(request, regret=True)
    return request


# The speaker regrets having said something (what "that" then refers to is sensitive).
_REGRET = re.compile(
    r"(?i)\b(?:shouldn'?t|should not|should never|wish I (?:hadn'?t|had not|never)) "
    r"(?:have |'ve )?(?:told|said|mentioned|shared|brought up)|\bregret (?:telling|saying|"
    r"mentioning|sharing)|\bwhy did I (?:tell|say|mention|share)")
# Topics whose mention a speaker may regret: health, money, love, the law, a secret.
_SENSITIVE = frozenset(_MEDICAL | _MONEY | _BREAKUP | {
    "affair", "cheated", "cheating", "arrested", "court", "police", "prison", "fired",
    "sacked", "pregnant", "abortion", "rehab", "drunk", "addicted", "gambling",
    "betting", "visa", "deported", "suicidal", "therapist", "password", "pin"})


def sensitive(text: str) -> bool:
    """Does ``text`` say something a speaker may regret having said (a diagnosis, debt,
    an affair, an arrest, a masked secret)?"""
    return "[redacted:" in text or bool(words_of(text) & _SENSITIVE)


def _clarified(doc: Doc, gathered: _Gathered) -> None:
    """"Forget it, I mean the ex thing": the speaker says what "it" was; that is the
    target, and no turn is referred back to."""
    for tok in doc:
        if tok.lemma_.lower() != "mean" or not any(
                c.dep_ == "nsubj" and c.lower_ == "i" for c in tok.children):
            continue
        meant = next((c for c in tok.children if c.dep_ in ("dobj", "obj")), None)
        if meant is None:  # "I mean the ex thing", however the parser hung "thing"
            meant = next((t for t in doc[tok.i + 1:tok.sent.end] if t.pos_ in ("NOUN", "PROPN")
                          and t.dep_ not in ("compound", "amod", "poss", "nmod")), None)
        targets = _targets(meant) if meant is not None else []
        if targets:
            first = min(tok.left_edge.i, meant.left_edge.i)  # type: ignore[union-attr]
            last = max(tok.right_edge.i, meant.right_edge.i)  # type: ignore[union-attr]
            gathered.spans.append((doc[first].idx, doc[last].idx + len(doc[last].text)))
            gathered.targets += targets
            gathered.back, gathered.earlier, gathered.bare = False, None, False
            gathered.alone = False  # "Delete that. I mean my address": it asks
            return


def in_turn(request: ForgetRequest, original: Callable[[int], int]) -> ForgetRequest:
    """``request`` read in a respelled turn, its spans as offsets of the turn's own text
    (``original``: :meth:`.respelling.Respelled.original`)."""
    def span(s: tuple[int, int]) -> tuple[int, int]:
        return original(s[0]), original(s[1])

    return replace(request, sentences=tuple(span(s) for s in request.sentences),
                   earlier=span(request.earlier) if request.earlier else None)


def as_written(request: ForgetRequest, spellings: Sequence[tuple[str, str]]) -> ForgetRequest:
    """``request`` whose targets also match the words as the speaker wrote them
    (``spellings``: (respelled, as written) pairs): a speaker who writes "adress" wrote it
    in the fact too ("Sam's adress is Kastanienallee 12")."""
    swap = {new.lower(): old.lower() for new, old in spellings if new.lower() != old.lower()}
    if not swap or not request.targets:
        return request
    targets = tuple(replace(t, words=tuple(forms | {swap[w] for w in forms if w in swap}
                                           for forms in t.words))
                    for t in request.targets)
    return replace(request, targets=targets)


def _near_person(doc: Doc, tok: Token) -> list[Token]:
    """The words that may name the person ``tok`` names: its children and head, what
    its verb says it is ("Ann's ex is (called) Daniel"), and a capitalised word right
    after it ("Ann's girlfriend Freja ...", however it is tagged)."""
    near = [*tok.children, tok.head]
    if tok.dep_ in ("nsubj", "nsubjpass"):
        verb = tok.head
        near += [c for c in verb.children if c.dep_ in ("attr", "oprd", "dobj")]
        near += [g for c in verb.children if c.dep_ in ("oprd", "xcomp")
                 for g in c.children if g.dep_ in ("oprd", "attr")]
    after = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
    if after is not None and after.is_title and not after.is_stop and after.is_alpha:
        near.append(after)
    return near


def _name_of(tok: Token, n: Token) -> bool:
    """``n`` is a name given to ``tok``: a proper noun, or a capitalised word the tagger
    may call a noun ("Ann's boyfriend Sven"); not ``tok`` itself nor its owner."""
    named = n.pos_ == "PROPN" or (n.is_title and n.i > 0 and (
        n.pos_ == "NOUN" or n.i == tok.i + 1))
    return named and n.i != tok.i and n.dep_ != "poss"


def linked_names(doc: Doc, words: frozenset[str]) -> set[str]:
    """Names given to a person the text names by one of ``words``: "Ann's ex Daniel",
    "Daniel, Ann's ex", "Ann's ex is (called) Daniel" -> {"daniel"}."""
    out: set[str] = set()
    for tok in doc:
        if tok.lemma_.lower() not in words and tok.lower_ not in words:
            continue
        for n in _near_person(doc, tok):
            if _name_of(tok, n):
                out.add(n.lower_)
                out |= {c.lower_ for c in n.children if c.dep_ == "compound"
                        and c.pos_ == "PROPN"}
    return out
