"""Tables that fit the terminal, or lists when they do not: the one layout rule of every table
agentv prints (the run summary, `explain`, `metrics`, `compare`).

A table is boxed only when each of its columns gets its minimum width: the widest cell of a
column whose cells stay whole (names, field paths, numbers), or the longest word of a column of
text that wraps between words (misses, reasons, values). Otherwise the same rows are a list: each
row's first cell on a line of its own, then its short cells as `header value` items, then each
text on lines of its own. Nothing is ever split inside a word: lines break between words only,
and a word longer than a whole line is printed whole on a line of its own (a terminal wraps it, a
pipe keeps it on one line). Rich's `overflow="fold"`, which cuts words into fragments at any
character, is never used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

Cell: TypeAlias = "str | Text"  # a str is shown as text, never read as Rich markup
_WORD = re.compile(r"\S+")
LIST_INDENT = "  "  # a row's first cell in the list layout; its other cells are indented twice this


@dataclass(frozen=True)
class Column:
    """A table column. `wrap`: its cells are text that may break between words (in the list
    layout, each on lines of its own); else each cell stays whole on one line. `min_width`: the
    least room a wrapping column is worth a table for (below it, the list layout)."""

    header: str
    justify: Literal["left", "right"] = "left"
    wrap: bool = False
    min_width: int = 0


def _text(cell: Cell) -> Text:
    from rich.text import Text

    return cell if isinstance(cell, Text) else Text(cell)


def _cells(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def _longest_word(text: str) -> int:
    return max((_cells(word) for word in text.split()), default=0)


def _widest_line(text: str) -> int:
    return max((_cells(line) for line in text.splitlines()), default=0)


def table_widths(width: int, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> list[int] | None:
    """The content width of each column of a boxed table `width` cells wide (Rich's default box:
    one rule between columns and at each edge, one space of padding each side), or None when a
    column cannot get its minimum. Columns get their widest cell where there is room; wrapping
    columns give up room widest first, never below their minimum."""
    plain = [[_text(cell).plain for cell in row] for row in rows]
    lows: list[int] = []
    highs: list[int] = []
    for index, column in enumerate(columns):
        texts = [column.header, *(row[index] for row in plain)]
        high = max(1, *(_widest_line(text) for text in texts))
        low = max(column.min_width, *(_longest_word(text) for text in texts)) if column.wrap else high
        lows.append(low)
        highs.append(max(high, low))
    room = width - (3 * len(columns) + 1)
    if sum(lows) > room:
        return None
    if sum(highs) <= room:
        return highs
    # The widest wrapping columns shrink to a common level, the highest that fits; what is left
    # over goes back one cell at a time, left to right, to the columns cut to that level.
    level = max(highs)
    while sum(max(low, min(high, level)) for low, high in zip(lows, highs, strict=True)) > room:
        level -= 1
    widths = [max(low, min(high, level)) for low, high in zip(lows, highs, strict=True)]
    spare = room - sum(widths)
    for index, high in enumerate(highs):
        if spare and widths[index] == level < high:
            widths[index] += 1
            spare -= 1
    return widths


def print_boxed(
    console: Console,
    title: Cell | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    widths: Sequence[int],
    footer: Sequence[Cell] | None = None,
) -> None:
    """A boxed Rich table with the given content widths (`table_widths`); `footer` is a last row
    in bold below a rule (a total)."""
    from rich.table import Table

    if title is not None:
        print_wrapped(console, _text(title).copy(), style="table.title")
    table = Table(expand=False)
    for column, width in zip(columns, widths, strict=True):
        table.add_column(column.header, justify=column.justify, width=width, no_wrap=not column.wrap)
    for row in rows:
        table.add_row(*(_text(cell) for cell in row))
    if footer is not None:
        table.add_section()
        table.add_row(*(_text(cell) for cell in footer), style="bold")
    console.print(table)


def print_listed(
    console: Console,
    title: Cell | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    footer: Sequence[Cell] | None = None,
) -> None:
    """The list layout of a table: per row, its first cell on a line of its own; then its short
    cells as `header value` items, as many to a line as fit; then each text cell as
    `header: text`, wrapped between words under its start. Empty cells are left out."""
    from rich.text import Text

    if title is not None:
        print_wrapped(console, _text(title).copy(), style="table.title")
    indent = LIST_INDENT * 2
    listed = [(row, "") for row in rows] + ([(footer, "bold")] if footer is not None else [])
    for row, style in listed:
        print_wrapped(console, _text(row[0]).copy(), LIST_INDENT, style=style or None)
        items = [
            Text(f"{column.header} ") + _text(cell) if column.header else _text(cell)
            for column, cell in zip(columns[1:], row[1:], strict=True)
            if not column.wrap and _text(cell).plain
        ]
        if items:
            print_items(console, Text(indent), items, indent=len(indent))
        for column, cell in zip(columns[1:], row[1:], strict=True):
            if column.wrap and _text(cell).plain:
                print_wrapped(console, _text(cell).copy(), f"{indent}{column.header}: ")


def print_table(
    console: Console,
    title: Cell | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    footer: Sequence[Cell] | None = None,
) -> None:
    """`rows` as a boxed table when it fits the console's width, else as a list (`print_listed`)."""
    widths = table_widths(console.width, columns, [*rows, *([footer] if footer is not None else [])])
    if widths is None:
        print_listed(console, title, columns, rows, footer)
    else:
        print_boxed(console, title, columns, rows, widths, footer)


