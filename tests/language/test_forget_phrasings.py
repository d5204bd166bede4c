"""Forget requests as classes of phrasing (docs/design.md, Forget on request): new
phrasings of each kind read as requests with the right target, sentences that only use
the word read as none, and requests through the real write path (real Redis, the
English pack's parse, offline models) erase what they name -- every Redis key and the
append-only file scanned for it afterwards -- and nothing else."""

from __future__ import annotations

import shutil
from datetime import timedelta

import pytest

from memcore.core.models import AuditAction, Episode, Role
from memcore.ingest.write_path import IngestPipeline
from memcore.language import language_pack
from memcore.local.redis_server import running_redis
from tests.ingest.test_forget import _live, _pipeline
from tests.store.test_security_erase_aof import _aof_bytes, _wait_rewrite
from tests.support.key_scan import keys_holding
from tests.support.test_reliability_common import T0


@pytest.fixture(scope="module")
def pack():  # type: ignore[no-untyped-def]
    return language_pack()


# (request, the phrases its targets must give (empty: refers back), everything)
REQUESTS: list[tuple[str, list[str]]] = [
    # "please forget X", with and without please
    ("Forget my phone number please.", ["my phone number"]),
    ("Could you please forget my date of birth?", ["my date of birth"]),
    ("please forget the name of my therapist", ["my therapist"]),
    ("Forget all about my diagnosis.", ["my diagnosis"]),
    ("Could you forget about my cousin Mark?", ["my cousin", "Mark"]),
    # delete / remove / erase / wipe my X
    ("Delete my home address.", ["my home address"]),
    ("Remove my email address from your notes.", ["my email address"]),
    ("Please remove my salary.", ["my salary"]),
    ("I'd like you to delete my passport number.", ["my passport number"]),
    ("Erase my bank account number.", ["my bank account number"]),
    ("Wipe my credit card number from your memory.", ["my credit card number"]),
    ("Remove that from your memory.", []),
    # don't remember / keep / store that
    ("Don't remember that, please.", []),
    ("Please don't keep that.", []),
    ("Do not store that.", []),
    ("You shouldn't remember that.", []),
    ("Actually, don't save that.", []),
    ("Please stop remembering my address.", ["my address"]),
    # regret of having said it
    ("I shouldn't have told you that, sorry.", []),
    ("I should not have said that.", []),
    ("I shouldn't have mentioned my divorce.", ["my divorce"]),
    # scratch what I said about X
    ("Scratch what I said about my job interview.", ["my job interview"]),
    ("Scratch that.", []),
    ("Scratch everything I said about Lisa.", ["Lisa"]),
    ("Delete what I said about my landlord.", ["my landlord"]),
    ("Oh, forget that I mentioned my loan.", ["my loan"]),
    # forget everything about <person/topic>
    ("Forget everything about Lisa.", ["Lisa"]),
    ("Forget everything you know about my brother.", ["my brother"]),
    ("Please forget everything regarding my medical history.", ["my medical history"]),
    ("Can you forget what I told you about my sister?", ["my sister"]),
    ("Please disregard what I told you about my health.", ["my health"]),
    # "that" / "it": the previous turn, or earlier in the same turn
    ("Please forget what I just said.", []),
    ("Forget that, please.", []),
    ("Just forget it please, I shouldn't have shared it.", []),
    ("Forget what I said earlier.", []),
    ("Never mind what I said about my ex, please forget it.", ["my ex"]),
    ("My password is hunter2. Please forget that.", []),
    ("My blood type is O negative, please don't remember it.", []),
    ("Please forget about it.", []),
    ("Erase all of that.", []),
    ("Forget my previous message.", []),
    # declining the keeping, taking it back
    ("I'd rather you didn't remember that.", []),
    ("I don't want you to remember my address.", ["my address"]),
    ("Don't bother remembering my phone number.", ["my phone number"]),
    ("No need to remember that.", []),
    ("Pretend I never said that.", []),
    ("Let's pretend I didn't tell you that.", []),
    ("Ignore what I said about my ex.", ["my ex"]),
    # a wish that the thing not linger in, or be gone from, the assistant's memory
    ("I don't want my diagnosis sitting in your memory.", ["my diagnosis"]),
    ("I want every trace of my ex gone from your memory.", ["my ex"]),
    # ... or not be among what it knows
    ("I'd prefer it not exist as far as you're concerned.", []),
    ("I'd like it to not be part of what you remember about me.", []),
    ("can my surgery just not be something you know?", ["my surgery"]),
    ("I would rather my diagnosis were not held on record anywhere.", ["my diagnosis"]),
    # the object set before "you" ("this number you should not save")
    ("this password you should not save.", ["this password"]),
    # someone else's value: never the speaker's attribute
    ("Could you forget my ex's name?", ["ex's name"]),
    ("Please forget my ex's phone number.", ["ex's phone number"]),
]

