"""Forget requests erase what they name and nothing beside it (docs/design.md, Forget on
request), as classes of the parse and the match: a thing of the speaker's own is not the
same thing of the speaker's people, pets or a double possessive; a hyphenated compound's
first word names nothing of its own ("ex-boss" is a boss); a qualified contact is that
contact, the mobile the plain phone, and a contact said by words has its value's shape;
a topic word of everyday sense needs a companion; "the old one", "that last part",
"everything I just said", "I mean X"; which sentences ask ("the X" kept, a want with the
"I" dropped, a topic of the chat dropped). All sentences are new (none of
tests/data/forget_*_cases.json)."""

from __future__ import annotations

import pytest

from memcore.core.forget import (
    ForgetTarget,
    compound_prefixes,
    conflicting_attribute,
    frame_matches,
    others_own,
    words_match,
    words_of,
)
from memcore.core.models import Frame
from memcore.language import language_pack

SPEAKERS = {"sam", "user"}


@pytest.fixture(scope="module")
def pack():  # type: ignore[no-untyped-def]
    return language_pack()


def _target(pack, text: str) -> ForgetTarget:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None, text
    target, = request.targets
    return target


def _said(target: ForgetTarget, fact: str) -> bool:
    return words_match(target, words_of(fact) - compound_prefixes(fact, target.compounds))


# -- a value of mine is not the same value of my people ---------------------------------

@pytest.mark.parametrize("text,mine,theirs", [
    ("Please forget my date of birth.", "Sam's date of birth is 2 May 1990.",
     "Sam's husband's birthday is 11 June."),
    ("Could you delete my email address?", "Sam's e-mail address is sam@post.test.",
     "Sam's son's email address is kid@post.test."),
    # pets are the speaker's others; a double possessive is the second owner's
    ("Forget my name.", "Sam's name is Sam Okoro.", "Sam's parrot's name is Kiwi."),
    ("Please forget my address.", "Sam's new flat is at 4 Quay Road, Sam says.",
     "Sam's firm's address is 2 Quay Road."),
    ("Forget my medical stuff.", "Sam has epilepsy.", "Sam's dog Pip has epilepsy."),
])
def test_my_value_is_not_my_peoples(pack, text: str, mine: str,  # type: ignore[no-untyped-def]
                                    theirs: str) -> None:
    target = _target(pack, text)
    assert target.mine
    assert not others_own(target, mine, SPEAKERS) and others_own(target, theirs, SPEAKERS)


