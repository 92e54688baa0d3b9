"""A field's table, whatever its form, as one model (`match: table`; docs/metrics.md#tables).

Three forms are read:
- **HTML**: a text holding a `<table>` (the first one counts; `scoring.table_html` reads it);
- **rows**: a list of rows, each a list of cells; a cell is a scalar (its text) or an object
  `{text, colspan, rowspan, bbox, header}`; spanning cells take their place as HTML places them;
- **cells**: a list of cell objects placed explicitly: `{row, col, rowspan, colspan, text, bbox,
  header}`, or PubTables-1M's `{row_nums, column_nums, cell_text, bbox, is_column_header}`.

Each becomes a `Table`: its cells on a grid (rows x columns, a spanning cell on every position it
covers), and the tree TEDS compares (`table > thead/tbody > tr > td`, HTML's own tree for HTML).
A table whose cells overlap, that covers more than MAX_GRID positions, or whose values are not
what a cell holds, is refused with a `TableError` saying where; holes (a ragged row) are kept as
`Table.holes`, for the caller to judge (bad ground truth, a poor answer).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from agentv_py.scoring.table_html import (
    Element,
    TableMarkupError,
    cell_tokens,
    count_elements,
    first_table,
    in_header,
    rows_of,
)

MAX_COLSPAN = 1000  # HTML's own limits on spans
MAX_ROWSPAN = 65534
MAX_GRID = 10_000  # positions (rows x columns) a table may cover
_LEADING_INTEGER = re.compile(r"[\t\n\f\r ]*\+?([0-9]+)")
_ROW_CELL_KEYS = ("text", "colspan", "rowspan", "bbox", "header")
_CELL_KEYS = ("row", "col", *_ROW_CELL_KEYS)
_PUBTABLES_KEYS = ("row_nums", "column_nums", "cell_text", "bbox", "is_column_header", "is_row_header")


class TableError(ValueError):
    """A value that is not a table this matcher can read; the message says where and why."""


@dataclass(frozen=True, slots=True)
class Cell:
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    text: str  # GriTS's cell text (an HTML cell's texts joined by spaces)
    tokens: tuple[str, ...]  # TEDS's cell content
    bbox: tuple[float, float, float, float] | None = None
    header: bool = False


@dataclass(frozen=True, slots=True)
class Node:
    """A node of the tree TEDS compares: a tag, a cell's spans and content (None elsewhere)."""

    tag: str
    colspan: int | None = None
    rowspan: int | None = None
    content: tuple[str, ...] | None = None
    children: tuple[Node, ...] = ()


@dataclass(frozen=True, slots=True)
class Table:
    cells: tuple[Cell, ...]
    n_rows: int
    n_cols: int
    tree: Node
    counted: int  # TEDS's node count: elements under the table (PubTabNet's denominator)
    holes: tuple[tuple[int, int], ...]  # (row, column) positions no cell covers
    overlaps: tuple[str, ...] = ()  # HTML only: cells over positions an earlier cell covers

    def grid(self, key: str, hole: Any) -> list[list[Any]]:
        """Each position's value of `key` (`text`, `bbox`) or, for `top`, its relative span
        (GriTS: [min col - j, min row - i, max col + 1 - j, max row + 1 - i])."""
        grid = [[hole for _ in range(self.n_cols)] for _ in range(self.n_rows)]
        for cell in self.cells:
            for i in cell.rows:
                for j in cell.cols:
                    if key == "top":
                        grid[i][j] = (cell.cols[0] - j, cell.rows[0] - i, cell.cols[-1] + 1 - j, cell.rows[-1] + 1 - i)
                    else:
                        grid[i][j] = getattr(cell, key)
        return grid


def read_table(value: Any) -> Table:
    """The table a field holds (see the module); raises TableError."""
    if isinstance(value, str):
        return _from_html(value)
    if isinstance(value, list):
        if not value:
            return _build([])
        if all(isinstance(row, list) for row in value):
            return _from_rows(value)
        if all(isinstance(cell, dict) for cell in value):
            return _from_cells(value)
        raise TableError("a table is a list of rows (lists) or of cells (objects), not a mix")
    raise TableError(f"a table is HTML text, a list of rows or a list of cells, not {_kind(value)}")


