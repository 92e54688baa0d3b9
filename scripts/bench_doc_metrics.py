#!/usr/bin/env python3
"""Document-AI metrics benchmark (issue 31): the cost of each new metric on N documents (default
10,000), in this process: ANLS* on nested answers (a receipt of a dozen header fields and 10 line
items of 4 fields each, with typos, dropped and invented keys), `match: anls` and `match: cer` /
`wer` on field texts; TEDS, TEDS-Struct, GriTS-Con and GriTS-Top on 50-cell tables (10 rows of 5,
a header row; answers with typos, a dropped cell, a merged cell), TEDS again on the same pairs (what
a `--repeat` run or a rescore in one process pays); COCO AP on pages of 100 labelled boxes (the
`iou_score` evaluator per page, then `agentv metrics`' tally over all pages). Prints the
calibration line, then per metric the wall time, the time per document and the peak traced memory
(tracemalloc) of the scoring alone.

Usage: python scripts/bench_doc_metrics.py [--documents 10000] [--only anls|tables|ap]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import print_calibration

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import IouScoreConfig
from agentv_py.report.detection import DetectionTally
from agentv_py.report.lean_rows import LeanRow
from agentv_py.scoring.anls import anls_star, match_anls
from agentv_py.scoring.error_rates import match_error_rate
from agentv_py.scoring.tables import match_table

WORDS = ["acme", "shipping", "ltd", "invoice", "total", "tea", "coffee", "12.50", "EUR", "2025-01-31", "box", "fee"]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _typo(text: str, rng: random.Random) -> str:
    if not text or rng.random() < 0.6:
        return text
    i = rng.randrange(len(text))
    return text[:i] + rng.choice("xyz") + text[i + 1 :]


def document(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    truth: dict[str, Any] = {f"h{i}": _text(rng, rng.randint(1, 4)) for i in range(12)}
    truth["items"] = [{k: _text(rng, 2) for k in ("description", "quantity", "price", "amount")} for _ in range(10)]
    answer: dict[str, Any] = {k: _typo(v, rng) for k, v in truth.items() if k != "items" and rng.random() > 0.05}
    answer["items"] = [{k: _typo(v, rng) for k, v in item.items()} for item in truth["items"] if rng.random() > 0.1]
    rng.shuffle(answer["items"])
    if rng.random() < 0.3:
        answer["invented"] = _text(rng, 2)
    return truth, answer


def table(rng: random.Random) -> tuple[list[list[Any]], list[list[Any]]]:
    """A 50-cell table (rows of cells) and an extractor's reading of it."""
    truth: list[list[Any]] = [[{"text": f"col {j}", "header": True} for j in range(5)]]
    truth += [[_text(rng, rng.randint(1, 3)) for _ in range(5)] for _ in range(9)]
    answer = [[cell if isinstance(cell, dict) else _typo(cell, rng) for cell in row] for row in truth]
    if rng.random() < 0.1:
        del answer[rng.randrange(1, 10)][rng.randrange(5)]  # a dropped cell
    if rng.random() < 0.1:
        row = answer[rng.randrange(1, 10)]
        if len(row) == 5:
            row[3:5] = [{"text": f"{row[3]} {row[4]}", "colspan": 2}]  # two cells read as one
    return truth, answer


CLASSES = ("text", "title", "table", "figure", "list")
AP_CONFIG = IouScoreConfig.model_validate(
    {"type": "iou_score", "name": "layout", "path": "boxes", "label_key": "label", "score_key": "score"}
)


def page(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """100 true boxes of 5 classes and a detector's 100: jittered, some of the wrong class, some spurious."""
    truths, found = [], []
    for _ in range(100):
        x, y = rng.uniform(0, 900), rng.uniform(0, 1200)
        box = [x, y, x + rng.uniform(20, 200), y + rng.uniform(10, 60)]
        truths.append({"label": rng.choice(CLASSES), "bbox": box})
    for truth in truths:
        if rng.random() < 0.9:
            x0, y0, x1, y1 = truth["bbox"]
            d = rng.uniform(-5, 5)
            label = truth["label"] if rng.random() < 0.9 else rng.choice(CLASSES)
            found.append({"label": label, "bbox": [x0 + d, y0 + d, x1 + d, y1 - d], "score": rng.random()})
    while len(found) < 100:
        x, y = rng.uniform(0, 900), rng.uniform(0, 1200)
        found.append({"label": rng.choice(CLASSES), "bbox": [x, y, x + 50, y + 20], "score": rng.random()})
    return truths, found


def ap_pages(pages: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]) -> object:
    tally = DetectionTally()
    for index, (truths, found) in enumerate(pages):
        context = EvalContext(f"p{index}", "d", Path("."), json.dumps({"boxes": found}), {"boxes": truths})
        result = run_evaluator(AP_CONFIG, context)
        row = LeanRow(
            f"p{index:06d}",
            "ok",
            result.score,
            "pass",
            [{"name": "layout", "type": "iou_score", "details": result.details}],
        )
        tally.add(row)
    return tally.results()


def measure(name: str, work: Callable[[int], object], documents: int) -> None:
    """Time `work(documents)` untraced, then its peak memory on a tenth of them under tracemalloc
    (which slows Python several times over: never timed)."""
    started = time.perf_counter()
    work(documents)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    work(max(1, documents // 10))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"{name}: {seconds:.2f} s for {documents} documents ({1000 * seconds / documents:.3f} ms each), "
        f"peak {peak / 2**20:.1f} MiB traced on {max(1, documents // 10)}"
    )


_seen: set[str] = set()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--only", choices=("anls", "tables", "ap"), default=None)
    args = parser.parse_args()
    print_calibration()
    n = args.documents
    if args.only in (None, "tables"):
        rng = random.Random(37)
        tables = [table(rng) for _ in range(n)]
        print(f"{n} tables of 50 cells (10 rows of 5, a header row)")
        for metric in ("teds", "teds", "teds_struct", "grits_con", "grits_top"):
            again = " again (the same pairs: remembered)" if metric == "teds" and "teds" in _seen else ""
            _seen.add(metric)

            def score(k: int, metric: str = metric) -> object:
                return [match_table(a, t, metric) for t, a in tables[:k]]

            measure(f"match: table, metric {metric}{again}", score, n)
    if args.only in (None, "ap"):
        rng = random.Random(41)
        pages = [page(rng) for _ in range(n)]
        print(f"{n} pages of 100 true boxes of 5 classes, 100 detections each")
        measure("iou_score (labelled) per page + COCO AP over all pages", lambda k: ap_pages(pages[:k]), n)
    if args.only not in (None, "anls"):
        return 0
    rng = random.Random(31)
    pairs = [document(rng) for _ in range(args.documents)]
    fields = [(truth[f"h{i}"], answer.get(f"h{i}", "")) for truth, answer in pairs for i in range(12)]
    print(
        f"{args.documents} documents: 12 header fields and 10 line items of 4 fields each ({len(fields)} header texts)"
    )
    measure("ANLS* of whole answers", lambda k: [anls_star(t, a) for t, a in pairs[:k]], n)
    measure("match: anls, 12 fields a document", lambda k: [match_anls(a, t) for t, a in fields[: 12 * k]], n)
    for kind in ("cer", "wer"):

        def rates(k: int, kind: str = kind) -> object:
            return [match_error_rate(kind, a, t) for t, a in fields[: 12 * k]]

        measure(f"match: {kind}, 12 fields a document", rates, n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
