"""`match: table`: a field holding a table, scored by TEDS or GriTS (docs/metrics.md#tables).

The field's score is the metric (`metric:` teds, teds_struct, grits_top, grits_con or grits_loc;
default teds), a hit at `threshold` (default 0.9) or above; a miss keeps its score, so a case's
mean over table fields is the dataset's mean TEDS (or GriTS) as papers report it.

- An expected value that is not a readable table (or, for grits_loc, has a cell without a box),
  or that is too large to score, cannot be scored (`bad_expected`): the field is an error.
- An answer that is not a readable table (overlapping cells, not a table at all) or too large
  misses with score 0, the reason saying why.
- A ragged table (positions no cell covers) is scored as the reference implementations score it,
  each hole an empty cell, and the field's `note` says where the holes are: PubTabNet's own
  ground truth has such tables.
"""

from __future__ import annotations

from typing import Any

from agentv_py.models.fields import TABLE_METRICS
from agentv_py.scoring.grits import MAX_WORK, grits
from agentv_py.scoring.match import MatchResult, json_type
from agentv_py.scoring.table_read import Table, TableError, read_table
from agentv_py.scoring.teds import MAX_NODES, teds, tree_size
from agentv_py.scoring.thresholds import at_least

METRICS = TABLE_METRICS
DEFAULT_THRESHOLD = 0.9
_NAMES = {
    "teds": "TEDS",
    "teds_struct": "TEDS-Struct",
    "grits_top": "GriTS-Top",
    "grits_con": "GriTS-Con",
    "grits_loc": "GriTS-Loc",
}


def match_table(
    candidate: Any, expected: Any, metric: str = "teds", threshold: float = DEFAULT_THRESHOLD
) -> MatchResult:
    """`match: table` (see the module)."""
    name = _NAMES[metric]
    try:
        true = read_table(expected)
    except TableError as exc:
        return MatchResult(False, 0.0, f"expected value is not a table: {exc}", bad_expected=True)
    problem = _too_large(true, None, metric) or _missing_boxes(true, metric)
    if problem:
        return MatchResult(False, 0.0, f"expected table {problem}", bad_expected=True)
    if not isinstance(candidate, (str, list)):
        return MatchResult(False, 0.0, f"answer is {json_type(candidate)}, not a table")
    try:
        pred = read_table(candidate)
    except TableError as exc:
        return MatchResult(False, 0.0, f"answer is not a table: {exc}")
    problem = _too_large(pred, true, metric)
    if problem:
        return MatchResult(False, 0.0, f"answer table {problem}")
    value = teds(pred, true, metric == "teds_struct") if metric.startswith("teds") else grits(pred, true, metric[6:]).f1
    info: dict[str, Any] = {"similarity": round(value, 6), "threshold": threshold, "algorithm": metric}
    notes = [note for side, table in (("expected", true), ("answer", pred)) if (note := _ragged(side, table))]
    if notes:
        info["note"] = "; ".join(notes)
    if at_least(value, threshold):
        return MatchResult(True, value, info=info)
    return MatchResult(False, value, f"{name} {value:.3f} < {threshold:.2f}", info)


def _too_large(table: Table, true: Table | None, metric: str) -> str | None:
    if metric.startswith("teds"):
        size = tree_size(table)
        return f"has {size:,} nodes; TEDS scores tables up to {MAX_NODES:,}" if size > MAX_NODES else None
    positions = table.n_rows * table.n_cols
    other = positions if true is None else true.n_rows * true.n_cols
    if positions * other > MAX_WORK:
        return (
            f"covers {positions:,} positions; GriTS scores pairs of tables up to {MAX_WORK:,} "
            "(positions of one x of the other)"
        )
    return None


def _missing_boxes(table: Table, metric: str) -> str | None:
    if metric != "grits_loc":
        return None
    for index, cell in enumerate(table.cells):
        if cell.bbox is None:
            return f"has a cell without a bbox (cell {index + 1}, row {cell.rows[0] + 1}): grits_loc compares boxes"
    return None


def _ragged(side: str, table: Table) -> str | None:
    notes = []
    if table.holes:
        row, col = table.holes[0]
        more = f" and {len(table.holes) - 1} more" if len(table.holes) > 1 else ""
        notes.append(f"{side} table is ragged: no cell at row {row + 1}, column {col + 1}{more} (read as empty)")
    if table.overlaps:
        more = f" and {len(table.overlaps) - 1} more" if len(table.overlaps) > 1 else ""
        notes.append(f"{side} table's cells overlap: {table.overlaps[0]}{more} (the later cell counts)")
    return "; ".join(notes) or None
