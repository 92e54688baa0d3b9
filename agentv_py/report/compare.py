"""`agentv compare BASE NEW`: what changed between two results files of the same dataset.

Per-case score deltas and verdict changes, per-field hit/miss changes (`field_accuracy`'s
`details.fields`) and per-field F1 (the counts `agentv metrics` sums: `scoring.metrics.row_field_counts`),
and paired statistics over the cases in both files: an exact McNemar test on pass/fail and a
paired bootstrap confidence interval on the mean score delta.

Memory stays flat in the number of rows: both files are streamed into a temporary SQLite
database (report/compare_store.py: one record per case, its last row's score, verdict and
per-field status and counts), the cases in both are walked once in order of id
(report/compare_pairs.py), the changed cases and the per-field case lists go back to the store,
and the reports read them in order. Held in memory: the per-field tables and 8 bytes per paired
case (the score deltas the bootstrap resamples).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from agentv_py.report.compare_fields import add_field_statistics, ranked
from agentv_py.report.compare_pairs import pair
from agentv_py.report.compare_repeats import RepeatComparison, compare_repeated, repeated
from agentv_py.report.compare_store import (
    HIT_TO_MISS,
    MISS_TO_HIT,
    VERDICTS,
    CompareError,
    Fields,
    Store,
    check_field_results,
    load_side,
    text_of,
)
from agentv_py.report.jsonl import not_results
from agentv_py.report.jsonstream import Objects, Pairs, write_json
from agentv_py.report.manifest import ManifestError, read_manifest
from agentv_py.report.regressions import Rules, regressions
from agentv_py.scoring.intervals import LEVEL, SEED, Interval
from agentv_py.scoring.metrics import Counts, field_labels
from agentv_py.scoring.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_ci, mcnemar_p

_CHANGED = "SELECT * FROM changed ORDER BY delta, id LIMIT ?"
CASE_KEYS = ("eval_id", "base_score", "new_score", "delta", "base_verdict", "new_verdict")  # a changed case in JSON


@dataclass(frozen=True)
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
        """The case as `--format json` lists it (`Comparison.write_json` writes the same values
        without building this dict)."""
        values = (self.eval_id, self.base_score, self.new_score, self.delta, self.base_verdict, self.new_verdict)
        return dict(zip(CASE_KEYS, values, strict=True))


@dataclass
class FieldChange:
    """One field's counts in both runs and how many paired cases moved (the ids are in the store)."""

    slot: int
    hit_to_miss: int = 0
    miss_to_hit: int = 0
    base: Counts = field(default_factory=Counts)
    new: Counts = field(default_factory=Counts)
    # the paired tests (report/compare_fields.py): McNemar's p, adjusted across fields, and the
    # bootstrap interval of the F1 delta
    p_value: float | None = None
    p_adjusted: float | None = None
    f1_delta_ci: Interval | None = None

    @property
    def f1_delta(self) -> float | None:
        """NEW's F1 minus BASE's; a field BASE scored that NEW does not (nothing expected or answered
        there, or no result at all) counts as F1 0: a full drop. None when BASE has no F1."""
        before, after = self.base.f1, self.new.f1
        return None if before is None else (after or 0.0) - before


