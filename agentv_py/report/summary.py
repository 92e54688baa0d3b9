"""Run summary: totals and score statistics, accumulated row by row in bounded memory."""

from __future__ import annotations

import math
import statistics
from array import array
from dataclasses import dataclass, field

from agentv_py.models.results import ResultRow

HISTOGRAM_BINS = 5
TABLE_ROWS = 50
MISSES_SHOWN = 3


@dataclass
class CaseLine:
    """What the summary table shows of one case."""

    eval_id: str
    position: int  # the case's index among the selected cases (table order)
    score: float
    verdict: str
    status: str
    misses: list[str]
    miss_count: int
    error: str | None


@dataclass
class ScoreStats:
    mean: float
    median: float
    min: float
    max: float
    std: float


@dataclass
class RunSummary:
    """Accumulates rows as they stream past; keeps scores (8 bytes each) and a bounded table."""

    total_selected: int = 0
    keep_all_lines: bool = False
    passed: int = 0
    partial: int = 0
    failed: int = 0
    errored: int = 0
    evaluator_errors: int = 0  # cases whose target answered but an evaluator could not run
    scores: array = field(default_factory=lambda: array("d"))
    evaluator_sums: dict[str, list[float]] = field(default_factory=dict)  # name -> [sum, count]
    lines: list[CaseLine] = field(default_factory=list)
    problem_lines: list[CaseLine] = field(default_factory=list)
    interrupted: bool = False
    results_path: str = ""

    def add(self, row: ResultRow, position: int | None = None) -> None:
        self.scores.append(row.score)
        if row.status == "error":
            self.errored += 1
        elif row.verdict == "pass":
            self.passed += 1
        elif row.verdict == "partial":
            self.partial += 1
        else:
            self.failed += 1
        if any(result.status == "error" for result in row.evaluator_results):
            self.evaluator_errors += 1
        for result in row.evaluator_results:
            if result.status != "skipped" and result.score is not None:
                sums = self.evaluator_sums.setdefault(result.name, [0.0, 0])
                sums[0] += result.score
                sums[1] += 1
        line = CaseLine(
            row.eval_id,
            self.completed - 1 if position is None else position,
            row.score,
            row.verdict,
            row.status,
            row.misses if self.keep_all_lines else row.misses[:MISSES_SHOWN],
            len(row.misses),
            row.error,
        )
        if self.keep_all_lines or len(self.lines) < TABLE_ROWS:
            self.lines.append(line)
        if (row.status == "error" or row.verdict != "pass") and len(self.problem_lines) < TABLE_ROWS:
            self.problem_lines.append(line)

    @property
    def completed(self) -> int:
        return len(self.scores)

    @property
    def any_errors(self) -> bool:
        """A target or an evaluator (judge) could not run for some case: exit code 4."""
        return bool(self.errored or self.evaluator_errors)

    @property
    def all_passed(self) -> bool:
        return self.completed > 0 and self.passed == self.completed

    def stats(self) -> ScoreStats | None:
        if not self.scores:
            return None
        values = list(self.scores)
        return ScoreStats(
            mean=math.fsum(values) / len(values),
            median=statistics.median(values),
            min=min(values),
            max=max(values),
            std=statistics.pstdev(values) if len(values) > 1 else 0.0,
        )

    def histogram(self) -> list[tuple[float, float, int]]:
        """Counts per bin [0, .2), [.2, .4), ... [.8, 1.0]."""
        counts = [0] * HISTOGRAM_BINS
        for score in self.scores:
            counts[min(int(score * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)] += 1
        width = 1.0 / HISTOGRAM_BINS
        return [(i * width, (i + 1) * width, c) for i, c in enumerate(counts)]

    def evaluator_means(self) -> dict[str, float]:
        return {name: total / count for name, (total, count) in self.evaluator_sums.items() if count}

    def table_lines(self) -> tuple[list[CaseLine], int]:
        """Lines for the table and how many cases it leaves out."""
        in_order = lambda lines: sorted(lines, key=lambda line: line.position)  # noqa: E731
        if self.keep_all_lines or self.completed <= TABLE_ROWS:
            return in_order(self.lines), 0
        # Too many to list: show the cases that did not pass (those are what a reader needs).
        return in_order(self.problem_lines), self.completed - len(self.problem_lines)
