# /// script
# requires-python = ">=3.11"
# dependencies = ["scipy>=1.10"]
# ///
"""Line items compared order-insensitively: align, then count TP/TN/FP/FN per item field.

Config (all optional):
  match_fields:    [description]                        fields that decide which items pair up
  score_fields:    [description, quantity, line_total]  fields counted once items are paired
  threshold:       0.8                                  minimum item similarity for a pair
  line_items_path: line_items                           where the list sits in answer and truth
  assignment:      greedy | optimal                     best-first, or maximum total similarity (scipy)

Unmatched expected items count FN and unmatched answer items FP for each non-empty scored field.
Emits details.metrics (keys `line_items[].<field>`), details.alignment (pairs with similarity, at
most 100 listed) and the unmatched indices. Score = macro-F1 over the scored fields.
"""

from agentv_py.judge import JudgeInput, JudgeResult, align_items, judge, line_item_counts, macro_f1, total


@judge
def line_item_matching(inp: JudgeInput) -> JudgeResult:
    cfg = inp.config
    path = cfg.get("line_items_path", "line_items")
    match_fields = cfg.get("match_fields", ["description"])
    score_fields = cfg.get("score_fields", ["description", "quantity", "line_total"])
    threshold = float(cfg.get("threshold", 0.8))
    assignment = cfg.get("assignment", "greedy")
    if assignment not in ("greedy", "optimal"):
        raise ValueError(f"config.assignment must be greedy or optimal, got {assignment!r}")
    expected = inp.get_expected(path, [])
    parsed = inp.get(path, [])
    if not isinstance(expected, list) or not isinstance(parsed, list):
        raise ValueError(f"{path} must be a list on both sides")
    alignment = align_items(expected, parsed, match_fields, threshold, assignment)
    per_field = line_item_counts(expected, parsed, alignment, score_fields)
    metrics = {f"{path}[].{field}": counts.to_dict() for field, counts in per_field.items()}
    macro = macro_f1(per_field)
    misses = [f"expected item {i} not found" for i in alignment.unmatched_expected]
    misses += [f"extra item {j} in the answer" for j in alignment.unmatched_parsed]
    misses += [f"{path}[].{f}: {c.fp} FP, {c.fn} FN" for f, c in per_field.items() if c.fp or c.fn]
    return JudgeResult(
        score=1.0 if macro is None else macro,
        hits=[f"{path}[].{f}" for f, c in per_field.items() if c.tp and not (c.fp or c.fn)],
        misses=misses,
        reasoning=(
            f"{len(alignment.pairs)} of {len(expected)} expected items matched ({assignment}), "
            f"{len(alignment.unmatched_parsed)} extra"
        ),
        details={
            "metrics": metrics,
            "summary": {**total(per_field).to_dict(), "macro_f1": macro},
            "alignment": alignment.to_dict(),
            "unmatched_expected": alignment.unmatched_expected,
            "unmatched_parsed": alignment.unmatched_parsed,
        },
    )
