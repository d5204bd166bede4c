"""Forget requests as a class of the parse (docs/design.md, Forget on request): a request
addressed to the assistant (imperative, a question, "I'd like you to", "would you mind",
"I'd appreciate it if you", "let's") whose verb removes or declines keeping, phrasal ones
included ("get rid of", "take X off your list", "throw out", "hold on to"), and whose
object is what is kept of the speaker or what they said; the same verbs about things of
the world are no requests. Typos and chat spellings are read, with the spans mapped back
to the turn's own text. All sentences are new (none of tests/ingest/test_forget*.py
tests/language/test_forget*.py)."""

from __future__ import annotations

import pytest

from memcore.language import language_pack
from memcore.language.english.forget import REQUEST_VOCABULARY
from memcore.language.english.respelling import one_edit, respelled


@pytest.fixture(scope="module")
def pack():  # type: ignore[no-untyped-def]
    return language_pack()


# (request, the phrases of its targets; empty: it refers back)
REQUESTS: list[tuple[str, list[str]]] = [
    # phrasal and multiword removing verbs
    ("Could you please get rid of my passport number?", ["my passport number"]),
    ("Get rid of what I said about my court case.", ["my court case"]),
    ("I want you to get rid of my home address.", ["my home address"]),
    ("Take my phone number off your list.", ["my phone number"]),
    ("Take that out of your notes.", []),
    ("Get my salary out of your head, please.", ["my salary"]),
    ("Throw out my medical details.", ["my medical details"]),
    ("Please throw away what I told you about Rosalind.", ["Rosalind"]),
    ("Cross my date of birth off your list.", ["my date of birth"]),
    ("Clear my allergy info out.", ["my allergy info"]),
    # single removing verbs with what is kept of the speaker
    ("Scrub my pin.", ["my pin"]),
    ("Ditch my bank details.", ["my bank details"]),
    ("Strike that from the record.", []),
    ("Bin my diagnosis.", ["my diagnosis"]),
    ("Drop the name of my psychiatrist.", ["my psychiatrist"]),
    ("Toss out my brother's phone number.", ["brother's phone number"]),
    ("Purge everything you know about my stepdad.", ["my stepdad"]),
    ("Delete everything I told you, please.", []),
    ("Remove my previous comment.", []),  # the turn said in this chat
    ("Scratch that, please.", []),
    # declining to keep, with a particle
    ("Please don't hang onto my passport number.", ["my passport number"]),
    ("Don't write that down.", []),
    ("I'd prefer you didn't hold on to that.", []),
    ("I'd like you not to store my address.", ["my address"]),
    # indirect and polite asks
    ("Would you mind deleting my phone number?", ["my phone number"]),
    ("I'd appreciate it if you erased my date of birth.", ["my date of birth"]),
    ("It would be great if you could remove my salary.", ["my salary"]),
    ("I'd really like you to wipe my address from your memory.", ["my address"]),
    ("Let's forget what I said about my exam results.", ["my exam results"]),
    # passives asked of the assistant, and "can we"
    ("Can my passport number be deleted?", ["my passport number"]),
    ("I'd like my salary taken out of your notes.", ["my salary"]),
    ("I want my home address removed.", ["my home address"]),
    ("Please make sure my phone number is erased.", ["my phone number"]),
    ("Could that be wiped from your memory?", []),
    ("Can we forget I ever mentioned my overdraft?", ["my overdraft"]),
    ("Make sure to get rid of my date of birth.", ["my date of birth"]),
    # typos and chat spellings
    ("plz delte my adress", ["my address"]),
    ("can u remvoe my phone number", ["my phone number"]),
    ("Forgett my passport number.", ["my passport number"]),
    ("pls forgot what I said about my rehab", ["my rehab"]),
    ("u can erase my salary from ur memory", ["my salary"]),
]