def _from_html(markup: str) -> Table:
    try:
        table = first_table(markup)
    except TableMarkupError as exc:
        raise TableError(f"HTML refused: {exc}") from None
    if table is None:
        raise TableError("no <table> in the text")
    heads = in_header(table)
    grid = _Placer(tolerant=True)  # as browsers and both references do: a later cell takes the position
    leaves: dict[int, Node] = {}  # each cell's leaf of TEDS's tree, by element
    cells: list[Cell] = []
    for index, row in enumerate(rows_of(table)):
        for position, element in enumerate(row):
            colspan = _html_span(element.attrs.get("colspan"), MAX_COLSPAN)
            rowspan = _html_span(element.attrs.get("rowspan"), MAX_ROWSPAN)
            rows, cols = grid.place_next(index, colspan, rowspan, f"row {index + 1}, cell {position + 1}")
            tokens = cell_tokens(element)
            leaves[id(element)] = Node("td", colspan, rowspan, tokens)
            cells.append(Cell(rows, cols, " ".join(element.texts()), tokens, None, id(element) in heads))
    return _finish(tuple(cells), _html_tree(table, leaves), count_elements(table), grid)


def _html_tree(table: Element, leaves: dict[int, Node]) -> Node:
    """PubTabNet's tree: every element under the table; a cell (`td`, `th` read as `td`) is a
    leaf with its spans and content tokens (`leaves`, by element; 1 x 1 for one outside a row)."""

    def node(element: Element) -> Node:
        if element.tag in ("td", "th"):
            return leaves.get(id(element)) or Node("td", 1, 1, cell_tokens(element))
        return Node(element.tag, children=tuple(node(child) for child in element.elements()))

    return node(table)  # depth is bounded by the reader (table_html.MAX_DEPTH)


def _html_span(value: str | None, maximum: int) -> int:
    """A span attribute as a browser reads it: its leading integer; missing, invalid or 0 is 1."""
    match = _LEADING_INTEGER.match(value or "")
    span = int(match.group(1)) if match else 1
    return min(max(span, 1), maximum)


def _from_rows(rows: list[list[Any]]) -> Table:
    grid = _Placer()
    cells: list[Cell] = []
    for index, row in enumerate(rows):
        for position, raw in enumerate(row):
            where = f"row {index + 1}, cell {position + 1}"
            fields = _fields(raw, _ROW_CELL_KEYS, where) if isinstance(raw, dict) else {"text": raw}
            colspan = _span(fields.get("colspan"), MAX_COLSPAN, where, "colspan")
            rowspan = _span(fields.get("rowspan"), MAX_ROWSPAN, where, "rowspan")
            rows_, cols = grid.place_next(index, colspan, rowspan, where)
            cells.append(_cell(rows_, cols, fields, where))
    return _build(cells, grid)


def _from_cells(objects: list[dict[str, Any]]) -> Table:
    grid = _Placer()
    cells: list[Cell] = []
    for index, raw in enumerate(objects):
        where = f"cell {index + 1}"
        if "row_nums" in raw or "column_nums" in raw:
            fields = _fields(raw, _PUBTABLES_KEYS, where)
            rows = _index_run(fields.get("row_nums"), where, "row_nums")
            cols = _index_run(fields.get("column_nums"), where, "column_nums")
            fields = {
                "text": fields.get("cell_text", ""),
                "bbox": fields.get("bbox"),
                "header": fields.get("is_column_header", False),
            }
        else:
            fields = _fields(raw, _CELL_KEYS, where)
            row, col = _index(fields.get("row"), where, "row"), _index(fields.get("col"), where, "col")
            rowspan = _span(fields.get("rowspan"), MAX_ROWSPAN, where, "rowspan")
            colspan = _span(fields.get("colspan"), MAX_COLSPAN, where, "colspan")
            rows, cols = tuple(range(row, row + rowspan)), tuple(range(col, col + colspan))
        grid.claim(rows, cols, where)
        cells.append(_cell(rows, cols, fields, where))
    cells.sort(key=lambda cell: (cell.rows[0], cell.cols[0]))
    return _build(cells, grid)


