"""Dates and time phrases in a turn, resolved against the episode's own timestamp.

Future phrases ("tomorrow", "next week", "by May", "in 2 days", "for the May
exam") give a deadline: the fact is valid until then and expires then. Past
phrases ("yesterday", "last week", "3 days ago") give the time the event
happened and are rewritten to absolute dates so the fact stays true later.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS.pop("may", None)
MONTHS["may"] = 5
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2,
    "few": 3, "a few": 3, "a couple of": 2, "several": 3,
}
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY_RE = "|".join(WEEKDAYS)
_NUM_RE = r"\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_UNIT_RE = r"days?|weeks?|months?|years?|hours?"
_RANGE_TO = "(?:to|until|till|through|-|\u2013)"  # the en dash of "3\u20136 December"


@dataclass(frozen=True)
class TimeInfo:
    """What the time phrases of one sentence say."""

    deadline: datetime | None = None  # future: valid until / expires at
    happened: datetime | None = None  # past: when the event took place
    rewritten: str = ""  # the sentence with relative past/near phrases made absolute
    phrase: str = ""  # the phrase that set the deadline (for reasons, debugging)


def _day_start(ts: datetime) -> datetime:
    return ts.replace(hour=0, minute=0, second=0, microsecond=0)


def _end_of_day(ts: datetime) -> datetime:
    return _day_start(ts) + timedelta(days=1)


def _month_end(year: int, month: int) -> datetime:
    """The first instant after ``month`` of ``year`` (an exclusive end)."""
    return datetime(year + (month == 12), month % 12 + 1, 1)


def _add_months(ts: datetime, months: int) -> datetime:
    month0 = ts.month - 1 + months
    year, month = ts.year + month0 // 12, month0 % 12 + 1
    day = min(ts.day, calendar.monthrange(year, month)[1])
    return ts.replace(year=year, month=month, day=day)


def _amount(word: str) -> int:
    word = word.strip().lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word, 1)


def _span(unit: str, count: int) -> timedelta | int:
    """A timedelta, or a month count (months are not a fixed length)."""
    unit = unit.rstrip("s")
    if unit == "hour":
        return timedelta(hours=count)
    if unit == "day":
        return timedelta(days=count)
    if unit == "week":
        return timedelta(weeks=count)
    return count * (12 if unit == "year" else 1)


def _shift(ts: datetime, span: timedelta | int, sign: int) -> datetime:
    if isinstance(span, timedelta):
        return ts + sign * span
    return _add_months(ts, sign * span)


def fmt(ts: datetime) -> str:
    """A date as ``8 May 2023``."""
    return f"{ts.day} {calendar.month_name[ts.month]} {ts.year}"


def _next_month_end(now: datetime, month: int, day: int | None) -> datetime:
    """End of the next occurrence of ``month`` (and ``day``) on or after ``now``."""
    year = now.year
    if month < now.month or (month == now.month and day is not None and day < now.day):
        year += 1
    if day is not None:
        day = min(day, calendar.monthrange(year, month)[1])
        return _end_of_day(datetime(year, month, day, tzinfo=now.tzinfo))
    return _month_end(year, month).replace(tzinfo=now.tzinfo)


def _week_end(now: datetime, weeks_ahead: int) -> datetime:
    """The Monday after the week ``weeks_ahead`` weeks from now (exclusive end)."""
    monday = _day_start(now) - timedelta(days=now.weekday())
    return monday + timedelta(weeks=weeks_ahead + 1)


_FUTURE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), kind)
    for p, kind in (
        # A date range ("from 10 to 14 November", "3-6 December", "December 28 to
        # January 3"): what it describes is over when the range ends.
        (rf"\b\d{{1,2}}(?:st|nd|rd|th)?(?: of (?:{_MONTH_RE}))? ?(?:{_RANGE_TO}|and) ?(?:the )?"
         rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<month>{_MONTH_RE})\b", "month"),
        (rf"\b(?P<month1>{_MONTH_RE}) \d{{1,2}}(?:st|nd|rd|th)? ?{_RANGE_TO} ?"
         rf"(?:(?P<month>{_MONTH_RE}) )?(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b", "range"),
        (r"\b(?P<prep>by|until|till|before|on|in|for|this|next|around|the|of) (?:the )?"
         rf"(?P<month>{_MONTH_RE})\b(?: (?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b)?"
         r"(?:,? (?P<year>(?:19|20)\d\d)\b)?", "month"),
        (rf"\b(?P<prep>by|until|till|before|on) (?:the )?(?P<day>\d{{1,2}})(?:st|nd|rd|th)? "
         rf"(?:of )?(?P<month>{_MONTH_RE})\b(?:,? (?P<year>(?:19|20)\d\d)\b)?", "month"),
        (rf"\b(?P<month>{_MONTH_RE}) (?:exam|exams|test|deadline|trip|holiday|vacation)", "month"),
        (r"\b(?:by|until|till|before|in) (?P<year>20\d\d)\b", "year"),
        (rf"\bin (?:the next |about |another )?(?P<n>{_NUM_RE}) (?P<unit>{_UNIT_RE})\b", "in"),
        (rf"\bfor (?:the next |another )?(?P<n>{_NUM_RE}) (?P<unit>{_UNIT_RE})\b", "in"),
        (r"\btomorrow\b", "tomorrow"),
        (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", "today"),
        (r"\bthis weekend\b|\bthe weekend\b", "weekend"),
        (r"\bnext weekend\b", "next_weekend"),
        (r"\bthis week\b", "this_week"),
        (r"\bnext week\b", "next_week"),
        (r"\bthis month\b", "this_month"),
        (r"\bnext month\b", "next_month"),
        (r"\bthis year\b", "this_year"),
        (r"\bnext year\b", "next_year"),
        # Not a habit ("on sunday evenings") nor a weekday whose date is said with it
        # ("on Saturday the 19th"): either would invent a date no turn said.
        (rf"\b(?:next|this|on|coming) (?P<wd>{_DAY_RE})\b(?!\s+(?:mornings|afternoons|"
         r"evenings|nights)\b|,?\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\b)", "weekday"),
    )
)

_PAST: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), kind)
    for p, kind in (
        (r"\byesterday\b", "yesterday"),
        (r"\blast night\b", "yesterday"),
        (rf"\b(?P<n>{_NUM_RE}) (?P<unit>{_UNIT_RE}) ago\b", "ago"),
        (r"\blast week(?:end)?\b", "last_week"),
        (r"\blast month\b", "last_month"),
        (r"\blast year\b", "last_year"),
        (rf"\blast (?P<wd>{_DAY_RE})\b", "last_weekday"),
    )
)


# Dates that come back every year are no deadline ("my birthday is on May 3").
_RECURRING = re.compile(r"\b(?:birthdays?|bday|anniversary|name ?day|born|wedding day)\b", re.I)
# Verbs that arrange something still to come: "booked a trip in May" is about May ahead.
_ARRANGING = re.compile(r"\b(?:booked|scheduled|planned|signed up|registered|reserved|arranged|"
                        r"ordered|enrolled|applied|invited|agreed|promised|decided|set)\b", re.I)
_FUTURE_MARK = re.compile(r"\b(?:will|won't|'ll|going to|gonna|about to|plan(?:s|ning)? to|"
                          r"next|upcoming|coming)\b", re.I)
_PAST_IRREGULAR = ("was|were|had|did|went|quit|left|got|took|made|sold|bought|gave|began|"
                   "became|came|ran|won|lost|met|moved|spent|found|kept|broke|wrote|sent|"
                   "paid|built|chose|drove|flew|ate|drank|fell|felt|held|knew|led|put|rode|"
                   "saw|sang|sat|slept|spoke|stood|swam|taught|told|thought|threw|woke|wore|"
                   "said|heard|brought|caught|forgot|grew|meant|understood|hurt|cut|hit|"
                   "shut|stole|stuck|dug|hung|lent|lit|"
                   "been|gone|done|given|taken|seen|eaten|known|driven|flown|written|begun")
# The speaker tells something that already happened: a subject (or a perfect's
# auxiliary) directly before a past form, adverbs allowed in between.
_TOLD_IN_PAST = re.compile(
    r"(?:^|\b(?:[Ii]|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[A-Z][a-z]+|have|has|had|'ve|'d|"
    r"(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[A-Z][a-z]+'s) [a-z]+)\s+)"
    r"(?:(?:just|finally|already|recently|actually|really|also|officially|never|only)\s+)*"
    rf"(?:[a-z]+ed|{_PAST_IRREGULAR})\b")


_HAVE_GOT = re.compile(r"\b(?:have|has|'ve|'s) got\b", re.I)


# "I haven't seen her in 3 years", "never in ten years": a span without it, up to now.
_NOT_SINCE = re.compile(r"\b(?:have|has|had)(?:n't| not| never)\b|\bnever\b", re.I)


# "her left wrist", "my right knee": a side, not the past of "leave".
_SIDE = re.compile(r"\b((?:[Mm]y|[Yy]our|[Hh]is|[Hh]er|[Oo]ur|[Tt]heir|[Tt]he) )(?:left|right)\b")


def told_in_past(sentence: str) -> bool:
    """Does ``sentence`` report something already done ("I quit smoking in March",
    "I've lived here for 3 years"), not something still to come?"""
    if _FUTURE_MARK.search(sentence) or _ARRANGING.search(sentence):
        return False
    # "I've got a race in April" is having, now; not a perfect of "get".
    sentence = _SIDE.sub(r"\1side", _HAVE_GOT.sub("has", sentence))
    return bool(_TOLD_IN_PAST.search(sentence))


def _named_date(m: re.Match[str], kind: str, now: datetime, past: bool
                ) -> tuple[datetime | None, datetime | None]:
    """(deadline, happened) of a named month or day: a given year decides which; a past
    tense and no year is the latest such date before ``now``; otherwise the next one."""
    month = m.group("month") or (m.group("month1") if kind == "range" else None)
    if month is None or month == "may":  # lower-case "may" is the modal verb
        return None, None
    number = MONTHS[month.lower()]
    day_text = m.groupdict().get("day")
    day = int(day_text) if day_text else None
    year_text = m.groupdict().get("year")
    prep = (m.groupdict().get("prep") or "").lower()
    if year_text or (past and prep in ("", "in", "on", "around", "the", "of")):
        year = int(year_text) if year_text else now.year
        if not year_text and (number > now.month or (number == now.month and (day or 1)
                                                     > now.day)):
            year -= 1  # "quit in October", said in March: last October
        day = min(day or 1, calendar.monthrange(year, number)[1])
        start = datetime(year, number, day, tzinfo=now.tzinfo)
        if start <= now:
            return None, start
        end = (_end_of_day(start) if day_text else
               _month_end(year, number).replace(tzinfo=now.tzinfo))
        return end, None
    return _next_month_end(now, number, day), None


def _future(kind: str, m: re.Match[str], now: datetime) -> datetime | None:
    if kind in ("month", "range"):
        # "range": "December 3-6" names the month before the days (the range's end month
        # only when it differs, "December 28 to January 3").
        return _named_date(m, kind, now, past=False)[0]
    if kind == "year":
        year = int(m.group("year"))
        return datetime(year + 1, 1, 1, tzinfo=now.tzinfo) if year >= now.year else None
    if kind == "in":
        return _shift(now, _span(m.group("unit"), _amount(m.group("n"))), +1)
    if kind == "tomorrow":
        return _end_of_day(now + timedelta(days=1))
    if kind == "today":
        return _end_of_day(now)
    if kind in ("weekend", "this_week"):
        return _week_end(now, 0)
    if kind in ("next_weekend", "next_week"):
        return _week_end(now, 1)
    if kind == "this_month":
        return _month_end(now.year, now.month).replace(tzinfo=now.tzinfo)
    if kind == "next_month":
        nxt = _add_months(now.replace(day=1), 1)
        return _month_end(nxt.year, nxt.month).replace(tzinfo=now.tzinfo)
    if kind == "this_year":
        return datetime(now.year + 1, 1, 1, tzinfo=now.tzinfo)
    if kind == "next_year":
        return datetime(now.year + 2, 1, 1, tzinfo=now.tzinfo)
    if kind == "weekday":
        ahead = (WEEKDAYS[m.group("wd").lower()] - now.weekday()) % 7 or 7
        return _end_of_day(now + timedelta(days=ahead))
    return None


def _past(kind: str, m: re.Match[str], now: datetime) -> tuple[datetime, str]:
    """When a past phrase happened, and the absolute wording replacing it."""
    if kind == "yesterday":
        day = now - timedelta(days=1)
        return _day_start(day), f"on {fmt(day)}"
    if kind == "ago":
        when = _shift(now, _span(m.group("unit"), _amount(m.group("n"))), -1)
        return _day_start(when), f"around {fmt(when)}"
    if kind == "last_week":
        when = now - timedelta(weeks=1)
        return _day_start(when), f"in the week before {fmt(now)}"
    if kind == "last_month":
        when = _add_months(now.replace(day=1), -1)
        return _day_start(when), f"in {calendar.month_name[when.month]} {when.year}"
    if kind == "last_year":
        when = now.replace(year=now.year - 1, month=1, day=1)
        return _day_start(when), f"in {when.year}"
    back = (now.weekday() - WEEKDAYS[m.group("wd").lower()]) % 7 or 7
    when = now - timedelta(days=back)
    return _day_start(when), f"on {fmt(when)}"


# A period still running, said of something done in it: (its start, the absolute wording).
_CURRENT_PERIOD: dict[str, Callable[[datetime], tuple[datetime, str]]] = {
    "today": lambda now: (_day_start(now), f"on {fmt(now)}"),
    "this_week": lambda now: (_day_start(now - timedelta(days=now.weekday())),
                              f"in the week of {fmt(now)}"),
    "this_month": lambda now: (_day_start(now.replace(day=1)),
                               f"in {calendar.month_name[now.month]} {now.year}"),
    "this_year": lambda now: (_day_start(now.replace(month=1, day=1)), f"in {now.year}"),
}


# Relative future phrases get their absolute date appended so the fact stays readable later.
_RELATIVE = frozenset({"tomorrow", "today", "in", "weekday", "weekend", "next_weekend",
                       "this_week", "next_week", "this_month", "next_month", "next_year"})


@dataclass
class _Reading:
    """What :func:`resolve` has read of a sentence's time phrases so far."""

    text: str  # the sentence as rewritten so far
    deadline: datetime | None = None
    happened: datetime | None = None
    phrase: str = ""

    def happened_by(self, when: datetime) -> None:
        """Something happened at ``when``: the earliest such time counts."""
        self.happened = when if self.happened is None else min(self.happened, when)

    def reworded(self, pattern: re.Pattern[str], wording: str) -> None:
        """Replace the phrase ``pattern`` finds in the text with ``wording``."""
        found = pattern.search(self.text)
        if found:
            self.text = f"{self.text[: found.start()]}{wording}{self.text[found.end():]}"


