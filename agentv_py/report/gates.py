"""Gates: the dataset's `gates:` and `--baseline/--max-drop`, checked against a run's summary.

Pure checks (`gate_checks`) turn the run's totals, per-evaluator means and per-field counts into
one `GateCheck` per gate, each with its value; `load_baseline` reads a previous run's mean score
and per-field counts (the same counts `agentv compare` uses) in bounded memory.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentv_py.models.dataset import Gates
from agentv_py.report.jsonl import not_results, read_rows
from agentv_py.report.regressions import SHOWN_IDS
from agentv_py.scoring.metrics import Counts, FieldKey, row_field_counts
from agentv_py.scoring.thresholds import at_least, at_most


class BaselineError(Exception):
    """--baseline cannot be used: missing, not a results file, or a run of another dataset (the
    session makes it a usage error, exit 2)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class GateCheck:
    """One gate and how the run did on it: `value` (None: nothing to measure, which fails) against `limit`."""

    name: str  # "mean score", "pass rate", "evaluator fa mean", "field total recall", ...
    value: float | None
    op: str  # ">=" (a minimum) or "<=" (a maximum drop)
    limit: float
    why_none: str = "nothing scored"  # what `value` None means here: the gate fails, saying this
    count: bool = False  # `value` counts cases: shown as a whole number
    detail: str = ""  # what the value is made of (the cases that flipped), shown after the outcome

    @property
    def passed(self) -> bool:
        if self.value is None:
            return False
        # Float noise forgiven (`scoring.thresholds`): 0.1 + 0.2 counts as 0.3 against a gate of 0.3.
        return at_least(self.value, self.limit) if self.op == ">=" else at_most(self.value, self.limit)

    @property
    def shown(self) -> str:
        """The value as every view shows it: `0.250`, `3` (a count), `n/a (nothing scored)`."""
        if self.value is None:
            return f"n/a ({self.why_none})"
        return f"{self.value:g}" if self.count else f"{self.value:.3f}"

    @property
    def line(self) -> str:
        line = f"gate {self.name}: {self.shown} ({self.op} {self.limit:g}) {'passed' if self.passed else 'failed'}"
        return f"{line}: {self.detail}" if self.detail else line


# Why a field's rate has no value (its denominator is 0), as a failed gate says it.
_UNDEFINED = {
    "precision": "undefined: the field was never answered",
    "recall": "undefined: the field was never expected",
    "f1": "undefined: the field was never expected nor answered",
}


# Why a field the baseline scored counts as a full drop (its F1 now undefined), by "scored now".
_DROPPED = {False: "not scored in this run", True: "nothing expected or answered in this run"}


@dataclass
class Baseline:
    """What `--baseline` needs of a previous run: its mean score, per-field counts and the cases
    that passed (a case of those that does not pass now is a flip, `compare`'s rule)."""

    path: str
    max_drop: float
    mean: float | None = None
    field_counts: dict[FieldKey, Counts] = field(default_factory=dict)
    passed: frozenset[str] = frozenset()
    allow_flips: int = 0


@dataclass
class Flips:
    """Cases the baseline passed that this run did not pass: how many, and the first in dataset order."""

    count: int = 0
    first: list[tuple[int, str]] = field(default_factory=list)  # (position, case id), at most SHOWN_IDS

    def add(self, position: int, eval_id: str) -> None:
        self.count += 1
        bisect.insort(self.first, (position, eval_id))
        del self.first[SHOWN_IDS:]

    @property
    def shown(self) -> str:
        ids = ", ".join(eval_id for _, eval_id in self.first)
        return ids + (f" (and {self.count - len(self.first)} more)" if self.count > len(self.first) else "")


