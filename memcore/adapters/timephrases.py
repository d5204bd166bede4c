"""Dates and time phrases in a turn, resolved against the episode's own timestamp.

Future phrases ("tomorrow", "next week", "by May", "in 2 days", "for the May
exam") give a deadline: the fact is valid until then and expires then. Past
phrases ("yesterday", "last week", "3 days ago") give the time the event
happened and are rewritten to absolute dates so the fact stays true later.
"""

from __future__ import annotations

import calendar
import re
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
        (r"\b(?:by|until|till|before|on|in|for|this|next|around|the|of) (?:the )?"
         rf"(?P<month>{_MONTH_RE})\b(?: (?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b)?", "month"),
        (rf"\b(?:by|until|till|before|on) (?:the )?(?P<day>\d{{1,2}})(?:st|nd|rd|th)? "
         rf"(?:of )?(?P<month>{_MONTH_RE})\b", "month"),
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
        (rf"\b(?:next|this|on|coming) (?P<wd>{_DAY_RE})\b", "weekday"),
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


def _future(kind: str, m: re.Match[str], now: datetime) -> datetime | None:
    if kind in ("month", "range"):
        # "range": "December 3-6" names the month before the days (the range's end month
        # only when it differs, "December 28 to January 3").
        month = m.group("month") or (m.group("month1") if kind == "range" else None)
        if month is None or month == "may":  # lower-case "may" is the modal verb
            return None
        day = m.groupdict().get("day")
        return _next_month_end(now, MONTHS[month.lower()], int(day) if day else None)
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


# Relative future phrases get their absolute date appended so the fact stays readable later.
_RELATIVE = frozenset({"tomorrow", "today", "in", "weekday", "weekend", "next_weekend",
                       "this_week", "next_week", "this_month", "next_month", "next_year"})


def resolve(sentence: str, now: datetime) -> TimeInfo:
    """Resolve the time phrases of ``sentence`` against ``now`` (the episode time)."""
    deadline: datetime | None = None
    phrase = ""
    text = sentence
    for pattern, kind in _FUTURE:
        m = pattern.search(sentence)
        if not m:
            continue
        when = _future(kind, m, now)
        if when is not None and when > now and (deadline is None or when < deadline):
            deadline, phrase = when, m.group(0)
        if kind in _RELATIVE and when is not None and when > now:
            day = when if kind == "in" else when - timedelta(seconds=1)
            exact = kind in ("tomorrow", "today", "weekday", "in")
            label = fmt(day) if exact else f"by {fmt(day)}"
            found = pattern.search(text)
            if found:
                text = f"{text[: found.end()]} ({label}){text[found.end():]}"
    happened: datetime | None = None
    for pattern, kind in _PAST:
        m = pattern.search(text)
        if not m:
            continue
        when, wording = _past(kind, m, now)
        happened = when if happened is None else min(happened, when)
        text = pattern.sub(wording, text, count=1)
    return TimeInfo(deadline=deadline, happened=happened, rewritten=text, phrase=phrase)