def resolve(sentence: str, now: datetime) -> TimeInfo:
    """Resolve the time phrases of ``sentence`` against ``now`` (the episode time)."""
    reading = _Reading(text=sentence)
    past = told_in_past(sentence)
    recurring = bool(_RECURRING.search(sentence))
    for pattern, kind in _FUTURE:
        m = pattern.search(sentence)
        if m:
            _read_future(reading, pattern, kind, m, now, past=past, recurring=recurring)
    for pattern, kind in _PAST:
        m = pattern.search(reading.text)
        if not m:
            continue
        when, wording = _past(kind, m, now)
        reading.happened_by(when)
        reading.text = pattern.sub(wording, reading.text, count=1)
    return TimeInfo(deadline=reading.deadline, happened=reading.happened,
                    rewritten=reading.text, phrase=reading.phrase)


# Words that make the month after them a start still to come, whatever the sentence's
# tense: "accepted an offer, starting in April" said in February is this April (not
# "from" or "until": "worked there from March until May" is a past span).
_STARTS_LATER = re.compile(r"\b(?:starting|beginning|commencing|effective|due)\s*$", re.I)


def _read_future(reading: _Reading, pattern: re.Pattern[str], kind: str, m: re.Match[str],
                 now: datetime, *, past: bool, recurring: bool) -> None:
    """One phrase of the future patterns: a date that happened, or a deadline."""
    if kind in ("month", "range"):
        if past and _STARTS_LATER.search(m.string[:m.start()]):
            past = False  # "..., starting in April" said in February: this April
        when, before = _named_date(m, kind, now, past)
        if recurring:
            when = None  # a birthday on May 3 is no deadline; "born in 1990" is a past
        if before is not None:
            reading.happened_by(before)
            return
    elif kind == "in" and (past or _NOT_SINCE.search(m.string)):
        # "worked there for six years", "the first time in 8 months I've slept",
        # "haven't seen her in 3 years": a span up to now, not a deadline
        return
    elif past and _read_in_past(reading, pattern, kind, m, now):
        return
    else:
        when = _future(kind, m, now)
    if when is not None and when > now:
        _read_deadline(reading, pattern, kind, m, when)


