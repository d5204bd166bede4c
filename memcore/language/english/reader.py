"""One fact's frame from its parse: subject, attribute, value, polarity, event."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.language.english import tables as T
from memcore.language.english.contacts import PHONE_MODIFIERS, qualifier
from memcore.language.english.doses import dose, patient
from memcore.language.english.numbers import age_value
from memcore.language.english.places import is_place_name

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

RawFrame = tuple[str, str, str, int, str]
_SUBJECTS = ("nsubj", "nsubjpass")
_OBJECTS = ("dobj", "obj", "attr", "oprd")
# Dependents that are not part of a value ("the", "his", "in 2024", "which ...").
_NOT_VALUE = frozenset({"det", "poss", "case", "punct", "prep", "relcl", "acl", "advcl",
                        "cc", "neg", "aux", "auxpass", "advmod", "predet", "quantmod"})
_VALUE_DEPS = frozenset({"compound", "amod", "nummod", "nmod", "flat", "appos", "conj",
                         "npadvmod", "poss"})


def _word(tok: Token) -> str:
    """A token as values compare it: proper nouns and numbers as written, others by lemma."""
    if tok.pos_ in ("PROPN", "NUM") or tok.like_num or "@" in tok.text or (
            tok.tag_ == "NNS" and is_place_name(tok.text)):  # "leeds", not "leed"
        return tok.text.lower()
    return tok.lemma_.lower()


def _in_a_name(poss: Token) -> bool:
    """A name's possessive that is part of a name ("St Anne's Primary", "Sam's Bakery"),
    not an owner ("Kenji's sister")."""
    return poss.dep_ == "poss" and poss.pos_ == "PROPN" and poss.head.pos_ == "PROPN"


def _named_by_possessive(tok: Token) -> bool:
    """A name whose possessive owns nothing after it: the place's name itself ("works at
    Guy's", "shops at Sainsbury's")."""
    return tok.pos_ == "PROPN" and tok.dep_ != "poss" and any(
        c.dep_ == "case" and c.i > tok.i for c in tok.children)


def _in_brackets(tok: Token) -> bool:
    """A phrase set apart in brackets ("Hamburg (Nordhafen Logistik)"): an aside, no part
    of the value before it."""
    start = tok.left_edge.i
    return tok.doc[start].text == "(" or (start > 0 and tok.doc[start - 1].text == "(")


def _negated_alternative(child: Token) -> bool:
    """An apposition or conjunct the speaker denies ("Guy's, not St Thomas'", "tea and
    not coffee"): no part of the value it hangs on."""
    if child.dep_ not in ("appos", "conj"):
        return False
    head = child.head
    return any(c.dep_ == "neg" for c in child.children) or any(
        c.dep_ == "neg" and head.i < c.i < child.i for c in head.children)


def _set_apart(child: Token) -> bool:
    """A phrase after a value that is no part of it: an aside in brackets, a denied
    alternative."""
    return _in_brackets(child) or _negated_alternative(child)


def _value(tok: Token) -> str:
    """The value a token heads: the token with its modifiers, names and conjuncts, not
    its determiners, prepositions or clauses."""
    words: list[str] = []

    def walk(t: Token) -> None:
        for child in t.lefts:
            if child.dep_ in _VALUE_DEPS and (child.dep_ != "poss" or _in_a_name(child)):
                walk(child)
        if t.dep_ == "nummod" and t.head.pos_ == "NOUN":
            return  # "two cats": how many is no part of what ("Python 3.11": which one)
        if t.pos_ != "PUNCT" and t.dep_ not in ("det", "case", "cc"):
            words.append(_word(t))
        for child in t.rights:
            if child.dep_ in _VALUE_DEPS and child.pos_ not in ("VERB", "AUX") \
                    and not _set_apart(child):
                walk(child)
        for of, name in _name_of(t):  # "the University of Edinburgh"
            words.append(of.lower_)
            walk(name)
        run = _misparsed_compound(t)
        if run is not None:  # "a machine learning engineer" read as "machine (learning
            words.append(_word(run[0]))  # an engineer)"
            walk(run[1])

    walk(tok)
    return " ".join(w for w in words if w and w not in ("'s", "-"))


def _misparsed_compound(tok: Token) -> tuple[Token, Token] | None:
    """``(gerund, noun)`` when a compound noun was parsed as a noun with a clause:
    "machine learning engineer" as "machine" + acl "learning" + dobj "engineer", all
    three adjacent, the last a job or study word; else None."""
    gerund = next((c for c in tok.rights if c.dep_ == "acl" and c.tag_ == "VBG"
                   and c.i == tok.i + 1), None)
    if gerund is None:
        return None
    noun = next((c for c in gerund.rights if c.dep_ == "dobj" and c.i == gerund.i + 1
                 and c.pos_ == "NOUN"), None)
    if noun is None or noun.lemma_.lower() not in T.JOB_NOUNS | T.STUDY_NOUNS:
        return None
    return gerund, noun


def _name_of(tok: Token) -> list[tuple[Token, Token]]:
    """A name's "of <name>" part ("University *of Edinburgh*", "Bank *of Ireland*")."""
    if tok.pos_ != "PROPN":
        return []
    return [(prep, pobj) for prep in tok.rights if prep.dep_ == "prep" and prep.lower_ == "of"
            for pobj in prep.children if pobj.dep_ == "pobj" and pobj.pos_ == "PROPN"]


