"""`agentv compare` of repeated runs (`--repeat K`; docs/statistics.md#comparing-repeated-runs).

When BASE or NEW ran each case more than once, a case is no longer pass or fail: it passed some
of its runs. Every run counts (each at its first scoring, when `--rejudge` scored it again):

- a case **regressed** when its pass rate fell beyond its own noise: the one-sided Fisher exact
  test of its NEW passes against its BASE passes (`scoring.stats.fisher_fell_p`) at `--alpha`,
  case by case (sensitive: with many cases, noise alone fails the gate now and then; scripts/
  repeats_sim.py measures how often); with `--significant-only` those p-values are adjusted
  across the cases (`--correction`, Holm by default: the gate fails on noise at most `--alpha` of
  the time); a fall the runs' noise explains is listed, not gated;
- the mean score and the pass rate (a case's mean over its runs, averaged over the cases in both)
  get a paired bootstrap interval of their delta over the cases; the gate fails when the mean's
  interval lies wholly below -`--max-drop`;
- each field's F1 over all runs, and a paired bootstrap interval of its delta with each case's
  runs resampled together (BCa, `scoring.intervals`); the gate fails when it lies wholly below
  -`--max-drop`;
- a case with an error in NEW and none in BASE fails the gate, as it always does.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from agentv_py.report.compare_fields import f1_delta_statistic
from agentv_py.report.compare_store import CompareError
from agentv_py.report.lean_rows import field_counts, read_lean_rows
from agentv_py.report.regressions import Rules
from agentv_py.scoring.intervals import Interval, bootstrap_arrays
from agentv_py.scoring.metrics import Counts, FieldKey, field_labels
from agentv_py.scoring.repeats import MIXED_HINT, MixedRows, RepeatTally
from agentv_py.scoring.stats import adjusted, bootstrap_ci, fisher_fell_p

SHOWN = 10  # cases listed per kind of change in a table


def repeated(path: Path) -> bool:
    """Whether the results file's first row is of a repeated (rejudged) run."""
    for _, row in read_lean_rows(path):
        if not isinstance(row, str):
            return row.repeat is not None or row.rejudge is not None
    return False


@dataclass
class _Case:
    passed: int = 0
    runs: int = 0
    score: float = 0.0
    errors: int = 0
    fields: dict[FieldKey, list[int]] = field(default_factory=dict)  # tp, fp, fn over its runs


def _read(path: Path, role: str) -> tuple[dict[str, _Case], int]:
    """Each case's runs (at their first scoring), and the most runs any case has."""
    cases: dict[str, _Case] = {}
    tally = RepeatTally()
    most = 0
    for line, row in read_lean_rows(path):
        if isinstance(row, str):
            raise CompareError(
                f"{role} {path}:{line}: {row}",
                hint="the file was cut short or is not a results file: compare complete `agentv eval` outputs",
            )
        try:
            tally.add(line, row.eval_id, row.repeat, row.rejudge, False)
        except MixedRows as exc:
            raise CompareError(f"{role} {path}: {exc}", hint=MIXED_HINT) from None
        if row.rejudge not in (None, 1):
            continue
        case = cases.get(row.eval_id)
        if case is None:
            case = cases[row.eval_id] = _Case()
        case.runs += 1
        most = max(most, case.runs)
        if row.status == "error":
            case.errors += 1
            continue
        case.passed += row.verdict == "pass"
        case.score += row.score
        for key, counts in field_counts(row, []).items():
            cells = case.fields.setdefault(key, [0, 0, 0])
            cells[0] += counts.tp
            cells[1] += counts.fp
            cells[2] += counts.fn
    return cases, most


@dataclass(frozen=True)
class CaseRate:
    """One case's passes over its runs in both files, and the one-sided Fisher p of the fall."""

    eval_id: str
    base: tuple[int, int]  # (runs passed, runs)
    new: tuple[int, int]
    p_value: float

    @property
    def delta(self) -> float:
        return self.new[0] / self.new[1] - self.base[0] / self.base[1]

    def shown(self) -> str:
        return f"{self.eval_id} {self.base[0]}/{self.base[1]} -> {self.new[0]}/{self.new[1]} (p = {self.p_value:.3g})"

    def to_json(self) -> dict[str, Any]:
        return {
            "eval_id": self.eval_id,
            "base": {"passed": self.base[0], "runs": self.base[1]},
            "new": {"passed": self.new[0], "runs": self.new[1]},
            "p_value": self.p_value,
        }


