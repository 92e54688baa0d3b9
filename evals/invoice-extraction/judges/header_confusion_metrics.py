# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""Per-field TP/TN/FP/FN for invoice header fields, for dataset-level precision/recall/F1.

Config:
  fields: [invoice_number, invoice_date, currency, supplier.name, ...]   (paths)

Emits details.metrics = {field: {tp, tn, fp, fn, precision, recall, f1}} (null when undefined)
and details.summary (totals, micro P/R/F1, macro-F1). Score = this document's macro-F1 (1.0 when
every field is a true negative). `agentv metrics RESULTS.jsonl` sums details.metrics over a run.
"""

from agentv_py.judge import JudgeInput, JudgeResult, field_counts, judge, macro_f1, total


@judge
def header_confusion_metrics(inp: JudgeInput) -> JudgeResult:
    fields = inp.config.get("fields") or []
    if not fields or not all(isinstance(f, str) for f in fields):
        raise ValueError("config.fields must be a list of field paths")
    per_field = field_counts(inp.expected, inp.candidate, fields)
    hits, misses = [], []
    for path, c in per_field.items():
        if c.fp and c.fn:
            misses.append(f"{path}: wrong value (FP+FN)")
        elif c.fp:
            misses.append(f"{path}: not in the document (FP)")
        elif c.fn:
            misses.append(f"{path}: missing (FN)")
        elif c.tp:
            hits.append(path)
    summed = total(per_field)
    macro = macro_f1(per_field)
    return JudgeResult(
        score=1.0 if macro is None else macro,
        hits=hits,
        misses=misses,
        reasoning=f"{len(hits)} correct, {len(misses)} wrong of {len(fields)} fields",
        details={
            "metrics": {path: c.to_dict() for path, c in per_field.items()},
            "summary": {**summed.to_dict(), "macro_f1": macro},
        },
    )