def surface(tok: Token) -> str:
    """The value ``tok`` heads as written (same tokens as :func:`_value`)."""
    keep: list[Token] = []

    def walk(t: Token) -> None:
        for child in t.lefts:
            if child.dep_ in _VALUE_DEPS and (child.dep_ != "poss" or _in_a_name(child)):
                walk(child)
        if t.dep_ == "nummod" and t.head.pos_ == "NOUN" and t.head.i != t.i:
            return
        if t.pos_ != "PUNCT" and t.dep_ not in ("det", "case", "cc"):
            keep.append(t)
        if _in_a_name(t) or _named_by_possessive(t):  # "St Anne's", "at Guy's": its 's too
            keep.extend(c for c in t.children if c.dep_ == "case")
        for child in t.rights:
            if child.dep_ in _VALUE_DEPS and child.pos_ not in ("VERB", "AUX") \
                    and not _set_apart(child):
                walk(child)
        for of, name in _name_of(t):
            keep.append(of)
            walk(name)

    walk(tok)
    keep.sort(key=lambda t: t.i)
    out = ""
    for i, t in enumerate(keep):
        gap = i > 0 and (keep[i - 1].i != t.i - 1 or keep[i - 1].whitespace_)
        out += (" " if gap else "") + t.text
    return out


def _contactish(tok: Token) -> bool:
    return tok.like_num or tok.like_email or any(c.isdigit() for c in tok.text) or \
        tok.text in ("+", "-", "(", ")")


def contact_value(tok: Token) -> str:
    """A phone number, e-mail or address as written: the run of number-like tokens
    around ``tok`` ("0171 555 0199" is parsed as three), else its subtree."""
    if not _contactish(tok):
        span = tok.doc[tok.left_edge.i:tok.right_edge.i + 1]
        return span.text.strip(" .,;")
    start = end = tok.i
    while start > 0 and _contactish(tok.doc[start - 1]):
        start -= 1
    while end + 1 < len(tok.doc) and _contactish(tok.doc[end + 1]):
        end += 1
    return tok.doc[start:end + 1].text.strip(" .,;")


def _negated(tok: Token) -> bool:
    """Is the clause headed by ``tok`` negated ("not", "never", "no longer", "anymore")?
    Its own dependents and those of its complement count, not nested clauses'."""
    near = list(tok.children)
    near += [g for c in near if c.dep_ in ("acomp", "attr", "advmod", "npadvmod", "dobj")
             for g in c.children]
    return any(c.dep_ == "neg" or c.lower_ in T.NEGATING_ADVERBS for c in near)


def _subject(tok: Token) -> tuple[str, Token | None]:
    """The subject of the clause ``tok`` heads and the subject noun when it is possessed
    ("Kenji's phone number": ("kenji", number))."""
    for child in tok.children:
        if child.dep_ in _SUBJECTS:
            owner = next((c for c in child.children if c.dep_ == "poss"), None)
            if child.pos_ == "PROPN" and owner is not None:
                return child.text.lower(), None  # "Kenji's sister Lin is ...": about Lin
            name = next((c for c in child.children if c.dep_ in ("appos", "compound")
                         and c.pos_ == "PROPN"), None)
            if (owner is not None and name is not None
                    and child.lemma_.lower() in T.KIN | T.PETS):
                return name.text.lower(), None  # "Kenji's sister Lin is ...": about Lin
            if owner is not None and child.pos_ == "NOUN":
                return owner.text.lower().removesuffix("'s"), child
            return child.text.lower(), None
    # "Kenji loves climbing" parsed with "loves" as an auxiliary: the subject hangs on it
    aux = next((c for c in tok.children if c.dep_ == "aux" and _taste_lemma(c)), None)
    return _subject(aux) if aux is not None else ("", None)


def _prep_object(tok: Token, preps: tuple[str, ...] | None = None) -> tuple[str, Token] | None:
    """The first ``prep -> pobj`` of ``tok`` (optionally only those prepositions)."""
    for child in tok.children:
        if child.dep_ in ("prep", "agent", "dative") and (preps is None
                                                          or child.lower_ in preps):
            pobj = next((c for c in child.children if c.dep_ == "pobj"), None)
            if pobj is not None:
                return child.lower_, pobj
    return None


def _object(tok: Token) -> Token | None:
    return next((c for c in tok.children if c.dep_ in _OBJECTS), None)


def _particle(tok: Token) -> str:
    return next((c.lower_ for c in tok.children if c.dep_ == "prt"), "")


def _usable(value: str) -> bool:
    return bool(value) and value not in T.NO_VALUE


def _kin_or_pet(noun: Token) -> tuple[str, str] | None:
    """("relation:sister", "lin") for "sister Lin", ("owns", "dog rex") for a pet."""
    lemma = noun.lemma_.lower()
    named = next((c for c in noun.children if c.dep_ in ("appos", "compound")
                  and c.pos_ == "PROPN"), None)
    for acl in (c for c in noun.children if c.dep_ == "acl"
                and c.lemma_.lower() in ("name", "call")):  # "a sister named Lin"
        named = next((c for c in acl.children if c.dep_ in ("oprd", "attr", "dobj")), named)
    if lemma in T.KIN:
        return f"relation:{lemma}", named.text.lower() if named is not None else lemma
    if lemma in T.PETS:
        return "owns", _value(noun)
    if noun.pos_ == "PROPN":
        head = next((c for c in noun.children if c.dep_ == "compound"
                     and c.lemma_.lower() in T.KIN | T.PETS), None)
        if head is not None:
            kind = head.lemma_.lower()
            return (f"relation:{kind}" if kind in T.KIN else "owns"), _value(noun)
    return None