@dataclass
class FieldRate:
    base: Counts
    new: Counts
    ci: Interval | None = None

    @property
    def f1_delta(self) -> float | None:
        """NEW's F1 minus BASE's (NEW's undefined F1 as 0); None without BASE's."""
        return None if self.base.f1 is None else (self.new.f1 or 0.0) - self.base.f1


@dataclass
class RepeatComparison:
    base: str
    new: str
    base_repeats: int = 1
    new_repeats: int = 1
    paired: int = 0
    only_in_base: int = 0
    only_in_new: int = 0
    base_rate: float | None = None
    new_rate: float | None = None
    rate_ci: tuple[float, float] | None = None
    base_mean: float | None = None
    new_mean: float | None = None
    ci95: tuple[float, float] | None = None
    # every case in both files: (runs passed, runs) in BASE and in NEW (each case's pass^K and pass@K)
    per_case: dict[str, tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)
    regressed: list[CaseRate] = field(default_factory=list)
    within_noise: list[CaseRate] = field(default_factory=list)
    improved: list[CaseRate] = field(default_factory=list)
    new_errors: list[str] = field(default_factory=list)
    fields: dict[str, FieldRate] = field(default_factory=dict)
    alpha: float = 0.05
    adjusted_cases: str | None = None  # --significant-only: case p-values adjusted across cases (holm, bh)
    forced: list[str] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)

    def __enter__(self) -> RepeatComparison:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        def ci(pair: tuple[float, float] | None) -> list[float] | None:
            return list(pair) if pair is not None else None

        return {
            "base": self.base,
            "new": self.new,
            "repeated": True,
            "base_repeats": self.base_repeats,
            "new_repeats": self.new_repeats,
            "paired": self.paired,
            "only_in_base": self.only_in_base,
            "only_in_new": self.only_in_new,
            "pass_rate": {"base": self.base_rate, "new": self.new_rate, "delta_ci95": ci(self.rate_ci)},
            "mean_score": {"base": self.base_mean, "new": self.new_mean, "delta_ci95": ci(self.ci95)},
            "pass_all": {side: _share(self.per_case, i, all_passed=True) for i, side in enumerate(("base", "new"))},
            "pass_any": {side: _share(self.per_case, i, all_passed=False) for i, side in enumerate(("base", "new"))},
            "per_case": {
                eval_id: {side: _runs(runs) for side, runs in zip(("base", "new"), sides, strict=True)}
                for eval_id, sides in self.per_case.items()
            },
            "alpha": self.alpha,
            "cases_adjusted": self.adjusted_cases,
            "regressed": [case.to_json() for case in self.regressed],
            "fell_within_noise": [case.to_json() for case in self.within_noise],
            "improved": [case.to_json() for case in self.improved],
            "new_errors": self.new_errors,
            "fields": {
                name: {
                    "base": change.base.to_dict(),
                    "new": change.new.to_dict(),
                    "f1_delta": change.f1_delta,
                    "f1_delta_ci": change.ci.to_dict() if change.ci is not None else None,
                }
                for name, change in self.fields.items()
            },
            "regressions": self.regressions,
            "passed": not self.regressions,
        }

    def write_json(self, stream: IO[str], rules: Rules) -> None:
        stream.write(json.dumps(self.to_json(), indent=2) + "\n")


def _runs(runs: tuple[int, int]) -> dict[str, Any]:
    passed, count = runs
    return {"passed": passed, "runs": count, "pass_all": passed == count, "pass_any": passed > 0}


def _share(per_case: dict[str, tuple[tuple[int, int], tuple[int, int]]], side: int, all_passed: bool) -> float | None:
    """The share of the cases every (`all_passed`: pass^K) or some (pass@K) run of which passed."""
    if not per_case:
        return None
    sides = [sides[side] for sides in per_case.values()]
    return sum((p == n) if all_passed else (p > 0) for p, n in sides) / len(sides)


