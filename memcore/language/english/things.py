"""An opening "it" (or "that"/"this" said to be "the one ...") resolved to the one thing
the sentence before named: "I bought a Kobo in March. It's already broken" -> "... My
Kobo is already broken"; "my work e-mail is kim@x.example" then "that's the one I
check" -> "My work e-mail kim@x.example is the one I check", so a fact read alone still
says what it is about.

A thing is a noun phrase the sentence before has as subject or direct object that is no
person, no time, no plural and not the speaker; a phone number or e-mail address goes
with the words it is the value of ("my work e-mail" and the address: one thing). The
sentence before is the previous sentence of the turn, or, for a turn's first sentence,
the last sentence of the turn just before it (either speaker's); a question offers no
referent ("would a list help?" - "it would"). Only with exactly one candidate is the
pronoun replaced (a wrong referent is worse than none), and only an "it" that refers:
not the expletive "it" of weather, time and extraposition ("it's raining", "it's been a
long week", "it turns out ...", "it's nice to be home"). "That" and "this" are replies
as often as referents ("that's great!", "that's right"), so they are replaced only as
the subject of "... is the one ..." ("that's the one I use"). Places and events are no
candidates (the object of a preposition is not read): "it was fun" after "we went to
Rome" may mean the trip, so it stays. "It" as the object of liking, said last ("I love
it"), is read the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memcore.language.english import contacts
from memcore.language.english import tables as T
from memcore.language.english.referents import opening_subject

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_OPENERS = frozenset({"and", "but", "so", "then", "now", "also", "oh", "well", "anyway",
                      "honestly", "sadly", "luckily", "unfortunately", "apparently"})
_SUBJECTS = ("nsubj", "nsubjpass")
_THIS_OR_IT = frozenset({"it", "that", "this"})
# Where a thing is introduced: the subject or the direct object of a clause.
_INTRODUCED = frozenset({"nsubj", "nsubjpass", "dobj"})
# Parts of a noun phrase not repeated in its place ("the bike [I bought] [in May]").
_NOT_IN_PHRASE = frozenset({"relcl", "acl", "prep", "punct", "cc", "conj", "advcl",
                            "appos"})
# Weather and time: what an expletive "it" is ("it's raining", "it's been a long week").
_WEATHER_VERBS = frozenset({"rain", "snow", "pour", "drizzle", "hail", "sleet", "thunder",
                            "freeze", "storm", "spit"})
_WEATHER = frozenset({"hot", "cold", "warm", "sunny", "windy", "wet", "humid", "chilly",
                      "freezing", "cloudy", "foggy", "rainy", "stormy", "icy", "dark",
                      "light", "late", "early", "muggy", "mild", "boiling", "baking"})
_TIMES = frozenset({
    "time", "while", "age", "year", "month", "week", "day", "hour", "minute", "second",
    "moment", "morning", "afternoon", "evening", "night", "weekend", "today", "tonight",
    "tomorrow", "yesterday", "midnight", "noon", "season", "spring", "summer", "autumn",
    "fall", "winter", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
    "sunday", "o'clock", "decade", "century", "term", "semester", "fortnight", "degree"})
# Verbs whose "it" is a placeholder for a clause ("it seems ...", "it turns out ...").
_RAISING = frozenset({"seem", "appear", "happen", "turn", "matter", "occur"})
# "It looks like ...", "it feels as if ...".
_LIKE = frozenset({"like", "as"})
# Verbs by which the speaker comes to have a thing: "I bought a Kobo" -> "my Kobo".
_GETTING = frozenset({"buy", "get", "adopt", "own", "have", "order", "rescue", "inherit",
                      "receive", "win", "purchase", "lease", "rent", "build", "acquire",
                      "use", "drive"})
_OWNERS = {"i": "my", "we": "our"}
# Verbs of liking said of a thing: "I love it" -> "I love my Kobo".
_FEELINGS = frozenset({"love", "like", "hate", "adore", "enjoy", "dislike", "loathe",
                       "detest", "miss"})
# People the speaker mentions by a common noun: no "it".
_PEOPLE = T.KIN | frozenset({
    "ex", "wife", "husband", "partner", "girlfriend", "boyfriend", "friend", "boss",
    "colleague", "neighbour", "neighbor", "landlord", "landlady", "flatmate", "roommate",
    "mate", "pal", "teacher", "doctor", "nurse", "dentist", "gp", "client", "manager",
    "father", "dad", "grandma", "grandmother", "grandad", "grandfather", "granny", "aunt",
    "uncle", "cousin", "niece", "nephew", "baby", "fiance", "fiancee", "guy", "man",
    "woman", "girl", "boy", "person", "people", "someone", "everyone", "nobody"})
_LOWER = frozenset({"My", "Our", "The", "His", "Her", "Their", "Your"})
_CONTRACTIONS = {"be": " is", "have": " has", "will": " will", "would": " would"}



def _liked(sent: Span) -> Token | None:
    """The "it" a first-person sentence says the speaker likes or dislikes, said last
    ("I love it", "we hate it already"), not "it" that points ahead ("I hate it when
    ...", "I love it here")."""
    words = [t for t in sent if not t.is_punct and t.lower_ not in _OPENERS]
    if len(words) < 3 or words[0].lower_ not in _OWNERS or words[0].dep_ not in _SUBJECTS:
        return None
    verb = words[0].head
    it = next((c for c in verb.children if c.dep_ == "dobj" and c.lower_ == "it"), None)
    if verb.lemma_.lower() not in _FEELINGS or it is None or any(
            c.dep_ in ("advcl", "ccomp", "xcomp", "prep") for c in verb.children):
        return None
    after = [t for t in words if t.i > it.i]
    return it if all((t.pos_ == "ADV" and t.lower_ not in ("here", "there")) or
                     t.lower_ == "much" for t in after) else None


def _predicate(subject: Token) -> Token:
    """The verb ``subject`` is the subject of (the parser sometimes hangs a subject on
    an auxiliary: "It 's raining")."""
    verb = subject.head
    while verb.dep_ in ("aux", "auxpass") and verb.head.i != verb.i:
        verb = verb.head
    return verb


def _the_one(predicate: Token) -> bool:
    """Is ``predicate`` "... is the one ..." ("that's the one I check")?"""
    return predicate.lemma_ == "be" and any(
        c.dep_ == "attr" and c.lower_ == "one" for c in predicate.children)


def _expletive(pronoun: Token) -> bool:
    """Is this "it" a placeholder (weather, time, a clause said later), not a thing?"""
    verb = _predicate(pronoun)
    kids = list(verb.children)
    if _a_placeholder_verb(verb, kids):
        return True
    if any(c.dep_ == "advcl" and any(m.dep_ == "mark" and m.lower_ in ("when", "if")
                                     for m in c.children) for c in kids):
        return True  # "it annoys me when ..."
    if any(c.dep_ == "prep" and c.lower_ in _LIKE for c in kids):
        return True  # "it looks like we're moving"
    return any(c.dep_ in ("acomp", "attr", "oprd") and _a_time_or_weather(c) for c in kids)


def _a_placeholder_verb(verb: Token, kids: list[Token]) -> bool:
    """A verb whose "it" stands for weather, a clause said later or a stretch of time."""
    deps = {c.dep_ for c in kids}
    if verb.lemma_.lower() in _WEATHER_VERBS | _RAISING or deps & {"ccomp", "csubj"}:
        return True  # "it's raining", "it turns out ...", "it seems ... that ..."
    if any(c.dep_ == "xcomp" and any(a.lower_ == "to" for a in c.children) for c in kids) \
            and (verb.lemma_ != "be" or deps & {"acomp", "attr"}):
        return True  # "it's nice to be home", "it takes an hour to get there"
    # "it's been hectic" (a stretch of time), not "it's been broken"
    return verb.lower_ == "been" and any(c.dep_ == "acomp" and c.tag_ == "JJ" for c in kids)


def _a_time_or_weather(complement: Token) -> bool:
    """"it's so hot", "it's been ages", "it's 40 degrees", "it's me": a complement of
    weather, time, a number or a pronoun."""
    if {complement.lemma_.lower(), complement.lower_} & (_WEATHER | _TIMES) or \
            complement.pos_ in ("NUM", "PRON"):
        return True
    return any(n.dep_ == "nummod" for n in complement.children)  # "it's 40 degrees"


def _pieces(tok: Token) -> list[Token]:
    """The tokens of the written word ``tok`` is part of ("e-bike" -> e, -, bike: the
    tokenizer splits at hyphens and the parser may hang each piece on the verb)."""
    doc, start, end = tok.doc, tok.i, tok.i
    while start > 0 and not doc[start - 1].whitespace_ and _joins(doc[start - 1]):
        start -= 1
    while end + 1 < len(doc) and not doc[end].whitespace_ and _joins(doc[end + 1]):
        end += 1
    return list(doc[start:end + 1])


def _joins(tok: Token) -> bool:
    return not tok.is_punct or tok.text in ("-", "/")


def _phrase(head: Token) -> tuple[int, int] | None:
    """The character span of ``head``'s noun phrase without its clauses and
    prepositional phrases ("the bike I bought in May" -> "the bike")."""
    pieces = _pieces(head)
    dropped: set[int] = set()
    for piece in pieces:
        for child in piece.children:
            if child.dep_ in _NOT_IN_PHRASE and child not in pieces and (
                    child.dep_ != "appos" or _after_comma(child)):
                dropped |= {t.i for t in child.subtree}
    kept = sorted({t.i for piece in pieces for t in piece.subtree} - dropped)
    if kept != list(range(kept[0], kept[-1] + 1)):
        return None  # not contiguous: no phrase to repeat
    last = head.doc[kept[-1]]
    return head.doc[kept[0]].idx, last.idx + len(last.text)


def _after_comma(tok: Token) -> bool:
    """An apposition set off by a comma ("a laptop, a ThinkPad"), not a word the
    tokenizer split ("e - mail")."""
    first = tok.doc[min(t.i for t in tok.subtree)]
    return first.i > 0 and tok.doc[first.i - 1].text == ","


def _a_thing(tok: Token) -> bool | None:
    """True: a thing "it" may mean; False: not a referent of "it" at all (a person, a
    time, a plural, the speaker); None: a word that may be the referent but cannot be
    repeated ("something", a bare name that may be a person's)."""
    if tok.pos_ not in ("NOUN", "PROPN") or tok.is_punct or tok.i != _pieces(tok)[-1].i:
        return False  # a word the tokenizer split counts once, by its last piece
    if tok.dep_ not in _INTRODUCED and not (tok.dep_ == "conj" and tok.head.i != tok.i
                                            and tok.head.dep_ in _INTRODUCED) \
            and not _introduced_by_a_preposition(tok):
        return False  # "a lamp and a rug": two things
    lemma = tok.lemma_.lower()
    if lemma in _PEOPLE or lemma in _TIMES or tok.tag_ in ("NNS", "NNPS"):
        return False
    if lemma in T.NO_VALUE:
        return None
    # "Tom fixed it": a bare name is as likely a person's (he/she) as a thing's.
    return tok.pos_ != "PROPN" or any(t.dep_ in ("det", "poss") and t.i < tok.i
                                      for t in tok.subtree)


def _introduced_by_a_preposition(tok: Token) -> bool:
    """A new thing after a preposition of the verb ("I put my name down *for a cookery
    class*. It is on Tuesdays."): the "it" after it may be that thing as well."""
    return (tok.dep_ == "pobj" and tok.head.dep_ == "prep" and tok.head.head.pos_ == "VERB"
            and any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in tok.children))


