"""Text for a terminal, with nothing heavy imported: `visible` (the one rule for showing data) and
`plural`. Commands that print only these (`agentv validate`) import this module, not the
renderer; `report.render` and `report.summary` re-export them where they have always been."""

from __future__ import annotations

import unicodedata

# Characters a terminal acts on rather than shows: bidi embeddings, overrides and isolates, and
# the line and paragraph separators (every other one is a control character: category Cc).
_INVISIBLE = frozenset("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def visible(text: str) -> str:
    """`text` safe to show on a terminal: every control character (C0, DEL and C1: ESC, CR, BS,
    NUL, newline, tab, ...) and every bidi or line-separator format character is written as its
    Python escape (`\\x1b`, `\\n`, `\\x9b`, `\\u202e`), so it is seen, never obeyed. Everything
    else, backslashes and Rich markup included, is kept as it is; callers print the result as
    plain text (`rich.text.Text`, `markup=False`), never as markup. The one rule for data
    (case ids, misses, errors, judge text, file names) shown on a terminal."""
    if text.isprintable():
        return text
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if ch in _INVISIBLE or unicodedata.category(ch) == "Cc" else ch
        for ch in text
    )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