def test_a_person_named_is_the_speakers_relation(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Forget everything about my fiancee.")
    assert target.person  # "Sam's fiancee Ola ..." is the relation itself, not a value of hers


# -- a request names this, not that: compounds, topics of everyday sense, said as ---------

def _names(target: ForgetTarget, fact: str) -> bool:
    from memcore.core.forget import topic_matches
    return _said(target, fact) or topic_matches(target, words_of(fact))


@pytest.mark.parametrize("text,named,other", [
    # a hyphenated compound's first word names nothing alone
    ("Forget everything about my ex.", "Sam's ex-husband Piotr moved to Gdansk.",
     "Sam's ex-colleague Rhys runs a cafe."),
    ("Please forget my ex.", "Sam's ex Bea sings in a choir.", "Sam's ex-flatmate owes Sam 50."),
    ("Please forget my mother.", "Sam's mother grows roses.",
     "Sam's mother-in-law Ruth grows roses."),
    # a topic word with an everyday sense needs a companion in the memory
    ("Please forget about my breakup.", "Sam split up with Noah in May.",
     "Sam split the bill with Noah."),
    ("Forget my financial stuff.", "Sam owes 3k on a store card.", "Sam owes Mia a coffee."),
    ("Delete my legal trouble please.", "Sam goes to court over the hearing in June.",
     "Sam plays on the tennis court."),
    ("Forget my politics.", "Sam voted Labour in the election.", "Sam's wife went into labour."),
    ("Please delete my banking info.", "Sam's bank card number ends 4411.",
     "Sam sent Ola a birthday card."),
    # said as the facts say it; "about what X thinks" is that clause
    ("Forget what I told you about my cousin's debt.",
     "Sam's cousin Ilya owes 9k to a loan shark.", "Sam's cousin Ilya plays chess."),
    ("Forget what I said about my brother's wedding.",
     "Sam's brother Olu is getting married in Lagos.", "Sam's brother Olu plays golf."),
    ("Please delete the bit about what my GP suspects.", "Sam's GP suspects Sam has gout.",
     "Sam's GP works in Ripon."),
    # "the X name" is a thing's
    ("Forget the band name, please.", "The band's name is Night Owls.",
     "Sam's name is Sam Okoro."),
])
def test_a_request_names_this_not_that(pack, text: str, named: str,  # type: ignore[no-untyped-def]
                                       other: str) -> None:
    target = _target(pack, text)
    assert _names(target, named), named
    assert not _names(target, other), other


def test_the_compound_said_in_the_request_is_its_own_word(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Can you forget my ex-manager?")
    assert _said(target, "Sam's ex-manager Lloyd retired.")
    assert not _said(target, "Sam's ex Lloyd retired.")  # an ex, but no manager
    # a word said on its own as well is a word of the memory
    assert compound_prefixes("Sam's step-dad and Sam's dad", ()) == {"step"}
    assert compound_prefixes("Sam's ex-boss met Sam's ex", ()) == frozenset()


# -- a qualified contact is that one -----------------------------------------------------

def _frame(attribute: str) -> Frame:
    return Frame(subject="sam", attribute=attribute, value="x", single=True)


@pytest.mark.parametrize("text,named,sibling", [
    ("Please forget my private email.", "contact:email:private", "contact:email:work"),
    ("Remove my home number from your memory.", "contact:phone:home", "contact:phone:work"),
    ("Delete my mobile number please.", "contact:phone", "contact:phone:landline"),
])
def test_a_qualified_contact_is_not_its_sibling(pack, text: str, named: str,  # type: ignore[no-untyped-def]
                                                sibling: str) -> None:
    target = _target(pack, text)
    assert frame_matches(target, _frame(named), SPEAKERS)
    assert not frame_matches(target, _frame(sibling), SPEAKERS)
    assert conflicting_attribute(target, _frame(sibling))


def test_an_unqualified_contact_may_still_be_the_qualified_one(pack) -> None:  # type: ignore[no-untyped-def]
    # "my private email" said of a fact that never said "private": not a conflict (other
    # means may name it), not a frame match either
    target = _target(pack, "Please forget my private email.")
    assert not conflicting_attribute(target, _frame("contact:email"))
    assert not frame_matches(target, _frame("contact:email"), SPEAKERS)


def test_an_interjection_is_no_target(pack) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests(["Delete the pin, my mistake, sorry."])[0]
    assert request is not None and [t.phrase for t in request.targets] == ["the pin"]


# -- a turn going on about a person by a pronoun only --------------------------------------

def test_a_turn_led_by_a_pronoun_goes_on_about_the_person(pack) -> None:  # type: ignore[no-untyped-def]
    assert pack.pronoun_led(["She moved to Oslo after the wedding.", "And he still owes me money.",
                             "She says Priya is rude.", "I think he lied.", "It rained."]) \
        == [True, True, False, False, False]


# -- more requests read: what a thing relates to, what someone thinks, what was said last ---

@pytest.mark.parametrize("text,word", [
    ("Kindly erase anything pertaining to my bankruptcy.", "bankruptcy"),
    ("Please remove everything related to my lawsuit.", "lawsuit"),
])
def test_relating_to_is_about(pack, text: str, word: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None and not request.everything, text
    assert any(word in forms for t in request.targets for forms in t.words)


def test_the_last_part_of_a_turn_is_its_last_clause(pack) -> None:  # type: ignore[no-untyped-def]
    turn = ("Busy week: my brother got engaged, I sold my car, and my GP thinks I have gout. "
            "Forget that last part please.")
    request = pack.forget_requests([turn])[0]
    assert request is not None and request.earlier is not None
    assert turn[request.earlier[0]:request.earlier[1]].startswith("my GP thinks")


# -- "the old one" is the replaced value; a want with the "I" dropped ------------------------

def test_the_old_one_is_the_replaced_value_of_what_the_turn_names(pack) -> None:  # type: ignore[no-untyped-def]
    turn = "New email! Please forget the old one, my email is now jo@new.test."
    request = pack.forget_requests([turn])[0]
    assert request is not None
    target, = request.targets
    assert target.former and target.attribute == "contact:email"
    # the statement after it names the new value, not the old one: it stays a fact
    assert request.sentences[0][1] <= turn.index("my email")
    assert not _target(pack, "Forget the old one.").former  # names no value


# -- a contact said by words has its shape ----------------------------------------------------

def test_a_contact_said_by_words_has_its_shape(pack) -> None:  # type: ignore[no-untyped-def]
    from memcore.core.forget import value_shaped
    phone = _target(pack, "Please forget my number.")
    assert value_shaped(phone, "Sam's number is 07700 900 315.")
    assert not value_shaped(phone, "Sam's favourite number is 12.")
    email = _target(pack, "Forget my email address.")
    assert value_shaped(email, "Sam's email is sam@mail.test.")
    assert not value_shaped(email, "Sam's email address changed last week.")


def test_a_number_of_something_else_is_no_phone(pack) -> None:  # type: ignore[no-untyped-def]
    frame, = pack.frames(["Sam's lucky number is 13."])
    assert frame is None or not frame.attribute.startswith("contact:")
    phone, = pack.frames(["Sam's new number is 07700 900 316."])
    assert phone is not None and phone.attribute == "contact:phone"


# -- a statement before the request in its sentence stays, unless it names the target -------

@pytest.mark.parametrize("turn,kept,cut", [
    ("My locker is 31, my gym is PureFit, forget the locker.", "my gym is PureFit", "31"),
    ("I moved to Bath and my alarm code is 7301, please forget the alarm code.",
     "I moved to Bath", "7301"),
])
def test_a_statement_before_the_request_stays(pack, turn: str, kept: str, cut: str  # type: ignore[no-untyped-def]
                                              ) -> None:
    request = pack.forget_requests([turn])[0]
    assert request is not None
    said = [turn[a:b] for a, b in request.sentences]
    assert not any(kept in s for s in said) and any(cut in s for s in said), said


@pytest.mark.parametrize("text,phrase", [
    ("Forget it, I mean the divorce thing.", "divorce"),
    ("Scratch that. I mean my postcode, not my street.", "postcode"),
])
def test_i_mean_x_is_the_target_not_the_turn_before(pack, text: str, phrase: str  # type: ignore[no-untyped-def]
                                                    ) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None and not request.refers_back, text
    assert [t.phrase for t in request.targets if phrase in t.phrase] and len(request.targets) == 1


# -- which sentences ask, and which refer back -----------------------------------------------

@pytest.mark.parametrize("text,asks", [
    # "the X" with a removing verb asks for what is kept, never a thing of the world
    ("Could you delete the asthma details?", True), ("Please remove the gambling stuff.", True),
    ("Can you wipe the passcode?", True), ("Please remove that detail.", False),
    ("Delete the old notes folder.", False), ("Remove the new stuff.", False),
    ("Can you delete the spreadsheet?", False),
    # a want with the "I" dropped is the speaker's
    ("don't want my postcode stored", True), ("dont want that kept tbh", True),
    ("didn't want that saved", False), ("She doesn't want that saved.", False),
    # a topic of the chat dropped to go on asks nothing; the speaker's own still does
    ("Forget the rain, how was your day?", False),
    ("Forget the football, let's plan the trip.", False),
    ("Forget the passcode, you won't need it.", True), ("Forget my postcode, how are you?", True),
])
def test_which_sentences_ask(pack, text: str, asks: bool) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert (request is not None and not request.guarded) is asks, text  # on its own


@pytest.mark.parametrize("text", [
    "Oops, forget that last one.", "Erase the last bit, please.",
    "Please don't keep that previous point.",
    # a regret beside "delete it": the turn before, not the regret
    "omg shouldnt hav said tht, delete it", "I regret telling you that, please erase it.",
    # "everything I just said" is the turn before, not the whole scope
    "Please forget everything I just told you.", "Erase everything I just said, sorry.",
])
def test_what_refers_to_the_turn_before(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None and request.refers_back and request.earlier is None, text
    assert not request.targets and not request.everything, text


def test_names_of_things_and_apologies_are_not_the_speakers(pack) -> None:  # type: ignore[no-untyped-def]
    assert _target(pack, "Forget the band name, please.").attribute is None
    assert _target(pack, "Please forget my middle name.").attribute == "name"


def test_that_i_go_somewhere_is_that_place_of_mine(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Please forget that I go to rehab.")
    assert _said(target, "Sam goes to rehab on Fridays.")
    assert others_own(target, "Sam's uncle goes to rehab too.", SPEAKERS)