def _instruction(root: Token, subject: str) -> RawFrame | None:
    """"<subject> asks the assistant to [not|stop] <verb> <object>"."""
    xcomp = next((c for c in root.children if c.dep_ in ("xcomp", "ccomp")), None)
    if xcomp is None:
        # "asks the assistant to always write ...": the parser may hang the verb on
        # "assistant" as a relative clause
        listener = next((c for c in root.children if c.dep_ == "dobj"), None)
        xcomp = next((c for c in listener.children if c.dep_ in ("relcl", "acl")
                      and c.tag_ == "VB" and any(a.lower_ == "to" for a in c.children)),
                     None) if listener is not None else None
    if xcomp is None:
        return None
    polarity = -1 if _negated(xcomp) or _negated(root) else 1
    verb = xcomp
    if xcomp.lemma_.lower() in T.WITHDRAW:
        polarity = -1
        inner = next((c for c in xcomp.children if c.dep_ in ("xcomp", "pcomp", "ccomp")), None)
        verb = inner if inner is not None else xcomp
    target = _instructed_thing(verb, subject)
    if target is None:
        if verb is xcomp and polarity > 0:
            return subject, f"instruction:{verb.lemma_.lower()}", verb.lemma_.lower(), 1, ""
        return None
    key = target.lemma_.lower()
    purpose = _prep_object(verb, ("for",))  # "use plotly for plots": about plots
    if purpose is not None and purpose[1].pos_ == "NOUN":
        key = purpose[1].lemma_.lower()
    key = T.INSTRUCTION_THINGS.get(key, key)
    value = _qualified(target, verb)
    # "keep answers short": how the thing is to be is part of the value
    value += "".join(f" {_word(c)}" for c in verb.children if c.dep_ in ("oprd", "acomp"))
    return subject, f"instruction:{key}", value, polarity, ""


def _instructed_thing(verb: Token, speaker: str = "") -> Token | None:
    """What an instruction's verb is about: its object or complement, else the object
    of a preposition under it or under an adverb of it ("go back to short answers").
    The speaker as the object is whom it is for, not what ("answer Sam in bullet
    points": the bullet points)."""
    target = _object(verb) or next((c for c in verb.children if c.dep_ in ("acomp", "dobj")),
                                   None)
    def spoken_for(tok: Token) -> bool:
        return bool(speaker) and tok.lower_ == speaker.lower() and tok.pos_ in ("PROPN", "NOUN")

    heads = [verb, *(c for c in verb.children if c.dep_ == "advmod")]
    if target is not None:
        if not spoken_for(target):
            return target
        heads.insert(0, target)  # "answer Sam in bullet points": the parser hangs it there
    for head in heads:
        for prep in (c for c in head.children if c.dep_ in ("prep", "agent", "dative")):
            pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
            if pobj is not None and not spoken_for(pobj):
                return pobj
            if pobj is not None:
                heads.append(pobj)  # "reply to Sam in Spanish": Spanish, hung on Sam
    return None


def _qualified(target: Token, verb: Token) -> str:
    """An instruction's object with the phrases that qualify it ("code examples *in
    Kotlin*", "headings *in long answers*"): two instructions about one thing differ
    by them. Times ("from now on") are no qualifier."""
    words = [_value(target)]
    for head in (target, verb):
        for prep in head.children:
            if prep.dep_ != "prep" or prep.i < verb.i:
                continue
            pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
            if pobj is not None and pobj.i != target.i and pobj.pos_ in ("NOUN", "PROPN") and \
                    pobj.ent_type_ not in ("DATE", "TIME") and pobj.lower_ not in T.NO_VALUE:
                words.append(f"{prep.lower_} {_value(pobj)}")
    return " ".join(words)


def _copula(root: Token, subject: str, possessed: Token | None) -> RawFrame | None:
    """"<subject>'s <noun> is <value>", "<subject> is <diet|age|job>", healed ailments."""
    polarity = -1 if _negated(root) else 1
    complement = next((c for c in root.children if c.dep_ in ("attr", "acomp", "oprd")), None)
    if possessed is not None:
        return _possessed_copula(root, subject, possessed, complement, polarity)
    inverted = _inverted(root, complement)
    if inverted is not None:  # "Python is my main language": my main language is Python
        owner, noun, value = inverted
        return _possessed_copula(root, owner, noun, value, polarity, inverted=True)
    if not subject:
        return None
    if complement is None:
        return _based_in(root, subject, polarity)
    return _complement_frame(complement, subject, polarity) or _what_named_one_is(
        root, complement, polarity)


def _inverted(root: Token, complement: Token | None) -> tuple[str, Token, Token] | None:
    """``(owner, noun, value)`` of "<value> is <owner>'s <noun>" where the noun names an
    attribute ("Python is my main language", "Helen is my wife"), or None. The value
    must be a name or a thing, not a pronoun ("he is my brother" says who he is)."""
    if complement is None or complement.pos_ != "NOUN" or (
            noun_attribute(complement) is None and _kin_or_pet(complement) is None):
        return None
    owner = next((c for c in complement.children if c.dep_ == "poss"), None)
    value = next((c for c in root.children if c.dep_ in _SUBJECTS), None)
    lefts = [t for t in root.lefts if not t.is_punct]
    if value is None and len(lefts) == 1 and lefts[0].text[:1].isupper():
        value = lefts[0]  # "Java is my main language": a name the tagger took for an adverb
    elif value is not None and value.pos_ not in ("PROPN", "NOUN"):
        return None
    if owner is None or value is None:
        return None
    return owner.text.lower().removesuffix("'s"), complement, value


def _what_named_one_is(root: Token, complement: Token, polarity: int) -> RawFrame | None:
    """"Sam's dog Biscuit is a beagle": what the named pet or relative is, as a fact whose
    subject is them (so their end ends it: "Biscuit died")."""
    kin = next((c for c in root.children if c.dep_ == "nsubj" and c.pos_ == "NOUN"
                and _kin_or_pet(c) is not None), None)
    if kin is None or complement.pos_ != "NOUN":
        return None
    named = next((c for c in kin.children if c.dep_ in ("appos", "compound")
                  and c.pos_ == "PROPN"), None)
    after = kin.doc[kin.i + 1] if kin.i + 1 < len(kin.doc) else None
    if named is None and after is not None and after.pos_ == "PROPN" \
            and after.dep_ == "nsubj" and after.head.i == root.i:
        named = after  # "Ola's rabbit Clover is ...", parsed as two subjects
    if named is None:
        return None
    value = _value(complement)
    return (named.text.lower(), "kind", value, polarity, "") if _usable(value) else None


