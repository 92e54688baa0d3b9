"""Dates: `parse_date` reads a value as ISO 8601 or by the field's formats (`YYYY`, `MMM`, `DD`,
...), and `match_date` compares two dates by day."""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from agentv_py.scoring.match import MatchResult, describe_value, formats_tried

# ----------------------------------------------------------------------------- dates

_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ].*)?")
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_BY_NAME = {name: i + 1 for i, name in enumerate(_MONTHS)} | {n[:3]: i + 1 for i, n in enumerate(_MONTHS)}
_TOKENS = {
    "YYYY": ("year", r"(\d{4})"),
    "MMMM": ("month_name", r"([A-Za-z]+)"),
    "MMM": ("month_abbr", r"([A-Za-z]{3})"),
    "YY": ("year2", r"(\d{2})"),
    "MM": ("month", r"(\d{2})"),
    "DD": ("day", r"(\d{2})"),
    "M": ("month", r"(\d{1,2})"),
    "D": ("day", r"(\d{1,2})"),
}
_TOKEN_ORDER = ("YYYY", "MMMM", "MMM", "YY", "MM", "DD", "M", "D")


@functools.lru_cache(maxsize=256)
def _compile_format(fmt: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    pattern, groups, i = "", [], 0
    while i < len(fmt):
        for token in _TOKEN_ORDER:
            if fmt.startswith(token, i):
                kind, regex = _TOKENS[token]
                pattern += regex
                groups.append(kind)
                i += len(token)
                break
        else:
            pattern += re.escape(fmt[i])
            i += 1
    return re.compile(pattern, re.IGNORECASE), tuple(groups)


def parse_date(value: Any, formats: tuple[str, ...]) -> dt.date | None:
    """ISO-8601 first (the calendar date as written; time and zone ignored), then each format."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    iso = _ISO_DATE.fullmatch(text)
    if iso:
        try:
            return dt.date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
        except ValueError:
            return None
    for fmt in formats:
        regex, groups = _compile_format(fmt)
        found = regex.fullmatch(text)
        if not found:
            continue
        year = month = day = None
        for kind, raw in zip(groups, found.groups(), strict=False):
            if kind == "year":
                year = int(raw)
            elif kind == "year2":
                year = int(raw) + (2000 if int(raw) < 69 else 1900)  # strptime's %y pivot
            elif kind == "month":
                month = int(raw)
            elif kind == "day":
                day = int(raw)
            else:
                name = raw.casefold()
                month = _MONTH_BY_NAME.get(name) if kind == "month_name" else _MONTH_BY_NAME.get(name[:3])
                if kind == "month_abbr" and name not in _MONTH_BY_NAME:
                    month = None
        if year is None or month is None or day is None:
            continue
        try:
            return dt.date(year, month, day)
        except ValueError:
            continue
    return None


def match_date(candidate: Any, expected: Any, formats: tuple[str, ...], unsettled: bool = False) -> MatchResult:
    """`match: date`: the same calendar date. Option: `formats` (tried after ISO-8601, in order;
    tokens YYYY YY MMMM MMM MM M DD D, e.g. `DD-MMM-YYYY`; default YYYY-MM-DD, DD-MMM-YYYY,
    MM/DD/YYYY, DD/MM/YYYY). An expected value that parses as no date is a failure of its own.
    `unsettled` (no `formats`, no `date_order`): a value whose day and month could be swapped
    gets a note saying how it was read (`ambiguous_date`)."""
    e = parse_date(expected, formats)
    if e is None:
        return MatchResult(False, 0.0, f"unparseable expected date: {describe_value(expected)}", bad_expected=True)
    c = parse_date(candidate, formats)
    if c is None:
        info: dict[str, Any] = {"expected_date": e.isoformat(), "formats_tried": formats_tried(formats)}
        return MatchResult(False, 0.0, "unparseable date", info)
    info = {"parsed": c.isoformat(), "expected_date": e.isoformat()}
    if unsettled:
        notes = [note for value in (expected, candidate) if (note := ambiguous_date(value, formats))]
        if notes:
            info["note"] = "; ".join(dict.fromkeys(notes))
    if c == e:
        return MatchResult(True, 1.0, info=info)
    return MatchResult(False, 0.0, f"date mismatch: got {c.isoformat()}, expected {e.isoformat()}", info)


def ambiguous_date(value: Any, formats: tuple[str, ...]) -> str | None:
    """How a value that two of `formats` read as different days was read (the first), and what
    else it could be: `ambiguous date '03/08/2014': read as 2014-03-08 (MM/DD/YYYY), could be
    2014-08-03 (DD/MM/YYYY); set date_order: dmy or mdy`. None: one reading, or none."""
    if not isinstance(value, str) or _ISO_DATE.fullmatch(value.strip()):
        return None
    readings: dict[dt.date, str] = {}
    for fmt in formats:
        day = parse_date(value, (fmt,))
        if day is not None:
            readings.setdefault(day, fmt)
    if len(readings) < 2:
        return None
    (first, how), *others = readings.items()
    could = ", ".join(f"{day.isoformat()} ({fmt})" for day, fmt in others)
    return (
        f"ambiguous date {value!r}: read as {first.isoformat()} ({how}), could be {could}; "
        "set date_order: dmy or mdy on the field"
    )
