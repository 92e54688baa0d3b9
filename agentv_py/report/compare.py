"""`agentv compare BASE NEW`: what changed between two results files of the same dataset.

Per-case score deltas and verdict changes, per-field hit/miss changes (`field_accuracy`'s
`details.fields`) and per-field F1 (the counts `agentv metrics` sums: `scoring.metrics.row_field_counts`),
and paired statistics over the cases in both files: an exact McNemar test on pass/fail and a
paired bootstrap confidence interval on the mean score delta.

Both files are streamed: BASE is read once into per-case tables (a score, a verdict and one
byte per field), NEW is compared row by row against them. Memory grows with the number of
cases and fields, never with the size of the rows.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.models.results import ResultRow
from agentv_py.report.jsonl import read_rows
from agentv_py.report.manifest import ManifestError, read_manifest
from agentv_py.report.render import visible
from agentv_py.scoring.metrics import Counts, FieldKey, field_labels, row_field_counts, walk_results

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 14  # fixed: the same two files always give the same interval
DEFAULT_ALPHA = 0.05
_BOOTSTRAP_CELLS = 2_000_000  # resample indices drawn at once (memory of one batch: 16 MB)

# one byte per field per case: how field_accuracy scored the field
_ABSENT, _HIT, _MISS, _OTHER = 0, 1, 2, 3
_STATUS = {"hit": _HIT, "miss": _MISS}


class CompareError(Exception):
    """Input that cannot be compared (missing or bad file, the same file twice, other datasets)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass
class CaseChange:
    eval_id: str
    base_score: float
    new_score: float
    base_verdict: str
    new_verdict: str

    @property
    def delta(self) -> float:
        return self.new_score - self.base_score

    def to_json(self) -> dict[str, Any]:
        return {
            "eval_id": self.eval_id,
            "base_score": self.base_score,
            "new_score": self.new_score,
            "delta": self.delta,
            "base_verdict": self.base_verdict,
            "new_verdict": self.new_verdict,
        }


@dataclass
class FieldChange:
    hit_to_miss: list[str] = field(default_factory=list)
    miss_to_hit: list[str] = field(default_factory=list)
    base: Counts = field(default_factory=Counts)
    new: Counts = field(default_factory=Counts)

    @property
    def f1_delta(self) -> float | None:
        before, after = self.base.f1, self.new.f1
        return None if before is None or after is None else after - before

    def to_json(self) -> dict[str, Any]:
        return {
            "hit_to_miss": self.hit_to_miss,
            "miss_to_hit": self.miss_to_hit,
            "base_f1": self.base.f1,
            "new_f1": self.new.f1,
            "f1_delta": self.f1_delta,
        }


@dataclass
class Comparison:
    base: str
    new: str
    paired: int = 0
    base_mean: float | None = None
    new_mean: float | None = None
    base_pass_rate: float | None = None
    new_pass_rate: float | None = None
    ci95: tuple[float, float] | None = None
    pass_to_fail: int = 0
    fail_to_pass: int = 0
    p_value: float | None = None
    verdict_changes: dict[str, int] = field(default_factory=dict)  # "pass->fail" -> cases
    changed: list[CaseChange] = field(default_factory=list)  # score or verdict changed, worst first
    only_in_base: list[str] = field(default_factory=list)
    only_in_new: list[str] = field(default_factory=list)
    errored: dict[str, str] = field(default_factory=dict)  # eval_id -> "base" | "new" | "both"
    fields: dict[str, FieldChange] = field(default_factory=dict)
    forced: list[str] = field(default_factory=list)  # checks --force overrode
    regressions: list[str] = field(default_factory=list)  # why the gate failed (empty: passed)

    @property
    def mean_delta(self) -> float | None:
        if self.base_mean is None or self.new_mean is None:
            return None
        return self.new_mean - self.base_mean

    def to_json(self, max_drop: float | None, alpha: float) -> dict[str, Any]:
        """The `--format json` document; its keys are documented in docs/metrics.md."""
        return {
            "base": self.base,
            "new": self.new,
            "paired_cases": self.paired,
            "mean_score": {
                "base": self.base_mean,
                "new": self.new_mean,
                "delta": self.mean_delta,
                "ci95": list(self.ci95) if self.ci95 else None,
                "resamples": BOOTSTRAP_RESAMPLES,
                "seed": BOOTSTRAP_SEED,
            },
            "pass_rate": {"base": self.base_pass_rate, "new": self.new_pass_rate},
            "mcnemar": {"pass_to_fail": self.pass_to_fail, "fail_to_pass": self.fail_to_pass, "p_value": self.p_value},
            "verdict_changes": dict(sorted(self.verdict_changes.items())),
            "cases": [change.to_json() for change in self.changed],
            "only_in_base": self.only_in_base,
            "only_in_new": self.only_in_new,
            "errored": dict(sorted(self.errored.items())),
            "fields": {name: change.to_json() for name, change in sorted(self.fields.items())},
            "gate": {
                "max_drop": max_drop,
                "alpha": alpha,
                "passed": not self.regressions,
                "regressions": self.regressions,
            },
            "forced": self.forced,
        }


