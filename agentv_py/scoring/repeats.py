"""Repeated runs of the same cases (`--repeat K`, `--rejudge J`; docs/statistics.md#repeats).

A run with `--repeat K` runs each case K times; with `--rejudge J` each answer is scored J times.
From its rows (`RepeatTally.add`, one call per row) come:

- per case, **pass^K** (every one of its K runs passed) and **pass@K** (at least one did), and over
  the cases their shares, with Wilson intervals (a case is one Bernoulli trial of each); the
  unbiased estimators for k below the runs made are `pass_at_k` and `pass_hat_k` (Chen et al.
  2021, "Evaluating Large Language Models Trained on Code", eq. 1; Yao et al. 2024, tau-bench);
- per field, the **flip rate**: the share of documents whose outcome of that field (its TP, FP,
  FN counts) is not the same in every run; **flaky** cases (passed some runs, not all) and fields
  (a flip rate above 0);
- with `--rejudge`, **judge noise** apart from the extractor's: the verdicts and field outcomes of
  one answer scored J times (only the judge varies) against those of the K runs, each run read
  at its first scoring (only the extractor, and a judge asked once, vary).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from math import comb
from typing import Any

from agentv_py.scoring.intervals import LEVEL, SEED, Interval, bootstrap, mean_statistic, wilson

Outcome = Hashable  # what a field counted in one row (e.g. its (tp, fp, fn)): equal outcomes, no flip
FLAKY_SHOWN = 20  # flaky cases and fields listed in a text summary (JSON lists them all)


def pass_at_k(runs: int, passed: int, k: int) -> float:
    """The chance that at least one of k runs drawn without replacement from `runs` (of which
    `passed` passed) passed: 1 - C(runs - passed, k) / C(runs, k) (Chen et al. 2021, eq. 1)."""
    _check(runs, passed, k)
    return 1.0 - comb(runs - passed, k) / comb(runs, k)


def pass_hat_k(runs: int, passed: int, k: int) -> float:
    """The chance that all of k runs drawn without replacement passed: C(passed, k) / C(runs, k)
    (tau-bench's pass^k)."""
    _check(runs, passed, k)
    return comb(passed, k) / comb(runs, k)


def _check(runs: int, passed: int, k: int) -> None:
    if not 0 <= passed <= runs or not 1 <= k <= runs:
        raise ValueError(f"need 0 <= passed <= runs and 1 <= k <= runs, got runs={runs}, passed={passed}, k={k}")


MIXED_HINT = "pass the results file of one run (agentv merge joins the shards of one run)"


def mixed_message(repeated: int, single: int) -> str:
    """What is wrong with a results file whose line `repeated` has `repeat`/`rejudge` and line `single` not."""
    return (
        f"line {repeated} is a row of a repeated run (it has `repeat` or `rejudge`) and line {single} is not: "
        "a results file holds one run's rows, all repeated or none"
    )


class MixedRows(ValueError):
    """A results file with rows of a repeated run (`repeat`) and rows without: the message says where."""


@dataclass
class _Case:
    """One case's rows: (repeat, rejudge) -> passed, and per field (repeat, rejudge) -> outcome."""

    verdicts: dict[tuple[int, int], bool] = field(default_factory=dict)
    fields: dict[Any, dict[tuple[int, int], Outcome]] = field(default_factory=dict)  # by name (or key until named)


@dataclass(frozen=True)
class FlakyCase:
    eval_id: str
    passed: int
    runs: int

    def to_json(self) -> dict[str, Any]:
        return {"eval_id": self.eval_id, "passed": self.passed, "runs": self.runs}


@dataclass(frozen=True)
class FieldFlips:
    """One field's flips: of `documents` seen in at least two runs (scorings), `flipped` differed."""

    documents: int
    flipped: int
    interval: Interval | None

    @property
    def rate(self) -> float | None:
        return self.flipped / self.documents if self.documents else None

    def to_json(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "flipped": self.flipped,
            "flip_rate": self.rate,
            "interval": self.interval.to_dict() if self.interval is not None else None,
        }


@dataclass(frozen=True)
class Noise:
    """Flips of verdicts and fields across runs (the extractor's noise) or across one answer's
    scorings (the judge's)."""

    units: int  # cases (answers) seen at least twice
    flipped: int  # of those, whose verdict was not the same every time
    flaky: list[FlakyCase]  # those, with how many passed
    fields: dict[Any, FieldFlips]  # by name (`renamed`)

    @property
    def rate(self) -> float | None:
        return self.flipped / self.units if self.units else None

    def renamed(self, names: Mapping[Any, str]) -> Noise:
        """These flips with fields kept under a key of their own (an (evaluator, field) pair) named as shown."""
        return Noise(self.units, self.flipped, self.flaky, {names.get(k, str(k)): v for k, v in self.fields.items()})

    def flaky_fields(self) -> list[str]:
        """Fields that flipped in any document, the highest flip rate first."""
        flipped = [(name, flips) for name, flips in self.fields.items() if flips.flipped]
        return [name for name, _ in sorted(flipped, key=lambda item: (-(item[1].rate or 0.0), item[0]))]

    def to_json(self) -> dict[str, Any]:
        return {
            "seen_twice": self.units,
            "flipped": self.flipped,
            "flip_rate": self.rate,
            "flaky": [case.to_json() for case in self.flaky],
            "fields": {name: flips.to_json() for name, flips in self.fields.items()},
            "flaky_fields": self.flaky_fields(),
        }


@dataclass(frozen=True)
class RepeatReport:
    """What a repeated (rejudged) run's rows say of its noise (`RepeatTally.report`)."""

    repeats: int  # the most runs any case has
    rejudges: int  # the most scorings any answer has (1: not rejudged)
    cases: int
    complete: int  # cases with all `repeats` runs
    pass_all: float  # pass^K: share of the complete cases every run of which passed
    pass_all_interval: Interval | None
    pass_any: float  # pass@K: share of the complete cases some run of which passed
    pass_any_interval: Interval | None
    pass_rate: float  # share of all runs (at their first scoring) that passed
    pass_rate_interval: Interval | None  # a bootstrap over cases, each with all its runs (clustered)
    per_case: dict[str, tuple[int, int]]  # eval_id -> (runs passed, runs)
    extractor: Noise  # across runs, each at its first scoring
    judge: Noise | None  # across one answer's scorings (with --rejudge)
    level: float

    def to_json(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "rejudges": self.rejudges,
            "cases": self.cases,
            "complete_cases": self.complete,
            "pass_all": self.pass_all,
            "pass_all_interval": self.pass_all_interval.to_dict() if self.pass_all_interval else None,
            "pass_any": self.pass_any,
            "pass_any_interval": self.pass_any_interval.to_dict() if self.pass_any_interval else None,
            "pass_rate": self.pass_rate,
            "pass_rate_interval": self.pass_rate_interval.to_dict() if self.pass_rate_interval else None,
            "level": self.level,
            "per_case": {
                eval_id: {"passed": passed, "runs": runs, "pass_all": passed == runs, "pass_any": passed > 0}
                for eval_id, (passed, runs) in self.per_case.items()
            },
            "runs": self.extractor.to_json(),
            **({"judge": self.judge.to_json()} if self.judge is not None else {}),
        }


class RepeatTally:
    """Rows of a results file, one `add` each, kept per case (a few bytes per row and field)."""

    def __init__(self) -> None:
        self.cases: dict[str, _Case] = {}
        self._single: int | None = None  # the first line of a row without `repeat`/`rejudge`
        self._repeated: int | None = None  # the first line of a row with one

    @property
    def repeated(self) -> bool:
        return bool(self.cases)

    def add(
        self,
        line: int,
        eval_id: str,
        repeat: int | None,
        rejudge: int | None,
        passed: bool,
        fields: Mapping[Any, Outcome] | None = None,
    ) -> None:
        """One row: its case, run (`repeat`) and scoring (`rejudge`), verdict and field outcomes.
        MixedRows when the file has rows with and without `repeat`/`rejudge`."""
        if repeat is None and rejudge is None:
            if self._single is None:
                self._single = line
            self._mixed()
            return
        if self._repeated is None:
            self._repeated = line
        self._mixed()
        case = self.cases.get(eval_id)
        if case is None:
            case = self.cases[eval_id] = _Case()
        at = (repeat or 1, rejudge or 1)
        case.verdicts[at] = passed
        for name, outcome in (fields or {}).items():
            case.fields.setdefault(name, {})[at] = outcome

    def rename(self, names: Mapping[Hashable, str]) -> None:
        """Fields added under a key of their own (the metrics' `Counts` identity) named as shown."""
        for case in self.cases.values():
            case.fields = {names.get(key, str(key)): outcomes for key, outcomes in case.fields.items()}

    def _mixed(self) -> None:
        if self._single is not None and self._repeated is not None:
            raise MixedRows(mixed_message(self._repeated, self._single))

    def report(self, level: float = LEVEL, seed: int = SEED) -> RepeatReport | None:
        """The noise the rows show; None when no row was repeated or rejudged."""
        if not self.cases:
            return None
        repeats = max(r for case in self.cases.values() for r, _ in case.verdicts)
        rejudges = max(j for case in self.cases.values() for _, j in case.verdicts)
        per_case: dict[str, tuple[int, int]] = {}
        for eval_id, case in self.cases.items():
            first = [passed for (_, j), passed in case.verdicts.items() if j == 1]
            per_case[eval_id] = (sum(first), len(first))
        complete = [(passed, runs) for passed, runs in per_case.values() if runs == repeats]
        every = sum(passed == runs for passed, runs in complete)
        some = sum(passed > 0 for passed, _ in complete)
        count = len(complete)
        rate, rate_interval = clustered_pass_rate(per_case.values(), level)
        return RepeatReport(
            repeats=repeats,
            rejudges=rejudges,
            cases=len(self.cases),
            complete=count,
            pass_all=every / count if count else 0.0,
            pass_all_interval=wilson(every, count, level),
            pass_any=some / count if count else 0.0,
            pass_any_interval=wilson(some, count, level),
            pass_rate=rate,
            pass_rate_interval=rate_interval,
            per_case=per_case,
            extractor=_noise(self._by_run(), level),
            judge=_noise(self._by_answer(), level) if rejudges > 1 else None,
            level=level,
        )

    def _by_run(self) -> Iterable[tuple[str, list[bool], dict[str, list[Outcome]]]]:
        """Each case's runs at their first scoring: its verdicts and each field's outcomes."""
        for eval_id, case in self.cases.items():
            verdicts = [passed for (_, j), passed in case.verdicts.items() if j == 1]
            fields = {name: [o for (_, j), o in outcomes.items() if j == 1] for name, outcomes in case.fields.items()}
            yield eval_id, verdicts, fields

    def _by_answer(self) -> Iterable[tuple[str, list[bool], dict[str, list[Outcome]]]]:
        """Each answer (a case's run) over its scorings."""
        for eval_id, case in self.cases.items():
            runs = sorted({r for r, _ in case.verdicts})
            for repeat in runs:
                verdicts = [passed for (r, _), passed in case.verdicts.items() if r == repeat]
                fields = {
                    name: [o for (r, _), o in outcomes.items() if r == repeat] for name, outcomes in case.fields.items()
                }
                yield eval_id if len(runs) == 1 else f"{eval_id} (repeat {repeat})", verdicts, fields


def clustered_rate(
    cases: Iterable[tuple[float, float]], level: float = LEVEL, seed: int = SEED
) -> tuple[float, Interval | None]:
    """The share passed + ... / runs + ... of cases given as (passed or summed score, runs), and
    its interval by the document bootstrap with each case as one document (all its runs resampled
    together: runs of one case are not independent). (0.0, None) without runs."""
    groups: dict[tuple[float, ...], int] = {}
    total = runs = 0.0
    for value, count in cases:
        if count:
            groups[(float(value), float(count))] = groups.get((float(value), float(count)), 0) + 1
            total, runs = total + value, runs + count
    if not runs:
        return 0.0, None
    if sum(groups.values()) < 2:
        return total / runs, None
    [interval], _ = bootstrap(groups, mean_statistic, level, seed)
    return total / runs, interval


def clustered_pass_rate(cases: Iterable[tuple[float, float]], level: float = LEVEL) -> tuple[float, Interval | None]:
    """The share of runs passed over cases given as (runs passed, runs), and Wilson's interval at
    the effective number of runs: the runs divided by the design effect (Kish 1965, `design_effect`).
    Runs of a case that always agree give the cases as the trials (the single-run Wilson interval);
    independent runs about the runs themselves."""
    listed = [(float(passed), float(runs)) for passed, runs in cases if runs]
    total = sum(runs for _, runs in listed)
    if not total:
        return 0.0, None
    rate = sum(passed for passed, _ in listed) / total
    effective = total / design_effect(listed)
    return rate, replace_method(wilson(rate * effective, effective, level), "wilson (design effect)")


def design_effect(cases: list[tuple[float, float]]) -> float:
    """The cluster-robust variance of the share passed, G/(G-1) sum((passed_i - p runs_i)^2) / N^2
    over G cases and N runs (statsmodels' cluster-robust variance of a mean), over the binomial
    p (1 - p) / N; at least 1, at most the most runs of a case (which it is too when every run
    passed, or every run failed: no spread to measure)."""
    total = sum(runs for _, runs in cases)
    rate = sum(passed for passed, _ in cases) / total
    binomial = rate * (1 - rate) / total
    most = max(runs for _, runs in cases)
    if binomial <= 0 or len(cases) < 2:
        return most
    robust = sum((passed - rate * runs) ** 2 for passed, runs in cases) / total**2 * len(cases) / (len(cases) - 1)
    return min(max(robust / binomial, 1.0), most)


def replace_method(interval: Interval | None, method: str) -> Interval | None:
    return Interval(interval.low, interval.high, method) if interval is not None else None


def _noise(units: Iterable[tuple[str, list[bool], dict[str, list[Outcome]]]], level: float) -> Noise:
    seen = flipped = 0
    flaky: list[FlakyCase] = []
    documents: dict[str, list[int]] = {}  # field -> [seen twice, flipped]
    for eval_id, verdicts, fields in units:
        if len(verdicts) >= 2:
            seen += 1
            passed = sum(verdicts)
            if 0 < passed < len(verdicts):
                flipped += 1
                flaky.append(FlakyCase(eval_id, passed, len(verdicts)))
        for name, outcomes in fields.items():
            if len(outcomes) < 2:
                continue
            tally = documents.setdefault(name, [0, 0])
            tally[0] += 1
            tally[1] += len(set(outcomes)) > 1
    flaky.sort(key=lambda case: (abs(case.passed / case.runs - 0.5), case.eval_id))  # the most even split first
    fields_out = {
        name: FieldFlips(count, flips, wilson(flips, count, level)) for name, (count, flips) in documents.items()
    }
    return Noise(seen, flipped, flaky, fields_out)
