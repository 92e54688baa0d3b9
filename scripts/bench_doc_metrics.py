#!/usr/bin/env python3
"""Document-AI metrics benchmark (issue 31): the cost of each new metric on N documents (default
10,000), in this process: ANLS* on nested answers (a receipt of a dozen header fields and 10 line
items of 4 fields each, with typos, dropped and invented keys), `match: anls` and `match: cer` /
`wer` on field texts. Prints the calibration line, then per metric the wall time, the time per
document and the peak traced memory (tracemalloc) of the scoring alone.

Usage: python scripts/bench_doc_metrics.py [--documents 10000]
"""

from __future__ import annotations

import argparse
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

from agentv_py.scoring.anls import anls_star, match_anls
from agentv_py.scoring.error_rates import match_error_rate

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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    args = parser.parse_args()
    print_calibration()
    rng = random.Random(31)
    pairs = [document(rng) for _ in range(args.documents)]
    fields = [(truth[f"h{i}"], answer.get(f"h{i}", "")) for truth, answer in pairs for i in range(12)]
    print(
        f"{args.documents} documents: 12 header fields and 10 line items of 4 fields each ({len(fields)} header texts)"
    )
    n = args.documents
    measure("ANLS* of whole answers", lambda k: [anls_star(t, a) for t, a in pairs[:k]], n)
    measure("match: anls, 12 fields a document", lambda k: [match_anls(a, t) for t, a in fields[: 12 * k]], n)
    for kind in ("cer", "wer"):

        def rates(k: int, kind: str = kind) -> object:
            return [match_error_rate(kind, a, t) for t, a in fields[: 12 * k]]

        measure(f"match: {kind}, 12 fields a document", rates, n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
