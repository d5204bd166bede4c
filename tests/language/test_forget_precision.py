"""Forget requests erase what they name and nothing beside it (docs/design.md, Forget on
request), as classes of the parse and the match: a value of the speaker's own is not the
same value of one of the speaker's people; a hyphenated compound's first word names
nothing of its own ("ex-boss" is a boss); a qualified contact is that contact, not its
siblings, and the mobile is the phone said without a qualifier. All sentences are new
(none of tests/data/forget_*_cases.json)."""

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
    ("Please forget my date of birth.", "Sam's birthday is 2 May.",
     "Sam's husband's birthday is 11 June."),
    ("Could you delete my email address?", "Sam's e-mail address is sam@post.test.",
     "Sam's son's email address is kid@post.test."),
])
def test_my_value_is_not_my_peoples(pack, text: str, mine: str,  # type: ignore[no-untyped-def]
                                    theirs: str) -> None:
    target = _target(pack, text)
    assert target.attribute and target.mine
    assert not others_own(target, mine, SPEAKERS) and others_own(target, theirs, SPEAKERS)


def test_a_person_named_is_the_speakers_relation(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Forget everything about my fiancee.")
    assert target.person  # "Sam's fiancee Ola ..." is the relation itself, not a value of hers


# -- a compound's first word is a modifier ----------------------------------------------

@pytest.mark.parametrize("text,named,other", [
    ("Forget everything about my ex.", "Sam's ex-husband Piotr moved to Gdansk.",
     "Sam's ex-colleague Rhys runs a cafe."),
    ("Please forget my ex.", "Sam's ex Bea sings in a choir.", "Sam's ex-flatmate owes Sam 50."),
    ("Please forget my mother.", "Sam's mother grows roses.",
     "Sam's mother-in-law Ruth grows roses."),
])
def test_a_compounds_first_word_names_nothing_alone(  # type: ignore[no-untyped-def]
        pack, text: str, named: str, other: str) -> None:
    target = _target(pack, text)
    assert _said(target, named) and not _said(target, other)


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


# -- "the X" asks for what is kept; "the X name" is a thing's ------------------------------

@pytest.mark.parametrize("text,word", [
    ("Could you delete the asthma details?", "asthma"),
    ("Please remove the gambling stuff.", "gambling"),
    ("Can you wipe the passcode?", "passcode"),
])
def test_the_kept_thing_asks(pack, text: str, word: str) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, text)
    assert any(word in forms for forms in target.words), target


