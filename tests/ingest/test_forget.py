"""Forget on request inside the conversation (issue 28, items 1-3 and 5): a user turn
asking to forget erases what it names, completely, before its task ends; the request
is no fact; sentences that only use the word store normally. Real Redis, the real
write path (offline models: rule extractor, hashing embedder), the real English pack."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
import redis

from memcore.adapters import build_models
from memcore.client.client import Client
from memcore.consolidate.passes import run_pass
from memcore.core.config import Settings
from memcore.core.models import AuditAction, Episode, Role, utcnow
from memcore.ingest.write_path import IngestPipeline
from memcore.language import language_pack
from memcore.store import MemoryStore
from tests.support.api_helpers import Api, api  # noqa: F401 - fixture
from tests.support.key_scan import keys_holding
from tests.support.test_reliability_common import T0

REQUEST_WORDS = ("forget", "delete", "remove", "erase", "scratch", "remember", "keep",
                 "told", "asks")


@pytest.fixture(scope="module")
def pack():  # type: ignore[no-untyped-def]
    return language_pack()


@pytest.mark.parametrize("text", [
    "Please forget my passport number.", "Can you forget my address?",
    "I want you to forget my address.", "Could you remove my home address from your memory?",
    "Please delete my medical information.", "Don't remember that.", "don't keep that",
    "I shouldn't have told you that.", "Scratch what I said about my ex.",
    "Forget everything about my ex.", "forget about my ex", "forget I said that",
    "Please erase what I told you about my diagnosis.", "Actually, please delete that "
    "from your memory.", "My PIN is 4821, forget it.", "please don't store my phone number",
    "I shouldn't have told you about my ex.", "forget everything I told you",
])
def test_requests_are_read(pack, text: str) -> None:  # type: ignore[no-untyped-def]
    assert pack.forget_requests([text])[0] is not None, text


@pytest.mark.parametrize("text", [
    "I always forget my keys.", "Don't forget my dentist appointment on Friday.",
    "Forget it, it doesn't matter.", "Oh forget it, never mind.", "You forgot my birthday!",
    "Did you forget my address?", "I want to forget about him.", "I'm trying to forget my ex.",
    "Delete the old config file and restart the server.", "Remember to call my mum.",
])
def test_sentences_only_using_the_word_are_no_requests(pack, text: str  # type: ignore[no-untyped-def]
                                                        ) -> None:
    assert pack.forget_requests([text])[0] is None, text


@pytest.mark.parametrize("text", ["pls delete that", "I'd like this deleted.",
                                  "I want that removed.", "Delete that.",
                                  "I'd like that deleted actually", "I'd like it deleted"])
def test_a_removing_verbs_delete_that_is_guarded(pack, text: str  # type: ignore[no-untyped-def]
                                                 ) -> None:
    # it may edit code or a list: decided where the turns are known (below)
    request = pack.forget_requests([text])[0]
    assert request is not None and request.guarded and request.refers_back, text
    assert not pack.forget_requests(["Forget what I told you."])[0].guarded


def test_a_wish_for_a_removal_is_the_speakers_own(pack) -> None:  # type: ignore[no-untyped-def]
    salary, = pack.forget_requests(["I want my salary removed"])  # tagged as a past
    assert salary is not None and [t.phrase for t in salary.targets] == ["my salary"]
    assert pack.forget_requests(["She wants that deleted actually"]) == [None]  # hers


def test_targets_and_back_references(pack) -> None:  # type: ignore[no-untyped-def]
    address, = pack.forget_requests(["Can you forget my home address?"])
    assert address.targets[0].attribute == "contact:address" and not address.refers_back
    ex, = pack.forget_requests(["Forget everything about my ex."])
    assert ex.targets[0].person and ex.targets[0].kind == "entity"
    back, = pack.forget_requests(["I shouldn't have told you that."])
    assert back.refers_back and back.earlier is None and back.kind == "turn"
    same, = pack.forget_requests(["I live in Leeds. My locker code is 4471, forget it."])
    assert same.refers_back and same.earlier == (17, 39)  # the clause before, not Leeds


# -- through the write path --------------------------------------------------------------

@pytest.fixture()
def url(redis_url: str, redis_client: redis.Redis) -> Iterator[str]:
    redis_client.config_set("rdbcompression", "no")  # DUMP shows raw bytes
    yield redis_url


def _pipeline(url: str) -> tuple[IngestPipeline, MemoryStore, Settings]:
    settings = Settings(redis_url=url, openai_api_key=None)
    store = MemoryStore.from_url(url)
    return IngestPipeline(store, build_models(settings), settings), store, settings


def _say(pipeline: IngestPipeline, ns: str, turns: list[str], *, user: str = "ann",
         start: int = 0) -> None:
    """Each turn in its own task, with an assistant reply after it (as chats go)."""
    for i, text in enumerate(turns, start):
        at = T0 + timedelta(minutes=2 * i)
        pipeline.ingest(ns, [Episode(id=f"{user}-{i}", namespace=ns, role=Role.USER,
                                     speaker=user.title(), text=text, timestamp=at,
                                     user_id=user)])
        pipeline.ingest(ns, [Episode(id=f"{user}-{i}-a", namespace=ns, role=Role.ASSISTANT,
                                     text="Okay.", timestamp=at + timedelta(minutes=1),
                                     user_id=user)])


def _live(store: MemoryStore, ns: str, user: str = "ann") -> list[str]:
    return [m.text for m in store.records.iter_memories(ns) if m.live and m.user_id == user]


CONVERSATIONS = [
    # (what is shared, a distractor that must survive, the secret's needle, requests)
    ("My student ID number is ZX88231Q.", "I live in Leeds.", "ZX88231Q",
     ["Please forget my student ID number.", "I shouldn't have told you that.",
      "Can you delete my student ID from your memory?"]),
    ("My ex Daniel Okafor cheated on me last month.", "I have a cat called Tom.", "Okafor",
     ["Forget everything about my ex.", "Scratch what I said about my ex.",
      "Please don't remember that."]),
    ("I have type 1 diabetes and I take insulin twice a day.", "I work at Acme.", "diabetes",
     ["Please delete my medical information.", "Forget that, please.",
      "Could you erase what I told you about my health?"]),
    ("My home address is 14 Larkspur Lane, Bristol.", "My favourite colour is green.",
     "Larkspur", ["Can you forget my address?", "Remove my home address from your memory.",
                  "don't keep that"]),
    ("My bank password is tangerine77.", "I play the piano.", "tangerine77",
     ["Please forget my password.", "I shouldn't have told you that.", "Forget I said that."]),
]


@pytest.mark.parametrize("shared,distractor,needle,request_text", [
    (s, d, n, r) for s, d, n, rs in CONVERSATIONS for r in rs])
def test_forget_in_the_next_turn(url: str, shared: str, distractor: str, needle: str,
                                 request_text: str) -> None:
    pipeline, store, settings = _pipeline(url)
    ns = "fg"
    other = needle[:-2] + "QB"  # bob's own secret of the same kind
    _say(pipeline, ns, [distractor, shared])
    _say(pipeline, ns, [distractor, shared.replace(needle, other)], user="bob")
    before = _live(store, ns)
    # stored as said, or masked at once (a fact that says only "<x> is [redacted: ...]"
    # is none: the masked turn is all there is)
    assert any(needle.lower() in t.lower() or "[redacted" in t for t in before) or any(
        "[redacted" in e.text for e in store.episodes.recent(ns, 10)), before
    _say(pipeline, ns, [request_text], start=2)
    run_pass(store, ns, settings.consolidation, pipeline.models.merger, now=T0 + timedelta(days=1))
    live = _live(store, ns)
    assert not any(needle.lower() in t.lower() or "[redacted" in t for t in live), live
    assert live, "the distractor is kept"
    assert not any(w in t.lower() for t in live for w in REQUEST_WORDS), live
    client = Client(url)
    try:
        hits = client.search(ns, needle, k=5, filters={"user_id": "ann"})
    finally:
        client.close()
    assert not any(needle.lower() in h.memory.text.lower() for h in hits)
    assert not keys_holding(store.client, needle)  # no byte of it in any key
    assert _live(store, ns, "bob") == [t.replace(needle, other) for t in before] \
        or len(_live(store, ns, "bob")) == len(before)  # bob's scope untouched
    audit = [e for e in store.audit.tail(ns, 50) if e.action is AuditAction.ERASE
             and e.reason.startswith("forget request on the request of turn ann-2")]
    assert len(audit) == 1 and needle.lower() not in audit[0].reason.lower()
    assert audit[0].before or "turns erased" in audit[0].reason


@pytest.mark.parametrize("turn", [
    "My locker code is Q-4471, forget it.",
    "I live in Leeds. My locker code is Q-4471. Please forget that.",
])
def test_forget_in_the_same_turn_stores_nothing_of_it(url: str, turn: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "st", [turn])
    assert not keys_holding(store.client, "Q-4471")
    assert not any("locker" in t.lower() or "forget" in t.lower() for t in _live(store, "st"))
    if "Leeds" in turn:
        assert "Ann lives in Leeds." in _live(store, "st")


def test_negatives_store_normally(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "ng", ["I live in Leeds.", "I always forget my keys.",
                          "Don't forget my dentist appointment on Friday.",
                          "Forget it, it doesn't matter."])
    live = " ".join(_live(store, "ng"))
    assert "Leeds" in live and "keys" in live and "dentist" in live
    assert not [e for e in store.audit.tail("ng", 50) if e.reason.startswith("forget request")]


def test_forget_everything_about_a_person_only_erases_them(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    turns = ["My ex is called Daniel.", "Daniel works at Initech.", "I live in York.",
             "My sister Lin is 34."]
    _say(pipeline, "ex", turns)
    _say(pipeline, "ex", turns, user="bob")
    assert any("Initech" in t for t in _live(store, "ex"))
    _say(pipeline, "ex", ["Forget everything about my ex."], start=4)
    live = _live(store, "ex")
    assert not any("Daniel" in t or "Initech" in t for t in live), live
    assert any("York" in t for t in live) and any("Lin" in t for t in live)
    assert any("Initech" in t for t in _live(store, "ex", "bob"))


def test_nothing_matching_erases_nothing_and_says_so(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "nm", ["I live in Leeds.", "Please forget my passport number."])
    assert "Ann lives in Leeds." in _live(store, "nm")
    audit = [e for e in store.audit.tail("nm", 20) if e.reason.startswith("forget request")]
    assert len(audit) == 1 and "nothing matched" in audit[0].reason and not audit[0].before


def test_a_pass_in_flight_does_not_bring_it_back(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "pf", ["I live in Leeds.", "My home address is 14 Larkspur Lane, Bristol."])
    view = store.snapshots.begin_pass("pf")  # the pass read the address before the request
    _say(pipeline, "pf", ["Can you forget my address?"], start=2)
    store.snapshots.commit_pass("pf", view, view.memories, [], now=utcnow())
    assert not any("Larkspur" in t for t in _live(store, "pf"))
    assert not keys_holding(store.client, "Larkspur")
    assert "Ann lives in Leeds." in _live(store, "pf")


def test_forget_endpoint(api: Api) -> None:  # noqa: F811
    pipeline, store, _ = _pipeline(api.redis_url)
    _say(pipeline, "web", ["I live in Leeds.", "My home address is 14 Larkspur Lane, Bristol."])
    key = api.key("web")
    r = api.call("POST", "/v1/namespaces/web/forget", key,
                 json={"text": "my home address", "user_id": "ann"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "attribute" and body["erased"] == 1
    # the assistant's reply to the erased turn goes with it: a reply may repeat it
    assert body["turns_erased"] == ["ann-1", "ann-1-a"]
    assert not any("Larkspur" in t for t in _live(store, "web"))
    assert not keys_holding(store.client, "Larkspur")
    r = api.call("POST", "/v1/namespaces/web/forget", key,
                 json={"text": "please forget my passport number", "user_id": "ann"})
    assert r.status_code == 200 and r.json()["erased"] == 0
    assert "Ann lives in Leeds." in _live(store, "web")
    reader = api.key("web", role="read")
    assert api.call("POST", "/v1/namespaces/web/forget", reader,
                    json={"text": "that"}).status_code == 403


def test_a_request_nothing_extracted_names_erases_the_turns_that_say_it(url: str) -> None:
    # The turn gave no fact naming the debt (or none at all): what the user asks to
    # forget is then the turn that said it, not nothing.
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "tw", ["I live in Leeds.", "ugh, the debt. 2k to Faisal Qureshi, due june"])
    assert keys_holding(store.client, "Qureshi")
    _say(pipeline, "tw", ["Please erase the bit about my debt."], start=2)
    assert not keys_holding(store.client, "Qureshi")
    assert "Ann lives in Leeds." in _live(store, "tw")  # the other turn stays
    audit = [e for e in store.audit.tail("tw", 20) if e.reason.startswith("forget request")]
    assert any("2 turns erased" in e.reason for e in audit)  # the turn and its reply
    assert not any("Qureshi" in e.reason for e in audit)


@pytest.mark.parametrize(("shared", "request_text", "needle"), [
    ("My brother Olek owes the bank 30k and his wife doesn't know.",
     "Coming back to Olek, please forget that.", "Olek"),
    ("I had a second interview at Brightwell Insurance on Monday, my manager can't know.",
     "That business with the interview, you must forget it.", "Brightwell"),
    # a wish that it not be in what the assistant knows, its topic set before the comma
    ("I was sacked from Harrow Bank in 2019 for fiddling expenses.",
     "Right, the bit about getting sacked, I'd prefer it not exist as far as you're "
     "concerned.", "Harrow"),
])
def test_a_topic_set_before_the_request_is_what_it_means(url: str, shared: str,
                                                          request_text: str,
                                                          needle: str) -> None:
    # "that"/"it" would be the turn just before (the allotment): the topic named before
    # the comma says what to forget, and the allotment stays
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "dt", [shared, "We finally got an allotment near the canal.", request_text])
    assert not keys_holding(store.client, needle)
    assert any("allotment" in t for t in _live(store, "dt")), _live(store, "dt")


def test_a_persons_value_keeps_the_persons_other_facts(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "pv", ["My neighbour Tariq runs a bakery.",
                          "Tariq's phone number is 07700 445566."])
    assert any("445566" in t for t in _live(store, "pv"))
    _say(pipeline, "pv", ["Please delete Tariq's phone number."], start=2)
    assert not keys_holding(store.client, "445566")
    assert any("bakery" in t for t in _live(store, "pv")), _live(store, "pv")


def test_a_salary_said_with_an_amount_goes_and_other_making_stays(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "am", ["I make 72,000 a year.", "I make pottery at the weekend."])
    _say(pipeline, "am", ["Please forget my salary."], start=2)
    assert not keys_holding(store.client, "72,000")
    assert any("pottery" in t for t in _live(store, "am")), _live(store, "am")


def test_every_version_of_a_value_goes(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "sv", ["My phone number is 07700 100200.", "I like squash.",
                          "My new phone number is 07700 300400."])
    _say(pipeline, "sv", ["Please forget my phone number."], start=3)
    assert not keys_holding(store.client, "100200") and not keys_holding(store.client, "300400")
    assert any("squash" in t for t in _live(store, "sv"))


def test_a_statement_after_the_request_is_stored(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "tl", ["My gym locker code is Q-6120."])
    _say(pipeline, "tl", ["Please forget my locker code, my new office is in Glasgow."],
         start=1)
    assert not keys_holding(store.client, "Q-6120")
    live = _live(store, "tl")
    assert any("Glasgow" in t for t in live), live
    assert not any(w in t.lower() for t in live for w in REQUEST_WORDS), live


@pytest.mark.parametrize("shared,request_text", [
    ("I grew up in Whitby. My door code is 5083.", "Please don't remember that."),
    ("I coach a netball team. I was sacked from Ferrow Ltd for fraud, by the way.",
     "I shouldn't have told you that."),
])
def test_that_is_the_last_sentence_of_the_turn_not_its_other_facts(
        url: str, shared: str, request_text: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "ls", [shared])
    kept = "Whitby" if "Whitby" in shared else "netball"
    secret = "5083" if "5083" in shared else "Ferrow"
    assert any(kept in t for t in _live(store, "ls")), _live(store, "ls")
    _say(pipeline, "ls", [request_text], start=1)
    assert not keys_holding(store.client, secret)  # the turn's text went with it
    assert any(kept in t for t in _live(store, "ls")), _live(store, "ls")


# -- nothing beside what is named (new sentences, none of the case files) -----------------

@pytest.mark.parametrize("turns,request_text,secret,kept", [
    # a value of the speaker's own, not the same value of the speaker's people
    (["My birthday is on 14 August.", "My son's birthday is 2 February."],
     "Please forget my birthday.", "August", "February"),
    # "ex" in a hyphenated compound names a colleague, not the ex
    (["My ex Orla took the dog.", "My ex-colleague Bram is opening a bakery."],
     "Please forget everything about my ex.", "Orla", "Bram"),
    # a qualified contact, not its sibling of the same turn
    (["My private email is ann.q@mailbox.test and my work email is aq@firm.test."],
     "Remove my private email from your memory.", "mailbox", "firm.test"),
    # a thing of mine, not the same thing of my people
    (["I earn 41k.", "My flatmate's salary is 95k."], "Please forget my salary.", "41k", "95k"),
    (["I'm allergic to shellfish.", "My cousin Noor is allergic to wasps."],
     "Forget my allergy please.", "shellfish", "wasps"),
    (["I work at Brightwell.", "My husband works at Ferncastle."], "Forget where I work.",
     "Brightwell", "Ferncastle"),
    # one name, two people: the ex's, not the friend's of the same name
    (["My ex Kit lives in Derby.", "My friend Kit Nolan is a plumber."],
     "Please forget everything about my ex.", "Derby", "plumber"),
    (["My therapist is Dr Ruiz.", "My vet is Dr Ruiz as well."], "Forget my therapist.",
     "therapist", "vet"),
    # no fact names the speaker's own condition: the turns saying it go, not the turn of
    # the speaker's father (whose fact it is)
    (["My father has arthritis.", "ugh, the migraines again, 3 this week"],
     "Please delete my health info.", "migraines", "arthritis"),
    # the stuff of a named friend is hers, whoever's people she is
    (["My friend Greta was arrested last week.", "I like rowing."],
     "Could you forget the Greta stuff?", "arrested", "rowing"),
    # "everything I just said" is the turn before, not the scope
    (["I live in Truro.", "My gym locker code is 8812."],
     "Please forget everything I just said.", "8812", "Truro"),
    # "the old one" is the replaced value; the new one said after it stays
    (["My email is kit@oldmail.test.", "I play chess."],
     "New email. Forget the old one, my email is now kit@newmail.test.", "oldmail", "newmail"),
    # "my old address" is the replaced one, not the one that replaced it
    (["My address is 9 Ash Close, Hull.", "I've moved: my new address is 40 Kiln Road, Ely."],
     "Please delete my old address.", "Ash Close", "Kiln Road"),
    # the old home that named only a town is the old address; a date in the new one's
    # text is no house number (the new home had been erased instead)
    (["I live in Leeds.", "Moved to York on 5 February, the new flat is great."],
     "Please forget my old address.", "Leeds", "York"),
    # "this" and a colon point ahead: what follows goes, the turn before stays (it had
    # been erased instead)
    (["I live in Leeds and I work at Acme.", "Don't save this: my gym locker code is 4821."],
     None, "4821", "Leeds"),
    (["I live in Leeds and I work at Acme.",
      "Don't remember this bit, I just need to vent: my brother-in-law Craig embezzled "
      "money from the family business."], None, "Craig", "Acme"),
    # in its own turn: the last part is the last clause; a statement before the request
    # in its sentence stays
    (["Long day: my sister got a puppy, I sold my piano, and my GP thinks I have gout. "
      "Forget that last part please."], None, "gout", "piano"),
    (["My locker is 3155, my gym is PureFit, forget the locker."], None, "3155", "PureFit"),
    # "forget I said <clause>": what the clause said, never the turn before (the cat had
    # been erased and the chess kept)
    (["I love chess.", "I have a cat named Tom."], "forget I said I love chess", "chess", "Tom"),
    (["I'm learning the cello at night school.", "My sister Jo lives in Bath."],
     "Please forget I told you I'm learning the cello.", "night school", "Bath"),
    (["My job is at a bakery.", "I drive a red Fiat."],
     "Forget I said anything about my job.", "bakery", "Fiat"),
    # "my dad's diagnosis" is his: the speaker's own condition stays (it had been erased
    # as a turn naming the topic, whoever's it was)
    (["My dad has early-stage dementia, we found out in May.", "I've had eczema for years."],
     "Please forget my dad's diagnosis.", "dementia", "eczema"),
    (["My sister has lupus.", "I have psoriasis on my elbows."],
     "Could you delete my sister's medical stuff?", "lupus", "psoriasis"),
    # one memory of two clauses: the clause that names the thing goes, the other stays
    (["I bank with Monzo, and the PIN for my card is 7302."], "please forget the PIN",
     "7302", "Monzo"),
    (["I failed my driving test again, and my sister Amy got engaged to Raj."],
     "Please forget the driving test.", "failed", "Raj"),
    # a regret after a remark means the sensitive turn before it, not the remark (the
    # remark had been erased and the diagnosis kept)
    (["I was diagnosed with epilepsy in June.", "I love jazz."],
     "Ugh, I shouldn't have told you that.", "epilepsy", "jazz"),
    (["I owe my landlord three months' rent.", "Off to the gym now."],
     "wish I hadn't said that tbh", "landlord", "gym"),
    # chat spellings ("wat", "ngl") are written out before the request is read
    (["My cousin Marek borrowed my camera.", "I started pottery classes."],
     "ngl forget wat i told u about Marek", "camera", "pottery"),
])
def test_a_request_erases_nothing_beside_what_it_names(
        url: str, turns: list[str], request_text: str | None, secret: str, kept: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "nb", turns)
    if request_text is not None:
        if kept not in request_text:  # stored before the request (so it can be lost)
            assert any(kept in t for t in _live(store, "nb")), _live(store, "nb")
        _say(pipeline, "nb", [request_text], start=len(turns))
    assert not keys_holding(store.client, secret)
    assert any(kept in t for t in _live(store, "nb")), _live(store, "nb")


def test_a_landline_neither_retires_the_mobile_nor_is_it(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    _say(pipeline, "ll", ["My mobile number is 07700 900 731.",
                          "My landline is 01632 960 284."])
    live = _live(store, "ll")
    assert any("900 731" in t for t in live) and any("960 284" in t for t in live), live
    _say(pipeline, "ll", ["Please delete my mobile number."], start=2)
    assert not keys_holding(store.client, "900 731")
    assert any("960 284" in t for t in _live(store, "ll")), _live(store, "ll")


def test_a_turn_going_on_about_the_person_by_a_pronoun_goes_with_them(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    # (the parse leaves "He" of the second turn unresolved: no memory says Utrecht, only
    # the turn's text)
    _say(pipeline, "po", ["My ex Rupert ghosted me in May.",
                          "He's a chef in Utrecht now apparently.",
                          "My colleague Wen is lovely.", "She bakes on Fridays."])
    _say(pipeline, "po", ["Please forget everything about Rupert."], start=4)
    assert not keys_holding(store.client, "Rupert") and not keys_holding(store.client, "Utrecht")
    live = _live(store, "po")
    assert any("Wen" in t for t in live), live
    # the turn after Wen's goes on about Wen, not Dmitri: its text stays
    assert any(e.text.startswith("She bakes") for e in store.episodes.recent("po", 20))



def test_delete_that_erases_what_the_user_just_said_not_an_edit_of_code(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    # after something of the speaker's: the turn "that" refers to is erased
    _say(pipeline, "dt", ["I live in Leeds.", "My gym locker code is 4471.",
                          "I'd like this deleted."])
    assert not keys_holding(store.client, "4471")
    assert any("Leeds" in t for t in _live(store, "dt"))
    assert not any("deleted" in t for t in _live(store, "dt"))  # the request is no fact
    # after the assistant's code or list: an edit, nothing erased (audited)
    for i, (reply, said) in enumerate([("```python\nx = 1\n```", "Delete that."),
                                       ("- socks\n- a torch", "I want that removed.")]):
        at = T0 + timedelta(hours=1 + i)
        pipeline.ingest("dt", [Episode(id=f"c-{i}", namespace="dt", role=Role.USER,
                                       speaker="Ann", text=f"I keep bees in Hebden {i}.",
                                       timestamp=at, user_id="ann")])
        pipeline.ingest("dt", [Episode(id=f"c-{i}-a", namespace="dt", role=Role.ASSISTANT,
                                       text=reply, timestamp=at + timedelta(minutes=1),
                                       user_id="ann")])
        pipeline.ingest("dt", [Episode(id=f"c-{i}-b", namespace="dt", role=Role.USER,
                                       speaker="Ann", text=said, user_id="ann",
                                       timestamp=at + timedelta(minutes=2))])
        assert keys_holding(store.client, f"Hebden {i}"), said
    reasons = [e.reason for e in store.audit.tail("dt", 50)]
    assert sum("not-personal" in r for r in reasons) == 2, reasons


def test_a_dismissal_answering_a_question_gives_no_fact(url: str) -> None:
    pipeline, store, _ = _pipeline(url)
    at = T0
    pipeline.ingest("dq", [Episode(id="dq-0", namespace="dq", role=Role.USER, speaker="Ann",
                                   text="I have a parrot called Mango.", timestamp=at,
                                   user_id="ann")])
    pipeline.ingest("dq", [Episode(id="dq-1", namespace="dq", role=Role.ASSISTANT,
                                   text="Lovely! How old is Mango?",
                                   timestamp=at + timedelta(minutes=1), user_id="ann")])
    pipeline.ingest("dq", [Episode(id="dq-2", namespace="dq", role=Role.USER, speaker="Ann",
                                   text="Forget it.", timestamp=at + timedelta(minutes=2),
                                   user_id="ann")])
    live = _live(store, "dq")
    assert any("Mango" in t for t in live) and not any("forget" in t.lower() for t in live), live
