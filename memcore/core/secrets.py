"""Secrets in conversation turns, found and masked before anything is stored.

Passwords, PINs and one-time codes, API keys and tokens, payment card numbers, IBANs and
bank account numbers, and national ID numbers never become memories: the write path
(and ``Client.add``, before the turn reaches the broker) replaces each with a marker,
``[redacted: password]``, so neither the stored turn nor the text the extractor reads
holds the value. Pure: no I/O.

Two sorts of detector:

- **Shapes**, language-independent and needing no cue: card numbers (a known issuer
  prefix and length, and the Luhn check), IBANs (country length and the ISO 7064
  mod-97 check), well-known key and token formats (``sk-``, ``ghp_``, ``AKIA``,
  ``xoxb-``, JWTs, PEM private keys, ...), a password inside a URL
  (``scheme://user:password@host``), a US social security number (``ddd-dd-dddd`` with
  its allocation rules) and a UK National Insurance number.
- **Cues**: a value right after a word that names it ("my password is X", "pw: X",
  "code 123456", "OTP", "PIN", "account number", "passport number", "api key"). The
  cue words belong to a language: a :class:`SecretCues` given by the language pack
  (English: :mod:`memcore.language.english.secret_cues`). Without cues only the
  shapes apply, in any language.

Masking errs on the side of hiding: a word after "password is" that is no password
("my password is hunter2" masks ``hunter2``; "my password is too short" masks nothing
because "too" is listed as no value).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memcore.core.models import FACTS_KEY, Episode

PASSWORD = "password"
PIN = "pin"
CODE = "code"
API_KEY = "api key"
TOKEN = "token"
PRIVATE_KEY = "private key"
CARD = "card number"
CARD_CODE = "card code"
IBAN = "iban"
ACCOUNT = "bank account"
NATIONAL_ID = "national id"
KINDS = (PASSWORD, PIN, CODE, API_KEY, TOKEN, PRIVATE_KEY, CARD, CARD_CODE, IBAN, ACCOUNT,
         NATIONAL_ID)
"""Every kind of secret, as the markers and the audit name them."""

MARKER = "[redacted: {kind}]"
MARKER_RE = re.compile(r"\[redacted: (" + "|".join(re.escape(k) for k in KINDS) + r")\]")
"""A marker left in place of a secret; its group is the kind."""

# --- a language's cue words -------------------------------------------------------

@dataclass(frozen=True)
class SecretCues:
    """A language's words that name a secret before (or after) its value.

    ``cues``: per kind, regular expressions (case-insensitive, at word starts) naming
    what the value after them is; ``links``: words between a cue and its value
    ("password *is now* X"); ``leads``: prepositions opening a phrase between a cue and
    its link ("the password *for the wifi* is X"), which ends at one of ``copulas``;
    ``not_values``: words after a cue that are no value ("my password is *too* short");
    ``not_secret_codes``: words before a bare "code" that make it no secret ("zip
    code"); ``reversed``: a pattern for a value before its cue ("X is my password",
    groups ``a`` or ``b`` for the value and ``cue`` for the cue word).
    """

    cues: Mapping[str, tuple[str, ...]]
    links: tuple[str, ...]
    leads: tuple[str, ...]
    copulas: tuple[str, ...]
    not_values: frozenset[str]
    not_secret_codes: frozenset[str]
    reversed: str
    code_word: str = "code"

    def __post_init__(self) -> None:
        unknown = set(self.cues) - set(KINDS)
        if unknown:
            raise ValueError(f"cues: unknown secret kinds {sorted(unknown)}")
        # Compiled once per language (the dataclass is frozen, so set through object).
        link = _alternation(self.links)
        compiled = {
            "patterns": tuple(
                (kind, re.compile(r"(?<![A-Za-z0-9])" + _alternation(words)
                                  + r"(?![A-Za-z0-9])", re.I))
                for kind, words in self.cues.items()),
            # After the cue: any of ":", "=", "#", dashes and link words, in any order.
            "connect": re.compile(r"(?:\s*[:=#\u2013-]+\s*|\s*['\u2019]s(?![A-Za-z])|\s+"
                                  + link + r"(?![A-Za-z])|\s+)*", re.I),
            "lead": re.compile(r"\s+" + _alternation(self.leads) + r"(?:\s+[^\s:=]+){1,5}?"
                               r"(?=\s+" + _alternation(self.copulas) + r"\b|\s*[:=])", re.I),
            "reversed": re.compile(self.reversed, re.I),
        }
        object.__setattr__(self, "_compiled", compiled)

    def pattern(self, name: str) -> Any:
        """A compiled pattern of these cues (``patterns``, ``connect``, ``lead``,
        ``reversed``)."""
        return self.__dict__["_compiled"][name]


# --- checks ---------------------------------------------------------------------------

def luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) check of a string of digits."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_issuer_ok(digits: str) -> bool:
    """``digits`` start with a payment card issuer's prefix and have its length."""
    n = len(digits)
    if not 12 <= n <= 19 or not digits.isdigit():
        return False
    p2, p3, p4, p6 = int(digits[:2]), int(digits[:3]), int(digits[:4]), int(digits[:6])
    if digits[0] == "4":
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # American Express
    if p4 == 6011 or p2 == 65 or 644 <= p3 <= 649 or 622126 <= p6 <= 622925:
        return n >= 16  # Discover
    if 3528 <= p4 <= 3589 or p2 == 62 or 2200 <= p4 <= 2204:
        return n >= 16  # JCB, UnionPay, Mir
    if 300 <= p3 <= 305 or p2 in (36, 38, 39):
        return n >= 14  # Diners Club
    return p2 in (50, 56, 57, 58, 63, 67) or p4 in (6304, 6759, 6761, 6762, 6763)  # Maestro


IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24,
    "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}
"""IBAN length per country (ISO 13616 registry); another country: 15-34 characters."""


def iban_ok(compact: str) -> bool:
    """``compact`` (no spaces, upper case) is an IBAN: country length and mod-97 = 1."""
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", compact):
        return False
    if len(compact) != IBAN_LENGTHS.get(compact[:2], len(compact)):
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def ssn_ok(area: str, group: str, serial: str) -> bool:
    """A US social security number the SSA could have issued."""
    return (area not in ("000", "666") and not area.startswith("9") and group != "00"
            and serial != "0000")


# --- finding --------------------------------------------------------------------------

@dataclass(frozen=True)
class Found:
    """One secret: its kind and where it is (``text[start:end]`` is the value)."""

    kind: str
    start: int
    end: int
    cue: int = -1
    """Where the cue that named it starts (-1: found by its shape). Of two readings of
    the same value the shape wins, then the longer, earlier cue ("one-time password"
    names a code, not a password)."""


_NOT_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
_NOT_ALNUM_AFTER = r"(?![A-Za-z0-9])"

KEY_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(r"(?<![A-Za-z0-9_-])" + pattern + r"(?![A-Za-z0-9_-])"))
    for kind, pattern in (
        (API_KEY, r"sk-[A-Za-z0-9_-]{20,}"),                 # OpenAI, Anthropic, ...
        (API_KEY, r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"),  # Stripe
        (API_KEY, r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}"),  # AWS
        (API_KEY, r"AIza[0-9A-Za-z_-]{35}"),                 # Google
        (TOKEN, r"gh[pousr]_[A-Za-z0-9]{30,}"),              # GitHub
        (TOKEN, r"github_pat_[A-Za-z0-9_]{30,}"),
        (TOKEN, r"glpat-[A-Za-z0-9_-]{20,}"),                # GitLab
        (TOKEN, r"xox[abposr]-[A-Za-z0-9-]{10,}"),           # Slack
        (TOKEN, r"hf_[A-Za-z0-9]{30,}"),                     # Hugging Face
        (TOKEN, r"npm_[A-Za-z0-9]{36}"),                     # npm
        (TOKEN, r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"),  # JWT
    ))
PEM_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----.{0,8192}?-----END "
                     r"[A-Z0-9 ]{0,40}PRIVATE KEY-----", re.S)
