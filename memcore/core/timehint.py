"""A relative time in a question ("last week", "in March", "3 days ago") as a time filter.

``search(..., time_hint=True)`` resolves the first time phrase of the query against
``now`` with `dateparser <https://dateparser.readthedocs.io>`_ (past dates preferred: a
question about memory asks about the past), widens it to the period the phrase names
(a day, a week from Monday, a month, a year) and searches the memories whose
``event_at`` falls in it, chosen before ranking like every filter; the phrase itself
is taken out of the text that is ranked. dateparser also reads words that only look
like dates ("May I ...", "we march in the ..."), so a phrase counts only when it holds a
number, a relative word (ago, last, yesterday, week, ...), a weekday, or a month after
"in", "during", "since", "of", "early", "late" or "mid".
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memcore.core.models import as_utc

FIELD = "event_at"
"""The time a hint filters on: when the fact happened (``valid_from``, else stored)."""

_RELATIVE = frozenset({"ago", "last", "yesterday", "today", "week", "weeks", "month",
                       "months", "year", "years", "weekend", "fortnight", "earlier",
                       "previous", "past", "this"})
_WEEKDAYS = frozenset(d.lower() for d in calendar.day_name)
_MONTHS = "|".join(m.lower() for m in calendar.month_name if m)
_MONTH_AFTER = re.compile(rf"^(?:in|during|since|of|early|late|mid|mid-)\s+(?:{_MONTHS})$")


@dataclass(frozen=True)
class TimeHint:
    """A time phrase found in a query and the period it names (``start`` <= t < ``end``)."""

    phrase: str
    start: datetime
    end: datetime
    query: str
    """The query without the phrase (what is ranked); the whole query if nothing is left."""

    def filter(self) -> dict[str, Any]:
        """The filter choosing memories that happened in the period."""
        return {FIELD: {"gte": self.start.isoformat(), "lt": self.end.isoformat()}}


def plausible(phrase: str) -> bool:
    """Whether a phrase dateparser read as a date is meant as one (see the module)."""
    lower = phrase.lower().strip()
    words = set(re.findall(r"[a-z]+", lower))
    return bool(re.search(r"\d", lower) or words & _RELATIVE or words & _WEEKDAYS
                or _MONTH_AFTER.match(lower))


def period(day: datetime, unit: str) -> tuple[datetime, datetime]:
    """The ``unit`` (day, week from Monday, month, year) holding ``day``."""
    start = day.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":
        start -= timedelta(days=start.weekday())
        return start, start + timedelta(days=7)
    if unit == "month":
        start = start.replace(day=1)
        return start, (start + timedelta(days=32)).replace(day=1)
    if unit == "year":
        start = start.replace(month=1, day=1)
        return start, start.replace(year=start.year + 1)
    return start, start + timedelta(days=1)


def resolve_time(query: str, now: datetime) -> TimeHint | None:
    """The first plausible time phrase of ``query`` resolved against ``now``; None when
    the query names no time."""
    from dateparser.date import DateDataParser  # imported on first use (about 0.5 s)
    from dateparser.search import search_dates

    base = as_utc(now).replace(tzinfo=None)  # dateparser reads a naive base
    settings: dict[str, Any] = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past"}
    found = search_dates(query, languages=["en"], settings=settings) or []
    parser = DateDataParser(languages=["en"],
                            settings={**settings, "RETURN_TIME_AS_PERIOD": True})
    for phrase, _ in found:
        if not plausible(phrase):
            continue
        data = parser.get_date_data(phrase)
        if data.date_obj is None or data.period == "time":  # "now": no period to search
            continue
        start, end = period(data.date_obj, data.period or "day")
        rest = " ".join(query.replace(phrase, " ").split())
        return TimeHint(phrase, start.replace(tzinfo=UTC), end.replace(tzinfo=UTC),
                        rest if re.search(r"\w", rest) else query)
    return None
