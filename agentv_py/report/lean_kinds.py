"""The failure taxonomy of a lean row (report/lean_rows.py) for `agentv metrics --taxonomy`: the
same kinds `scoring.taxonomy.row_taxonomy` finds in the row model, read from the row's dicts (an
entry with an error read by the model)."""

from __future__ import annotations

from typing import Any

from agentv_py.models.field_results import read_field
from agentv_py.report.lean_rows import _SCORED, LeanRow, _empty, _walk, lean_fields
from agentv_py.scoring.metrics import FieldKey
from agentv_py.scoring.taxonomy import add_kinds, classify_entry, row_taxonomy


def _needs_kind(entry: dict[str, Any]) -> bool:
    """Could `classify_entry` find an error in this plain field (a miss, or one side empty)?"""
    status = entry["status"]
    if status == "miss":
        return True
    return status in _SCORED and _empty(entry.get("expected")) != _empty(entry.get("actual"))


def row_kinds(row: LeanRow) -> dict[FieldKey, dict[str, int]]:
    """`scoring.taxonomy.row_taxonomy` of the row (an entry with an error read by the model)."""
    if row.model is not None:
        return row_taxonomy(row.model.evaluator_results)
    out: dict[FieldKey, dict[str, int]] = {}
    for name, kind, details in _walk(row.results, True):
        if kind != "field_accuracy":
            continue
        for entry in lean_fields(details):
            model = entry if not isinstance(entry, dict) else read_field(entry) if _needs_kind(entry) else None
            if model is not None and (found := classify_entry(model)):
                add_kinds(out.setdefault((name, model.path), {}), found)
    return out