URL_PASSWORD = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/@:]{0,256}:"
                          r"(?P<v>[^\s/@]{1,256})@")
CARD_CANDIDATE = re.compile(r"(?<![\w+/.,-])\d(?:[ -]?\d){11,22}(?![\w/-]|[.,]\d)")
IBAN_CANDIDATE = re.compile(_NOT_ALNUM_BEFORE + r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,9}"
                            + _NOT_ALNUM_AFTER)
SSN_SHAPE = re.compile(r"(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-])")
NI_SHAPE = re.compile(_NOT_ALNUM_BEFORE + r"(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z]"
                      r"[A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]" + _NOT_ALNUM_AFTER)


def _group_prefixes(value: str, start: int) -> Iterator[tuple[str, int]]:
    """(compact text, end) of ``value``'s separator-delimited prefixes, longest first."""
    ends = [m.end() for m in re.finditer(r"[A-Za-z0-9]+", value)]
    for end in reversed(ends):
        yield re.sub(r"[^A-Za-z0-9]", "", value[:end]), start + end


def _shapes(text: str) -> Iterator[Found]:
    for kind, pattern in KEY_SHAPES:
        for m in pattern.finditer(text):
            yield Found(kind, m.start(), m.end())
    for m in PEM_KEY.finditer(text):
        yield Found(PRIVATE_KEY, m.start(), m.end())
    for m in URL_PASSWORD.finditer(text):
        yield Found(PASSWORD, m.start("v"), m.end("v"))
    for m in CARD_CANDIDATE.finditer(text):
        for digits, end in _group_prefixes(m.group(), m.start()):
            if card_issuer_ok(digits) and luhn_ok(digits):
                yield Found(CARD, m.start(), end)
                break
    for m in IBAN_CANDIDATE.finditer(text):
        for compact, end in _group_prefixes(m.group(), m.start()):
            if iban_ok(compact):
                yield Found(IBAN, m.start(), end)
                break
    for m in SSN_SHAPE.finditer(text):
        if ssn_ok(*m.groups()):
            yield Found(NATIONAL_ID, m.start(), m.end())
    for m in NI_SHAPE.finditer(text):
        yield Found(NATIONAL_ID, m.start(), m.end())


def _alternation(patterns: Sequence[str]) -> str:
    return "(?:" + "|".join(patterns) + ")"


_OPEN_QUOTES = "\"'\u201c\u2018\u00ab"
_CLOSE_QUOTES = "\"'\u201d\u2019\u00bb"
_QUOTED = re.compile(f"[{_OPEN_QUOTES}](?P<v>[^{_CLOSE_QUOTES}\\n]{{1,512}})[{_CLOSE_QUOTES}]")
_TOKEN = re.compile(f"[^\\s{_OPEN_QUOTES}]\\S*")
_TRAILING = ".,;:)]}" + _CLOSE_QUOTES


def _plain_value(text: str, pos: int) -> tuple[int, int] | None:
    """The quoted string or the single token at ``pos`` (trailing punctuation left out)."""
    quoted = _QUOTED.match(text, pos)
    if quoted:
        return quoted.start("v"), quoted.end("v")
    token = _TOKEN.match(text, pos)
    if not token:
        return None
    end = token.end()
    while end > pos and text[end - 1] in _TRAILING:
        end -= 1
    return (pos, end) if end > pos else None


def _password_value(text: str, pos: int, bare: bool, not_values: frozenset[str]
                    ) -> tuple[int, int] | None:
    span = _plain_value(text, pos)
    if span is None:
        return None
    value = text[span[0]:span[1]]
    word = value.lower()
    if len(value) < 3 or word in not_values or value.startswith("[redacted"):
        return None
    if bare and (len(value) < 4 or not re.search(r"[\d\W_]", value)):
        return None  # "password hunter2" masks; "password manager" does not
    return span


