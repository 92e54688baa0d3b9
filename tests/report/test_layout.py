"""`report.layout`: a table is boxed when each column gets its minimum width, else a list; text
wraps between words only. Rendered into plain consoles and compared as text."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from agentv_py.report.layout import Column, print_table, table_widths, wrap_words, wrapped_lines

FIELD, TP, REASON = Column("field"), Column("TP", justify="right"), Column("reason", wrap=True)


@pytest.mark.parametrize(
    ("width", "columns", "rows", "widths"),
    [
        (40, [FIELD, TP], [["merchant.name", "4"]], [13, 2]),  # room to spare: each column its widest cell
        (22, [FIELD, TP], [["merchant.name", "4"]], [13, 2]),  # exactly: 13 + 2 + 3 * 2 + 1
        (21, [FIELD, TP], [["merchant.name", "4"]], None),  # one short: a field path is never cut
        (41, [FIELD, REASON], [["a", "date mismatch: got 2025-01-16"]], [5, 29]),  # the header "field" is wider
        (30, [FIELD, REASON], [["a", "date mismatch: got 2025-01-16"]], [5, 18]),  # wraps between words
        (22, [FIELD, REASON], [["a", "date mismatch: got 2025-01-16"]], [5, 10]),  # the longest word: 2025-01-16
        (21, [FIELD, REASON], [["a", "date mismatch: got 2025-01-16"]], None),
        (60, [FIELD, Column("misses", wrap=True, min_width=40)], [["a", "b"]], [5, 40]),  # a wide column's least
        (51, [FIELD, Column("misses", wrap=True, min_width=40)], [["a", "b"]], None),
        (
            40,
            [FIELD, REASON, Column("got", wrap=True)],
            [["a", "one two three four five six", "seven eight nine ten eleven"]],
            [5, 13, 12],  # the widest shrink to one level; the cell left over goes to the first
        ),
    ],
    ids=[
        "spare",
        "exact",
        "one-short",
        "header",
        "wraps",
        "longest-word",
        "word-short",
        "min-width",
        "min-short",
        "level",
    ],
)
def test_table_widths(width, columns, rows, widths):
    assert table_widths(width, columns, rows) == widths


def render(width: int, *args, **kwargs) -> list[str]:
    buffer = io.StringIO()
    print_table(Console(width=width, file=buffer, color_system=None), *args, **kwargs)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


COLUMNS = [Column("field"), Column("status"), Column("score", justify="right"), Column("reason", wrap=True)]
ROWS = [
    ["line_items[*].description", "miss", "0.000", "similarity 0.71 < 0.90"],
    ["invoice_date", "miss", "0.000", "date mismatch: got 2025-01-16, expected 2025-01-15"],
    ["merchant.name", "hit", "1.000", ""],
]


def test_a_table_that_fits_is_boxed_with_its_words_whole():
    assert render(60, "Fields", COLUMNS, ROWS, footer=["total", "", "0.333", ""]) == [
        "Fields",
        "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━┓",
        "┃ field                     ┃ status ┃ score ┃ reason      ┃",
        "┡━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━┩",
        "│ line_items[*].description │ miss   │ 0.000 │ similarity  │",
        "│                           │        │       │ 0.71 < 0.90 │",
        "│ invoice_date              │ miss   │ 0.000 │ date        │",
        "│                           │        │       │ mismatch:   │",
        "│                           │        │       │ got         │",
        "│                           │        │       │ 2025-01-16, │",
        "│                           │        │       │ expected    │",
        "│                           │        │       │ 2025-01-15  │",
        "│ merchant.name             │ hit    │ 1.000 │             │",
        "├───────────────────────────┼────────┼───────┼─────────────┤",
        "│ total                     │        │ 0.333 │             │",
        "└───────────────────────────┴────────┴───────┴─────────────┘",
    ]


def test_a_table_that_does_not_fit_is_a_list():
    assert render(50, "Fields", COLUMNS, ROWS, footer=["total", "", "0.333", ""]) == [
        "Fields",
        "  line_items[*].description",
        "    status miss  score 0.000",
        "    reason: similarity 0.71 < 0.90",
        "  invoice_date",
        "    status miss  score 0.000",
        "    reason: date mismatch: got 2025-01-16,",
        "            expected 2025-01-15",
        "  merchant.name",
        "    status hit  score 1.000",
        "  total",
        "    score 0.333",
    ]


def test_cells_are_text_never_markup():
    rows = [["[bold]x[/bold]", "[red]", "1", "[link=http://x]y[/link]"]]
    for width in (80, 30):
        shown = "\n".join(render(width, "[b]t[/b]", COLUMNS, rows))
        assert "[bold]x[/bold]" in shown and "[red]" in shown and "[link=http://x]y[/link]" in shown
        assert "[b]t[/b]" in shown


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("date mismatch: got 2025-01-16", 14, ["date mismatch:", "got 2025-01-16"]),
        ("a line_items[*].service_date b", 10, ["a", "line_items[*].service_date", "b"]),  # whole, on its own
        ("  indented text", 9, ["  indented", "text"]),
        ("", 10, [""]),
    ],
    ids=["between-words", "long-word-whole", "leading-spaces", "empty"],
)
def test_wrap_words(text, width, lines):
    assert [line.plain for line in wrap_words(Text(text), width)] == lines


SEVEN = "one two three four five six seven"


@pytest.mark.parametrize(
    ("text", "prefix", "hang", "lines"),
    [
        (SEVEN, "got: ", None, ["got: one two three", "     four five six", "     seven"]),  # under the text
        (SEVEN, "  ", "    ", ["  one two three four", "    five six seven"]),  # a hanging indent
        (SEVEN, "  | ", "    ", ["  | one two three", "    four five six", "    seven"]),
        ("a-word-longer-than-the-line two", "  | ", "    ", ["  | a-word-longer-than-the-line", "    two"]),
    ],
    ids=["lined-up", "hanging", "hanging-after-a-label", "long-word-whole-after-its-prefix"],
)
def test_wrapped_lines(text, prefix, hang, lines):
    """20 cells wide: continuation lines start with `hang` (else under the text) and fit beside it."""
    assert [line.plain for line in wrapped_lines(20, Text(text), prefix, hang)] == lines
