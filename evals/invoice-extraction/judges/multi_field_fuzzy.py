# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""Fuzzy-match several fields of the answer against the ground truth, each with its threshold.

Config (the evaluator's extra keys):
  fields:    [{path: supplier.name, threshold: 0.85}, ...]   (threshold defaults to 0.85)
  algorithm: levenshtein (default) | jaro_winkler

Score = fields that passed / fields configured. Hits and misses show each similarity as a
percentage against its threshold; details.fields has the numbers.
"""

from agentv_py.judge import JudgeInput, JudgeResult, judge, normalize_text, similarity


@judge
def multi_field_fuzzy(inp: JudgeInput) -> JudgeResult:
    fields = inp.config.get("fields") or []
    algorithm = inp.config.get("algorithm", "levenshtein")
    if not fields:
        raise ValueError("config.fields must list at least one {path, threshold}")
    if algorithm not in ("levenshtein", "jaro_winkler"):
        raise ValueError(f"config.algorithm must be levenshtein or jaro_winkler, got {algorithm!r}")
    hits, misses, details = [], [], []
    for spec in fields:
        path, threshold = spec["path"], float(spec.get("threshold", 0.85))
        got, want = inp.get(path), inp.get_expected(path)
        if not isinstance(want, str):
            misses.append(f"{path}: no expected text")
            details.append({"path": path, "threshold": threshold, "passed": False, "reason": "no expected text"})
            continue
        if not isinstance(got, str):
            misses.append(f"{path}: missing in the answer")
            details.append({"path": path, "threshold": threshold, "passed": False, "reason": "missing"})
            continue
        score = similarity(normalize_text(got), normalize_text(want), algorithm)
        passed = score >= threshold
        line = f"{path}: {score:.1%} {'>=' if passed else '<'} {threshold:.0%}"
        (hits if passed else misses).append(line)
        details.append(
            {
                "path": path,
                "similarity": round(score, 4),
                "threshold": threshold,
                "passed": passed,
                "actual": got,
                "expected": want,
            }
        )
    score = len(hits) / len(fields)
    return JudgeResult(
        score=score,
        hits=hits,
        misses=misses,
        reasoning=f"{len(hits)}/{len(fields)} fields within their fuzzy threshold ({algorithm})",
        details={"algorithm": algorithm, "fields": details},
        passed=not misses,
    )
