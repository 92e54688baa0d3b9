"""Run summary: totals and score statistics, accumulated row by row in bounded memory.

Whatever order cases finish in, the summary is the same: the table is in dataset order, evaluator
means are listed in the order the dataset declares the evaluators, and sums are exact (`fsum`).
"""

from __future__ import annotations

import heapq
import math
import statistics
from array import array
from dataclasses import dataclass, field, replace
from typing import Any

from agentv_py.models.dataset import Gates
from agentv_py.models.results import ResultRow
from agentv_py.report.gates import Baseline, Flips, GateCheck, gate_checks
from agentv_py.report.misses import Miss, miss_parts
from agentv_py.report.text import plural
from agentv_py.scoring.intervals import Headline, headline
from agentv_py.scoring.metrics import Counts, FieldKey, field_labels, row_field_counts
from agentv_py.scoring.repeats import RepeatReport, RepeatTally, clustered_pass_rate, clustered_rate
from agentv_py.scoring.thresholds import at_least

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
    misses: list[Miss]  # the first few (all with --verbose), field misses with their values
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
    scores: array[float] = field(default_factory=lambda: array("d"))
    evaluator_scores: dict[str, array[float]] = field(default_factory=dict)  # name -> its scores (8 bytes each)
    # name -> (position of the first case that lists it, its index in that case's evaluator list)
    evaluator_order: dict[str, tuple[int, int]] = field(default_factory=dict)
    lines: list[CaseLine] = field(default_factory=list)
    problems: int = 0  # cases that did not pass (errored, partial or failed)
    # Of those, the TABLE_ROWS first in dataset order: a heap of (-position, -arrival, line).
    _problem_heap: list[tuple[int, int, CaseLine]] = field(default_factory=list, init=False, repr=False)
    interrupted: bool = False
    results_path: str = ""
    cache_hits: int = 0  # rows whose answer came from the cache (`trace.cache`)
    cache_misses: int = 0  # rows whose target was asked with the cache on
    # (evaluator, field) -> counts over the run, for field gates (bounded: one entry per field)
    field_counts: dict[FieldKey, Counts] = field(default_factory=dict)
    baseline_passed: frozenset[str] | None = None  # with --baseline: the cases it passed
    flips: Flips = field(default_factory=Flips)  # of those, the ones this run did not pass
    # `xfail:` cases: counted above as any case is, and set aside by the gate (`gate`): their
    # scores, passes and errors, here; their fields and evaluator scores are left out above
    xfailed: list[tuple[str, str]] = field(default_factory=list)  # (id, reason): did not pass, as expected
    xpassed: list[tuple[str, str]] = field(default_factory=list)  # (id, reason): passed although marked
    xfail_score_sum: float = 0.0
    xfail_evaluator_scores: dict[str, list[float]] = field(default_factory=dict)  # of `evaluator_scores`
    xfail_target_errors: int = 0  # of `errored`: cases that are xfail
    xfail_evaluator_errors: int = 0  # of `evaluator_errors`: cases that are xfail
    strict_xfail: bool = False  # --strict-xfail: an XPASS fails the gate
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (id, reason) of `skip:` cases: not run
    excluded: int = 0  # cases --exclude left out (not run, not listed)
    confidence: float = 0.95  # the level of the pass rate's and mean score's intervals (--confidence)
    stop_early: Any = None  # --stop-early's state (`stop_early.StopEarly`): what it saw and decided
    # --repeat / --rejudge: each case's rows (verdicts, field outcomes), and per case its
    # [score sum, rows, rows passed] for the headline's intervals (a case's rows resampled together)
    repeats: RepeatTally = field(default_factory=RepeatTally)
    clusters: dict[str, list[float]] = field(default_factory=dict)

    def add(self, row: ResultRow, position: int | None = None) -> None:
        """Count one finished case. `position` is its index in dataset order (default: arrival order)."""
        arrival = self.completed
        if position is None:
            position = arrival
        self.scores.append(row.score)
        marked = row.expected_outcome
        if marked is not None:
            (self.xpassed if marked == "xpass" else self.xfailed).append((row.eval_id, row.xfail or ""))
            self.xfail_score_sum += row.score
            self.xfail_target_errors += row.status == "error"
            self.xfail_evaluator_errors += any(result.status == "error" for result in row.evaluator_results)
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
        if row.trace.cache == "hit":
            self.cache_hits += 1
        elif row.trace.cache == "miss":
            self.cache_misses += 1
        for index, result in enumerate(row.evaluator_results):
            if (position, index) < self.evaluator_order.get(result.name, (math.inf, 0)):
                self.evaluator_order[result.name] = (position, index)
            if result.status != "skipped" and result.score is not None:
                self.evaluator_scores.setdefault(result.name, array("d")).append(result.score)
                if marked is not None:  # shown with the others; the gate leaves it out (`gated_evaluator_means`)
                    self.xfail_evaluator_scores.setdefault(result.name, []).append(result.score)
        counted = row_field_counts(row.evaluator_results if marked is None else [])
        for key, counts in counted.items():
            if key in self.field_counts:
                self.field_counts[key] += counts
            else:
                self.field_counts[key] = counts
        if row.repeat is not None or row.rejudge is not None:
            self._add_run(row, counted)
        line = CaseLine(
            row.run_label,
            position,
            row.score,
            marked or row.verdict,
            row.status,
            miss_parts(row.misses, row.evaluator_results, None if self.keep_all_lines else MISSES_SHOWN),
            len(row.misses),
            row.error,
        )
        if self.keep_all_lines or len(self.lines) < TABLE_ROWS:
            self.lines.append(line)
        if (row.status == "error" or row.verdict != "pass") and marked is None:
            if self.baseline_passed is not None and row.eval_id in self.baseline_passed:
                self.flips.add(position, row.eval_id)
            self.problems += 1
            heapq.heappush(self._problem_heap, (-position, -arrival, line))
            if len(self._problem_heap) > TABLE_ROWS:
                heapq.heappop(self._problem_heap)  # the one latest in dataset order

    def _add_run(self, row: ResultRow, counted: dict[FieldKey, Counts]) -> None:
        """A row of a repeated (rejudged) run: kept per case (`repeats`, `clusters`)."""
        passed = row.status == "ok" and row.verdict == "pass"
        outcomes = {key: (c.tp, c.fp, c.fn) for key, c in counted.items()}
        self.repeats.add(self.completed, row.eval_id, row.repeat, row.rejudge, passed, outcomes)
        cluster = self.clusters.get(row.eval_id)
        if cluster is None:
            cluster = self.clusters[row.eval_id] = [0.0, 0.0, 0.0]
        cluster[0] += row.score
        cluster[1] += 1
        cluster[2] += passed

    def repeat_report(self) -> RepeatReport | None:
        """What the runs of a repeated (rejudged) run say of its noise; None for any other run."""
        found = self.repeats.report(self.confidence)
        if found is None:
            return None
        labels = field_labels(self.field_counts)
        judge = found.judge.renamed(labels) if found.judge is not None else None
        return replace(found, extractor=found.extractor.renamed(labels), judge=judge)

    @property
    def problem_lines(self) -> list[CaseLine]:
        """Up to TABLE_ROWS cases that did not pass: the first ones in dataset order, in that order."""
        return sorted((line for _, _, line in self._problem_heap), key=lambda line: line.position)

    @property
    def completed(self) -> int:
        return len(self.scores)

    @property
    def any_errors(self) -> bool:
        """A target or an evaluator (judge) could not run for some case that is not xfail: exit code 4."""
        return self.target_errors_gated > 0 or self.evaluator_errors_gated > 0

    @property
    def target_errors_gated(self) -> int:
        return self.errored - self.xfail_target_errors

    @property
    def evaluator_errors_gated(self) -> int:
        return self.evaluator_errors - self.xfail_evaluator_errors

    @property
    def gated(self) -> int:
        """Cases the gate weighs: those written, less the xfail ones."""
        return self.completed - len(self.xfailed) - len(self.xpassed)

    @property
    def all_passed(self) -> bool:
        return self.gated > 0 and self.passed - len(self.xpassed) == self.gated

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

    def headline(self) -> Headline | None:
        """The pass rate (passed of every completed case) and mean score, with their intervals."""
        if not self.clusters:
            return headline(self.passed, self.scores, self.confidence)
        clusters = self.clusters.values()  # a repeated run: each case's rows resampled together
        rate, rate_interval = clustered_pass_rate(((passed, rows) for _, rows, passed in clusters), self.confidence)
        mean, mean_interval = clustered_rate(((score, rows) for score, rows, _ in clusters), self.confidence)
        return Headline(len(self.clusters), rate, rate_interval, mean, mean_interval, self.confidence)

    def histogram(self) -> list[tuple[float, float, int]]:
        """Counts per bin [0, .2), [.2, .4), ... [.8, 1.0]."""
        counts = [0] * HISTOGRAM_BINS
        for score in self.scores:
            counts[min(int(score * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)] += 1
        width = 1.0 / HISTOGRAM_BINS
        return [(i * width, (i + 1) * width, c) for i, c in enumerate(counts)]

    def evaluator_means(self) -> dict[str, float]:
        """Mean score per evaluator, in the order the dataset declares them (first use by a case)."""
        names = sorted(self.evaluator_scores, key=lambda name: self.evaluator_order[name])
        return {name: math.fsum(self.evaluator_scores[name]) / len(self.evaluator_scores[name]) for name in names}

    def gated_evaluator_means(self) -> dict[str, float]:
        """`evaluator_means` without the xfail cases' scores: what evaluator gates compare."""
        means = {}
        for name in sorted(self.evaluator_scores, key=lambda name: self.evaluator_order[name]):
            marked = self.xfail_evaluator_scores.get(name, [])
            count = len(self.evaluator_scores[name]) - len(marked)
            if count:
                means[name] = (math.fsum(self.evaluator_scores[name]) - math.fsum(marked)) / count
        return means

    def table_lines(self) -> tuple[list[CaseLine], int]:
        """Lines for the table and how many cases it leaves out."""
        if self.keep_all_lines or self.completed <= TABLE_ROWS:
            return sorted(self.lines, key=lambda line: line.position), 0
        # Too many to list: show the cases that did not pass (those are what a reader needs).
        shown = self.problem_lines
        return shown, self.completed - len(shown)

    @property
    def problems_not_listed(self) -> int:
        """Cases that did not pass but are left out of a table of problems (more than TABLE_ROWS)."""
        return self.problems - len(self._problem_heap)


@dataclass(frozen=True)
class GateResult:
    """How a run ended for CI: `outcome` is ok, gate_failed, errors or interrupted (the CLI maps
    them to exit codes 0, 1, 4, 130); `message` says why when it is not ok."""

    outcome: str
    message: str = ""
    rule: str = "every case passed"
    checks: tuple[GateCheck, ...] = ()  # every gate with its value (--threshold, dataset gates, --baseline)

    @property
    def passed(self) -> bool:
        return self.outcome == "ok"


def gate(
    summary: RunSummary, threshold: float | None, gates: Gates | None = None, baseline: Baseline | None = None
) -> GateResult:
    """The run's gate (decisions.md): interrupted > a target or evaluator error > the rule, which
    is "every case passed", or with `threshold`, the dataset's `gates` or a `baseline`: every one
    of those checks holds (each is returned with its value, in `checks`)."""
    gated = summary.gated
    mean = (math.fsum(summary.scores) - summary.xfail_score_sum) / gated if gated else None
    checks = tuple(
        gate_checks(
            mean=mean,
            pass_rate=(summary.passed - len(summary.xpassed)) / gated if gated else None,
            evaluator_means=summary.gated_evaluator_means(),
            field_counts=summary.field_counts,
            threshold=threshold,
            gates=gates,
            baseline=baseline,
            flips=summary.flips if summary.baseline_passed is not None else None,
        )
    )
    if gates or baseline:  # the checks name fields and evaluators (data): the rule is agentv's own words
        rule = f"every gate holds ({plural(len(checks), 'gate')})"
    else:  # --threshold alone: one rule, said as before (no list of checks)
        rule = f"mean score >= {threshold:g}" if threshold is not None else "every case passed"
        checks = ()
    if summary.interrupted:
        return GateResult("interrupted", "the run was interrupted", rule, checks)
    if summary.any_errors:
        said = []
        if summary.target_errors_gated:
            said.append(f"{plural(summary.target_errors_gated, 'case')} had a target error (the target call failed)")
        if summary.evaluator_errors_gated:
            said.append(
                f"{plural(summary.evaluator_errors_gated, 'case')} had an evaluator error (an evaluator could not run)"
            )
        return GateResult("errors", "; ".join(said), rule, checks)
    if summary.strict_xfail and summary.xpassed:
        shown = ", ".join(case_id for case_id, _ in summary.xpassed[:5])
        return GateResult(
            "gate_failed",
            f"gate failed: {plural(len(summary.xpassed), 'xfail case')} passed (XPASS: {shown}) with --strict-xfail",
            rule,
            checks,
        )
    stop = summary.stop_early
    if threshold is not None and not (gates or baseline) and stop is not None and stop.stopped:
        if stop.decided == "below":  # settled for every case, not only those that ran
            return GateResult("gate_failed", f"gate failed: {stop.said()}", rule, checks)
        if stop.decided == "above":
            return GateResult("ok", "", rule, checks)
    if threshold is not None and not (gates or baseline):  # the message scripts already match
        value = mean if mean is not None else 0.0
        if not at_least(value, threshold):
            return GateResult(
                "gate_failed", f"gate failed: mean score {value:.3f} < threshold {threshold:g}", rule, checks
            )
        return GateResult("ok", "", rule, checks)
    if checks:
        failed = [c for c in checks if not c.passed]
        if failed:
            return GateResult(
                "gate_failed", f"gate failed: {plural(len(failed), 'gate')} of {len(checks)} failed", rule, checks
            )
        return GateResult("ok", "", rule, checks)
    if not summary.all_passed:
        not_passed = gated - (summary.passed - len(summary.xpassed))
        return GateResult("gate_failed", f"gate failed: {not_passed} of {gated} cases did not pass", rule)
    return GateResult("ok", "", rule)
