"""`agentv explain RESULTS CASE FIELD` for a `match: items` field: the similarity matrix of the
key fields, the assignment with each pair's sub-fields, and the missing and extra items.

A pair's sub-fields that were not scored because neither side has a value (null or absent in
both the expected and the answer item) are folded into one line per pair, named as far as the line
goes; `every` (`--all`) lists them one by one.
"""

from __future__ import annotations

from typing import Any

from agentv_py.models.field_results import FieldOutcome
from agentv_py.report.explain_text import Say, shown
from agentv_py.report.layout import Column, print_table
from agentv_py.scoring.alignment import similarity_matrix

MATRIX = 20  # rows and columns of a similarity matrix shown
PAIR = "  "  # the indent of a pair's line
SUB = "    "  # the indent of a sub-field's line


def no_value(sub: FieldOutcome) -> bool:
    """A sub-field not scored because neither side has a value (null, or not there)."""
    return sub.status == "not scored" and sub.expected is None and sub.actual is None


def fold_line(say: Say, names: list[str]) -> str:
    """`N sub-fields not scored (no value on either side): a, b ... and K more`: as many names
    as fit in the lines the count alone takes (one line on a terminal of 80 columns)."""
    count = len(names)
    head = f"{count} sub-field{'s' if count != 1 else ''} not scored (no value on either side)"
    alone = f"{head}; --all lists them"
    budget = len(say.lines(alone, indent=SUB))
    whole = f"{head}: {', '.join(names)}"
    if len(say.lines(whole, indent=SUB)) <= budget:
        return whole
    best = alone
    for shown_names in range(1, count):  # stops at the first that does not fit: bounded by the width
        text = f"{head}: {', '.join(names[:shown_names])} ... and {count - shown_names} more"
        if len(say.lines(text, indent=SUB)) > budget:
            break
        best = text
    return best


def render_items(console: Any, say: Say, entry: FieldOutcome, full: bool, every: bool = False) -> None:
    """The matrix, the assignment (sub-fields with no value on either side folded unless
    `every`) and the unmatched items of a `match: items` field."""
    alignment = entry.alignment
    expected, actual = entry.expected, entry.actual
    if alignment is None or not isinstance(expected, list):
        return
    key = alignment.key or ["description"]
    say(f"items: paired by {', '.join(key)} (threshold {alignment.threshold}, {alignment.algorithm})")
    answer = actual if isinstance(actual, list) else []
    objects = [j for j, item in enumerate(answer) if isinstance(item, dict)]
    if expected and objects:
        matrix = similarity_matrix(expected, [answer[j] for j in objects], key)
        say("similarity of the keys (rows: expected items, columns: answer items):")
        shown_cols = objects[:MATRIX]
        columns = [Column(""), *(Column(f"[{j}]", justify="right") for j in shown_cols)]
        table = [
            [f"[{i}]", *(f"{value:.2f}" for value in similarities[: len(shown_cols)])]
            for i, similarities in enumerate(matrix[:MATRIX])
        ]
        print_table(console, None, columns, table)
        left = max(len(expected) - MATRIX, 0), max(len(objects) - MATRIX, 0)
        if any(left):
            say(f"({left[0]} expected and {left[1]} answer items not shown)")
    say("assignment:")
    folded = False
    for pair in alignment.pairs:
        label = f"expected[{pair.expected}] ~ answer[{pair.actual}]: "
        say(f"similarity {pair.similarity}, {pair.status}, score {pair.score}", label, PAIR)
        blank: list[str] = []
        for sub in pair.fields:
            if no_value(sub) and not every:
                blank.append(sub.path)
                continue
            line = f"{sub.status}, expected {shown(sub.expected, full)}"
            if sub.status != "hit":
                line += f", got {shown(sub.actual, full) if sub.answered else '(nothing)'}"
            say(line + (f" ({sub.reason})" if sub.reason else ""), f"{sub.path}: ", SUB)
        if blank:
            say(fold_line(say, blank), indent=SUB)
            folded = True
    if folded:
        say("(--all lists the sub-fields with no value on either side one by one)", indent=PAIR)
    for label, ids, items in (("missing", alignment.missing, expected), ("extra", alignment.extra, answer)):
        for i in ids:
            value = items[i] if 0 <= i < len(items) else None
            say(shown(value, full), f"{label} [{i}]: ", PAIR)
    if alignment.truncated:
        say("(the row lists the first pairs only)", indent=PAIR)