_DIGITS = re.compile(r"\d(?:[ -]?\d){2,18}(?![\w-])")
_CODE = re.compile(r"(?=[A-Za-z-]{0,40}\d)[A-Za-z0-9](?:[A-Za-z0-9-]{2,40})" + _NOT_ALNUM_AFTER)
_KEY_VALUE = re.compile(r"[A-Za-z0-9+/=_.~-]{16,256}")
_KEY_REST = re.compile(r"[A-Za-z0-9+/=_.~-]*")
_ID_GROUPS = re.compile(r"[A-Za-z0-9]+(?:[ ./-][A-Za-z0-9]+){0,6}")


def _digits_value(text: str, pos: int, least: int, most: int) -> tuple[int, int] | None:
    m = _DIGITS.match(text, pos)
    if not m:
        return None
    count = sum(c.isdigit() for c in m.group())
    return (m.start(), m.end()) if least <= count <= most else None


def _code_value(text: str, pos: int, bare: bool) -> tuple[int, int] | None:
    """4-10 digits; after a link ("code is", "code:") also a letters-and-digits code
    ("A7X9QZ", "zebra-quartz-7781")."""
    span = _digits_value(text, pos, 4, 10)
    if span is not None or bare:
        return span
    m = _CODE.match(text, pos)
    if not m:
        return None
    digits = sum(c.isdigit() for c in m.group())
    return (m.start(), m.end()) if digits >= 3 or (len(m.group()) >= 6 and digits) else None


def _key_value(text: str, pos: int, bare: bool) -> tuple[int, int] | None:
    """16+ characters of a key alphabet mixing letters and digits (or 32+ hex); with no
    link after the cue ("key 9f8e..."), 20+ characters, 4+ digits, at most two dashes."""
    m = _KEY_VALUE.match(text, pos)
    if not m:
        return None
    value = m.group().rstrip(".")
    hexish = re.fullmatch(r"[0-9a-fA-F]{32,}", value) is not None
    digits = sum(c.isdigit() for c in value)
    if not hexish and not (digits and re.search(r"[A-Za-z]", value)):
        return None
    if bare and not hexish and (len(value) < 20 or digits < 4 or value.count("-") > 2):
        return None
    end = m.start() + len(value)
    if len(m.group()) == 256:  # judged on its first 256 characters; masked whole
        rest = _KEY_REST.match(text, m.end())
        end = rest.end() if rest else m.end()
    return m.start(), end


def _grouped_value(text: str, pos: int, least_digits: int, letters: bool
                   ) -> tuple[int, int] | None:
    """Digit groups (``123 45 6789``, ``AB 12 34 56 C``, ``X1234567``): the groups that
    hold a digit, with short upper-case letter groups around them (ID prefixes and
    suffixes); stops at the first word."""
    m = _ID_GROUPS.match(text, pos)
    if not m:
        return None
    end, digits = pos, 0
    for g in re.finditer(r"[A-Za-z0-9]+", m.group()):
        part = g.group()
        has_digit = any(c.isdigit() for c in part)
        if not has_digit and not (letters and part.isupper() and len(part) <= 3):
            break
        if not letters and not part.isdigit():
            break
        digits += sum(c.isdigit() for c in part)
        end = pos + g.end()
    return (pos, end) if digits >= least_digits else None


def _card_value(text: str, pos: int) -> tuple[int, int] | None:
    m = _DIGITS.match(text, pos)
    if not m:
        return None
    for digits, end in _group_prefixes(m.group(), m.start()):
        if 12 <= len(digits) <= 19 and luhn_ok(digits):
            return m.start(), end
    return None


_IBAN_VALUE = re.compile(r"[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){2,9}")


def _iban_value(text: str, pos: int) -> tuple[int, int] | None:
    m = _IBAN_VALUE.match(text, pos)
    return (m.start(), m.end()) if m else None