@pytest.mark.parametrize("text", [
    "Please remove that detail.", "Delete the old notes folder.", "Remove the new stuff.",
    "Can you delete the spreadsheet?",
])
def test_the_thing_of_the_world_asks_nothing(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    assert pack.forget_requests([text])[0] is None, text


def test_a_things_name_is_not_the_speakers_name(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Forget the band name, please.")
    assert target.attribute is None
    assert not _said(target, "Sam's name is Sam Okoro.") and _said(
        target, "The band's name is Night Owls.")
    assert _target(pack, "Please forget my middle name.").attribute == "name"


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


def test_a_debt_is_said_as_owing(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Forget what I told you about my cousin's debt.")
    assert _said(target, "Sam's cousin Ilya owes 9k to a loan shark.")
    assert not _said(target, "Sam's cousin Ilya plays chess.")


def test_about_what_someone_thinks_is_what_they_think(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Please delete the bit about what my GP suspects.")
    assert _said(target, "Sam's GP suspects Sam has gout.")
    assert not _said(target, "Sam's GP works in Ripon.")
    assert pack.forget_requests(["Forget about what went on."])[0] is None  # names nothing


@pytest.mark.parametrize("text", ["Oops, forget that last one.", "Erase the last bit, please.",
                                  "Please don't keep that previous point."])
def test_the_last_one_said_is_a_back_reference(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None and request.refers_back and not request.targets, text


def test_the_last_part_of_a_turn_is_its_last_clause(pack) -> None:  # type: ignore[no-untyped-def]
    turn = ("Busy week: my brother got engaged, I sold my car, and my GP thinks I have gout. "
            "Forget that last part please.")
    request = pack.forget_requests([turn])[0]
    assert request is not None and request.earlier is not None
    assert turn[request.earlier[0]:request.earlier[1]].startswith("my GP thinks")


@pytest.mark.parametrize("text", ["omg shouldnt hav said tht, delete it",
                                  "I regret telling you that, please erase it."])
def test_a_regret_beside_a_delete_refers_to_the_turn_before(pack, text: str  # type: ignore[no-untyped-def]
                                                            ) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None and request.refers_back and request.earlier is None, text


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


@pytest.mark.parametrize("text,asks", [
    ("don't want my postcode stored", True), ("dont want that kept tbh", True),
    ("didn't want that saved", False), ("She doesn't want that saved.", False),
])
def test_a_want_with_the_i_dropped_is_the_speakers(pack, text: str, asks: bool  # type: ignore[no-untyped-def]
                                                   ) -> None:
    assert (pack.forget_requests([text])[0] is not None) is asks, text


# -- a topic word with an everyday sense needs a companion ----------------------------------

@pytest.mark.parametrize("text,topical,everyday", [
    ("Please forget about my breakup.", "Sam split up with Noah in May.",
     "Sam split the bill with Noah."),
    ("Forget my financial stuff.", "Sam owes 3k on a store card.", "Sam owes Mia a coffee."),
    ("Delete my legal trouble please.", "Sam goes to court over the hearing in June.",
     "Sam plays on the tennis court."),
    ("Forget my politics.", "Sam voted Labour in the election.", "Sam's wife went into labour."),
    ("Please delete my banking info.", "Sam's bank card number ends 4411.",
     "Sam sent Ola a birthday card."),
])
def test_a_topic_word_of_everyday_sense_needs_a_companion(  # type: ignore[no-untyped-def]
        pack, text: str, topical: str, everyday: str) -> None:
    from memcore.core.forget import topic_matches
    target = _target(pack, text)
    assert topic_matches(target, words_of(topical)), topical
    assert not topic_matches(target, words_of(everyday)), everyday


# -- a double possessive is the second owner's; a contact said by words has its shape -------

@pytest.mark.parametrize("text,theirs", [
    ("Forget my name.", "Sam's parrot's name is Kiwi."),
    ("Please forget my address.", "Sam's firm's address is 2 Quay Road."),
    ("Forget my medical stuff.", "Sam's dog Pip has epilepsy."),
])
def test_a_thing_of_my_pets_or_things_is_not_mine(pack, text: str, theirs: str  # type: ignore[no-untyped-def]
                                                  ) -> None:
    target = _target(pack, text)
    assert others_own(target, theirs, SPEAKERS), theirs
    assert not others_own(target, "Sam's new flat is lovely, Sam says.", SPEAKERS)


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


def test_a_wedding_is_said_as_marrying(pack) -> None:  # type: ignore[no-untyped-def]
    target = _target(pack, "Forget what I said about my brother's wedding.")
    assert _said(target, "Sam's brother Olu is getting married in Lagos.")


# -- "everything I just said" is the turn before; "I mean X" says what "it" was --------------

@pytest.mark.parametrize("text", ["Please forget everything I just told you.",
                                  "Erase everything I just said, sorry."])
def test_everything_just_said_is_the_turn_before(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None and request.refers_back and not request.everything, text


@pytest.mark.parametrize("text,phrase", [
    ("Forget it, I mean the divorce thing.", "divorce"),
    ("Scratch that. I mean my postcode, not my street.", "postcode"),
])
def test_i_mean_x_is_the_target_not_the_turn_before(pack, text: str, phrase: str  # type: ignore[no-untyped-def]
                                                    ) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None and not request.refers_back, text
    assert [t.phrase for t in request.targets if phrase in t.phrase] and len(request.targets) == 1


@pytest.mark.parametrize("text,asks", [
    ("Forget the rain, how was your day?", False),
    ("Forget the football, let's plan the trip.", False),
    ("Forget the passcode, you won't need it.", True),
    ("Forget my postcode, how are you?", True),
])
def test_a_topic_of_the_chat_dropped_to_go_on_asks_nothing(pack, text: str, asks: bool  # type: ignore[no-untyped-def]
                                                           ) -> None:
    assert (pack.forget_requests([text])[0] is not None) is asks, text