NEGATIVES = [
    "I always forget my keys.", "I keep forgetting my passwords.",
    "Forget about it, it's fine.", "Ignore my typo.", "I don't need to remember that.",
    "You don't need to keep reminding me.", "I never said that to my boss.",
    "My mum forgets everything these days.", "I forgot my umbrella at the office.",
    "Don't forget my dentist appointment on Friday.",
    "Please don't forget that I'm vegetarian.",
    "Never forget that my sister is allergic to nuts.",
    "Don't forget to remind me about my mum's birthday.",
    "Let's not forget the meeting at 3.",
    "Forget it, it doesn't matter.", "Nah, forget it, no worries.",
    "Forget about it, it's fine.", "Forget it, I'll do it myself.",
    "I forgot to tell you, I moved to Paris.",
    "I'll never forget my first trip to Japan.",
    "Remember my address is 5 Elm Road.", "Keep that in mind.",
    "I deleted my Facebook account last year.", "How do I delete my Instagram account?",
    "Delete the duplicate rows from the spreadsheet.",
    "Can you remind me to remove the trash on Monday?",
    "I want to remove the stain from my shirt.", "I shouldn't have eaten that cake.",
    "I want the mould gone from the bathroom.", "I don't want my kids sitting in front of the TV.",
    "She'd prefer it not exist.", "I'd like the meeting not to be on Monday.",
    "My address is not something you know yet.", "Can the party not be at my place?",
    "The film you should not miss is Dune.", "This recipe you should save, it's great.",
    "Delete this part: the table has duplicates.",
]


@pytest.mark.parametrize("text,phrases", REQUESTS)
def test_phrasings_are_read_with_their_targets(pack, text: str,  # type: ignore[no-untyped-def]
                                               phrases: list[str]) -> None:
    request = pack.forget_requests([text])[0]
    assert request is not None, text
    assert [t.phrase for t in request.targets] == phrases, text
    assert request.refers_back == (not phrases), text
    assert not request.everything, text  # a named scope never becomes "everything"


@pytest.mark.parametrize("text", NEGATIVES)
def test_sentences_using_the_word_are_no_requests(pack, text: str  # type: ignore[no-untyped-def]
                                                  ) -> None:
    assert pack.forget_requests([text])[0] is None, text


def test_target_classes(pack) -> None:  # type: ignore[no-untyped-def]
    therapist, = pack.forget_requests(["Please forget the name of my therapist."])
    assert therapist.targets[0].attribute == "relation:therapist"  # not the speaker's name
    birth, = pack.forget_requests(["Forget my date of birth."])
    assert birth.targets[0].attribute == "birthday"
    ex_name, = pack.forget_requests(["Could you forget my ex's name?"])
    assert ex_name.targets[0].attribute is None and not ex_name.targets[0].mine
    bare, = pack.forget_requests(["Forget it."])
    assert bare.bare and bare.refers_back
    polite, = pack.forget_requests(["Please forget it."])
    assert not polite.bare


# -- through the write path -------------------------------------------------------------

def _turns(pipeline: IngestPipeline, ns: str, turns: list[tuple[str, str]],
           user: str = "ann", start: int = 0) -> None:
    """(role, text) turns of ``user``'s scope, each in its own task, a minute apart."""
    for i, (role, text) in enumerate(turns, start):
        pipeline.ingest(ns, [Episode(id=f"{user}-{i}", namespace=ns, role=Role(role),
                                     speaker=user.title() if role == "user" else "",
                                     text=text, timestamp=T0 + timedelta(minutes=i),
                                     user_id=user)])