def _words(tok: Token) -> str | None:
    """How to name the thing ``tok`` heads in another sentence: its phrase, with the
    name it is called by, "my"/"our" for what the speaker got ("I bought a Kobo" ->
    "my Kobo"), "the" for another's ("a fox" -> "the fox")."""
    span = _phrase(tok)
    if span is None:
        return None
    text = tok.doc.text[span[0]:span[1]]
    first = tok.doc.char_span(span[0], span[1])
    article = first[0] if first is not None and first[0].dep_ == "det" else None
    if article is not None and article.lower_ in ("a", "an", "the"):
        owner = next((c.lower_ for c in tok.head.children if c.dep_ in _SUBJECTS), None)
        if tok.dep_ == "dobj" and tok.head.lemma_.lower() in _GETTING and owner in _OWNERS:
            text = _OWNERS[owner] + text[len(article.text):]
        elif article.lower_ != "the":
            text = "the" + text[len(article.text):]
    called = next((o for c in tok.children if c.dep_ == "acl" and c.lemma_ in ("call", "name")
                   for o in c.children if o.dep_ == "oprd" and o.pos_ == "PROPN"), None)
    return f"{text} {called.text}" if called is not None else text  # "our whippet Pip"


def _contact(sent: Span) -> tuple[str, set[int]] | None:
    """The one phone number or e-mail address ``sent`` gives, named with the words it is
    the value of ("My uni e-mail is x@y.example" -> "My uni e-mail x@y.example"), and
    the tokens those words and the value take (the parse of such sentences is often
    poor, so the value is found by its shape: :mod:`memcore.language.english.contacts`)."""
    found = contacts.values(sent)
    if len(found) != 1:
        return None
    kind, value, at = found[0]
    # The contact noun ("my work e-mail"), else the subject it is said of ("my
    # personal address is x@y.example").
    nouns = [t for t in sent if contacts.contact_kind(t) == kind] or [
        t for t in sent if t.dep_ in _SUBJECTS and t.pos_ == "NOUN" and t.idx < at]
    if not nouns:
        return None
    anchor = min(nouns, key=lambda t: abs(t.idx - at))
    start = anchor
    while start.i > sent.start:
        left = start.doc[start.i - 1]
        if left.whitespace_ and not (left.pos_ in ("ADJ", "NOUN", "PROPN") or
                                     left.dep_ in ("poss", "compound", "amod", "det")):
            break
        start = left
    end = anchor
    while end.i + 1 < sent.end and not end.whitespace_ and not end.doc[end.i + 1].is_punct:
        end = end.doc[end.i + 1]  # the rest of a word the tokenizer split
    phrase = sent.doc.text[start.idx:end.idx + len(end.text)]
    taken = {t.i for t in sent if start.i <= t.i <= end.i or at <= t.idx < at + len(value)}
    return f"{phrase} {value}", taken