def _read_in_past(reading: _Reading, pattern: re.Pattern[str], kind: str, m: re.Match[str],
                  now: datetime) -> bool:
    """A phrase of a sentence told in the past that says when it happened: read (True),
    and no deadline."""
    if kind == "weekday" and m.group(0).lower().startswith("on ") and not _ARRANGING.search(
            m.string) and not _FUTURE_MARK.search(m.string):
        # "I started there on Monday": the Monday just past, when it happened
        back = (now.weekday() - WEEKDAYS[m.group("wd").lower()]) % 7 or 7
        day = now - timedelta(days=back)
        reading.happened_by(_day_start(day))
        reading.reworded(pattern, f"on {fmt(day)}")
        return True
    if kind in _CURRENT_PERIOD:
        # "I started a new job this week", "finished it this morning": it happened in
        # the period that is still running, so it is no deadline.
        start, wording = _CURRENT_PERIOD[kind](now)
        reading.happened_by(start)
        reading.reworded(pattern, wording)
        return True
    return False


def _read_deadline(reading: _Reading, pattern: re.Pattern[str], kind: str, m: re.Match[str],
                   when: datetime) -> None:
    """A future time: the nearest is the deadline; a relative phrase gets its absolute
    date appended so the fact stays readable later."""
    if reading.deadline is None or when < reading.deadline:
        reading.deadline, reading.phrase = when, m.group(0)
    if kind not in _RELATIVE:
        return
    day = when if kind == "in" else when - timedelta(seconds=1)
    exact = kind in ("tomorrow", "today", "weekday", "in")
    label = fmt(day) if exact else f"by {fmt(day)}"
    found = pattern.search(reading.text)
    if found:
        reading.text = f"{reading.text[: found.end()]} ({label}){reading.text[found.end():]}"
