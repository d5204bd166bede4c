"""Forget requests read as classes of the parse (docs/design.md, Forget on request): a
value of a named person is that value, not the person; forgetting for a while asks
nothing; regret of having said it to the assistant; a demand with a bare "be"; a free
relative as the object; "leave / keep X out of your notes"; "I don't want X in your
memory / known / stored"; "scrap that"; a removing verb's "delete it" beside another
request; light head nouns and "the figure of X"; topics; a statement after the request
in its sentence stays a fact. All sentences are new (none of the other forget tests nor
tests/data/forget_*_cases.json)."""

from __future__ import annotations

import pytest

from memcore.core.forget import ForgetTarget, number_matches, words_match, words_of
from memcore.language import language_pack


@pytest.fixture(scope="module")
def pack():  # type: ignore[no-untyped-def]
    return language_pack()


def _targets(pack, text: str) -> list[ForgetTarget]:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None, text
    return list(request.targets)


def _matches(target: ForgetTarget, fact: str) -> bool:
    return words_match(target, words_of(fact))


# -- a value of a named person is that value ------------------------------------------

@pytest.mark.parametrize("text,value_fact,other_fact", [
    ("Please erase Priyanka's phone number.", "Priyanka's number is 07700 881234.",
     "Priyanka is training for a marathon."),
    ("Could you delete Olga's home address?", "Olga's address is 5 Mill Lane.",
     "Olga teaches piano."),
    ("Forget my cousin's email address.", "Sam's cousin's email is kim@post.test.",
     "Sam's cousin plays rugby."),
])
def test_a_persons_value_needs_the_value_not_only_the_person(  # type: ignore[no-untyped-def]
        pack, text: str, value_fact: str, other_fact: str) -> None:
    target, = _targets(pack, text)
    assert target.owner and not target.mine and not target.person
    assert _matches(target, value_fact) and not _matches(target, other_fact)


def test_a_persons_name_is_still_the_person(pack) -> None:  # type: ignore[no-untyped-def]
    target, = _targets(pack, "Please forget my stepdad's name.")
    assert target.person and _matches(target, "Sam's stepdad Keith lives in Hull.")


