"""Secrets never become memories (issue 28, item 4).

Unit tests of the detector (memcore/core/secrets.py): each kind in several phrasings,
shapes that need no English cue, and look-alikes that must stay (phone numbers, dates,
order numbers, "I forgot my password"). Then end to end on a real redis-server with
``appendonly yes``: turns carrying every kind go through the real write path
(IngestPipeline, offline rule extractor and attached facts) and through ``Client.add``
plus a real Celery worker; every key of every type (SCAN, then GET/HGETALL/LRANGE/
SMEMBERS/ZRANGE/XRANGE and DUMP uncompressed) and the AOF files (raw, and with base64
runs decoded: the broker's messages are base64) are searched for each value. None is
found; with the namespace exempt, or redaction off, the values are stored as before.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis

from memcore.adapters import build_models
from memcore.adapters.extract import OfflineExtractor
from memcore.client.client import Client, to_episodes
from memcore.core import secrets
from memcore.core.config import Settings
from memcore.core.models import AuditAction, Episode, Role
from memcore.core.secrets import (
    ACCOUNT,
    API_KEY,
    CARD,
    CARD_CODE,
    CODE,
    IBAN,
    NATIONAL_ID,
    PASSWORD,
    PIN,
    PRIVATE_KEY,
    TOKEN,
    iban_ok,
    luhn_ok,
    redaction_applies,
)
from memcore.ingest.redaction import redaction_events
from memcore.ingest.write_path import IngestPipeline
from memcore.language.english.secret_cues import ENGLISH_SECRET_CUES
from memcore.local.redis_server import RedisServer, running_redis, start_redis
from memcore.local.stack import LocalStack
from memcore.store import MemoryStore

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI4MjczNjQ1NTEiLCJuYW1lIjoiU2FtIn0."
       "Qm7x2VfK9pLs3NwT8rYc1ZdH4gJ6bAeU0oIqXyWnMkE")
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9Qz3kLm2Pn8Rs4Tv6Wy1Xb5Zc0Ad\n"
       "Hf3Jg7Kq2Lr9Ms4Nt8Ou1Pv6Qw0Rx5Sy3Tz7Ua2Vb\n-----END RSA PRIVATE KEY-----")

# (kind, turn, the secret as written). Every value is distinctive, so finding it in
# Redis or the AOF can only mean it was stored.
CASES: list[tuple[str, str, str]] = [
    (PASSWORD, "My password is Hunter2Zq", "Hunter2Zq"),
    (PASSWORD, "Password: Tr0ub4dorQx", "Tr0ub4dorQx"),
    (PASSWORD, "pw: s3cr3tPw77!", "s3cr3tPw77!"),
    (PASSWORD, "The wifi password for the cabin is SunnyDays42.", "SunnyDays42"),
    (PASSWORD, "I set my email password to BlueHorse77x yesterday", "BlueHorse77x"),
    (PASSWORD, "use Kx9mPq2Lw as the password for the router", "Kx9mPq2Lw"),
    (PASSWORD, "pwd=Letmein2024z", "Letmein2024z"),
    (PASSWORD, "Zebra9Crane1 is my bank password, don't tell anyone", "Zebra9Crane1"),
    (PASSWORD, "my Netflix password's Fluffy1984q", "Fluffy1984q"),
    (PASSWORD, 'the passphrase is "violet ocelot tramway 42"', "violet ocelot tramway 42"),
    (PASSWORD, "connect with postgres://sam:Pg7vQ2wR9x@db.internal:5432/app", "Pg7vQ2wR9x"),
    (PIN, "My bank PIN is 480213.", "480213"),
    (PIN, "pin: 915736", "915736"),
    (PIN, "the PIN for my debit card is 602847, please keep it", "602847"),
    (PIN, "PIN number 370519", "370519"),
    (CODE, "Your verification code is 583920", "583920"),
    (CODE, "OTP 294061 expires in 5 minutes", "294061"),
    (CODE, "2FA code: 718305", "718305"),
    (CODE, "The code for the safe is 640182", "640182"),
    (CODE, "one-time password 852014", "852014"),
    (CODE, "My locker code is zebra-quartz-7781.", "zebra-quartz-7781"),
    (API_KEY, "my OpenAI key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
     "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"),
    (API_KEY, "AWS access key AKIA2Q7TXY4ZB6NC3PLM for the backup job", "AKIA2Q7TXY4ZB6NC3PLM"),
    (API_KEY, "api key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    (API_KEY, "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCY9Q2kLz",
     "wJalrXUtnFEMIK7MDENGbPxRfiCY9Q2kLz"),
    (API_KEY, "maps uses AIzaSyD3xQ8vL2mN5pR7tW9yB1cF4hJ6kZ0aQeS",
     "AIzaSyD3xQ8vL2mN5pR7tW9yB1cF4hJ6kZ0aQeS"),
    (API_KEY, "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    (TOKEN, "github token ghp_R8sT2uV5wX7yZ1aB3cD6eF9gH0iJ4kL8mN2p",
     "ghp_R8sT2uV5wX7yZ1aB3cD6eF9gH0iJ4kL8mN2p"),
    (TOKEN, "the slack bot uses xoxb-2841937650-Kq7LmN3pR8sT", "xoxb-2841937650-Kq7LmN3pR8sT"),
    (TOKEN, f"here is my session JWT {JWT}", JWT),
    (TOKEN, "Authorization: Bearer Zm9vYmFyYmF6cXV4cXV1eA2024", "Zm9vYmFyYmF6cXV4cXV1eA2024"),
    (TOKEN, "access token = 7Gh2Kp9Lm4Qr8St1Vw6Xy3Za", "7Gh2Kp9Lm4Qr8St1Vw6Xy3Za"),
    (PRIVATE_KEY, f"deploy key:\n{PEM}", PEM),
    (CARD, "My visa is 4111 1111 1111 1111, expires 09/28", "4111 1111 1111 1111"),
    (CARD, "card number: 5555-5555-5555-4444", "5555-5555-5555-4444"),
    (CARD, "pay with 378282246310005 please", "378282246310005"),
    (CARD, "Meine Kreditkarte: 6011 1111 1111 1117", "6011 1111 1111 1117"),
    (CARD, "cc 3530111333300000", "3530111333300000"),
    (IBAN, "my IBAN is DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00"),
    (IBAN, "Transfer the rent to GB82WEST12345698765432", "GB82WEST12345698765432"),
    (IBAN, "Mi IBAN es ES91 2100 0418 4502 0005 1332", "ES91 2100 0418 4502 0005 1332"),
    (IBAN, "IBAN: fr14 2004 1010 0505 0001 3m02 606", "fr14 2004 1010 0505 0001 3m02 606"),
    (ACCOUNT, "account number 31926819", "31926819"),
    (ACCOUNT, "my checking account is 000123456789", "000123456789"),
    (ACCOUNT, "acct #: 4402-1937-55", "4402-1937-55"),
    (ACCOUNT, "routing number 021000021", "021000021"),
    (ACCOUNT, "sort code 40-47-84", "40-47-84"),
    (NATIONAL_ID, "my SSN is 536-90-4417", "536-90-4417"),
    (NATIONAL_ID, "social security number: 219 09 9998", "219 09 9998"),
    (NATIONAL_ID, "his national insurance number is JG 10 37 21 B", "JG 10 37 21 B"),
    (NATIONAL_ID, "mein Ausweis, ja: 536-22-4471", "536-22-4471"),
    (NATIONAL_ID, "passport number X7842913, valid until 2031", "X7842913"),
    (NATIONAL_ID, "Personnummer 811228-9874", "811228-9874"),
]

# Only in the unit tests: too short to search a whole AOF for.
SHORT_CASES: list[tuple[str, str, str]] = [
    (PIN, "my pin's 0420", "0420"),
    (PIN, "bank pin 7391.", "7391"),
    (CODE, "the door code is 1234#", "1234"),
    (CARD_CODE, "cvv 737", "737"),
    (CARD_CODE, "the CVC: 0412", "0412"),
    (PASSWORD, "my password is hunter2", "hunter2"),
]

NOT_SECRETS = [
    "I forgot my password",
    "I forgot my password again.",
    "I need to reset my password, it expired",
    "my password is too short, the site says",
    "I use a password manager for everything",
    "The wifi password at the cabin is on the fridge, not in the drawer!",
    "password-protected files are a pain",
    "I always forget my PIN",
    "Pin it to the board please",
    "my account is locked",
    "I opened an account in 2019",
    "the key is under the mat",
    "the key to success is patience",
    "my zip code is 94110",
    "area code 415",
    "error code 404 again",
    "use promo code SAVE2024 at checkout",
    "I code Python3 apps for fun",
    "call me at +1 415 555 0132",
    "call me at (415) 555-0132 or 415-555-0132",
    "my German number is +49 1512 3456 7890",
    "born 1985-03-15, that is 15/03/1985",
    "the meeting is on March 15, 2024 at 10:30",
    "order 4829 shipped, order number 1234567890123",
    "my Amazon order #112-4567890-1234567",
    "tracking number 9400111899223847560123",
    "I have 3 kids and 2 cats",
    "version 2.3.1 released in 2024",
    "room 1204, flight UA 1234, gate 22",
    "the invoice total is 1,234,567.89 EUR",
    "my card ending in 4242 was charged",
    "QQ123456C is the dummy NI number on the form",
    "4111 1111 1111 1112 is not a valid card",
    "DE89 3704 0044 0532 0130 01 is a mistyped IBAN",
    "000-12-3456 is no SSN",
    "My password is the same as my email",
    "Passwords must be 8 characters",
    "my password was changed yesterday",
    "The PIN is on the back of the card",
    "I paid with my credit card",
    "My secret is that I love 2 cats",
    "The token ring network from 1985",
    "I have a key meeting on 2024-05-06",
    "I live at 221B Baker Street, London NW1 6XE",
    "My phone is 07700 900123 and my email is sam@example.com",
    "My student number is 20231234",
    "My license plate is AB12 CDE",
]


def find_secrets(text: str) -> list[secrets.Found]:
    """The detector with the English cues, as the English pack configures it."""
    return secrets.find_secrets(text, ENGLISH_SECRET_CUES)


def redact(text: str, max_bytes: int | None = None) -> tuple[str, list[str]]:
    return secrets.redact(text, max_bytes, ENGLISH_SECRET_CUES)


def redact_episode(episode: Episode) -> tuple[Episode, list[str]]:
    return secrets.redact_episode(episode, cues=ENGLISH_SECRET_CUES)


def test_without_a_language_only_the_shapes_are_masked() -> None:
    text = "my password is Hunter2Zq, card 4111 1111 1111 1111"
    masked, kinds = secrets.redact(text)
    assert kinds == [CARD] and "Hunter2Zq" in masked and "4111" not in masked



@pytest.mark.parametrize(("kind", "text", "value"), CASES + SHORT_CASES,
                         ids=[f"{k}:{t[:30]}" for k, t, _ in CASES + SHORT_CASES])
def test_each_kind_is_masked(kind: str, text: str, value: str) -> None:
    masked, kinds = redact(text)
    assert value not in masked, masked
    assert f"[redacted: {kind}]" in masked, masked
    assert kind in kinds
    again, more = redact(masked)  # idempotent: a marker is never masked again
    assert (again, more) == (masked, [])
    assert secrets.marked(masked) == kinds


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact(text) == (text, []), find_secrets(text)


def test_text_around_a_secret_is_kept() -> None:
    masked, kinds = redact("I live in Oslo, my PIN is 480213 and my password is Hunter2Zq.")
    assert masked == ("I live in Oslo, my PIN is [redacted: pin] and my password is "
                      "[redacted: password].")
    assert kinds == [PIN, PASSWORD]


def test_shapes_need_no_cue() -> None:
    """Card numbers, IBANs and key formats are found in any language, with no cue word."""
    for text, kind in [("Numéro: 4012 8888 8888 1881 merci", CARD),
                       ("カード 5105105105105100 です", CARD),
                       ("IBAN-Nr NL91ABNA0417164300", IBAN),
                       ("la clé sk-ant-api03-Xy7Qm2Lp9Rs4Tv8Wz1Ab", API_KEY),
                       ("токен ghp_R8sT2uV5wX7yZ1aB3cD6eF9gH0iJ4kL8mN2p", TOKEN),
                       ("número 536-90-4417", NATIONAL_ID)]:
        masked, kinds = redact(text)
        assert kinds == [kind], text
        assert f"[redacted: {kind}]" in masked


def test_checks() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert luhn_ok("378282246310005")
    assert iban_ok("GB82WEST12345698765432") and not iban_ok("GB82WEST12345698765433")
    assert not iban_ok("DE8937040044053201300")  # one character short for Germany
    # Luhn-valid, but no issuer starts with 1 or 9: an order or tracking number.
    assert redact("1234567890123452") == ("1234567890123452", [])


@pytest.mark.parametrize("unit", ["1-", "code is ", "key=", "pw=", "sk-", "password for ",
                                  "-----BEGIN RSA PRIVATE KEY-----", "a://b:", "x ", "4"])
def test_a_hostile_turn_is_read_in_linear_time(unit: str) -> None:
    """A 32 KB turn of one repeated cue or shape fragment takes well under a second (no
    pattern rescans the rest of the text from every position)."""
    text = unit * (32 * 1024 // len(unit))
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < 2.0


def test_markers_never_grow_a_turn_past_its_limit() -> None:
    text = "pin 4411 " * 40
    size = len(text.encode())
    masked, kinds = redact(text, max_bytes=size)
    assert kinds == [PIN] * 40 and "4411" not in masked
    assert len(masked.encode()) <= size and "****" in masked
    assert redact(text)[0].count("[redacted: pin]") == 40  # room to spare: markers


def test_attached_facts_are_masked_too() -> None:
    episode = Episode(namespace="n", role=Role.USER, timestamp=T0,
                      text="note: my PIN is 480213",
                      metadata={"facts": ["Sam's PIN is 480213",
                                          {"text": "Sam's password is Hunter2Zq",
                                           "kind": "knowledge"},
                                          "Sam likes jazz"], "topic": "bank"})
    masked, kinds = redact_episode(episode)
    assert masked.text == "note: my PIN is [redacted: pin]"
    assert masked.metadata["facts"] == ["Sam's PIN is [redacted: pin]",
                                        {"text": "Sam's password is [redacted: password]",
                                         "kind": "knowledge"}, "Sam likes jazz"]
    assert masked.metadata["topic"] == "bank"
    assert sorted(kinds) == [PASSWORD, PIN, PIN]
    assert secrets.episode_marked(masked) == [PIN, PIN, PASSWORD]
    plain = Episode(namespace="n", role=Role.USER, timestamp=T0, text="I like tea")
    assert redact_episode(plain) == (plain, [])


def test_the_setting_and_its_exemptions(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().redact_secrets is True
    assert Settings().redact_secrets_exempt_namespaces == []
    monkeypatch.setenv("MEMCORE_REDACT_SECRETS_EXEMPT_NAMESPACES", "vault-*, legacy")
    assert Settings().redact_secrets_exempt_namespaces == ["vault-*", "legacy"]
    monkeypatch.setenv("MEMCORE_REDACT_SECRETS_EXEMPT_NAMESPACES", '["a", "b"]')
    assert Settings().redact_secrets_exempt_namespaces == ["a", "b"]
    assert redaction_applies("alice", True, ["vault-*", "legacy"])
    assert not redaction_applies("vault-7", True, ["vault-*", "legacy"])
    assert not redaction_applies("legacy", True, ["vault-*", "legacy"])
    assert not redaction_applies("alice", False, [])


def test_audit_names_kinds_of_new_turns_only() -> None:
    eps = [Episode(id=f"t{i}", namespace="n", role=Role.USER, timestamp=T0, text="x")
           for i in range(3)]
    events = redaction_events("n", eps, [True, False, True],
                              [[PIN, PASSWORD, PIN], [PIN], []])
    assert len(events) == 1
    (event,) = events
    assert event.action is AuditAction.REDACT and event.text is None
    assert "turn t0" in event.reason and "password" in event.reason and "pin x2" in event.reason


# --- end to end -------------------------------------------------------------------------

def _needles(values: Iterable[str]) -> dict[str, list[bytes]]:
    """Each value as written, as written inside JSON, and without its separators; lower
    case (search indexes keep lower-cased terms)."""
    out: dict[str, list[bytes]] = {}
    for value in values:
        forms = {value.lower(), json.dumps(value)[1:-1].lower()}
        compact = re.sub(r"[^0-9A-Za-z]", "", value).lower()
        if len(compact) >= 6 and not re.search(r"[A-Za-z]{3,} [A-Za-z]{3,}", value):
            forms.add(compact)  # "4111 1111 1111 1111" -> "4111111111111111"
        out[value] = [f.encode() for f in forms]
    return out


def _key_bytes(server: RedisServer) -> list[tuple[str, bytes]]:
    """(db/key, everything readable of it) for every key of every database."""
    admin = server.client()
    admin.config_set("rdbcompression", "no")  # DUMP shows raw bytes
    dbs = [int(name[2:]) for name in admin.info("keyspace")]
    admin.close()
    out: list[tuple[str, bytes]] = []
    for db in dbs:
        client = redis.Redis(host="127.0.0.1", port=server.port, db=db)
        for key in client.scan_iter(count=1000):
            kind = client.type(key).decode()
            parts: list[bytes] = [key, client.dump(key) or b""]
            if kind == "string":
                parts.append(client.get(key) or b"")
            elif kind == "hash":
                for field, value in client.hgetall(key).items():
                    parts += [field, value]
            elif kind == "list":
                parts += client.lrange(key, 0, -1)
            elif kind == "set":
                parts += list(client.smembers(key))
            elif kind == "zset":
                parts += [m for m, _ in client.zrange(key, 0, -1, withscores=True)]
            elif kind == "stream":
                for entry_id, fields in client.xrange(key):
                    parts += [entry_id, *fields.keys(), *fields.values()]
            out.append((f"{db}/{key.decode(errors='replace')}", b"\0".join(parts)))
        client.close()
    return out


def _aof_bytes(directory: Path) -> tuple[bytes, bytes]:
    """Every AOF file as is, and the base64 runs in them decoded (kombu's message
    bodies, so a turn in the broker's queue is seen in clear)."""
    raw = b"".join(p.read_bytes() for p in sorted(directory.rglob("*.aof*")) if p.is_file())
    decoded = []
    for run in re.findall(rb"[A-Za-z0-9+/]{24,}={0,2}", raw):
        try:
            decoded.append(base64.b64decode(run + b"=" * (-len(run) % 4)))
        except (binascii.Error, ValueError):
            continue
    return raw, b"\0".join(decoded)


def _where(server: RedisServer, values: Iterable[str]) -> dict[str, list[str]]:
    """value -> the keys, "AOF" and "AOF base64" (broker messages) that hold it."""
    keys = [(name, blob.lower()) for name, blob in _key_bytes(server)]
    raw, decoded = (blob.lower() for blob in _aof_bytes(server.directory))
    found: dict[str, list[str]] = {}
    for value, forms in _needles(values).items():
        places = [name for name, blob in keys if any(f in blob for f in forms)]
        places += [name for name, blob in (("AOF", raw), ("AOF base64", decoded))
                   if any(f in blob for f in forms)]
        if places:
            found[value] = places
    return found


def _turns(cases: Sequence[tuple[str, str, str]], attach: bool = False) -> list[dict[str, object]]:
    turns: list[dict[str, object]] = []
    for i, (_, text, _) in enumerate(cases):
        turn: dict[str, object] = {"role": "user", "id": f"s{i}", "content": text}
        if attach:
            turn["metadata"] = {"facts": [f"Sam said: {text}"]}
        turns.append(turn)
    turns.append({"role": "user", "id": "plain", "content": "I live in Oslo and I work at Acme."})
    return turns


def _pipeline(server: RedisServer, **settings: object) -> tuple[IngestPipeline, MemoryStore]:
    s = Settings(redis_url=server.url, **settings)  # type: ignore[arg-type]
    store = MemoryStore.from_url(server.url)
    return IngestPipeline(store, build_models(s), s), store


def _wait_rewrite_done(server: RedisServer) -> None:
    client = server.client()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    client.close()


def test_no_secret_reaches_redis_or_the_aof_through_the_write_path() -> None:
    values = [v for _, _, v in CASES]
    with running_redis(appendfsync="always") as server:
        rules, store = _pipeline(server)
        provided, _ = _pipeline(server, extractor="provided")
        rules.ingest("sec", to_episodes("sec", _turns(CASES), T0, None))
        provided.ingest("sec-facts", to_episodes("sec-facts", _turns(CASES, attach=True),
                                                 T0, None))
        # A redelivered batch stores nothing new and audits nothing again.
        rules.ingest("sec", to_episodes("sec", _turns(CASES), T0, None))
        _wait_rewrite_done(server)
        found = _where(server, values)
        print(f"\n[redaction] {len(CASES)} secrets in {len(CASES)} turns, 2 namespaces: "
              f"{len(_key_bytes(server))} keys and the AOF searched; values found: {found}")
        assert found == {}

        episodes = {ep.id: ep.text for ep in store.episodes.iter_episodes("sec")}
        for i, (kind, _, _) in enumerate(CASES):
            assert f"[redacted: {kind}]" in episodes[f"s{i}"], episodes[f"s{i}"]
        memories = [m.text for m in store.records.iter_memories("sec")]
        assert any("Oslo" in t for t in memories) and any("Acme" in t for t in memories)
        facts = [m.text for m in store.records.iter_memories("sec-facts")]
        assert facts and all("[redacted: " in t for t in facts if t.startswith("Sam said"))
        redactions = [e for e in store.audit.tail("sec", 500) if e.action is AuditAction.REDACT]
        assert len(redactions) == len(CASES)  # one per turn, not again on redelivery
        assert all(e.actor.value == "ingest" and e.text is None for e in redactions)
        for i, (kind, _, _) in enumerate(CASES):
            (event,) = [e for e in redactions if f"turn s{i}:" in e.reason]
            assert kind in event.reason

        # Switched off for a namespace, or everywhere: stored as before, the same memories.
        exempt, _ = _pipeline(server, redact_secrets_exempt_namespaces=["raw-*"])
        off, _ = _pipeline(server, redact_secrets=False)
        exempt.ingest("raw-1", to_episodes("raw-1", _turns(CASES), T0, None))
        off.ingest("off", to_episodes("off", _turns(CASES), T0, None))
        found = _where(server, values)
        assert sorted(found) == sorted(values)
        assert all("AOF" in places for places in found.values())
        raw_texts = {ep.id: ep.text for ep in store.episodes.iter_episodes("raw-1")}
        assert [raw_texts[f"s{i}"] for i in range(len(CASES))] == [t for _, t, _ in CASES]
        assert (sorted(m.text for m in store.records.iter_memories("raw-1"))
                == sorted(m.text for m in store.records.iter_memories("off")))
        assert not [e for e in store.audit.tail("raw-1", 500) if e.action is AuditAction.REDACT]


def test_no_secret_reaches_the_broker_or_redis_through_client_and_worker(
        tmp_path: Path) -> None:
    """``Client.add`` masks before enqueueing: the broker's messages (in the AOF) never
    hold a value; a real worker stores the masked turns. An exempt namespace, set alike
    for the producer and the worker, keeps them."""
    cases = [c for k in dict.fromkeys(k for k, _, _ in CASES)
             for c in [c for c in CASES if c[0] == k][:2]]  # two phrasings of every kind
    server = start_redis(appendfsync="always")
    env = {"MEMCORE_REDACT_SECRETS_EXEMPT_NAMESPACES": "raw-*"}
    stack = LocalStack(server.url, ingest_concurrency=1, consolidate_concurrency=1,
                       log_dir=tmp_path / "logs", env=env)
    try:
        stack.start()
        stack.wait_ready(timeout=90)
        settings = Settings(redis_url=server.url, redact_secrets_exempt_namespaces=["raw-*"])
        client = Client(settings=settings)
        try:
            ns = f"sec-{uuid.uuid4().hex[:6]}"
            results = client.wait(client.add(ns, _turns(cases)), timeout=120)
            assert sum(r["new_episodes"] for r in results) == len(cases) + 1
            values = [v for _, _, v in cases]
            found = _where(server, values)
            print(f"\n[redaction, client + worker] {len(cases)} secrets: values found in "
                  f"Redis, the AOF or the broker's messages: {found}")
            assert found == {}
            texts = [ep.text for ep in client.store.episodes.iter_episodes(ns)]
            assert all(any(f"[redacted: {k}]" in t for t in texts) for k, _, _ in cases)
            audited = [e for e in client.store.audit.tail(ns, 200)
                       if e.action is AuditAction.REDACT]
            assert len(audited) == len(cases)  # the worker audits the producer's markers

            raw = f"raw-{uuid.uuid4().hex[:6]}"
            client.wait(client.add(raw, _turns(cases)), timeout=120)
            found = _where(server, values)
            assert sorted(found) == sorted(values)
            # Unmasked, each value rode in the broker's message: the search sees it there.
            missing = {v: p for v, p in found.items() if "AOF base64" not in p}
            assert not missing, missing
            assert [ep.text for ep in client.store.episodes.iter_episodes(raw)][:len(cases)] == [
                t for _, t, _ in cases]
        finally:
            client.close()
    finally:
        stack.stop()
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)


def test_a_secrets_marker_is_never_respelt_nor_the_whole_of_a_fact() -> None:
    # "[redacted: national id]" had become "[redacted: national User would]" ("id" read
    # as chat for "I'd"); "Sam's bank PIN is [redacted: pin]" says only that a PIN exists
    extractor, at = OfflineExtractor(), datetime(2026, 3, 2, tzinfo=UTC)
    texts = [f.text for t in ("My passport number is [redacted: national id], im off to Oslo.",
                              "My bank PIN is [redacted: pin], don't tell anyone.")
             for f in extractor.extract_turn(Episode(namespace="sx", role=Role.USER,
                                                     speaker="Sam", text=t, timestamp=at))]
    assert not any("User would" in t or "Sam would" in t for t in texts), texts
    assert not any(t.endswith(("[redacted: pin].", "[redacted: national id].")) for t in texts)
    assert any("Oslo" in t for t in texts), texts