def _possessed_copula(root: Token, subject: str, possessed: Token, complement: Token | None,
                      polarity: int, inverted: bool = False) -> RawFrame | None:
    """"<subject>'s <noun> is <value>": the noun names the attribute, or a relative or
    pet the sentence is about. ``inverted``: read from "<value> is <subject>'s <noun>",
    where the noun is the complement itself, so the sentence is not about it (reading it
    so would invert the clause again, without end)."""
    if complement is not None and complement.lemma_.lower() in T.HEALED:
        return subject, "health", _value(possessed), 1, "end"
    if complement is None:
        return None
    owned = f"{subject}'s {possessed.lemma_.lower()}"
    value = _value(complement)
    attribute = noun_attribute(possessed)
    if attribute is not None and attribute.startswith("relation:") and \
            complement.pos_ != "PROPN":
        # "Dan's wife is a paramedic": about the wife, not who she is
        return None if inverted else _copula(root, owned, None)
    if attribute is None:
        kin = _kin_or_pet(possessed)
        if kin is None or complement.pos_ != "PROPN":
            # "Kenji's sister is a doctor": about the sister
            return _copula(root, owned, None) if kin is not None and not inverted else None
        attribute = kin[0]
        value = complement.text.lower()
    if attribute.startswith("contact:"):
        value = contact_value(complement).lower()
    if not _usable(value):
        return None
    return subject, attribute, value, polarity, ""


def _in_a_place(root: Token) -> Token | None:
    """"we're in Norwich": the town or city a present "be in" names, said with nothing
    else ("I'm in Paris this week / for work / until Friday / at the moment" is a stay,
    "is in hospital" no place)."""
    subject = next((c for c in root.children if c.dep_ == "nsubj"), None)
    if subject is None or subject.pos_ not in ("PRON", "PROPN") or root.tag_ not in (
            "VBZ", "VBP") or any(
            c.dep_ in ("npadvmod", "advmod", "advcl", "prep") and c.lower_ != "in"
            for c in root.children):
        return None
    preps = [c for c in root.children if c.dep_ == "prep"]
    if len(preps) != 1:
        return None
    place = next((c for c in preps[0].children if c.dep_ == "pobj"), None)
    if place is None or any(c.dep_ == "prep" for c in place.children):
        return None
    return place if is_place_name(place.text) else None


def _based_in(root: Token, subject: str, polarity: int) -> RawFrame | None:
    """A copula without a complement: "is based in <place>", "is (originally) from
    <place>" (where someone comes from)."""
    based = next((c for c in root.children if c.lemma_.lower() == "base"), None)
    if based is None and (home := _in_a_place(root)) is not None:
        return subject, "residence", _value(home), polarity, ""
    if based is None:
        origin = _prep_object(root, ("from",))
        if origin is None or origin[1].pos_ != "PROPN":
            return None  # "is from work", "is from 9 to 5": no place named
        return subject, "origin", _value(origin[1]), polarity, ""
    found = _prep_object(based, ("in", "at"))
    if not found:
        return None
    return subject, "residence", _value(found[1]), polarity, ""


def _complement_frame(complement: Token, subject: str, polarity: int) -> RawFrame | None:
    """"<subject> is <complement>": a diet, an age, a partner, a name or a job."""
    lemma = complement.lemma_.lower()
    if lemma in T.DIETS:
        return subject, "diet", lemma, polarity, ""
    if complement.like_num:  # "is 31", "am seventy-four": in digits, as ages compare
        years = age_value(complement)  # "Mill Lane is 725": no age
        return (subject, "age", years, polarity, "") if years is not None else None
    if lemma == "old" and any(c.like_num for c in complement.subtree):  # "is 31 years old"
        # The last number word: age_value reads back from it ("thirty one years old").
        number = next((c for c in reversed(list(complement.subtree)) if c.like_num), None)
        return (subject, "age", age_value(number) or _value(number), polarity, "") \
            if number is not None else None
    if lemma == "married":
        found = _prep_object(complement, ("to",))
        if found:
            return subject, "relation:partner", _value(found[1]), polarity, ""
        return None
    if lemma in T.HEALED and polarity > 0:
        return None
    if _names_the_speaker(complement, subject):
        return subject, "name", _word(complement), polarity, ""  # "I'm Dave"
    if _job_complement(complement, lemma):
        return subject, "job", _value(complement), polarity, ""
    return None


def _names_the_speaker(complement: Token, subject: str) -> bool:
    """"I'm Dave": a bare proper noun the speaker is."""
    return (complement.pos_ == "PROPN" and subject in ("i", "me")
            and not list(complement.lefts)
            and not any(c.dep_ == "prep" for c in complement.children))


def _job_complement(complement: Token, lemma: str) -> bool:
    """Does the complement name an occupation? "is a nurse", "is the Courier's health
    correspondent", "is architect" (an article dropped, as many non-native speakers
    do), "I am chef" (parsed as an adjective)."""
    if complement.dep_ == "acomp" and lemma in T.JOB_NOUNS:
        return True
    if complement.pos_ != "NOUN" or not is_job(lemma):
        return False
    articled = any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in complement.children)
    bare = complement.tag_ == "NN" and not any(
        c.dep_ == "det" or (c.dep_ == "poss" and c.pos_ == "PRON")  # "my boss": a person
        for c in complement.children)
    return articled or bare or lemma in T.JOB_NOUNS