def mcnemar_p(pass_to_fail: int, fail_to_pass: int) -> float:
    """The exact (binomial) two-sided McNemar p-value on the discordant pairs; 1.0 without any."""
    discordant = pass_to_fail + fail_to_pass
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(pass_to_fail, discordant, 0.5).pvalue)


def bootstrap_ci(
    deltas: Any, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED, level: float = 0.95
) -> tuple[float, float] | None:
    """A percentile bootstrap interval on the mean of paired deltas (cases resampled with
    replacement, a fixed seed); None without any case. Resampled in batches: memory stays small."""
    import numpy as np

    values = np.asarray(deltas, dtype=np.float64)
    n = len(values)
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    batch = max(1, _BOOTSTRAP_CELLS // n)
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        means[start : start + size] = values[rng.integers(0, n, size=(size, n))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def field_statuses(row: ResultRow) -> dict[FieldKey, int]:
    """(evaluator name, field path) -> hit / miss / other, from every `field_accuracy` result's
    `details.fields`, nested ones included."""
    statuses: dict[FieldKey, int] = {}
    for name, kind, details in walk_results(row.evaluator_results):
        fields = details.get("fields")
        if kind != "field_accuracy" or not isinstance(fields, list):
            continue
        for entry in fields:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                statuses[(name, entry["path"])] = _STATUS.get(str(entry.get("status")), _OTHER)
    return statuses


def _rows(path: Path, role: str) -> Iterator[ResultRow]:
    """The rows of a results file; a line that is not a row stops the comparison (exit 2)."""
    for line, row in read_rows(path):
        if isinstance(row, str):
            raise CompareError(
                f"{role} {path}:{line}: {row}",
                hint="the file was cut short or is not a results file: compare complete `agentv eval` outputs",
            )
        yield row


def _is_error(row: ResultRow) -> bool:
    return row.status == "error" or not row.evaluator_results


@dataclass
class _Base:
    """BASE's per-case tables: index by id, score, verdict, one status byte per field."""

    index: dict[str, int] = field(default_factory=dict)
    scores: list[float] = field(default_factory=list)
    verdicts: bytearray = field(default_factory=bytearray)
    statuses: list[bytes] = field(default_factory=list)
    errored: set[str] = field(default_factory=set)
    counts: dict[FieldKey, Counts] = field(default_factory=dict)


_VERDICTS = ("pass", "partial", "fail")


def _check_files(base: Path, new: Path) -> None:
    for role, path in (("BASE", base), ("NEW", new)):
        if not path.is_file():
            raise CompareError(
                f"{role} results file not found: {path}", hint="pass two JSONL files `agentv eval` wrote (--out)"
            )
    if os.path.samefile(base, new):
        raise CompareError(
            f"BASE and NEW are the same file: {base}", hint="compare a run with another run of the same dataset"
        )


def _check_manifests(base: Path, new: Path, force: bool, forced: list[str]) -> bool:
    """True when both files have a manifest (their datasets were compared), False otherwise."""
    try:
        before, after = read_manifest(base), read_manifest(new)
    except ManifestError:
        return False
    a, b = before.dataset, after.dataset
    if (a.path, a.name) != (b.path, b.name):
        message = f"different datasets: BASE ran '{a.name}' ({a.path}), NEW ran '{b.name}' ({b.path})"
        if not force:
            raise CompareError(message, hint="compare runs of one dataset, or pass --force to compare them anyway")
        forced.append(message)
    return True


def compare(
    base: str | Path,
    new: str | Path,
    *,
    max_drop: float | None = None,
    alpha: float = DEFAULT_ALPHA,
    force: bool = False,
) -> Comparison:
    """Compare two results files (see the module docstring); CompareError for input that cannot
    be compared. `regressions` says why the gate failed: a mean-score or field-F1 drop over
    `max_drop`, or more pass->fail than fail->pass with McNemar p < `alpha`."""
    base_path, new_path = Path(base), Path(new)
    _check_files(base_path, new_path)
    result = Comparison(str(base), str(new))
    by_manifest = _check_manifests(base_path, new_path, force, result.forced)

    field_names: dict[FieldKey, int] = {}
    table = _Base()
    for row in _rows(base_path, "BASE"):
        if _is_error(row):
            table.errored.add(row.eval_id)
            continue
        table.errored.discard(row.eval_id)
        statuses = bytearray(len(field_names))
        for key, status in field_statuses(row).items():
            slot = field_names.setdefault(key, len(field_names))
            if slot >= len(statuses):
                statuses.extend(bytes(slot + 1 - len(statuses)))
            statuses[slot] = status
        for key, counts in row_field_counts(row.evaluator_results).items():
            table.counts.setdefault(key, Counts())
            table.counts[key] += counts
        slot = table.index.setdefault(row.eval_id, len(table.scores))
        if slot == len(table.scores):
            table.scores.append(row.score)
            table.verdicts.append(_VERDICTS.index(row.verdict))
            table.statuses.append(bytes(statuses))
        else:  # a later row of the same case (a resumed run) replaces the earlier one
            table.scores[slot], table.verdicts[slot] = row.score, _VERDICTS.index(row.verdict)
            table.statuses[slot] = bytes(statuses)

    import numpy as np

    new_errored: set[str] = set()
    new_ids: dict[str, None] = {}
    deltas: list[float] = []
    base_sum = new_sum = 0.0
    base_passed = new_passed = 0
    new_counts: dict[FieldKey, Counts] = {}
    moves: dict[FieldKey, FieldChange] = {}
    paired_rows: dict[str, CaseChange] = {}
    for row in _rows(new_path, "NEW"):
        new_ids[row.eval_id] = None
        if _is_error(row):
            new_errored.add(row.eval_id)
            continue
        new_errored.discard(row.eval_id)
        for key, counts in row_field_counts(row.evaluator_results).items():
            new_counts.setdefault(key, Counts())
            new_counts[key] += counts
        at = table.index.get(row.eval_id)
        if at is None:
            continue
        before = table.statuses[at]
        for key, status in field_statuses(row).items():
            index = field_names.get(key)
            was = before[index] if index is not None and index < len(before) else _ABSENT
            if (was, status) == (_HIT, _MISS):
                moves.setdefault(key, FieldChange()).hit_to_miss.append(row.eval_id)
            elif (was, status) == (_MISS, _HIT):
                moves.setdefault(key, FieldChange()).miss_to_hit.append(row.eval_id)
        paired_rows[row.eval_id] = CaseChange(
            row.eval_id, table.scores[at], row.score, _VERDICTS[table.verdicts[at]], row.verdict
        )

    for eval_id, change in paired_rows.items():  # the last row of each case counts
        if eval_id in new_errored or eval_id in table.errored:
            continue
        deltas.append(change.delta)
        base_sum += change.base_score
        new_sum += change.new_score
        was_pass, is_pass = change.base_verdict == "pass", change.new_verdict == "pass"
        base_passed += was_pass
        new_passed += is_pass
        result.pass_to_fail += was_pass and not is_pass
        result.fail_to_pass += is_pass and not was_pass
        if change.base_verdict != change.new_verdict:
            moved_to = f"{change.base_verdict}->{change.new_verdict}"
            result.verdict_changes[moved_to] = result.verdict_changes.get(moved_to, 0) + 1
        if change.delta != 0 or change.base_verdict != change.new_verdict:
            result.changed.append(change)
    result.changed.sort(key=lambda change: (change.delta, change.eval_id))

    base_ids = table.index.keys() | table.errored
    result.only_in_base = sorted(eval_id for eval_id in base_ids if eval_id not in new_ids)
    result.only_in_new = sorted(eval_id for eval_id in new_ids if eval_id not in base_ids)
    for eval_id in sorted((table.errored | new_errored) & (base_ids & new_ids.keys())):
        side = "both" if eval_id in table.errored and eval_id in new_errored else "base"
        result.errored[eval_id] = side if eval_id in table.errored else "new"
    if not by_manifest and base_ids and new_ids and not (base_ids & new_ids.keys()):
        message = f"no case id is in both files ({len(base_ids)} in BASE, {len(new_ids)} in NEW): not the same dataset"
        if not force:
            raise CompareError(message, hint="compare runs of one dataset, or pass --force to compare them anyway")
        result.forced.append(message)

    for key in table.counts.keys() | new_counts.keys():
        moved = moves.setdefault(key, FieldChange())
        moved.base, moved.new = table.counts.get(key, Counts()), new_counts.get(key, Counts())
    labels = field_labels(moves)  # the bare field, or `evaluator/field` when several evaluators name it
    for key, moved in moves.items():
        moved.hit_to_miss.sort()  # rows are written as cases finish: sorted, the output is stable
        moved.miss_to_hit.sort()
        result.fields[labels[key]] = moved

    result.paired = len(deltas)
    if deltas:
        result.base_mean, result.new_mean = base_sum / len(deltas), new_sum / len(deltas)
        result.base_pass_rate, result.new_pass_rate = base_passed / len(deltas), new_passed / len(deltas)
        result.ci95 = bootstrap_ci(np.asarray(deltas, dtype=np.float64))
    result.p_value = mcnemar_p(result.pass_to_fail, result.fail_to_pass)
    result.regressions = regressions(result, max_drop, alpha)
    return result


def regressions(result: Comparison, max_drop: float | None, alpha: float) -> list[str]:
    """Why NEW is worse than BASE by the gate's rules (empty: it is not)."""
    found: list[str] = []
    delta = result.mean_delta
    if max_drop is not None and delta is not None and -delta > max_drop + 1e-12:
        found.append(f"mean score dropped by {-delta:.4f} (> --max-drop {max_drop:g})")
    if max_drop is not None:
        for name, moved in sorted(result.fields.items()):
            f1 = moved.f1_delta
            if f1 is not None and -f1 > max_drop + 1e-12:
                found.append(f"field {name}: F1 dropped by {-f1:.4f} (> --max-drop {max_drop:g})")
    if result.p_value is not None and result.p_value < alpha and result.pass_to_fail > result.fail_to_pass:
        found.append(
            f"{result.pass_to_fail} pass->fail vs {result.fail_to_pass} fail->pass: "
            f"McNemar p = {result.p_value:.4g} < --alpha {alpha:g}"
        )
    return found


SHOWN = 10  # cases (and case ids per field) listed in the table and Markdown; JSON has them all


def _num(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN])
    return shown + (f" (+{len(ids) - SHOWN} more)" if len(ids) > SHOWN else "")


def summary_lines(result: Comparison, alpha: float) -> list[str]:
    """The headline numbers, one per line (the table's and the Markdown's first lines)."""
    lines = [f"{result.paired} cases in both files"]
    if result.paired:
        low, high = result.ci95 or (0.0, 0.0)
        lines.append(
            f"mean score {_num(result.base_mean)} -> {_num(result.new_mean)} "
            f"(delta {_num(result.mean_delta, sign=True)}, 95% CI {low:+.3f} .. {high:+.3f})"
        )
        lines.append(f"pass rate {_num(result.base_pass_rate)} -> {_num(result.new_pass_rate)}")
    lines.append(
        f"McNemar: {result.pass_to_fail} pass->fail, {result.fail_to_pass} fail->pass, "
        f"p = {result.p_value:.4g} (alpha {alpha:g})"
    )
    for label, ids in (("only in BASE", result.only_in_base), ("only in NEW", result.only_in_new)):
        if ids:
            lines.append(f"{len(ids)} {label}: {_ids(ids)}")
    if result.errored:
        lines.append(f"{len(result.errored)} errored (not compared): {_ids(sorted(result.errored))}")
    return lines


def render_table(console: Any, result: Comparison, alpha: float) -> None:
    """Rich tables: headline, changed cases (worst first, SHOWN of them), changed fields. Data
    (ids, field paths) goes through `visible` and is printed as plain text, never as markup."""
    from rich.table import Table
    from rich.text import Text

    for line in summary_lines(result, alpha):
        console.print(Text(visible(line)))
    if result.changed:
        cases = Table(title=f"Changed cases ({len(result.changed)}, worst first)", title_justify="left")
        for column in ("case", "base", "new", "delta", "verdict"):
            cases.add_column(column, justify="left" if column in ("case", "verdict") else "right")
        for change in result.changed[:SHOWN]:
            verdict = change.new_verdict
            if change.base_verdict != change.new_verdict:
                verdict = f"{change.base_verdict} -> {change.new_verdict}"
            cases.add_row(
                Text(visible(change.eval_id)),
                _num(change.base_score),
                _num(change.new_score),
                _num(change.delta, sign=True),
                verdict,
            )
        console.print(cases)
        if len(result.changed) > SHOWN:
            console.print(Text(f"{len(result.changed) - SHOWN} more changed cases: --format json lists them all"))
    if result.fields:
        table = Table(title="Fields", title_justify="left")
        for column in ("field", "hit->miss", "miss->hit", "F1 base", "F1 new", "F1 delta"):
            table.add_column(column, justify="left" if column == "field" else "right")
        for name, moved in sorted(result.fields.items()):
            table.add_row(
                Text(visible(name)),
                str(len(moved.hit_to_miss)),
                str(len(moved.miss_to_hit)),
                _num(moved.base.f1),
                _num(moved.new.f1),
                _num(moved.f1_delta, sign=True),
            )
        console.print(table)
        for name, moved in sorted(result.fields.items()):
            if moved.hit_to_miss:
                console.print(Text(visible(f"{name} hit->miss: {_ids(moved.hit_to_miss)}")))
    console.print(Text(_verdict_line(result)))


def _verdict_line(result: Comparison) -> str:
    if not result.regressions:
        return "no regression"
    return "regression: " + "; ".join(visible(reason) for reason in result.regressions)


def _md(text: str) -> str:
    """A table cell: pipes escaped, control characters made visible."""
    return visible(text).replace("|", "\\|")


def render_markdown(result: Comparison, alpha: float) -> str:
    """The comparison as GitHub-flavoured Markdown (a PR comment, a step summary)."""
    out = [f"## Compare `{_md(result.base)}` -> `{_md(result.new)}`", ""]
    out += [f"- {_md(line)}" for line in summary_lines(result, alpha)]
    out += ["", f"**{_md(_verdict_line(result))}**", ""]
    if result.changed:
        out += [f"### Changed cases ({len(result.changed)}, worst first)", ""]
        out += ["| case | base | new | delta | verdict |", "|---|---:|---:|---:|---|"]
        for change in result.changed[:SHOWN]:
            out.append(
                f"| {_md(change.eval_id)} | {_num(change.base_score)} | {_num(change.new_score)} "
                f"| {_num(change.delta, sign=True)} | {change.base_verdict} -> {change.new_verdict} |"
            )
        if len(result.changed) > SHOWN:
            out.append(f"\n{len(result.changed) - SHOWN} more (see `--format json`).")
        out.append("")
    if result.fields:
        out += ["### Fields", "", "| field | hit->miss | miss->hit | F1 base | F1 new | F1 delta |"]
        out.append("|---|---:|---:|---:|---:|---:|")
        for name, moved in sorted(result.fields.items()):
            out.append(
                f"| {_md(name)} | {len(moved.hit_to_miss)} | {len(moved.miss_to_hit)} | {_num(moved.base.f1)} "
                f"| {_num(moved.new.f1)} | {_num(moved.f1_delta, sign=True)} |"
            )
        out.append("")
    return "\n".join(out)