def load_baseline(
    path: Path,
    max_drop: float,
    *,
    allow_flips: int = 0,
    dataset_path: Path,
    dataset_name: str,
    case_ids: list[str],
    base_dataset: tuple[str, str] | None = None,
) -> Baseline:
    """Read BASE.jsonl (the last row of a case wins, like compare). A run of another dataset is
    refused: by `base_dataset` (path, name), from BASE's manifest when it has one, else when no
    case id is shared."""
    if (why := not_results(path)) is not None:
        raise BaselineError(f"--baseline results file {why}: {path}", hint="pass a JSONL file `agentv eval` wrote")
    if base_dataset is not None and base_dataset != (str(dataset_path.resolve()), dataset_name):
        raise BaselineError(
            f"--baseline {path} is a run of another dataset: '{base_dataset[1]}' ({base_dataset[0]}), "
            f"this run is '{dataset_name}' ({dataset_path.resolve()})",
            hint="gate against a previous run of the same dataset",
        )
    # Two passes keep memory to one entry per case (its last scored line), like compare's index:
    # the first finds each case's last row, the second sums the field counts of those rows only.
    last: dict[str, int] = {}
    scores: dict[str, float] = {}
    passed: dict[str, bool] = {}  # the last row of each case, errors included: did it pass?
    for line, row in read_rows(path):
        if isinstance(row, str):
            raise BaselineError(
                f"--baseline {path}:{line}: {row}",
                hint="the file was cut short or is not a results file: use a complete `agentv eval` output",
            )
        if row.repeat is not None or row.rejudge is not None:
            raise BaselineError(
                f"--baseline {path} is a repeated run (line {line} has `repeat` or `rejudge`): a gate against it "
                "counts every run of a case",
                hint=f"compare the runs with agentv compare {path} RESULTS, which does",
            )
        passed[row.eval_id] = row.status == "ok" and row.verdict == "pass"
        if row.status == "error" or not row.evaluator_results:
            continue
        last[row.eval_id], scores[row.eval_id] = line, row.score
    if base_dataset is None and case_ids and not scores.keys() & set(case_ids):
        raise BaselineError(
            f"--baseline {path} shares no case id with this run: a run of another dataset?",
            hint="gate against a previous run of the same dataset",
        )
    result = Baseline(str(path), max_drop, math.fsum(scores.values()) / len(scores) if scores else None)
    result.passed, result.allow_flips = frozenset(k for k, ok in passed.items() if ok), allow_flips
    for line, row in read_rows(path):
        if not isinstance(row, str) and last.get(row.eval_id) == line:
            for key, value in row_field_counts(row.evaluator_results).items():
                result.field_counts.setdefault(key, Counts())
                result.field_counts[key] += value
    return result


def by_field(counts: Mapping[FieldKey, Counts]) -> dict[str, Counts]:
    """Counts per field path, summed over the evaluators that score it."""
    out: dict[str, Counts] = {}
    for (_, path), value in counts.items():
        out.setdefault(path, Counts())
        out[path] += value
    return out


def gate_checks(
    *,
    mean: float | None,
    pass_rate: float | None,
    evaluator_means: Mapping[str, float],
    field_counts: Mapping[FieldKey, Counts],
    threshold: float | None = None,
    gates: Gates | None = None,
    baseline: Baseline | None = None,
    flips: Flips | None = None,
) -> list[GateCheck]:
    """Every gate of the run, in a fixed order: --threshold, the dataset's gates, then the baseline's."""
    checks: list[GateCheck] = []
    if threshold is not None:
        checks.append(GateCheck("mean score", mean, ">=", threshold))
    if gates is not None:
        if gates.min_mean_score is not None:
            checks.append(GateCheck("mean score", mean, ">=", gates.min_mean_score))
        if gates.min_pass_rate is not None:
            checks.append(GateCheck("pass rate", pass_rate, ">=", gates.min_pass_rate))
        for name, evaluator_gate in gates.evaluators.items():
            checks.append(GateCheck(f"evaluator {name} mean", evaluator_means.get(name), ">=", evaluator_gate.min_mean))
        fields = by_field(field_counts)
        for path, field_gate in gates.fields.items():
            counts = fields.get(path, Counts())
            for metric in ("precision", "recall", "f1"):
                limit = getattr(field_gate, metric)
                if limit is not None:
                    why = _UNDEFINED[metric] if path in fields else "the field was not scored in this run"
                    checks.append(GateCheck(f"field {path} {metric}", getattr(counts, metric), ">=", limit, why))
    if baseline is not None:
        if flips is not None:  # compare's golden rule: a case that passed and does not now fails the gate
            name, limit = "cases pass -> not pass vs baseline", baseline.allow_flips
            checks.append(GateCheck(name, flips.count, "<=", limit, count=True, detail=flips.shown))
        drop = None if mean is None or baseline.mean is None else baseline.mean - mean
        checks.append(GateCheck("mean score drop vs baseline", drop, "<=", baseline.max_drop))
        before, after = by_field(baseline.field_counts), by_field(field_counts)
        for path in sorted(before):  # fail closed: a field the baseline scored and this run does not is a full drop
            old = before[path].f1
            if old is None:
                continue  # nothing expected or answered in the baseline: nothing to lose
            new = after[path].f1 if path in after else None
            why = "" if new is not None else _DROPPED[path in after]
            name = f"field {path} f1 drop vs baseline"
            checks.append(GateCheck(name, old - (new or 0.0), "<=", baseline.max_drop, detail=why))
    return checks
