# /// script
# requires-python = ">=3.11"
# dependencies = []
# ///
"""OCR: how closely the answer reproduces the expected text, and whether its keywords are there.

score = 0.7 x similarity (normalised Levenshtein on NFKC, case- and space-folded text)
      + 0.3 x fraction of keywords present (config `keywords`, else the expected text's words of
        3+ characters and every word with a digit).
An exact transcription ("Project Proposal Q1 2026") scores 1.0. Config: keywords, threshold (0.9).
"""

import re

from agentv_py.judge import JudgeInput, JudgeResult, judge, normalize_text, similarity

SIMILARITY_WEIGHT, KEYWORD_WEIGHT = 0.7, 0.3


def default_keywords(text: str) -> list[str]:
    words = re.findall(r"[\w$%.,-]+", text)
    seen, keywords = set(), []
    for word in (w.strip(".,") for w in words):
        if (len(word) >= 3 or any(c.isdigit() for c in word)) and word.lower() not in seen:
            seen.add(word.lower())
            keywords.append(word)
    return keywords


@judge
def ocr_validator(inp: JudgeInput) -> JudgeResult:
    expected, answer = inp.reference_answer, inp.candidate_answer
    if not expected.strip():
        return JudgeResult(score=0.0, status="skipped", reasoning="no expected text")
    keywords = inp.config.get("keywords") or default_keywords(expected)
    folded = normalize_text(answer)
    present = [k for k in keywords if normalize_text(k) in folded]
    missing = [k for k in keywords if k not in present]
    text_similarity = similarity(normalize_text(answer), normalize_text(expected))
    keyword_share = len(present) / len(keywords) if keywords else 1.0
    score = SIMILARITY_WEIGHT * text_similarity + KEYWORD_WEIGHT * keyword_share
    threshold = float(inp.config.get("threshold", 0.9))
    return JudgeResult(
        score=round(score, 6),
        hits=[f"keyword '{k}'" for k in present],
        misses=[f"keyword '{k}' missing" for k in missing],
        passed=score >= threshold,
        reasoning=f"text similarity {text_similarity:.3f}, keywords {len(present)}/{len(keywords)}",
        details={
            "similarity": round(text_similarity, 4),
            "keywords_found": present,
            "keywords_missing": missing,
            "threshold": threshold,
        },
    )