class _Placer:
    """Positions taken so far; refuses tables over MAX_GRID positions, and overlapping cells
    unless `tolerant` (then each overlap is recorded)."""

    def __init__(self, tolerant: bool = False) -> None:
        self.tolerant = tolerant
        self.overlaps: list[str] = []
        self.taken: dict[tuple[int, int], str] = {}
        self.rows_seen = 0
        self.cols_seen = 0

    def place_next(self, row: int, colspan: int, rowspan: int, where: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        col = 0
        while (row, col) in self.taken:
            col += 1
        rows, cols = tuple(range(row, row + rowspan)), tuple(range(col, col + colspan))
        self.claim(rows, cols, where)
        return rows, cols

    def claim(self, rows: tuple[int, ...], cols: tuple[int, ...], where: str) -> None:
        n_rows, n_cols = max(self.rows_seen, rows[-1] + 1), max(self.cols_seen, cols[-1] + 1)
        if n_rows * n_cols > MAX_GRID:
            raise TableError(
                f"{where} makes the table {n_rows:,} rows x {n_cols:,} columns; "
                f"tables up to {MAX_GRID:,} positions are scored"
            )
        for i in rows:
            for j in cols:
                other = self.taken.get((i, j))
                if other is not None and self.tolerant:
                    self.overlaps.append(f"{where} overlaps {other} at row {i + 1}, column {j + 1}")
                elif other is not None:
                    raise TableError(f"{where} overlaps {other} at row {i + 1}, column {j + 1}")
        for i in rows:
            for j in cols:
                self.taken[(i, j)] = where
        self.rows_seen, self.cols_seen = n_rows, n_cols


def _finish(cells: tuple[Cell, ...], tree: Node, counted: int, grid: _Placer) -> Table:
    n_rows, n_cols = grid.rows_seen, grid.cols_seen
    holes = tuple((i, j) for i in range(n_rows) for j in range(n_cols) if (i, j) not in grid.taken)
    return Table(cells, n_rows, n_cols, tree, counted, holes, tuple(grid.overlaps))


def _build(cells: list[Cell], grid: _Placer | None = None) -> Table:
    """A table from rows or cells: TEDS's tree is `table > thead (rows all headers) / tbody > tr >
    td`, each row a `tr` holding the cells that start in it."""
    grid = grid or _Placer()
    starting: dict[int, list[Cell]] = {}
    for cell in cells:
        starting.setdefault(cell.rows[0], []).append(cell)
    head: list[Node] = []
    body: list[Node] = []
    for i in range(grid.rows_seen):
        row = starting.get(i, [])
        tds = tuple(Node("td", len(c.cols), len(c.rows), c.tokens) for c in row)
        (head if row and all(c.header for c in row) and not body else body).append(Node("tr", children=tds))
    sections = tuple(Node(tag, children=tuple(rows)) for tag, rows in (("thead", head), ("tbody", body)) if rows)
    tree = Node("table", children=sections)
    counted = len(sections) + grid.rows_seen + len(cells)
    return _finish(tuple(cells), tree, counted, grid)


def _fields(raw: dict[str, Any], valid: tuple[str, ...], where: str) -> dict[str, Any]:
    unknown = [key for key in raw if key not in valid]
    if unknown:
        raise TableError(f"{where}: unknown key {unknown[0]!r} (valid: {', '.join(valid)})")
    return raw


def _cell(rows: tuple[int, ...], cols: tuple[int, ...], fields: dict[str, Any], where: str) -> Cell:
    text = _text(fields.get("text"), where)
    header = fields.get("header", False)
    if not isinstance(header, bool):
        raise TableError(f"{where}: header is {_kind(header)}, not true or false")
    return Cell(rows, cols, text, tuple(text), _bbox(fields.get("bbox"), where), header)


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    raise TableError(f"{where}: a cell's text is a scalar, not {_kind(value)}")


def _bbox(value: Any, where: str) -> tuple[float, float, float, float] | None:
    if value is None:
        return None
    if (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        and value[0] <= value[2]
        and value[1] <= value[3]
    ):
        return (float(value[0]), float(value[1]), float(value[2]), float(value[3]))
    raise TableError(f"{where}: bbox is [x0, y0, x1, y1] with x0 <= x1 and y0 <= y1, got {_short(value)}")


def _span(value: Any, maximum: int, where: str, name: str) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise TableError(f"{where}: {name} is a whole number from 1 to {maximum:,}, got {_short(value)}")
    return value


def _index(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_GRID:
        raise TableError(f"{where}: {name} is a whole number from 0 (the first), got {_short(value)}")
    return value


def _index_run(value: Any, where: str, name: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise TableError(f"{where}: {name} is a list of consecutive indices, got {_short(value)}")
    indices = tuple(_index(v, where, name) for v in value)
    if list(indices) != list(range(indices[0], indices[0] + len(indices))):
        raise TableError(f"{where}: {name} is a list of consecutive indices, got {_short(value)}")
    return indices


def _kind(value: Any) -> str:
    from agentv_py.scoring.match import json_type

    return json_type(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
