# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""Counts: every number in the expected text must appear, with the same count, in the answer.

A number followed by a word ("5 bottles") is matched by that word (singular and plural agree), so
"5 bottles, 3 cans" vs "5 bottles, 8 cans" scores 1/2 = 0.5; a bare number is matched against the
answer's unclaimed numbers. Number words (one..twenty) count as numbers.
Config: threshold (default 1.0: every count right).
"""

import re

from agentv_py.judge import JudgeInput, JudgeResult, judge

WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
COUNT = re.compile(r"\b(\d+|" + "|".join(WORDS) + r")\b(?:\s+([a-z][a-z-]*))?", re.IGNORECASE)


def label(word: str | None) -> str | None:
    if not word:
        return None
    word = word.lower()
    for suffix, repl in (("ies", "y"), ("ses", "s"), ("xes", "x"), ("ches", "ch"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return word[: -len(suffix)] + repl
    return word


def counts(text: str) -> list[tuple[int, str | None, str]]:
    """(value, singular label or None, the phrase as written) for every count in the text."""
    found = []
    for number, word in COUNT.findall(text or ""):
        value = int(number) if number.isdigit() else WORDS[number.lower()]
        found.append((value, label(word), f"{number} {word}".strip()))
    return found


@judge
def count_validator(inp: JudgeInput) -> JudgeResult:
    expected = counts(inp.reference_answer)
    if not expected:
        return JudgeResult(score=0.0, status="skipped", reasoning="the expected answer holds no counts")
    answer = counts(inp.candidate_answer)
    by_label = {}
    for value, name, _ in answer:
        if name is not None:
            by_label.setdefault(name, value)
    unclaimed = [value for value, _, _ in answer]
    hits, misses, rows = [], [], []
    for value, name, phrase in expected:
        got = by_label.get(name) if name is not None else (value if value in unclaimed else None)
        ok = got == value
        if ok and got in unclaimed:
            unclaimed.remove(got)
        (hits if ok else misses).append(
            f"{phrase}: " + ("found" if ok else f"answer has {got if got is not None else 'none'}")
        )
        rows.append({"label": name, "expected": value, "found": got, "match": ok})
    score = len(hits) / len(expected)
    threshold = float(inp.config.get("threshold", 1.0))
    return JudgeResult(
        score=score,
        hits=hits,
        misses=misses,
        passed=score >= threshold,
        reasoning=f"{len(hits)}/{len(expected)} counts match",
        details={"counts": rows, "threshold": threshold},
    )
