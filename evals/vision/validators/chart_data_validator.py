# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""Chart data: the figures read off a chart — currency, percentages, quarters — against the expected text.

- currency ("$1.2M", "$450K", "€3B", "$1,200,000", "2.5 million"): matched within 15% relative
  tolerance (config `tolerance`), each answer value used once;
- percentages ("12.5%"): exact;
- quarters ("Q3", "Q3 2025"): exact, each distinct quarter once.
score = matched expected values / expected values. Config: tolerance (0.15), threshold (0.8).
"""

import re

from agentv_py.judge import JudgeInput, JudgeResult, judge

SUFFIX = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mm": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9}
MONEY = re.compile(
    r"(?P<cur>[$€£¥])\s?(?P<num>\d[\d,]*(?:\.\d+)?)\s?(?P<suf>thousand|million|billion|bn|mm|[kmb])?\b"
    r"|(?P<num2>\d[\d,]*(?:\.\d+)?)\s?(?P<suf2>thousand|million|billion|bn|[kmb])\b",
    re.IGNORECASE,
)
PERCENT = re.compile(r"(-?\d+(?:\.\d+)?)\s?%")
QUARTER = re.compile(r"\bQ([1-4])(?:\s*(?:'|FY)?\s*(\d{4}|\d{2}))?\b", re.IGNORECASE)


def money(text):
    values = []
    for m in MONEY.finditer(text):
        number, suffix = (m.group("num"), m.group("suf")) if m.group("num") else (m.group("num2"), m.group("suf2"))
        values.append(float(number.replace(",", "")) * SUFFIX.get((suffix or "").lower(), 1.0))
    return values


def percents(text):
    return [float(p) for p in PERCENT.findall(text)]


def quarters(text):
    found = []
    for q, year in QUARTER.findall(text):
        year = ("20" + year) if len(year) == 2 else year
        found.append(f"Q{q} {year}".strip())
    return list(dict.fromkeys(found))  # a quarter is a label: named twice, it is still one value


def match_money(expected, answer, tolerance):
    pool, rows = list(answer), []
    for want in expected:
        close = [(abs(got - want) / abs(want) if want else abs(got), i) for i, got in enumerate(pool)]
        close = [c for c in close if c[0] <= tolerance]
        if close:
            error, i = min(close)
            rows.append({"expected": want, "found": pool.pop(i), "relative_error": round(error, 4), "match": True})
        else:
            rows.append({"expected": want, "found": None, "match": False})
    return rows


def match_exact(expected, answer):
    """Each expected value found once in the answer; an expected bare quarter ("Q3") also matches
    the same quarter with a year ("Q3 2025")."""
    pool, rows = list(answer), []
    for want in expected:
        found = next((a for a in pool if a == want or (isinstance(a, str) and a.split()[0] == want)), None)
        if found is not None:
            pool.remove(found)
        rows.append({"expected": want, "found": found, "match": found is not None})
    return rows


LABELS = {"currency": lambda v: f"currency {v:,.0f}", "percentages": lambda v: f"{v:g}%", "quarters": str}


@judge
def chart_data_validator(inp: JudgeInput) -> JudgeResult:
    expected, answer = inp.reference_answer, inp.candidate_answer
    tolerance = float(inp.config.get("tolerance", 0.15))
    results = {
        "currency": match_money(money(expected), money(answer), tolerance),
        "percentages": match_exact(percents(expected), percents(answer)),
        "quarters": match_exact(quarters(expected), quarters(answer)),
    }
    total = sum(len(rows) for rows in results.values())
    if total == 0:
        return JudgeResult(score=0.0, status="skipped", reasoning="the expected answer holds no chart values")
    hits, misses = [], []
    for kind, rows in results.items():
        for row in rows:
            shown = LABELS[kind](row["expected"])
            (hits if row["match"] else misses).append(shown if row["match"] else f"{shown} not found")
    score = len(hits) / total
    threshold = float(inp.config.get("threshold", 0.8))
    return JudgeResult(
        score=score,
        hits=hits,
        misses=misses,
        passed=score >= threshold,
        reasoning=f"{len(hits)}/{total} chart values match (currency within {tolerance:.0%})",
        details={**results, "tolerance": tolerance, "threshold": threshold},
    )