def is_job(lemma: str) -> bool:
    """Is a noun with this lemma an occupation ("nurse", "driver"; not "fan")?"""
    if lemma in T.NOT_JOB:
        return False
    return lemma in T.JOB_NOUNS or lemma in T.STUDY_NOUNS or (
        len(lemma) > 4 and lemma.endswith(T.JOB_SUFFIXES))


def noun_attribute(noun: Token) -> str | None:
    """The frame attribute of "<subject>'s <noun> is <value>"; a contact qualified as
    :mod:`.contacts` qualifies it ("home number": ``contact:phone:home``), so the two
    readings of one sentence agree and a home number never retires the mobile."""
    attribute = _unqualified_attribute(noun)
    if attribute in ("contact:phone", "contact:email") and qualifier(noun):
        return f"{attribute}:{qualifier(noun)}"
    return attribute


def _unqualified_attribute(noun: Token) -> str | None:
    lemma = noun.lemma_.lower()
    mods = {c.lemma_.lower() for c in noun.children if c.dep_ in ("amod", "compound")}
    if mods & T.FAVOURITE:
        return f"favorite:{lemma}"
    if lemma in ("address", "number", "id") and mods:
        for mod in mods:
            if mod in T.CONTACT_COMPOUNDS:
                return T.CONTACT_COMPOUNDS[mod]
    if lemma == "number" and mods - PHONE_MODIFIERS:
        return None  # "my lucky number", "my shoe number": no phone (as contacts.py reads it)
    if lemma == "language" and not mods & {"main", "primary", "first", "native"}:
        return "speaks"
    return T.NOUN_FRAMES.get(lemma)


def _end_event(root: Token, subject: str, possessed: Token | None) -> RawFrame | None:
    """Something ended: "sold his bike", "left the club", "Kenji's dog Rex died",
    "recovered from the flu", "broke up with Sam", "switched from vim to neovim"."""
    lemma = root.lemma_.lower()
    particle = _particle(root)
    if _goes_missing(root, lemma):
        return _went_missing(root, subject)
    if lemma in T.SWITCH_VERBS:
        target = _switched_from(root, lemma)
        if target is None:
            return None
    elif (lemma, particle) in T.ENDS_ONLY_ALONE:
        if _object(root) is not None or _prep_object(root, ("with", "from")) is not None:
            return None  # "split the bill", "split from the group": no partner's end
        return _nothing_named_ended(root, lemma, particle, subject, possessed)
    elif lemma in T.END_VERBS or (lemma, particle) in T.END_PHRASAL:
        ended = _ended(root, lemma, particle, subject, possessed)
        if ended is None or isinstance(ended, tuple):
            return ended
        target = ended
    else:
        return None
    after = root.doc[root.i + 1] if root.i + 1 < len(root.doc) else None
    if lemma == "leave" and after is not None and after.lower_ in T.BODY_PARTS:
        return None  # "left Achilles": a side, no leaving
    if target.lemma_.lower() in ("job", "work", "position", "post", "role"):
        place = _prep_object(target, ("at", "with", "for")) or _prep_object(
            root, ("at", "with", "for"))
        if place is None:  # "quit his job": the job ends, whatever it was
            return subject, "job", "", 1, "end"
        target = place[1]
    value = _value(target)
    if not _usable(value):
        return None
    return subject, "end", value, 1, "end"


def _goes_missing(root: Token, lemma: str) -> bool:
    """"ran away", "went missing", "disappeared" ("got lost" is left out: people get lost
    on the way and arrive)."""
    word = next((c.lower_ for c in root.children if c.lower_ in T.MISSING_WORDS
                 and c.dep_ in ("prt", "advmod", "advcl", "acomp", "xcomp")), "")
    return (lemma, word) in T.MISSING


def _went_missing(root: Token, subject: str) -> RawFrame | None:
    """A named pet or thing that went missing ended ("Mochi ran away", "Rex went
    missing"); a person, the speaker, a pronoun or an unnamed thing did not, nor one that
    ran away from something other than home, with someone or for a while ("Tom ran away
    from the bull")."""
    subj = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if (subj is None or subj.pos_ != "PROPN" or subj.ent_type_ == "PERSON"
            or not _usable(subject) or "'s " in subject):
        return None  # "the money vanished": which money is not said
    for word in (root, *(c for c in root.children if c.lower_ in T.MISSING_WORDS)):
        found = _prep_object(word, ("from", "with", "for"))
        if found is not None and (found[0] != "from"
                                  or found[1].lemma_.lower() not in T.LEFT_HOME):
            return None  # "ran off with the postman", "from the bull", "for a week"
    return subject, "end", subject, 1, "end"


def _switched_from(root: Token, lemma: str) -> Token | None:
    """What a switch left: "switched from vim", "replaced the old car"."""
    found = _prep_object(root, ("from",))
    if found is not None:
        return found[1]
    if lemma in ("replace", "swap", "trade", "exchange"):
        return _object(root)
    return None


def _ended(root: Token, lemma: str, particle: str, subject: str, possessed: Token | None
           ) -> Token | RawFrame | None:
    """What an ending verb ended: the thing (a token, its frame still to write), or the
    frame itself when no thing is named, or None."""
    if (lemma, particle) == ("move", "out"):
        found = _prep_object(root, ("of",))
        target = found[1] if found else None
    else:
        target = _object(root)
    if target is not None and target.pos_ == "VERB":  # "stopped running": the habit
        return subject, "end", target.lemma_.lower(), 1, "end"
    if target is not None:
        return target
    xcomp = next((c for c in root.children if c.dep_ in ("xcomp", "pcomp")), None)
    if xcomp is not None:
        inner = _object(xcomp)
        value = _value(inner) if inner is not None else xcomp.lemma_.lower()
        return subject, "end", value, 1, "end"
    found = _prep_object(root, ("from", "with", "of", "on"))
    if found is not None and not _a_time(found[1]):
        return found[1]
    return _nothing_named_ended(root, lemma, particle, subject, possessed)