def compare_repeated(base: Path, new: Path, rules: Rules, forced: list[str]) -> RepeatComparison:
    """Compare two results files of which one or both are repeated runs (see the module)."""
    before, base_repeats = _read(base, "BASE")
    after, new_repeats = _read(new, "NEW")
    result = RepeatComparison(str(base), str(new), base_repeats, new_repeats, forced=forced, alpha=rules.alpha)
    shared = sorted(before.keys() & after.keys())
    result.paired, result.only_in_base, result.only_in_new = (
        len(shared),
        len(before) - len(shared),
        len(after) - len(shared),
    )
    scored = [i for i in shared if before[i].runs > before[i].errors and after[i].runs > after[i].errors]
    result.new_errors = [i for i in shared if after[i].errors and not before[i].errors]
    if scored:
        rates = [(_rate(before[i]), _rate(after[i])) for i in scored]
        means = [(_mean(before[i]), _mean(after[i])) for i in scored]
        result.base_rate, result.new_rate = _average(r for r, _ in rates), _average(r for _, r in rates)
        result.base_mean, result.new_mean = _average(m for m, _ in means), _average(m for _, m in means)
        result.rate_ci = bootstrap_ci([n - b for b, n in rates])
        result.ci95 = bootstrap_ci([n - b for b, n in means])
    result.per_case = {i: (_passes(before[i]), _passes(after[i])) for i in scored}
    moves = [
        CaseRate(i, _passes(before[i]), _passes(after[i]), fisher_fell_p(*_passes(before[i]), *_passes(after[i])))
        for i in scored
    ]
    p_values = [move.p_value for move in moves]
    if rules.significant_only and p_values:
        result.adjusted_cases = rules.correction
        p_values = adjusted(p_values, rules.correction)
    for move, p in zip(moves, p_values, strict=True):
        if move.delta < 0:
            (result.regressed if p <= rules.alpha else result.within_noise).append(
                CaseRate(move.eval_id, move.base, move.new, p)
            )
        elif move.delta > 0 and fisher_fell_p(*move.new, *move.base) <= rules.alpha:
            result.improved.append(move)
    for listing in (result.regressed, result.within_noise, result.improved):
        listing.sort(key=lambda move: (move.p_value, move.eval_id))
    _field_rates(result, before, after, scored)
    result.regressions = repeat_regressions(result, rules)
    return result


def _passes(case: _Case) -> tuple[int, int]:
    return case.passed, case.runs - case.errors


def _rate(case: _Case) -> float:
    passed, runs = _passes(case)
    return passed / runs


def _mean(case: _Case) -> float:
    return case.score / (case.runs - case.errors)


def _average(values: Iterable[float]) -> float:
    listed = list(values)
    return math.fsum(listed) / len(listed)


def _field_rates(
    result: RepeatComparison, before: dict[str, _Case], after: dict[str, _Case], scored: list[str]
) -> None:
    """Each field's counts over all runs in both files, and the interval of its F1 delta with each
    case's runs resampled together."""
    import numpy as np

    keys = {key for i in scored for key in (*before[i].fields, *after[i].fields)}
    labels = field_labels(keys)
    none = [0, 0, 0]
    for key in sorted(keys):
        groups: Counter[tuple[int, ...]] = Counter()
        base, new = Counts(), Counts()
        for i in scored:
            was, now = before[i].fields.get(key, none), after[i].fields.get(key, none)
            groups[(*was, *now)] += 1
            base += Counts(tp=was[0], fp=was[1], fn=was[2])
            new += Counts(tp=now[0], fp=now[1], fn=now[2])
        change = FieldRate(base, new)
        if change.f1_delta is not None:
            ordered = sorted(groups)
            vectors = np.array(ordered, dtype=np.float64)
            weights = np.array([groups[k] for k in ordered], dtype=np.int64)
            [change.ci], _ = bootstrap_arrays(vectors, weights, f1_delta_statistic)
        result.fields[labels[key]] = change