NEGATIVES = [
    # the same verbs about things of the world
    "Delete the email from my boss.", "Delete my last email to Priya.",
    "Remove my name from the mailing list.", "Can you delete the meeting from my calendar?",
    "Take my mum's name off the invitation list.", "Scrub my phone number from the website.",
    "Get rid of the spider in my bathroom.", "How do I get rid of a wine stain?",
    "Throw out my old trainers.", "Can you take out the bins tonight?",
    "Clear my schedule for Thursday.", "Can you delete my bank account?",
    "Can you clear my browsing history?", "Drop me off at the station.",
    "Drop the kids at school at 8.", "Drop everything and look at this!", "Bin that.",
    "Please wipe that.", "Strike a balance between work and rest.",
    "I want you to remove the background from this photo.",
    # not addressed, past, conditional, a wish of the speaker's own
    "I need to get rid of my old car.", "I got rid of my old sofa.",
    "My sister threw out my letters.", "She deleted my number after the fight.",
    "If you delete my address, I'll have to tell you again.", "You deleted my address!",
    # dismissing, keeping, the past as a thing
    "Forget it, let's move on.", "Forget it, let's talk about something else.",
    "Let's drop it.", "Please take down my new address.", "Don't hold on to the past.",
    "Don't drop the ball on this.", "Would you mind remembering my address?",
    "My address was deleted by mistake.", "I want my account deleted.",
    "Can my appointment be cancelled and removed?", "Can that be deleted?",
    "I had my number removed from the directory.", "Can we get rid of the old sofa?",
    "Can you scratch my back?", "Please drop my name when you call them.",
    "Delete my last message to Tom.", "Strike my name off the guest list.",
    "Remove my diagnosis from the insurance claim.", "Please don't throw away my letters.",
]


@pytest.mark.parametrize("text,phrases", REQUESTS)
def test_forms_are_read_with_their_targets(pack, text: str,  # type: ignore[no-untyped-def]
                                           phrases: list[str]) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None, text
    assert [t.phrase for t in request.targets] == phrases, text
    assert request.refers_back == (not phrases and not request.everything), text


@pytest.mark.parametrize("text", NEGATIVES)
def test_removing_things_of_the_world_is_no_request(pack, text: str  # type: ignore[no-untyped-def]
                                                    ) -> None:
    request = pack.forget_requests([text])[0]
    assert request is None or request.guarded, text  # nothing on its own (guarded: in context)


def test_spans_index_the_turn_as_written(pack) -> None:  # type: ignore[no-untyped-def]
    text = "im a nurse. My gate code is 2291, pls dont remember it"
    request, = pack.forget_requests([text])
    assert [text[a:b] for a, b in request.sentences] == [
        "My gate code is 2291, pls dont remember it"]
    assert request.earlier is not None
    assert text[request.earlier[0]:request.earlier[1]] == "My gate code is 2291"


def test_the_asking_is_no_earlier_statement(pack) -> None:  # type: ignore[no-untyped-def]
    for text in ("I'd prefer you didn't keep that.", "Would you mind forgetting that?",
                 "I'd appreciate it if you deleted that from your notes."):
        request, = pack.forget_requests([text])
        assert request.refers_back and request.earlier is None, text  # the previous turn


def test_respelling() -> None:
    assert one_edit("delte", "delete") and one_edit("remvoe", "remove")
    assert one_edit("forgett", "forget") and not one_edit("forget", "forget")
    assert not one_edit("delia", "delete")
    known = {"my", "id", "number", "please"}.__contains__
    same = respelled("Forget my id number", known, REQUEST_VOCABULARY)
    assert same.text == "Forget my id number"  # "my id" is no "my I'd"
    out = respelled("pls delte it", known, REQUEST_VOCABULARY)
    assert out.text == "please delete it"
    assert out.original(len("please delete")) == len("pls delte")
    assert out.original(len(out.text)) == len("pls delte it")
    # a name inside a sentence is never taken for a typo
    assert respelled("Tell Erasm hi", known, REQUEST_VOCABULARY).text == "Tell Erasm hi"