def _as_speaker(words: str | None, other: bool) -> str | None:
    """``words`` as the speaker of the next turn would say them: "your" in the other
    party's turn is the speaker's ("Enjoy your new bike!" -> "my new bike"); the other
    party's own "my" is nobody the speaker can name, nor the speaker's own "your"."""
    if words is None:
        return None
    said = words.lower().split()
    if (other and {"my", "our", "mine", "ours"} & set(said)) or (
            not other and {"your", "yours"} & set(said)):
        return None
    if other:
        return " ".join({"your": "my", "Your": "My"}.get(w, w) for w in words.split(" "))
    return words


def things(sent: Span, other: bool = False) -> list[str | None]:
    """The things ``sent`` introduces, as the next sentence's speaker would name them
    (``other``: ``sent`` is the other party's), None for one that may be meant but
    cannot be named; none from a question."""
    if sent.text.rstrip().endswith("?"):
        return [None]
    words = [t for t in sent if not t.is_punct]
    if len(words) == 1 and words[0].like_email:
        return [words[0].text]  # a bare address, the reply to "what's your e-mail?"
    contact = _contact(sent)
    out: list[str | None] = [contact[0]] if contact is not None else []
    taken = contact[1] if contact is not None else set()
    for tok in sent:
        kind = _a_thing(tok) if tok.i not in taken else False
        if kind is True:
            out.append(_words(tok))
        elif kind is None:
            out.append(None)
    return [_as_speaker(w, other) for w in out]


