"""The time a query names ("on 13 October 2023", "in May 2023", "last week"), as a span of creation times.

A question about when something was said or done is answered by the bullets written then: Recall gives
bullets created inside the span the query names a boost (``fusion.recency_multiplier``). English dates only,
absolute ones in the usual orders (``13 October 2023``, ``October 13, 2023``, ``2023-10-13``), a month with
its year, and the relative phrases a person uses (``yesterday``, ``last week``, ``last month``, ``this
year``...) counted from the time of the recall. A month without a year, or a year alone, says too little to
rank by and is ignored."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_MONTHS = {
    name: n
    for n, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = (
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I)),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("day", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I)),
)
_RELATIVE = re.compile(
    r"\b(?P<what>today|yesterday|(?:last|past|this|previous)\s+(?:week(?:end)?|month|year)|"
    r"(?P<count>\d+|a|two|three|four|five|six)\s+(?P<unit>days?|weeks?|months?)\s+ago)\b",
    re.I,
)
_COUNTS = {"a": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class Span:
    """Creation times from ``start`` (inclusive) to ``end`` (exclusive)."""

    start: datetime
    end: datetime

    def holds(self, when: datetime) -> bool:
        return self.start <= when < self.end


def _month_span(year: int, month: int, tz: object) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=tz)  # type: ignore[arg-type]
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)  # type: ignore[arg-type]
    return start, end


def named_spans(query: str, now: datetime) -> list[Span]:
    """Every span of time ``query`` names, in ``now``'s time zone (UTC when it has none)."""
    tz = now.tzinfo
    spans: list[Span] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(query):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue  # "May 3, 2023" is a day: not also "May ... 2023"
            month_text = m.group("month").lower().rstrip(".")
            month = int(month_text) if month_text.isdigit() else _MONTHS[month_text]
            year = int(m.group("year"))
            try:
                if kind == "day":
                    start = datetime(year, month, int(m.group("day")), tzinfo=tz)
                    spans.append(Span(start, start + timedelta(days=1)))
                else:
                    spans.append(Span(*_month_span(year, month, tz)))
            except ValueError:  # "31 February": not a date
                continue
            taken.append((m.start(), m.end()))
    if spans:  # "the weekend before 10 April 2023" is anchored on its date, not on today
        return spans
    for m in _RELATIVE.finditer(query):
        span = _relative(m, now)
        if span is not None:
            spans.append(span)
    return spans


def _relative(m: re.Match[str], now: datetime) -> Span | None:
    what = " ".join(m.group("what").lower().split())
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if what == "today":
        return Span(day, day + timedelta(days=1))
    if what == "yesterday":
        return Span(day - timedelta(days=1), day)
    if m.group("unit"):
        count = m.group("count").lower()
        n = int(count) if count.isdigit() else _COUNTS[count]
        unit = m.group("unit").lower().rstrip("s")
        days = {"day": 1, "week": 7, "month": 30}[unit] * n
        centre = day - timedelta(days=days)
        slack = timedelta(days=max(1, days // 4))  # "three weeks ago" is not to the day
        return Span(centre - slack, centre + slack + timedelta(days=1))
    which, unit = what.split()
    if unit in ("week", "weekend"):
        monday = day - timedelta(days=day.weekday())
        start = monday if which == "this" else monday - timedelta(days=7)
        return Span(start, start + timedelta(days=7)) if which != "past" else Span(day - timedelta(days=7), now)
    if unit == "month":
        if which == "past":
            return Span(day - timedelta(days=30), now)
        year, month = (day.year, day.month) if which == "this" else divmod(day.year * 12 + day.month - 2, 12)
        if which != "this":
            month += 1
        return Span(*_month_span(year, month, now.tzinfo))
    year = day.year if which == "this" else day.year - 1
    if which == "past":
        return Span(day - timedelta(days=365), now)
    return Span(datetime(year, 1, 1, tzinfo=now.tzinfo), datetime(year + 1, 1, 1, tzinfo=now.tzinfo))
