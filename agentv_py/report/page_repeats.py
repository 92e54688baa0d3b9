"""What the HTML report shows of a repeated run (`--repeat`, `--rejudge`): each run its own entry
in the case table (named `case #run.scoring`, `ResultRow.run_label`), in dataset order then run,
and a Repeats section: pass^K, pass@K, flaky cases and fields, the flip rate of every field, and
the headline's intervals with a case's runs resampled together (`scoring.repeats`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentv_py.models.results import ResultRow, run_label
from agentv_py.report.repeats import summary_lines
from agentv_py.scoring.intervals import LEVEL, Headline
from agentv_py.scoring.metrics import field_labels, row_field_counts
from agentv_py.scoring.repeats import RepeatReport, RepeatTally, clustered_pass_rate, clustered_rate


@dataclass
class PageRepeats:
    tally: RepeatTally = field(default_factory=RepeatTally)
    clusters: dict[str, list[float]] = field(default_factory=dict)  # case -> [score sum, rows, rows passed]
    keys: set[Any] = field(default_factory=set)  # every (evaluator, field) a repeated row counted
    case_of: dict[str, str] = field(default_factory=dict)  # a run's label -> its case id
    single_seen: bool = False  # a row that is not of a repeated run was read

    def add(self, line: int, row: ResultRow) -> None:
        """One row read (MixedRows when the file mixes repeated rows and others)."""
        if row.repeat is None and row.rejudge is None:
            if not self.single_seen:  # the first is enough to refuse a file that mixes them
                self.single_seen = True
                self.tally.add(line, row.eval_id, None, None, False)
            return
        passed = row.status == "ok" and row.verdict == "pass"
        counted = row_field_counts(row.evaluator_results)
        self.keys.update(counted)
        outcomes = {key: (c.tp, c.fp, c.fn) for key, c in counted.items()}
        self.tally.add(line, row.eval_id, row.repeat, row.rejudge, passed, outcomes)
        self.case_of[row.run_label] = row.eval_id
        cluster = self.clusters.setdefault(row.eval_id, [0.0, 0.0, 0.0])
        cluster[0] += row.score
        cluster[1] += 1
        cluster[2] += passed

    def report(self, level: float = LEVEL) -> RepeatReport | None:
        found = self.tally.report(level)
        if found is None:
            return None
        labels = field_labels(self.keys)
        judge = found.judge.renamed(labels) if found.judge is not None else None
        return replace(found, extractor=found.extractor.renamed(labels), judge=judge)

    def order(self, case_ids: Sequence[str], report: RepeatReport) -> list[str]:
        """The runs' labels in dataset order, then run, then scoring."""
        labels = []
        for eval_id in case_ids:
            case = self.tally.cases.get(eval_id)
            for repeat, rejudge in sorted(case.verdicts) if case is not None else []:
                shown = run_label(
                    eval_id, repeat if report.repeats > 1 else None, rejudge if report.rejudges > 1 else None
                )
                labels.append(shown)
        return labels

    def headline(self, level: float = LEVEL) -> Headline:
        """Over every run: the pass rate (Wilson at the design effect) and the mean score (a case's runs
        resampled together)."""
        clusters = self.clusters.values()
        rate, rate_interval = clustered_pass_rate(((passed, rows) for _, rows, passed in clusters), level)
        mean, mean_interval = clustered_rate(((score, rows) for score, rows, _ in clusters), level)
        return Headline(len(self.clusters), rate, rate_interval, mean, mean_interval, level)


def page_section(report: RepeatReport) -> dict[str, Any]:
    """The template's `repeats`: the summary's lines and each field's flips (between runs, between scorings)."""
    tables = []
    noises = [("between runs", report.extractor)] if report.repeats > 1 else []
    if report.judge is not None:
        noises.append(("between scorings", report.judge))
    for what, noise in noises:
        rows = [
            (
                name,
                flips.documents,
                flips.flipped,
                flips.interval.shown(flips.rate) if flips.interval and flips.rate is not None else "-",
            )
            for name, flips in sorted(noise.fields.items(), key=lambda item: (-(item[1].rate or 0.0), item[0]))
        ]
        if rows:
            tables.append((what, rows))
    k = report.repeats
    short = [  # the cases not passing every run: each one's pass^K and pass@K (the others pass both)
        (eval_id, f"{passed} of {runs}", "yes" if passed == runs else "no", "yes" if passed else "no")
        for eval_id, (passed, runs) in report.per_case.items()
        if passed < runs
    ]
    return {"lines": summary_lines(report, None), "tables": tables, "k": k, "cases": short}
