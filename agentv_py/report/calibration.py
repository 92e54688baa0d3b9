"""`agentv metrics --calibration` (docs/metrics.md#calibration): per field, how well the
extractor's own confidence (`field_accuracy`'s `confidence:` option records it on each field)
predicts a hit — ECE, AUROC and the coverage at a target precision (`scoring.calibration`)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from agentv_py.report.lean_rows import LeanRow, _walk, lean_fields
from agentv_py.report.text import visible
from agentv_py.scoring.calibration import BINS, Coverage, auroc, coverage_at, ece
from agentv_py.scoring.metrics import FieldKey, field_labels, walk_fields


def field_confidences(row: LeanRow) -> list[tuple[FieldKey, float, bool]]:
    """(evaluator, field), confidence, hit of each scored field of the row that has a confidence."""
    found: list[tuple[FieldKey, float, bool]] = []
    if row.model is not None:
        for name, outcome in walk_fields(row.model.evaluator_results):
            if outcome.confidence is not None and outcome.status in ("hit", "miss"):
                found.append(((name, outcome.path), outcome.confidence, outcome.status == "hit"))
        return found
    for name, kind, details in _walk(row.results, True):
        if kind != "field_accuracy":
            continue
        for entry in lean_fields(details):
            status = entry["status"] if isinstance(entry, dict) else entry.status
            confidence = entry.get("confidence") if isinstance(entry, dict) else entry.confidence
            path = entry["path"] if isinstance(entry, dict) else entry.path
            if isinstance(confidence, (int, float)) and status in ("hit", "miss"):
                found.append(((name, path), float(confidence), status == "hit"))
    return found


@dataclass
class Calibration:
    """Confidences and hits per (evaluator, field), 9 bytes an observation."""

    precision: float = 0.95
    seen: dict[FieldKey, tuple[array[float], bytearray]] = field(default_factory=dict)

    def add(self, row: LeanRow) -> None:
        for key, confidence, hit in field_confidences(row):
            cells = self.seen.get(key)
            if cells is None:
                cells = self.seen[key] = (array("d"), bytearray())
            cells[0].append(confidence)
            cells[1].append(hit)

    def fields(self) -> dict[str, dict[str, Any]]:
        """Per field (named as `metrics` names it): observations, accuracy, mean confidence, ECE,
        AUROC and the coverage at `precision`."""
        labels = field_labels(self.seen)
        out = {}
        for key, (confidences, hits) in sorted(self.seen.items(), key=lambda item: labels[item[0]]):
            flags = [bool(h) for h in hits]
            covered: Coverage = coverage_at(confidences, flags, self.precision)
            out[labels[key]] = {
                "observations": len(flags),
                "accuracy": sum(flags) / len(flags),
                "mean_confidence": sum(confidences) / len(confidences),
                "ece": ece(confidences, flags),
                "auroc": auroc(confidences, flags),
                "coverage": covered.to_json(),
            }
        return out


def render(console: Any, calibration: Calibration) -> None:
    from rich.text import Text

    from agentv_py.report.layout import Column, print_table

    found = calibration.fields()
    if not found:
        console.print(Text("Calibration: no field carries a confidence (field_accuracy's confidence: option)"))
        return
    p = calibration.precision

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    columns = [Column("field"), *(Column(n, justify="right") for n in ("n", "accuracy", "confidence", "ECE", "AUROC"))]
    columns += [Column(f"coverage at {p:g}", justify="right"), Column("threshold", justify="right")]
    rows: list[list[Text | str]] = [
        [
            Text(visible(name)),
            str(f["observations"]),
            number(f["accuracy"]),
            number(f["mean_confidence"]),
            number(f["ece"]),
            number(f["auroc"]),
            number(f["coverage"]["coverage"]),
            number(f["coverage"]["threshold"]),
        ]
        for name, f in found.items()
    ]
    print_table(console, f"Calibration of the extractor's confidence ({BINS} bins for ECE)", columns, rows)