ValueReader = Callable[[str, int, bool], "tuple[int, int] | None"]
_READERS: dict[str, ValueReader] = {
    PIN: lambda t, p, b: _digits_value(t, p, 4, 8),
    CODE: _code_value,
    API_KEY: _key_value,
    TOKEN: _key_value,
    CARD: lambda t, p, b: _card_value(t, p),
    CARD_CODE: lambda t, p, b: _digits_value(t, p, 3, 4),
    IBAN: lambda t, p, b: _iban_value(t, p),
    ACCOUNT: lambda t, p, b: _grouped_value(t, p, 6, letters=False),
    NATIONAL_ID: lambda t, p, b: _grouped_value(t, p, 4, letters=True),
}
"""How the value after each kind's cue is read: (text, position, no link word) -> span
(a password's reader also needs the language's words that are no value)."""


_WORD_BEFORE = re.compile(r"([A-Za-z-]+)\W{0,3}$")


def _reader(kind: str, cues: SecretCues) -> ValueReader:
    if kind == PASSWORD:
        return lambda t, p, b: _password_value(t, p, b, cues.not_values)
    return _READERS[kind]


def _cued(text: str, cues: SecretCues) -> Iterator[Found]:
    for kind, pattern in cues.pattern("patterns"):
        yield from _cued_kind(text, cues, kind, pattern)
    yield from _reversed(text, cues)


def _cued_kind(text: str, cues: SecretCues, kind: str, pattern: re.Pattern[str]
               ) -> Iterator[Found]:
    """The values of one kind, each after a cue ``pattern`` finds ("password: X")."""
    read = _reader(kind, cues)
    reach = 0  # the end of this kind's last value: a cue inside it is part of it
    for cue in pattern.finditer(text):
        if cue.start() < reach:
            continue
        if kind == CODE and _no_secret_code(text, cue, cues):
            continue
        span = _value_after(text, cue, cues, read)
        if span is not None and span[1] > span[0]:
            reach = span[1]
            yield Found(kind, *span, cue=cue.start())


def _no_secret_code(text: str, cue: re.Match[str], cues: SecretCues) -> bool:
    """The code word after a word that says it is no secret ("postal code")."""
    if cue.group().lower() != cues.code_word:
        return False
    before = _WORD_BEFORE.search(text, max(0, cue.start() - 64), cue.start())
    return bool(before and before.group(1).lower() in cues.not_secret_codes)


def _value_after(text: str, cue: re.Match[str], cues: SecretCues, read: ValueReader
                 ) -> tuple[int, int] | None:
    """The span of the value a cue introduces, after a lead phrase ("password for the
    wifi is X") or the cue itself, and a link word if any."""
    connect = cues.pattern("connect")
    lead = cues.pattern("lead").match(text, cue.end())
    if lead:  # "password for the wifi is X"
        after = connect.match(text, lead.end())
        span = read(text, after.end() if after else lead.end(), False)
        if span is not None:
            return span
    after = connect.match(text, cue.end())
    pos = after.end() if after else cue.end()
    linked = pos > cue.end() and bool(re.search(r"[:=#]|[A-Za-z]", text[cue.end():pos]))
    return read(text, pos, not linked)


def _reversed(text: str, cues: SecretCues) -> Iterator[Found]:
    """Values said before their cue ("X is my password")."""
    for m in cues.pattern("reversed").finditer(text):
        group = "a" if m.group("a") else "b"
        value = m.group(group).strip(_TRAILING)
        if (value.lower() in cues.not_values or len(value) < 3
                or not (re.search(r"[\d\W_]", value) or m.group("a"))):
            continue
        start = m.start(group) + m.group(group).index(value)
        named = m.group("cue").lower()
        yield Found(PIN if named == "pin" else CODE if named == "passcode" else PASSWORD,
                    start, start + len(value), cue=m.start("cue"))


def find_secrets(text: str, cues: SecretCues | None = None) -> list[Found]:
    """The secrets in ``text``, in order, overlaps merged (the earlier one's kind):
    found by their shapes, and by ``cues`` (a language's; None: shapes only)."""
    cued = _cued(text, cues) if cues is not None else ()
    found = sorted([*_shapes(text), *cued], key=lambda f: (f.start, -f.end, f.cue))
    masked = [m.span() for m in MARKER_RE.finditer(text)]
    merged: list[Found] = []
    for f in found:
        if any(f.start < end and start < f.end for start, end in masked):
            continue  # already a marker: masking is idempotent
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Found(last.kind, last.start, max(last.end, f.end), last.cue)
        else:
            merged.append(f)
    return merged