def _a_time(tok: Token) -> bool:
    """A date or a time of day ("on 10 January", "on Friday"), not a thing."""
    return tok.lower_ in T.TIME_NOUNS or tok.like_num


def _a_person(root: Token) -> bool:
    """The clause's subject is a person: a name or a pronoun ("Jo", "she", "I")."""
    subj = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    return subj is not None and (subj.pos_ == "PRON" or subj.ent_type_ == "PERSON" or (
        subj.pos_ == "PROPN" and subj.ent_type_ in ("", "PERSON")))


def _nothing_named_ended(root: Token, lemma: str, particle: str, subject: str,
                         possessed: Token | None) -> RawFrame | None:
    """An ending that names no thing: "Ann broke up" (her partner), "Kenji's dog Rex
    died" (the possessed thing), "Rex died" (the subject); "Ann retired": nothing."""
    if (lemma, particle) in T.ENDED_ATTRIBUTE:  # "Ann broke up": her partner
        return subject, T.ENDED_ATTRIBUTE[(lemma, particle)], "", 1, "end"
    if lemma in T.HEALED_VERBS and possessed is not None:  # "Ann's wrist has mended"
        return subject, "health", _value(possessed), 1, "end"
    if lemma not in T.SELF_ENDING or particle in T.RESULT_PARTICLES:
        return None  # "Ann retired", "Ann quit": nothing named; "ended up at ...": no end
    if lemma not in T.LIFE_ENDING and _a_person(root):
        return None  # "Jo finished at five", "Jo ended up at the walk-in": Jo goes on
    if possessed is not None:  # "Kenji's dog Rex died": the possessed thing ended
        return subject, "end", _value(possessed), 1, "end"
    if subject and subject not in T.NO_VALUE:  # "Rex died": the subject ended
        return subject, "end", subject, 1, "end"
    return None


def _clause_root(doc: Doc | Span) -> Token:
    sent = next(iter(doc.sents), None) if hasattr(doc, "sents") else None
    return sent.root if sent is not None else doc[0]


def read_frame(doc: Doc) -> RawFrame | None:
    """The frame of a parsed fact text, or None when no table knows its attribute."""
    if not len(doc):
        return None
    root = _clause_root(doc)
    return _contracted_age(doc) or read_clause(root) or _spliced_clause(root)


def _spliced_clause(root: Token) -> RawFrame | None:
    """The frame of a clause spliced before the root with a comma, which the parser
    hangs on the clause after it ("Sam moved to York on 5 February, the new flat is
    great": "moved" under "is"), when the root's own clause gives none."""
    comma = next((c for c in root.children if c.text == "," and c.i < root.i), None)
    if comma is None:
        return None
    first = next((c for c in root.children if c.dep_ == "ccomp" and c.i < comma.i
                  and c.pos_ in ("VERB", "AUX")), None)
    frame = read_clause(first) if first is not None else None
    # a bare "has" says too little to read past the root ("Leo has now 7 years, time
    # flies" is an age the text rules read)
    return frame if frame is not None and frame[1] != "has" else None


def _contracted_age(doc: Doc) -> RawFrame | None:
    """"Sam's 18.", "Alfie's two and a half.": chat's "<name> is <age>", which the
    parser reads as a possessive; None for anything else."""
    words = [t for t in doc if not t.is_punct]
    if len(words) < 3 or words[0].pos_ != "PROPN" or words[1].lower_ not in ("'s", "\u2019s"):
        return None
    number = words[2]
    rest = {t.lower_ for t in words[3:]}
    if not number.like_num or not rest <= {"and", "a", "half", "years", "old", "year"}:
        return None
    years = age_value(number)
    return (words[0].lower_, "age", years, 1, "") if years is not None else None


def read_clause(root: Token, inherited: tuple[str, Token | None] = ("", None)
                ) -> RawFrame | None:
    """The frame of the clause ``root`` heads; ``inherited``: the subject of a clause
    that has none of its own ("I'm 19, live in Leeds": "live" shares "I")."""
    subject, possessed = _subject(root)
    if not subject:
        subject, possessed = inherited
    if not subject and root.lemma_ == "be":  # "Java is my main language", "Java" mis-tagged
        return _copula(root, "", None)
    if not subject or subject in T.NO_VALUE:
        return None
    lemma = root.lemma_.lower()
    negated = _negated(root)
    medicine = dose(root)
    if medicine is not None and (who := patient(subject, possessed, root)):
        # "takes 5mg of amlodipine", "the consultant increased the amlodipine to 10mg"
        return who, f"dose:{medicine[0]}", medicine[1], -1 if negated else 1, ""
    copula = lemma == "be" or root.pos_ == "AUX"
    if possessed is not None and not copula and lemma not in T.HEALED_VERBS:
        # "my sister lives in Leeds": about the sister, not the speaker
        subject, possessed = f"{subject}'s {possessed.lemma_.lower()}", None
    if _asks_the_assistant(root, lemma):
        return _instruction(root, subject)
    if copula:
        return _copula(root, subject, possessed)
    if not negated:
        ended = _end_event(root, subject, possessed)
        if ended is not None:
            return ended
    return _verb_frame(root, lemma, subject, -1 if negated else 1)