@dataclass
class Comparison:
    """The comparison's numbers, with its case lists read back from the store in order. A
    context manager: closing it deletes the store."""

    base: str
    new: str
    _store: Store
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
    changed_count: int = 0  # paired cases whose score or verdict changed
    only_in_base_count: int = 0
    only_in_new_count: int = 0
    errored_count: int = 0
    fields: dict[str, FieldChange] = field(default_factory=dict)
    correction: str = "holm"  # how the fields' p-values are adjusted (`--correction`)
    forced: list[str] = field(default_factory=list)  # checks --force overrode
    regressions: list[str] = field(default_factory=list)  # why the gate failed (empty: passed)

    def __enter__(self) -> Comparison:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._store.close()

    @property
    def mean_delta(self) -> float | None:
        if self.base_mean is None or self.new_mean is None:
            return None
        return self.new_mean - self.base_mean

    def changed(self, limit: int = -1) -> Iterator[CaseChange]:
        """Changed cases, worst delta first (then by id)."""
        for raw, before, after, _, was, now in self._store.rows(_CHANGED, limit):
            yield CaseChange(text_of(raw), before, after, VERDICTS[was], VERDICTS[now])

    def _changed_json(self) -> Iterator[tuple[str, float, float, float, str, str]]:
        """`changed` as the values of `CaseChange.to_json`, without a CaseChange or dict each."""
        for raw, before, after, _, was, now in self._store.rows(_CHANGED, -1):
            yield text_of(raw), before, after, after - before, VERDICTS[was], VERDICTS[now]

    def only_in(self, side: str, limit: int = -1) -> Iterator[str]:
        """Ids of the cases in one file only (`side` "base" or "new"), sorted."""
        if not (self.only_in_base_count if side == "base" else self.only_in_new_count):
            return iter(())  # known: no need to scan the table
        other = "new" if side == "base" else "base"
        sql = f"SELECT id FROM {side} WHERE id NOT IN (SELECT id FROM {other}) ORDER BY id LIMIT ?"
        return (text_of(raw) for (raw,) in self._store.rows(sql, limit))

    def errored(self, limit: int = -1) -> Iterator[tuple[str, str]]:
        """(id, "base" | "new" | "both") for the cases in both files with an error row, sorted."""
        if not self.errored_count:
            return
        sql = (
            "SELECT b.id, b.errored, n.errored FROM base b JOIN new n ON n.id = b.id"
            " WHERE b.errored OR n.errored ORDER BY b.id LIMIT ?"
        )
        for raw, in_base, in_new in self._store.rows(sql, limit):
            yield text_of(raw), "both" if in_base and in_new else "base" if in_base else "new"

    def flipped(self, limit: int = -1) -> Iterator[str]:
        """Ids of the paired cases that went from pass to not pass, sorted."""
        sql = "SELECT id FROM changed WHERE bv = 0 AND nv != 0 ORDER BY id LIMIT ?"
        return (text_of(raw) for (raw,) in self._store.rows(sql, limit))

    _NEW_ERRORS = "FROM new n LEFT JOIN base b ON b.id = n.id WHERE n.errored AND (b.id IS NULL OR NOT b.errored)"

    def new_errors(self, limit: int = -1) -> Iterator[str]:
        """Ids of the cases with an error row in NEW and none in BASE (in NEW only included), sorted."""
        if not self._store.errored_rows["new"]:
            return iter(())
        sql = f"SELECT n.id {self._NEW_ERRORS} ORDER BY n.id LIMIT ?"
        return (text_of(raw) for (raw,) in self._store.rows(sql, limit))

    def new_error_count(self) -> int:
        if not self._store.errored_rows["new"]:
            return 0
        return self._store.count(f"SELECT COUNT(*) {self._NEW_ERRORS}")

    def moved(self, name: str, direction: int, limit: int = -1) -> Iterator[str]:
        """Ids of the cases where field `name` went hit -> miss (`HIT_TO_MISS`) or back, sorted."""
        sql = "SELECT id FROM moves WHERE slot = ? AND direction = ? ORDER BY id LIMIT ?"
        return (text_of(raw) for (raw,) in self._store.rows(sql, self.fields[name].slot, direction, limit))

    def hit_to_miss(self, name: str, limit: int = -1) -> Iterator[str]:
        return self.moved(name, HIT_TO_MISS, limit)

    def miss_to_hit(self, name: str, limit: int = -1) -> Iterator[str]:
        return self.moved(name, MISS_TO_HIT, limit)

    def write_json(self, out: IO[str], rules: Rules) -> None:
        """The `--format json` document (keys documented in docs/metrics.md), written as it is
        read: the case lists never sit in memory."""
        fields = {
            name: {
                "hit_to_miss": self.hit_to_miss(name),
                "miss_to_hit": self.miss_to_hit(name),
                "base_f1": moved.base.f1,
                "new_f1": moved.new.f1,
                "f1_delta": moved.f1_delta,
                "f1_delta_ci95": moved.f1_delta_ci.to_dict() if moved.f1_delta_ci is not None else None,
                "p_value": moved.p_value,
                "p_adjusted": moved.p_adjusted,
            }
            for name, moved in ((name, self.fields[name]) for name in ranked(self.fields))
        }
        document: dict[str, Any] = {
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
            "cases": Objects(CASE_KEYS, self._changed_json()),
            "only_in_base": self.only_in("base"),
            "only_in_new": self.only_in("new"),
            "errored": Pairs(self.errored()),
            "fields": fields,  # ranked by evidence of change: adjusted p, then |F1 delta|
            "field_tests": {"test": "exact McNemar", "correction": self.correction, "seed": SEED, "level": LEVEL},
            "gate": {
                "max_drop": rules.max_drop,
                "allow_flips": rules.allow_flips,
                "significant_only": rules.significant_only,
                "alpha": rules.alpha,
                "passed": not self.regressions,
                "regressions": self.regressions,
            },
            "forced": self.forced,
        }
        write_json(out, document, 0)
        out.write("\n")