def redact(text: str, max_bytes: int | None = None, cues: SecretCues | None = None
           ) -> tuple[str, list[str]]:
    """``text`` with each secret replaced by its marker, and the kinds replaced.

    With ``max_bytes``, if the markers would make a text that fits grow past it, each
    secret is replaced by as many ``*`` instead (never longer than the text).
    """
    found = find_secrets(text, cues)
    if not found:
        return text, []
    out = _replace(text, found, lambda f: MARKER.format(kind=f.kind))
    if max_bytes is not None and len(out.encode("utf-8", "surrogatepass")) > max_bytes:
        out = _replace(text, found, lambda f: "*" * (f.end - f.start))
    return out, [f.kind for f in found]


def _replace(text: str, found: Sequence[Found], mask: Callable[[Found], str]) -> str:
    parts: list[str] = []
    at = 0
    for f in found:
        parts += [text[at:f.start], mask(f)]
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def marked(text: str) -> list[str]:
    """The kinds of the markers already in ``text`` (masked earlier, e.g. by a producer)."""
    return MARKER_RE.findall(text)


# --- episodes and the setting ---------------------------------------------------------

def _facts(metadata: Mapping[str, Any]) -> list[Any] | None:
    facts = metadata.get(FACTS_KEY)
    return facts if isinstance(facts, list) else None


def episode_marked(episode: Episode) -> list[str]:
    """The kinds of the markers in a turn's text and its attached facts."""
    kinds = marked(episode.text)
    for item in _facts(episode.metadata) or []:
        text = item if isinstance(item, str) else (
            item.get("text") if isinstance(item, Mapping) else None)
        if isinstance(text, str):
            kinds += marked(text)
    return kinds


def redact_episode(episode: Episode, max_bytes: int | None = None,
                   cues: SecretCues | None = None) -> tuple[Episode, list[str]]:
    """``episode`` with the secrets of its text and of the facts a producer attached
    (``metadata.facts``) masked; the kinds masked (none: the same object back)."""
    text, kinds = redact(episode.text, max_bytes, cues)
    facts = _facts(episode.metadata)
    masked_facts: list[Any] | None = None
    if facts is not None:
        masked_facts = []
        for item in facts:
            if isinstance(item, str):
                item, more = redact(item, cues=cues)
            elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
                new_text, more = redact(item["text"], cues=cues)
                item = {**item, "text": new_text} if more else item
            else:
                more = []
            kinds += more
            masked_facts.append(item)
    if not kinds:
        return episode, []
    update: dict[str, Any] = {"text": text}
    if masked_facts is not None:
        update["metadata"] = {**episode.metadata, FACTS_KEY: masked_facts}
    return episode.model_copy(update=update), kinds


def redaction_applies(namespace: str, enabled: bool, exempt: Sequence[str]) -> bool:
    """Secrets are masked in ``namespace``: redaction is ``enabled`` and the namespace
    matches none of the ``exempt`` names (shell-style patterns: ``vault-*``)."""
    return enabled and not any(fnmatch.fnmatchcase(namespace, p) for p in exempt)


def redact_episodes(namespace: str, episodes: Sequence[Episode], *, enabled: bool,
                    exempt: Sequence[str], max_bytes: int | None = None,
                    cues: SecretCues | None = None) -> tuple[list[Episode], list[list[str]]]:
    """Each episode masked (see :func:`redact_episode`) unless ``namespace`` is exempt,
    and per episode the kinds masked now."""
    if not redaction_applies(namespace, enabled, exempt):
        return list(episodes), [[] for _ in episodes]
    pairs = [redact_episode(ep, max_bytes, cues) for ep in episodes]
    return [ep for ep, _ in pairs], [kinds for _, kinds in pairs]