def _verb_frame(root: Token, lemma: str, subject: str, polarity: int) -> RawFrame | None:
    """The frame a verb other than "be" gives: an age turned, its object, a thing taken
    up, the object of one of its prepositions, or the job it is done as."""
    called = _wants_to_be_called(root, lemma)
    if called is not None:  # "wants to be called Lena": what to call them
        return subject, "name", _value(called), polarity, ""
    planned = _planned_getting(root, lemma)
    if planned is not None:  # "thinking about getting a road bike": a plan to own one
        return subject, "plan:owns", _value(planned), polarity, "plan"
    lemma = _taste_lemma(root) or lemma  # "hates": the small lemmatizer says "hat"
    taste = _activity_taste(root, lemma)
    if taste is not None:  # "enjoys running", "loves climbing"
        return subject, *taste, polarity, ""
    obj = _object(root)
    if lemma == "turn" and obj is not None and obj.like_num:  # "Alfie turned three"
        return subject, "age", age_value(obj) or _value(obj), polarity, ""
    years = _years_had(lemma, obj)
    if years is not None:  # "I have 44 years": the age, as Spanish or Italian say it
        return subject, "age", years, polarity, ""
    employer = _post_taken(root, lemma, obj) if polarity > 0 else None
    if employer is not None:  # "got a job at Acme": works at Acme
        return subject, "employer", _value(employer), polarity, ""
    if obj is not None and _frames_its_object(lemma):
        return _object_frame(lemma, obj, subject, polarity)
    adopted = _adopted(root, obj, lemma)
    if adopted is not None:  # "upgraded to Python 3.12": what X the subject uses now
        return subject, *adopted, polarity, ""
    by_prep = _prep_frame(root, lemma, obj, subject, polarity)
    if by_prep is not None:
        return by_prep
    job = _as_job(root)
    if job is not None and subject in ("i", "me"):  # "cut my hours as an accountant"
        return subject, "job", _value(job), polarity, ""
    return None


def _wants_to_be_called(root: Token, lemma: str) -> Token | None:
    """The name in "wants to be called Lena", "would prefer to be called Dr Patel",
    "likes being called Bea", or None."""
    if lemma not in T.WANTING:
        return None
    called = next((c for c in root.children if c.dep_ == "xcomp" and c.lemma_ == "call"
                   and any(g.dep_ == "auxpass" for g in c.children)), None)
    if called is None:
        return None
    return next((c for c in called.children if c.dep_ in ("oprd", "attr")
                 and c.pos_ == "PROPN"), None)


def _post_taken(root: Token, lemma: str, obj: Token | None) -> Token | None:
    """Where a post taken up is ("got a job at Acme", "started a new role with Monzo"),
    or None (no post, no place, or a verb that takes none up: "applied for a job")."""
    if lemma not in T.TAKING_UP or obj is None or obj.lemma_.lower() not in T.POST_NOUNS \
            or (root.tag_ == "VBN" and any(c.dep_ == "auxpass" for c in root.children)):
        return None
    if _prep_object(obj, ("as",)) or _prep_object(root, ("as",)):
        return None  # "a new job as a junior architect at a studio": the job says more
    # Not "in" or "for": "a job in London", "a role in marketing", "a job for the
    # summer" say where, what or when, not whom for.
    found = _prep_object(obj, ("at", "with")) or _prep_object(root, ("at", "with"))
    if found is None or found[1].pos_ not in ("PROPN", "NOUN") or _a_time(found[1]):
        return None
    return found[1]


def _years_had(lemma: str, obj: Token | None) -> str | None:
    """The age in "has 44 years" (a calque of "tiene 44 años"), not "has 20 years of
    experience" or "has had 3 years off"."""
    if lemma != "have" or obj is None or obj.lemma_.lower() != "year" or any(
            c.dep_ in ("prep", "amod", "compound", "relcl", "acl") for c in obj.children):
        return None
    number = next((c for c in obj.children if c.dep_ == "nummod"), None)
    return age_value(number) if number is not None else None  # ages only, by its range


def _planned_getting(root: Token, lemma: str) -> Token | None:
    """The thing a plan to get is about ("wants to buy a car", "thinking about getting a
    road bike", "considering getting a puppy", "saving for a laptop"), or None."""
    if lemma not in T.THINKING_OF:
        return None
    for child in root.children:
        inner = child if child.dep_ == "xcomp" else next(
            (g for g in child.children if g.dep_ == "pcomp"), None) \
            if child.dep_ == "prep" and child.lower_ in ("about", "into", "on") else None
        if inner is not None and inner.lemma_.lower() in T.GETTING:
            obj = _object(inner)
            if obj is not None and obj.pos_ in ("NOUN", "PROPN"):
                return obj
        if lemma == "save" and child.dep_ == "prep" and child.lower_ == "for":
            found = next((g for g in child.children if g.dep_ == "pobj"
                          and g.pos_ == "NOUN"), None)
            if found is not None:
                return found
    return None


def _asks_the_assistant(root: Token, lemma: str) -> bool:
    """"<subject> asks the assistant to ...": an ask verb whose object is the assistant."""
    return lemma in T.ASK_VERBS and any(c.lemma_.lower() in T.ASSISTANT_WORDS
                                        for c in root.children if c.dep_ in ("dobj", "dative"))


_TASTES = frozenset({"likes", "dislikes"})


def _taste_lemma(tok: Token) -> str | None:
    """The taste verb ``tok`` is ("loves", "hates"), whatever lemma the small model gave
    it (it reads "hates" as "hat" and "loves" as an auxiliary "loves"), or None."""
    lower = tok.lower_
    for form in (tok.lemma_.lower(), lower, lower.removesuffix("s"), lower.removesuffix("d")):
        if T.VERB_FRAMES.get((form, "")) in _TASTES:
            return form
    return None


def _activity_taste(root: Token, lemma: str) -> tuple[str, str] | None:
    """``(likes|dislikes, activity)`` of a taste for an activity: "enjoys running" (the
    activity an -ing complement), or "loves climbing" where the small parser takes
    "loves" for an auxiliary of "climbing"."""
    if T.VERB_FRAMES.get((lemma, "")) in _TASTES and _object(root) is None:
        activity = next((c for c in root.children
                         if c.dep_ == "xcomp" and c.tag_ == "VBG"), None)
        if activity is not None:
            return T.VERB_FRAMES[(lemma, "")], activity.lemma_.lower()
    if root.tag_ == "VBG":
        aux = next((taste for c in root.children if c.dep_ == "aux"
                    and (taste := _taste_lemma(c)) is not None), None)
        if aux is not None:
            return T.VERB_FRAMES[(aux, "")], lemma
    return None