def check_files(base: Path, new: Path) -> None:
    for role, path in (("BASE", base), ("NEW", new)):
        if (why := not_results(path)) is not None:
            raise CompareError(
                f"{role} results file {why}: {path}", hint="pass two JSONL files `agentv eval` wrote (--out)"
            )
    if os.path.samefile(base, new):
        raise CompareError(
            f"BASE and NEW are the same file: {base}", hint="compare a run with another run of the same dataset"
        )


def check_manifests(base: Path, new: Path, force: bool, forced: list[str]) -> bool:
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
    rules: Rules | None = None,
    force: bool = False,
) -> Comparison | RepeatComparison:
    """Compare two results files (see the module docstring); CompareError for input that cannot
    be compared. `regressions` says why the gate failed by `rules` (report/regressions.py: by
    default any flip, new error, or fall of the mean or of a field's F1). Close the result (it is
    a context manager) to delete its store."""
    base_path, new_path = Path(base), Path(new)
    check_files(base_path, new_path)
    forced: list[str] = []
    by_manifest = check_manifests(base_path, new_path, force, forced)
    if repeated(base_path) or repeated(new_path):  # every run of a case counts (report/compare_repeats.py)
        return compare_repeated(base_path, new_path, rules or Rules(), forced)
    store = Store()
    try:
        result = Comparison(str(base), str(new), store, forced=forced)
        fields = Fields()
        in_base = load_side(store, "base", base_path, "BASE", fields)
        in_new = load_side(store, "new", new_path, "NEW", fields)
        paired = pair(store, fields)
        shared = paired.shared
        if not by_manifest and in_base and in_new and not shared:
            message = f"no case id is in both files ({in_base} in BASE, {in_new} in NEW): not the same dataset"
            if not force:
                raise CompareError(message, hint="compare runs of one dataset, or pass --force to compare them anyway")
            result.forced.append(message)
        result.only_in_base_count, result.only_in_new_count = in_base - shared, in_new - shared
        result.errored_count = paired.errored
        check_field_results(store, fields)
        store.db.execute("COMMIT")
        deltas = paired.deltas
        result.paired, result.changed_count = len(deltas), paired.changed
        result.base_mean, result.new_mean = paired.base_mean, paired.new_mean
        result.base_pass_rate, result.new_pass_rate = paired.base_pass_rate, paired.new_pass_rate
        result.pass_to_fail, result.fail_to_pass = paired.pass_to_fail, paired.fail_to_pass
        result.verdict_changes = paired.verdict_changes

        keys = {key for key, slot in fields.slots.items() if _has_data(fields, slot)}
        labels = field_labels(keys)  # the bare field, or `evaluator/field` when several evaluators name it
        for key in keys:
            slot = fields.slots[key]
            result.fields[labels[key]] = FieldChange(
                slot,
                hit_to_miss=fields.moves.get((slot, HIT_TO_MISS), 0),
                miss_to_hit=fields.moves.get((slot, MISS_TO_HIT), 0),
                base=fields.counts[0].get(slot, Counts()),
                new=fields.counts[1].get(slot, Counts()),
            )
        rules = rules or Rules()
        add_field_statistics(store, result.fields, rules.correction)
        result.correction = rules.correction
        result.ci95 = bootstrap_ci(deltas)
        result.p_value = mcnemar_p(result.pass_to_fail, result.fail_to_pass)
        result.regressions = regressions(result, rules)
        return result
    except BaseException:
        store.close()
        raise


def _has_data(fields: Fields, slot: int) -> bool:
    """A field is reported when either run counted it or a case moved on it."""
    return (
        slot in fields.counts[0]
        or slot in fields.counts[1]
        or (slot, HIT_TO_MISS) in fields.moves
        or (slot, MISS_TO_HIT) in fields.moves
    )