def repeat_regressions(result: RepeatComparison, rules: Rules) -> list[str]:
    """Why NEW is worse than BASE (see the module); empty: it is not."""
    found = []
    if result.new_errors:
        found.append(f"{_cases(len(result.new_errors))} with a new error: {', '.join(result.new_errors[:5])}")
    regressed = result.regressed
    if len(regressed) > rules.allow_flips:
        how = f"{result.adjusted_cases}-adjusted across cases " if result.adjusted_cases else ""
        found.append(
            f"{_cases(len(regressed))} whose pass rate fell beyond its runs' noise (one-sided Fisher exact p "
            f"{how}<= --alpha {rules.alpha:g}; > --allow-flips {rules.allow_flips}): "
            + ", ".join(move.shown() for move in regressed[:5])
        )
    if result.ci95 is not None and result.ci95[1] < -rules.max_drop:
        low, high = result.ci95
        found.append(f"mean score fell: its 95% interval {low:+.4f} .. {high:+.4f} is below -{rules.max_drop:g}")
    for name, change in sorted(result.fields.items()):
        if change.ci is not None and change.ci.high < -rules.max_drop:
            found.append(
                f"field {name}: F1 fell: its 95% interval {change.ci.low:+.4f} .. {change.ci.high:+.4f} "
                f"is below -{rules.max_drop:g}"
            )
    return found


def _cases(count: int) -> str:
    return "1 case" if count == 1 else f"{count} cases"


def render_lines(result: RepeatComparison) -> list[str]:
    """The comparison as plain lines (the table and Markdown formats)."""

    def pair(before: float | None, after: float | None, ci: tuple[float, float] | None) -> str:
        if before is None or after is None:
            return "-"
        interval = f", 95% CI {ci[0]:+.3f} .. {ci[1]:+.3f}" if ci is not None else ""
        return f"{before:.3f} -> {after:.3f} (delta {after - before:+.3f}{interval})"

    lines = [
        f"Repeated runs: BASE {result.base_repeats} runs of each case, NEW {result.new_repeats}; "
        f"{result.paired} cases in both (only in BASE: {result.only_in_base}, only in NEW: {result.only_in_new})",
        f"Pass rate over runs: {pair(result.base_rate, result.new_rate, result.rate_ci)}",
        f"pass^K (every run passed): {pair(_share(result.per_case, 0, True), _share(result.per_case, 1, True), None)}; "
        f"pass@K (some run passed): {pair(_share(result.per_case, 0, False), _share(result.per_case, 1, False), None)}",
        f"Mean score: {pair(result.base_mean, result.new_mean, result.ci95)}",
    ]
    how = f" ({result.adjusted_cases}-adjusted across cases)" if result.adjusted_cases else ""
    for title, listing in (
        (f"Pass rate fell beyond the runs' noise (one-sided Fisher p{how} <= {result.alpha:g})", result.regressed),
        ("Pass rate fell within the runs' noise", result.within_noise),
        ("Pass rate rose beyond the runs' noise", result.improved),
    ):
        if listing:
            more = f" and {len(listing) - SHOWN} more" if len(listing) > SHOWN else ""
            lines.append(f"{title}: " + ", ".join(move.shown() for move in listing[:SHOWN]) + more)
    if result.new_errors:
        lines.append("New errors: " + ", ".join(result.new_errors[:SHOWN]))
    if result.fields:
        lines.append("Fields, F1 over all runs (delta [95% CI, a case's runs resampled together]):")
    for name, change in sorted(result.fields.items(), key=lambda item: (item[1].f1_delta or 0.0, item[0])):
        before, after = change.base.f1, change.new.f1
        ci = f" [{change.ci.low:+.3f}, {change.ci.high:+.3f}]" if change.ci is not None else ""
        delta = f"{change.f1_delta:+.3f}" if change.f1_delta is not None else "-"
        was = f"{before:.3f}" if before is not None else "-"
        now = f"{after:.3f}" if after is not None else "-"
        lines.append(f"  field {name}: F1 {was} -> {now} ({delta}{ci})")
    return lines
