# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""Fuzzy-match the whole answer against the reference answer.

Config: threshold (default 0.85), algorithm: levenshtein (default) | jaro_winkler.
Texts are normalised (NFKC, whitespace, case) first; when both sides are JSON they are compared
in a canonical form (sorted keys, no spacing) so layout does not count. Score = the similarity;
passed iff it reaches the threshold.
"""

import json

from agentv_py.judge import JudgeInput, JudgeResult, judge, normalize_text, similarity


def canonical(text: str, value: object) -> str:
    if value is not None and not isinstance(value, str):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return normalize_text(text)


@judge
def fuzzy_match(inp: JudgeInput) -> JudgeResult:
    threshold = float(inp.config.get("threshold", 0.85))
    algorithm = inp.config.get("algorithm", "levenshtein")
    got = canonical(inp.candidate_answer, inp.candidate)
    want = canonical(inp.reference_answer, inp.expected)
    score = similarity(got, want, algorithm)
    passed = score >= threshold
    line = f"answer: {score:.1%} {'>=' if passed else '<'} {threshold:.0%} ({algorithm})"
    return JudgeResult(
        score=score,
        hits=[line] if passed else [],
        misses=[] if passed else [line],
        reasoning=f"whole-answer similarity {score:.3f}",
        details={"similarity": round(score, 4), "threshold": threshold, "algorithm": algorithm},
        passed=passed,
    )