# (the conversation before the request, the request, needle, a kept word)
CONVERSATIONS = [
    (["My locker combination is 31-07-19.", "I teach chemistry."],
     "Please don't keep my locker combination.", "31-07-19", "chemistry"),
    (["My ex-husband Viktor Halvorsen still calls me.", "I grow tomatoes."],
     "Forget everything about Viktor.", "Halvorsen", "tomatoes"),
    (["My therapist is Dr. Quennell.", "I live in Dundee."],
     "please forget the name of my therapist", "Quennell", "Dundee"),
    (["I run marathons.", "My email address is ann.private@mailbox.test."],
     "Oh, I shouldn't have told you that.", "mailbox", "marathons"),
    (["My phone number is 07700 900461.", "I like jazz.", "I have two dogs."],
     "Scratch what I said about my phone number.", "900461", "jazz"),
    (["My phone number is 07700 111222.", "My ex Marco's number is 07700 999888."],
     "Please forget my ex's phone number.", "999888", "111222"),  # not the speaker's own
    (["I had an abortion two years ago.", "I like rowing."],
     "I'd rather you didn't remember what I said about the abortion.", "abortion", "rowing"),
    (["I work at Brightwell.", "My cousin Mark Tolliver is in prison."],
     "Could you forget about my cousin Mark?", "Tolliver", "Brightwell"),
]


@pytest.mark.parametrize("before,request_text,needle,kept", CONVERSATIONS)
def test_requests_erase_the_target_only(redis_url: str, before: list[str], request_text: str,
                                        needle: str, kept: str) -> None:
    pipeline, store, _ = _pipeline(redis_url)
    turns: list[tuple[str, str]] = []
    for text in before:
        turns += [("user", text), ("assistant", "Okay, noted.")]
    _turns(pipeline, "fp", turns)
    assert keys_holding(store.client, needle), "the secret was stored before the request"
    _turns(pipeline, "fp", [("user", request_text)], start=len(turns))
    live = " ".join(_live(store, "fp")).lower()
    assert needle.lower() not in live and kept.lower() in live, live
    assert not keys_holding(store.client, needle)  # no key holds a byte of it
    assert not any(w in live for w in ("forget", "scratch", "told", "keep")), live
    audit = [e for e in store.audit.tail("fp", 50) if e.action is AuditAction.ERASE
             and e.reason.startswith("forget request on the request of")]
    assert len(audit) == 1 and needle.lower() not in audit[0].reason.lower()


def test_forget_it_after_the_assistant_asks_erases_nothing(redis_url: str) -> None:
    pipeline, store, _ = _pipeline(redis_url)
    _turns(pipeline, "dq", [("user", "I live in Leeds."),
                            ("assistant", "Shall I look up train times to London for you?"),
                            ("user", "Forget it.")])
    assert "Ann lives in Leeds." in _live(store, "dq")
    assert not [e for e in store.audit.tail("dq", 20) if e.reason.startswith("forget request")]
    # the same words after the user's own secret still ask
    _turns(pipeline, "dq2", [("user", "My PIN is 7741."), ("assistant", "Noted."),
                             ("user", "Forget it.")])
    assert not keys_holding(store.client, "7741")


def test_a_forget_erase_leaves_no_byte_in_any_key_or_the_aof() -> None:
    needle = "Quennell-Harbottle"
    with running_redis(appendfsync="always") as server:
        try:
            pipeline, store, _ = _pipeline(server.url)
            _turns(pipeline, "aof", [("user", f"My therapist is Dr. {needle}."),
                                     ("assistant", f"Dr. {needle}, noted."),
                                     ("user", "I live in Dundee.")])
            _wait_rewrite(store)
            assert needle.encode() in _aof_bytes(server.directory)
            assert keys_holding(store.client, needle)
            _turns(pipeline, "aof", [("user", "Please forget the name of my therapist.")],
                   start=3)
            _wait_rewrite(store)
            assert not keys_holding(store.client, needle)  # every key, DUMP and value
            assert needle.encode() not in _aof_bytes(server.directory)
            assert "Ann lives in Dundee." in _live(store, "aof")
        finally:
            shutil.rmtree(server.directory, ignore_errors=True)