# -- asking nothing ---------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Can we forget about the budget for now?",
    "Let's forget about my exams for tonight and watch a film.",
    "Forget about the deadline for a second, how was your weekend?",
    "Let's forget about the wedding today and just relax.",
    "I shouldn't have told my landlord about the dog.",
    "I regret telling my sister about the loan.",
    "I wish I hadn't mentioned the party to my boss.",
    "I don't want my kids to know about the divorce.",
    "I didn't want you to know about the surprise.",
    "I don't want onions on my burger.",
    "Leave the onions out of the soup.",
    "Keep the cat out of the bedroom.",
    "Scrap the plan, we're taking the train.",
    "Remove that.",
])
def test_no_request(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is None or request.guarded, text  # nothing on its own (guarded: in context)


# -- request forms, with what they name -------------------------------------------------

@pytest.mark.parametrize("text,word", [
    ("I regret mentioning my overdraft to you.", "overdraft"),
    ("I wish I hadn't told you about the lawsuit.", "lawsuit"),
    ("kinda regret telling u about my rehab tbh", "rehab"),
    ("I ask that my medical history be deleted.", "medical"),
    ("I insist that the details of my arrest be removed.", "arrest"),
    ("Please erase where I work from your memory.", "works"),
    ("Forget who I'm seeing.", "seeing"),
    ("Keep my salary out of your notes.", "salary"),
    ("Leave my son's school out of your memory, please.", "school"),
    ("I don't want my home address in your files.", "address"),
    ("I don't want you to know my weight.", "weighs"),
    ("I don't want my passport number saved.", "passport"),
    ("I'd rather you forgot my birthday.", "birthday"),
    ("Could you wipe the part where I mentioned my divorce?", "divorce"),
    ("Delete all memories about my grandfather.", "grandfather"),
    ("Please discard what I said yesterday about my mortgage.", "mortgage"),
    ("Forget my immigration case.", "immigration"),
    ("Please forget the gambling thing.", "gambling"),
    ("Please forget the amount of my mortgage.", "mortgage"),
    ("can u forget abt my ex pls", "ex"),
    ("Forget about me mentioning my overdraft.", "overdraft"),
    ("I'd prefer if you forgot my pay.", "pay"),
    ("Please ignore that bit about my rehab.", "rehab"),
    ("Remove any trace of my stalker.", "stalker"),
    ("Please forget that Noor was arrested.", "arrested"),
    ("Forget that I got evicted.", "evicted"),
    ("Please forget my redundancy.", "redundant"),
    ("Forget my bankruptcy, please.", "bankrupt"),
    ("Please forget about my conviction.", "convicted"),
    ("Hmm, on second thought, forget about my landlord.", "landlord"),
    ("Could you not keep the overdraft thing on record?", "overdraft"),
])
def test_request_forms_name_their_target(pack, text: str, word: str  # type: ignore[no-untyped-def]
                                         ) -> None:
    targets = _targets(pack, text)
    assert any(any(word in forms for forms in t.words) for t in targets), (text, targets)


@pytest.mark.parametrize("text", [
    "Scrap that, I was joking.",
    "No, remove that, I don't want you to have it.",
])
def test_back_references(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None and request.refers_back and not request.targets, text


def test_delete_it_beside_a_request_is_part_of_it(pack) -> None:  # type: ignore[no-untyped-def]
    text = "I don't want my PIN in your notes. Delete it."
    request = pack.forget_requests([text])[0]
    assert request is not None and not request.refers_back  # "it" is the PIN
    assert len(request.sentences) == 2 and request.targets[0].phrase == "my PIN"


# -- what a target matches ----------------------------------------------------------------

def test_light_head_nouns_and_topics(pack) -> None:  # type: ignore[no-untyped-def]
    visa, = _targets(pack, "Please forget my residency situation.")
    assert visa.related and "overstayed" in visa.related
    court, = _targets(pack, "Forget the stuff about my court case.")
    assert _matches(court, "Sam has a court hearing in May.")
    faith, = _targets(pack, "Could you forget what I said about my faith?")
    assert "agnostic" in faith.related


def test_said_as_and_said_with_an_amount(pack) -> None:  # type: ignore[no-untyped-def]
    weight, = _targets(pack, "Please forget my weight.")
    assert _matches(weight, "Sam weighs 90 kilos.")
    salary, = _targets(pack, "Please forget my salary.")
    assert number_matches(salary, "Sam makes 58,500 a year.", {"sam"})
    assert not number_matches(salary, "Sam makes 3 cakes a week.", {"sam"})
    assert not number_matches(salary, "Sam makes jam (by 1 March 2026).", {"sam"})
    assert not number_matches(salary, "Sam's wife makes 58,500 a year.", {"sam"})


def test_an_address_said_by_the_dwelling_with_a_house_number(pack  # type: ignore[no-untyped-def]
                                                             ) -> None:
    from memcore.core.forget import frame_matches
    address, = _targets(pack, "Please delete my address.")
    assert frame_matches(address, None, {"sam"}, "Sam's flat is at 9 Rowan Court, Derby.")
    assert not frame_matches(address, None, {"sam"}, "Sam's flat is in Derby.")
    assert not frame_matches(address, None, {"sam"}, "Sam's ex Jo's flat is at 9 Rowan Court.")


# -- a statement after the request stays a fact ----------------------------------------------

@pytest.mark.parametrize("text,kept", [
    ("Please forget my passport number, my new job starts in June.", "my new job starts"),
    ("Forget my old locker code, but remember that I'm diabetic.", "remember that I'm"),
])
def test_a_statement_after_the_request_is_no_part_of_it(pack, text: str, kept: str  # type: ignore[no-untyped-def]
                                                       ) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None
    (start, end), = request.sentences
    assert kept not in text[start:end] and kept in text[end:], (text, text[start:end])


@pytest.mark.parametrize("text", [
    "Please forget my phone number, I gave it to you by mistake.",
    "Forget everything about Rafael, he is a liar.",
    "Please forget my salary, I earn more now.",
])
def test_a_tail_about_what_is_forgotten_is_part_of_the_request(pack, text: str  # type: ignore[no-untyped-def]
                                                              ) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None and request.sentences == ((0, len(text)),), text


# -- "it" of what the sentence is about; more topics; names the tagger calls nouns -------------

def test_it_is_what_the_sentence_is_about(pack) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests(
        ["Right, about the phone number I sent you earlier - can you forget it?"])[0]
    assert request is not None and not request.refers_back  # not the previous turn
    assert request.targets[0].attribute == "contact:phone"


def test_addiction_and_politics_topics(pack) -> None:  # type: ignore[no-untyped-def]
    drugs, = _targets(pack, "Please forget about Nina's drug habit.")
    assert drugs.owner and "heroin" in drugs.related
    votes, = _targets(pack, "Could you erase my political opinions?")
    assert "voted" in votes.related and "green" not in votes.related


def test_a_name_tagged_as_a_noun_is_linked(pack) -> None:  # type: ignore[no-untyped-def]
    sven, freja = pack.linked_names(["Sam's boyfriend Sven plays chess.",
                                     "Sam's girlfriend Freja lives in Oslo."],
                                    frozenset({"boyfriend", "girlfriend"}))
    assert sven == {"sven"} and freja == {"freja"}


def test_a_number_right_after_how_it_is_said(pack) -> None:  # type: ignore[no-untyped-def]
    address, = _targets(pack, "Forget my home address, please.")
    assert number_matches(address, "Sam just moved into 3 Alder Close, York.", {"sam"})
    assert not number_matches(address, "Sam moved to York on 3 June.", {"sam"})
    salary, = _targets(pack, "Please forget my income.")
    assert number_matches(salary, "Sam makes around £2,400 a month.", {"sam"})


# -- a topic of the speaker's own is about the speaker ----------------------------------------

@pytest.mark.parametrize("request_text,own,other", [
    ("Please wipe my health details.", "Sam has been on antidepressants since May.",
     "Sam's cousin is a doctor with asthma."),
    ("Forget what I told you about my finances.", "Sam owes 3,000 on a loan.",
     "Sam works at a bank."),
    ("Please forget about my divorce.", "Sam's partner Jo dumped Sam.",
     "Sam's colleague Ravi just got divorced."),
])
def test_a_topic_of_my_own_is_about_me(pack, request_text: str, own: str,  # type: ignore[no-untyped-def]
                                       other: str) -> None:
    from memcore.core.forget import of_speaker, topic_matches
    target, = _targets(pack, request_text)

    def hit(fact: str) -> bool:
        return topic_matches(target, words_of(fact)) and of_speaker(target, fact, {"sam"})
    assert hit(own) and not hit(other), (own, other)


def test_a_contact_number_is_a_phone_number(pack) -> None:  # type: ignore[no-untyped-def]
    # qualified as the facts qualify it: the work number, not the home one
    target, = _targets(pack, "Please delete my work number.")
    assert target.attribute == "contact:phone:work"


# -- more forms: "any of that", "about me telling you", "that info", the parser's npadvmod ----


@pytest.mark.parametrize("text", [
    "Please don't store any of that.", "I don't want this remembered.",
    "I'm on parole. Could you remove those details?",
])
def test_more_back_references(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is not None and request.refers_back, text


@pytest.mark.parametrize("text", [
    "Delete all of my photos from last year.", "Ignore the part about the weather.",
    "I had a bout of flu in March.", "I don't want any of that cake.",
    "Please remove that info.",
])
def test_more_no_requests(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests([text])[0]
    assert request is None or request.guarded, text  # nothing on its own (guarded: in context)


def test_everything_about_me_is_the_scope(pack) -> None:  # type: ignore[no-untyped-def]
    request = pack.forget_requests(["Please delete everything you know about me."])[0]
    assert request is not None and request.everything and not request.targets


# -- put off only what is not the speaker's; what a statement said; forms as written ---------

def test_forgetting_mine_for_now_still_asks(pack) -> None:  # type: ignore[no-untyped-def]
    target, = _targets(pack, "Could you forget about my diagnosis for now?")
    assert "diagnosis" in target.words[0]


def test_a_target_matches_the_speakers_own_spelling(pack) -> None:  # type: ignore[no-untyped-def]
    target, = _targets(pack, "pls forget my pasport number")
    assert _matches(target, "Sam's pasport number is Y1234567.")


@pytest.mark.parametrize("text", [
    "Please forget everything concerning my family history.",
    "Forget everything regarding my health record.",
])
def test_everything_about_a_history_or_record_of_mine_is_no_whole_scope(  # type: ignore[no-untyped-def]
        pack, text: str) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None and not request.everything and request.targets, text