def wrap_words(text: Text, width: int, first: int | None = None) -> list[Text]:
    """`text` in lines of at most `width` cells (the first line: `first`, when given), broken
    between words only: a word wider than its line is a line of its own, whole. The spaces a line
    was broken at are dropped."""
    plain = text.plain
    breaks: list[int] = []
    used = previous_end = 0  # cells on the line so far; where its last word ends
    limit = width if first is None else first
    for match in _WORD.finditer(plain):
        start, end = match.span()
        gap, word = _cells(plain[previous_end:start]), _cells(plain[start:end])
        if previous_end and used + gap + word > limit:  # a line after its first word
            breaks.append(start)
            used, limit = word, width
        else:
            used += gap + word
        previous_end = end
    lines = list(text.divide(breaks)) if breaks else [text]
    for line in lines:
        line.rstrip()
    return lines


def wrapped_lines(width: int, text: Text, prefix: str = "", hang: str | None = None) -> list[Text]:
    """`prefix` then `text`, in lines of at most `width` cells broken between words only
    (`wrap_words`); continuation lines start with `hang`, by default as many spaces as `prefix`
    is wide (they line up with the text's start)."""
    from rich.text import Text

    indent = " " * _cells(prefix) if hang is None else hang
    lines = wrap_words(text, max(width - _cells(indent), 10), first=max(width - _cells(prefix), 10))
    return [Text(prefix if index == 0 else indent) + line for index, line in enumerate(lines)]


def print_wrapped(
    console: Console, text: Text, prefix: str = "", style: str | None = None, hang: str | None = None
) -> None:
    """`prefix` then `text`, wrapped between words to the console's width (`wrapped_lines`: no
    word is ever split), continuation lines after `hang`, else lined up with the text's start."""
    if style:
        text.stylize(style)
    for line in wrapped_lines(console.width, text, prefix, hang):
        console.print(line, soft_wrap=True)


def print_items(console: Console, label: Text, items: Sequence[Text], indent: int | None = None) -> None:
    """`label item  item  item`, wrapped between items (never inside one) to the console's width;
    continuation lines start under the first item (or at `indent`). An item longer than a line
    is a line of its own, whole."""
    from rich.text import Text

    if indent is None:
        indent = label.cell_len if label.cell_len <= console.width // 3 else 2
    line = label.copy()
    empty = True
    for item in items:
        if not empty and line.cell_len + 2 + item.cell_len > console.width:
            console.print(line, soft_wrap=True)
            line, empty = Text(" " * indent), True
        if not empty:
            line.append("  ")
        line.append_text(item)
        empty = False
    console.print(line, soft_wrap=True)