def resolve(doc: Doc, before: Sequence[str | None] = ()) -> str:
    """``doc``'s text with each resolvable opening "it" (or "that"/"this" that "is the
    one ...") replaced by the one thing the sentence before it introduced; ``before``:
    the things of the turn just before (for the first sentence)."""
    edits: list[tuple[int, int, str]] = []
    context: list[str | None] = list(before)
    for sent in doc.sents:
        pronoun = opening_subject(sent, _THIS_OR_IT, _OPENERS)
        if pronoun is None:
            pronoun = _liked(sent)
        found: str | None = None
        if pronoun is not None and _stands_for_a_thing(pronoun):
            names = set(context)
            if len(names) == 1 and None not in names:
                (found,) = names
        if found is not None and pronoun is not None:
            edits.append(_edit(pronoun, found))
        context = things(sent) if found is None else [found]
    text = doc.text
    for start, end, words in reversed(edits):
        text = text[:start] + words + text[end:]
    return text


def _stands_for_a_thing(pronoun: Token) -> bool:
    """An "it" that is no placeholder (or an object), a "that"/"this" that "is the one"."""
    if pronoun.lower_ != "it":
        return _the_one(_predicate(pronoun))
    return pronoun.dep_ == "dobj" or not _expletive(pronoun)


def _edit(pronoun: Token, found: str) -> tuple[int, int, str]:
    """``(start, end, words)``: the thing's words in place of the pronoun (and of a
    contracted verb after it), capitalized as the pronoun was."""
    end, words = pronoun.idx + len(pronoun.text), found
    nxt = pronoun.doc[pronoun.i + 1] if pronoun.i + 1 < len(pronoun.doc) else None
    if nxt is not None and nxt.text[:1] in "'\u2019" and nxt.lemma_ in _CONTRACTIONS:
        # "that's" -> "... is": a "'s" after an address or number reads badly
        end, words = nxt.idx + len(nxt.text), words + _CONTRACTIONS[nxt.lemma_]
    if pronoun.text[:1].isupper() and "@" not in words.split()[0]:
        words = words[:1].upper() + words[1:]
    elif not pronoun.text[:1].isupper() and words.split()[0] in _LOWER:
        words = words[:1].lower() + words[1:]  # "and it's" -> "and my Kobo's"
    return pronoun.idx, end, words


def last_things(doc: Doc, other: bool = False) -> list[str | None]:
    """The things the last sentence of ``doc`` introduces, for the next turn (``other``:
    ``doc`` is the other party's turn, the assistant's)."""
    sents = list(doc.sents)
    return things(sents[-1], other) if sents else []