def _frames_its_object(lemma: str) -> bool:
    """Does the verb's object carry the value ("uses vim", "has a dog")?"""
    return (lemma, "") in T.VERB_FRAMES or lemma in ("have", "get", "own")


def _object_frame(lemma: str, obj: Token, subject: str, polarity: int) -> RawFrame | None:
    """The frame of a verb whose object is the value (see :func:`_frames_its_object`)."""
    if (lemma, "") in T.VERB_FRAMES:
        attribute = T.VERB_FRAMES[(lemma, "")]
        if lemma == "take" and obj.lemma_.lower() not in ("medication", "medicine", "pill"):
            attribute = "takes"
        if attribute == "employer" and obj.lemma_.lower() in T.TEAM_UNITS | T.PROJECT_UNITS:
            unit = work_unit(obj)  # "joined the pricing team": a team, not an employer
            if unit is None:
                return None
            attribute = unit
        value = _value(obj)
        return (subject, attribute, value, polarity, "") if _usable(value) else None
    kin = _kin_or_pet(obj)
    if kin is not None:
        return subject, kin[0], kin[1], polarity, ""
    value = _value(obj)
    return (subject, "has", value, polarity, "") if _usable(value) else None


def _prep_frame(root: Token, lemma: str, obj: Token | None, subject: str,
                polarity: int) -> RawFrame | None:
    """The frame a verb and one of its prepositions give ("lives in Leeds")."""
    for child in root.children:
        if child.dep_ not in ("prep", "agent", "dative"):
            continue
        by_prep = T.VERB_FRAMES.get((lemma, child.lower_))
        if by_prep == "residence" and obj is not None:
            continue  # "moved the repo to ...": something else moved, not the subject
        pobj = next((c for c in child.children if c.dep_ == "pobj"), None)
        unit = _unit_by_prep(pobj, by_prep, lemma)
        if unit is not None and pobj is not None:
            return subject, unit, _value(pobj), polarity, ""
        if by_prep == "residence" and pobj is not None and not is_place(pobj):
            continue  # "moved to another project": a change, but not of home
        if by_prep and pobj is not None:
            value = _value(pobj)
            if _usable(value):
                return subject, by_prep, value, polarity, ""
    return None


def _unit_by_prep(pobj: Token | None, by_prep: str | None, lemma: str) -> str | None:
    """The unit of work a preposition's object names where a home, an employer or a
    unit could be meant ("moving to the pricing team", "works on X project")."""
    if pobj is None or not (by_prep in ("residence", "employer") or lemma in T.UNIT_VERBS):
        return None
    return work_unit(pobj)


def _adopted(root: Token, obj: Token | None, lemma: str) -> tuple[str, str] | None:
    """"upgraded to Python 3.12", "standardised on pandas", "switched to Kotlin" (no
    "from": that is an end): the thing's attribute, as an instruction about it names it,
    and the value; None for anything else ("switched to decaf" too: a choice all the
    same)."""
    if lemma not in T.ADOPT_VERBS or obj is not None:
        return None
    found = _prep_object(root, ("to", "on"))
    if found is None or found[1].pos_ not in ("NOUN", "PROPN"):
        return None
    key = found[1].lemma_.lower()
    value = _value(found[1])
    return (f"instruction:{T.INSTRUCTION_THINGS.get(key, key)}", value) if _usable(value) \
        else None


def work_unit(tok: Token) -> str | None:
    """"team" or "project" when ``tok`` names a unit of work one is on ("the pricing
    team", "the loyalty migration project", "team Kestrel"), else None."""
    lemma = tok.lemma_.lower()
    named = [c for c in tok.children if c.dep_ in ("compound", "amod", "nmod", "appos")
             and c.lower_ not in T.UNNAMED_UNIT]
    if not named and tok.pos_ != "PROPN":
        return None  # "another project": which one is not said
    if lemma in T.TEAM_UNITS or (any(c.dep_ == "compound" and c.lemma_.lower() in T.TEAM_UNITS
                                    for c in tok.children) and tok.pos_ == "PROPN"):
        return "team"
    return "project" if lemma in T.PROJECT_UNITS else None


def is_place(tok: Token) -> bool:
    """A value one can live in: a name ("Leeds", "De Pijp") or a dwelling or place noun
    (:data:`~memcore.language.english.tables.DWELLINGS`), also one that holds a name ("a
    flat in Leeds"), or a city or country chat writes in lower case ("live in leeds": the
    slot expects a place, so the gazetteer may say)."""
    if tok.pos_ == "PROPN" or tok.lemma_.lower() in T.DWELLINGS or is_place_name(tok.text):
        return True
    return any(t.pos_ == "PROPN" for t in tok.subtree)


def _as_job(root: Token) -> Token | None:
    """The occupation an "as a <job>" phrase of the clause names, if any."""
    found = _prep_object(root, ("as",))
    if found is None:
        return None
    noun = found[1]
    lemma = noun.lemma_.lower()
    articled = any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children)
    return noun if noun.pos_ == "NOUN" and is_job(lemma) and (
        articled or lemma in T.JOB_NOUNS) else None


def subject_of(root: Token) -> tuple[str, Token | None]:
    """The subject of the clause ``root`` heads (see :func:`_subject`)."""
    return _subject(root)


def value_of(tok: Token) -> str:
    """The normalized value ``tok`` heads (what frames compare)."""
    return _value(tok)
