"""JUnit XML from a run's rows (`agentv eval --junit`), the report CI systems render.

One `<testsuite>` for the dataset, one `<testcase>` per case: a case that did not pass carries a
`<failure>` with its misses (expected vs got), a target or evaluator error an `<error>`. With
`per_field`, one more suite per `field_accuracy` field path, one testcase per case, so a CI page
says "gross_total failed on 3 of 120 documents".

The output is valid against the strict common JUnit schema (Apache Ant's, as published by Windy
Road: `properties`, `system-out` and `system-err` present, `type` on failures and errors, a
timestamp without a zone). Memory stays bounded whatever the number of rows: `rows` is read twice
(counts, then the testcases) and each testcase is written as soon as it is built. Values are data:
characters XML 1.0 forbids are dropped, the rest is escaped.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO
from xml.sax.saxutils import quoteattr

from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.misses import misses_with_values
from agentv_py.scoring.intervals import headline, wilson

__all__ = ["field_outcomes", "write_junit", "xml_text"]

# Everything XML 1.0 allows (section 2.2) is kept; the rest (C0 controls other than tab, newline
# and CR, lone surrogates, U+FFFE/U+FFFF) cannot be written at all, escaped or not.
_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ATTRIBUTE_ESCAPES = {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
VALUE_CHARS = 200  # an expected or actual value in a message is shortened to this
MESSAGE_CHARS = 1_000  # a failure's or error's message attribute
BODY_CHARS = 16_000  # a failure's or error's text: the first misses, then how many more characters
SPOOL_BYTES = 1 << 20  # a per-field suite is kept in memory up to this, then on disk


def xml_text(value: str) -> str:
    """`value` without the characters XML 1.0 forbids (escaping is the serializer's job)."""
    return _FORBIDDEN.sub("", value)


def _capped(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how many it had: a CI system's page of failures
    stays readable whatever a case's misses hold (agentv explain shows them whole)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n... ({len(text) - limit} more characters: agentv explain RESULTS CASE shows them all)"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)  # quoted: "2" and 2 read differently
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _seconds(duration_ms: float) -> str:
    return f"{duration_ms / 1000:.3f}" if math.isfinite(duration_ms) and duration_ms > 0 else "0.000"


@dataclass
class FieldVerdict:
    """One field of one case, as `field_accuracy` scored it (several evaluators: the worst)."""

    status: str  # hit | miss | error | skipped
    message: str


_RANK = {"skipped": 0, "hit": 1, "miss": 2, "error": 3}


def _field_results(results: Iterable[EvaluatorResult]) -> Iterator[EvaluatorResult]:
    """The `field_accuracy` results of a row, composites' members included."""
    for result in results:
        if result.type == "field_accuracy":
            yield result
        yield from _field_results(result.evaluator_results)


def field_outcomes(row: ResultRow) -> dict[str, FieldVerdict]:
    """Each field path `field_accuracy` reports for the row, and how it went."""
    outcomes: dict[str, FieldVerdict] = {}
    for result in _field_results(row.evaluator_results):
        for field in result.field_outcomes():
            reason = field.reason or ""
            if field.status == "hit":
                outcome = FieldVerdict("hit", "")
            elif field.status == "miss":
                expected, actual = _short(field.expected), _short(field.actual)
                outcome = FieldVerdict(
                    "miss", f"expected {expected}, got {actual}" + (f" ({reason})" if reason else "")
                )
            elif field.status == "could not score" or result.status == "error":
                outcome = FieldVerdict("error", reason or result.reasoning or "could not score")
            else:
                outcome = FieldVerdict("skipped", reason or field.status)
            known = outcomes.get(field.path)
            if known is None or _RANK[outcome.status] > _RANK[known.status]:
                outcomes[field.path] = outcome
    return outcomes


def _case_problem(row: ResultRow, strict_xfail: bool = False) -> tuple[str, str, str, str] | None:
    """(element, type, message, text) for a case that did not pass; None for one that did. An
    `xfail:` case, as pytest's JUnit has it: not passing is `skipped` (XFAIL), passing passes
    (XPASS), or with --strict-xfail fails."""
    marked = row.expected_outcome
    if marked == "xfail":
        return "skipped", "", f"XFAIL: {row.xfail} (score {row.score:.3f}, {row.verdict})", ""
    if marked == "xpass" and strict_xfail:
        message = f"XPASS(strict): {row.xfail}"
        return "failure", "xpass", message, message
    if row.status == "error":
        message = row.error or "the target call failed"
        return "error", "target_error", message, message
    broken = [result for result in row.evaluator_results if result.status == "error"]
    if broken:
        lines = [f"{result.name}: {result.reasoning or 'could not run'}" for result in broken]
        return "error", "evaluator_error", lines[0], "\n".join(lines)
    if row.verdict == "pass":
        return None
    misses = misses_with_values(row.misses, row.evaluator_results)
    head = f"score {row.score:.3f} ({row.verdict})"
    message = f"{head}: {misses[0]}" + (f" (+{len(misses) - 1} more)" if len(misses) > 1 else "") if misses else head
    lines = list(misses)
    values = [f"{path}: {outcome.message}" for path, outcome in field_outcomes(row).items() if outcome.status == "miss"]
    if values:
        lines += ["", "expected vs got:", *values]
    return "failure", "failed", message, "\n".join(lines) or head


def _testcase(classname: str, name: str, time: str, problem: tuple[str, str, str, str] | None) -> str:
    element = ET.Element("testcase", {"classname": xml_text(classname), "name": xml_text(name), "time": time})
    if problem is not None:
        tag, kind, message, text = problem
        if tag == "skipped":
            ET.SubElement(element, "skipped", {"message": xml_text(_capped(message, MESSAGE_CHARS))})
        else:
            child = ET.SubElement(element, tag, {"message": xml_text(_capped(message, MESSAGE_CHARS)), "type": kind})
            child.text = xml_text(_capped(text, BODY_CHARS))
    return ET.tostring(element, encoding="unicode") + "\n"


@dataclass
class _Counts:
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    millis: float = 0.0

    def add(self, kind: str | None, duration_ms: float = 0.0) -> None:
        self.tests += 1
        if kind == "failure":
            self.failures += 1
        elif kind == "error":
            self.errors += 1
        elif kind == "skipped":
            self.skipped += 1
        if math.isfinite(duration_ms) and duration_ms > 0:
            self.millis += duration_ms


def _suite_open(
    name: str, suite_id: int, counts: _Counts, timestamp: str, hostname: str, properties: dict[str, str] | None = None
) -> str:
    attributes = {
        "name": name,
        "package": name,
        "id": str(suite_id),
        "timestamp": timestamp,
        "hostname": hostname,
        "tests": str(counts.tests),
        "failures": str(counts.failures),
        "errors": str(counts.errors),
        "skipped": str(counts.skipped),
        "time": _seconds(counts.millis),
    }
    text = " ".join(f"{key}={quoteattr(xml_text(value), _ATTRIBUTE_ESCAPES)}" for key, value in attributes.items())
    if not properties:
        return f"<testsuite {text}>\n<properties />\n"
    listed = "".join(
        f"<property name={quoteattr(key, _ATTRIBUTE_ESCAPES)} value={quoteattr(value, _ATTRIBUTE_ESCAPES)} />\n"
        for key, value in properties.items()
    )
    return f"<testsuite {text}>\n<properties>\n{listed}</properties>\n"


def _headline_properties(passed: int, scores: Sequence[float], level: float) -> dict[str, str]:
    """The case suite's properties: the pass rate and mean score with their intervals (docs/statistics.md)."""
    found = headline(passed, scores, level)
    if found is None:
        return {}
    out = {"confidence_level": f"{level:g}", "pass_rate": f"{found.pass_rate:.6f}"}
    if found.pass_rate_interval is not None:
        out |= {
            "pass_rate_low": f"{found.pass_rate_interval.low:.6f}",
            "pass_rate_high": f"{found.pass_rate_interval.high:.6f}",
        }
    out["mean_score"] = f"{found.mean:.6f}"
    if found.mean_interval is not None:
        out |= {
            "mean_score_low": f"{found.mean_interval.low:.6f}",
            "mean_score_high": f"{found.mean_interval.high:.6f}",
        }
    return out


def _field_properties(counts: _Counts, level: float) -> dict[str, str]:
    """A field's suite: the share of its scored cases where it matched, with Wilson's interval."""
    scored = counts.tests - counts.skipped - counts.errors
    interval = wilson(scored - counts.failures, scored, level)
    if interval is None:
        return {}
    return {
        "confidence_level": f"{level:g}",
        "match_rate": f"{(scored - counts.failures) / scored:.6f}",
        "match_rate_low": f"{interval.low:.6f}",
        "match_rate_high": f"{interval.high:.6f}",
    }


_SUITE_CLOSE = "<system-out />\n<system-err />\n</testsuite>\n"


def _field_problem(row: ResultRow, outcome: FieldVerdict | None) -> tuple[str, str, str, str] | None:
    if outcome is None:
        if row.status == "error":
            message = row.error or "the target call failed"
            return "error", "target_error", message, message
        return "skipped", "", "not scored for this case", ""
    if outcome.status == "hit":
        return None
    if outcome.status == "miss":
        return "failure", "field_miss", outcome.message, outcome.message
    if outcome.status == "error":
        return "error", "field_error", outcome.message, outcome.message
    return "skipped", "", outcome.message or "not scored", ""


def _timestamp(value: str) -> str | None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def write_junit(
    out: TextIO,
    rows: Callable[[], Iterable[ResultRow]],
    *,
    dataset: str,
    per_field: bool = False,
    hostname: str = "localhost",
    skipped: Sequence[tuple[str, str]] = (),
    strict_xfail: bool = False,
    confidence: float = 0.95,
) -> None:
    """Write the JUnit XML of a run to `out`. `rows()` gives the run's rows afresh; it is called
    twice: once to count (a suite's counts come first in the XML) and to find the field paths,
    once to write. The per-field suites are written to spooled temporary files meanwhile (in
    memory up to SPOOL_BYTES each, on disk beyond) and copied after the case suite."""
    suite_name = xml_text(dataset).strip() or "agentv"
    cases = _Counts()
    paths: dict[str, None] = {}  # in the order they are first seen
    first: str | None = None
    for _ in skipped:
        cases.add("skipped")
    scores = array("d")
    passed = 0
    for row in rows():
        problem = _case_problem(row, strict_xfail)
        cases.add(problem[0] if problem else None, row.duration_ms)
        scores.append(row.score)
        passed += row.verdict == "pass"
        stamp = _timestamp(row.timestamp)
        if stamp is not None and (first is None or stamp < first):
            first = stamp
        if per_field:
            paths.update(dict.fromkeys(field_outcomes(row)))
    timestamp = first or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    with contextlib.ExitStack() as stack:
        spools = {
            path: (_Counts(), stack.enter_context(tempfile.SpooledTemporaryFile(SPOOL_BYTES, "w+", encoding="utf-8")))
            for path in paths
        }
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n')
        properties = _headline_properties(passed, scores, confidence)
        out.write(_suite_open(suite_name, 0, cases, timestamp, hostname, properties))
        for row in rows():
            out.write(_testcase(suite_name, row.run_label, _seconds(row.duration_ms), _case_problem(row, strict_xfail)))
            outcomes = field_outcomes(row) if spools else {}
            for path, (counts, spool) in spools.items():
                problem = _field_problem(row, outcomes.get(path))
                counts.add(problem[0] if problem else None)
                spool.write(_testcase(f"{suite_name}.{path}", row.run_label, "0.000", problem))
        for case_id, reason in skipped:  # `skip:` cases: not run, so no row
            out.write(_testcase(suite_name, case_id, "0.000", ("skipped", "", f"SKIPPED: {reason}", "")))
        out.write(_SUITE_CLOSE)
        for index, (path, (counts, spool)) in enumerate(spools.items(), start=1):
            out.write(
                _suite_open(
                    f"{suite_name}.{path}", index, counts, timestamp, hostname, _field_properties(counts, confidence)
                )
            )
            spool.seek(0)
            shutil.copyfileobj(spool, out)
            out.write(_SUITE_CLOSE)
    out.write("</testsuites>\n")
