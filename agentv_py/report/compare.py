"""`agentv compare BASE NEW`: what changed between two results files of the same dataset.

Per-case score deltas and verdict changes, per-field hit/miss changes (`field_accuracy`'s
`details.fields`) and per-field F1 (the counts `agentv metrics` sums: `scoring.metrics.row_field_counts`),
and paired statistics over the cases in both files: an exact McNemar test on pass/fail and a
paired bootstrap confidence interval on the mean score delta.

Memory stays flat in the number of rows: both files are streamed into a temporary SQLite
database (one record per case: its last row's score, verdict and per-field status and counts),
the pairing, the changed cases and the per-field case lists are SQL over it, and the reports
read them back in order. Held in memory: the per-field tables and 8 bytes per paired case (the
score deltas the bootstrap resamples).
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from agentv_py.models.results import ResultRow
from agentv_py.report.jsonl import UnusableInput, not_results, read_rows
from agentv_py.report.jsonstream import Pairs, write_json
from agentv_py.report.manifest import ManifestError, read_manifest
from agentv_py.report.regressions import Rules, regressions
from agentv_py.report.render import visible
from agentv_py.scoring.metrics import Counts, FieldKey, field_labels, row_field_counts, walk_results
from agentv_py.scoring.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_ci, mcnemar_p

_BATCH = 2000  # rows inserted at once

# per field of a case: how field_accuracy scored it, and its TP/TN/FP/FN
_ABSENT, _HIT, _MISS, _OTHER = 0, 1, 2, 3
_STATUS = {"hit": _HIT, "miss": _MISS}
_VERDICTS = ("pass", "partial", "fail")
_HIT_TO_MISS, _MISS_TO_HIT = 0, 1
_SIDES = ("base", "new")


class CompareError(UnusableInput):
    """Input that cannot be compared (missing or bad file, the same file twice, other datasets)."""


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
    """One field's counts in both runs and how many paired cases moved (the ids are in the store)."""

    slot: int
    hit_to_miss: int = 0
    miss_to_hit: int = 0
    base: Counts = field(default_factory=Counts)
    new: Counts = field(default_factory=Counts)

    @property
    def f1_delta(self) -> float | None:
        """NEW's F1 minus BASE's; a field BASE scored that NEW does not (nothing expected or answered
        there, or no result at all) counts as F1 0: a full drop. None when BASE has no F1."""
        before, after = self.base.f1, self.new.f1
        return None if before is None else (after or 0.0) - before


class _Store:
    """The temporary SQLite database behind one comparison (deleted on close)."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="agentv-compare-")
        self.db = sqlite3.connect(os.path.join(self._dir.name, "compare.sqlite3"), isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = FILE", "cache_size = -8192"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute("BEGIN")
        for side in _SIDES:  # ids are UTF-8 BLOBs: any text round-trips, and they sort as Python sorts str
            self.db.execute(
                f"CREATE TABLE {side} (id BLOB PRIMARY KEY, score REAL, verdict INT, errored INT, fields BLOB)"
                " WITHOUT ROWID"
            )
        self.db.execute("CREATE TABLE changed (id BLOB PRIMARY KEY, base REAL, new REAL, delta REAL, bv INT, nv INT)")
        self.db.execute("CREATE TABLE moves (slot INT, direction INT, id BLOB, PRIMARY KEY (slot, direction, id))")

    def close(self) -> None:
        try:
            self.db.close()
        finally:
            self._dir.cleanup()

    def rows(self, sql: str, *args: Any) -> Iterator[tuple[Any, ...]]:
        yield from self.db.execute(sql, args)

    def count(self, sql: str, *args: Any) -> int:
        return int(self.db.execute(sql, args).fetchone()[0])


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


@dataclass
class Comparison:
    """The comparison's numbers, with its case lists read back from the store in order. A
    context manager: closing it deletes the store."""

    base: str
    new: str
    _store: _Store
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
        for raw, before, after, _, was, now in self._store.rows(
            "SELECT * FROM changed ORDER BY delta, id LIMIT ?", limit
        ):
            yield CaseChange(_text(raw), before, after, _VERDICTS[was], _VERDICTS[now])

    def only_in(self, side: str, limit: int = -1) -> Iterator[str]:
        """Ids of the cases in one file only (`side` "base" or "new"), sorted."""
        other = "new" if side == "base" else "base"
        sql = f"SELECT id FROM {side} WHERE id NOT IN (SELECT id FROM {other}) ORDER BY id LIMIT ?"
        return (_text(raw) for (raw,) in self._store.rows(sql, limit))

    def errored(self, limit: int = -1) -> Iterator[tuple[str, str]]:
        """(id, "base" | "new" | "both") for the cases in both files with an error row, sorted."""
        sql = (
            "SELECT b.id, b.errored, n.errored FROM base b JOIN new n ON n.id = b.id"
            " WHERE b.errored OR n.errored ORDER BY b.id LIMIT ?"
        )
        for raw, in_base, in_new in self._store.rows(sql, limit):
            yield _text(raw), "both" if in_base and in_new else "base" if in_base else "new"

    def flipped(self, limit: int = -1) -> Iterator[str]:
        """Ids of the paired cases that went from pass to not pass, sorted."""
        sql = "SELECT id FROM changed WHERE bv = 0 AND nv != 0 ORDER BY id LIMIT ?"
        return (_text(raw) for (raw,) in self._store.rows(sql, limit))

    _NEW_ERRORS = "FROM new n LEFT JOIN base b ON b.id = n.id WHERE n.errored AND (b.id IS NULL OR NOT b.errored)"

    def new_errors(self, limit: int = -1) -> Iterator[str]:
        """Ids of the cases with an error row in NEW and none in BASE (in NEW only included), sorted."""
        sql = f"SELECT n.id {self._NEW_ERRORS} ORDER BY n.id LIMIT ?"
        return (_text(raw) for (raw,) in self._store.rows(sql, limit))

    def new_error_count(self) -> int:
        return self._store.count(f"SELECT COUNT(*) {self._NEW_ERRORS}")

    def moved(self, name: str, direction: int, limit: int = -1) -> Iterator[str]:
        """Ids of the cases where field `name` went hit -> miss (`_HIT_TO_MISS`) or back, sorted."""
        sql = "SELECT id FROM moves WHERE slot = ? AND direction = ? ORDER BY id LIMIT ?"
        return (_text(raw) for (raw,) in self._store.rows(sql, self.fields[name].slot, direction, limit))

    def hit_to_miss(self, name: str, limit: int = -1) -> Iterator[str]:
        return self.moved(name, _HIT_TO_MISS, limit)

    def miss_to_hit(self, name: str, limit: int = -1) -> Iterator[str]:
        return self.moved(name, _MISS_TO_HIT, limit)

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
            }
            for name, moved in sorted(self.fields.items())
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
            "cases": (change.to_json() for change in self.changed()),
            "only_in_base": self.only_in("base"),
            "only_in_new": self.only_in("new"),
            "errored": Pairs(self.errored()),
            "fields": fields,
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


def _check_field_results(store: _Store, fields: _Fields) -> None:
    """Per-field results in one file and none in the other's scored rows: the runs were scored by
    different evaluators, and every field would read as lost (or found). Refused (exit 2)."""
    counted = [bool(fields.counts[0]), bool(fields.counts[1])]
    if counted[0] == counted[1]:
        return
    without = counted.index(False)
    side, role, other = _SIDES[without], ("BASE", "NEW")[without], ("NEW", "BASE")[without]
    scored = store.count(f"SELECT COUNT(*) FROM {side} WHERE errored = 0")
    named = len(fields.counts[1 - without])
    if scored:
        raise CompareError(
            f"{role} has no per-field result in its {scored} scored rows, and {other} has them for "
            f"{named} field{'' if named == 1 else 's'}: the runs were not scored by the same evaluators",
            hint="compare runs of one evaluator configuration, or re-score one with the other's dataset "
            "(agentv rescore)",
        )


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


def _check_files(base: Path, new: Path) -> None:
    for role, path in (("BASE", base), ("NEW", new)):
        if (why := not_results(path)) is not None:
            raise CompareError(
                f"{role} results file {why}: {path}", hint="pass two JSONL files `agentv eval` wrote (--out)"
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


class _Fields:
    """The per-field tables: a slot per (evaluator, field), counts per side, moves per direction."""

    def __init__(self) -> None:
        self.slots: dict[FieldKey, int] = {}
        self.counts: tuple[dict[int, Counts], dict[int, Counts]] = ({}, {})
        self.moves: dict[tuple[int, int], int] = {}

    def encode(self, row: ResultRow) -> bytes:
        """A case's fields as stored: (slot, status, tp, tn, fp, fn) per field. marshal keeps
        counts of any size exactly; it only ever reads back what this process wrote."""
        statuses = field_statuses(row)
        counts = row_field_counts(row.evaluator_results)
        records = []
        for key in statuses.keys() | counts.keys():
            slot = self.slots.setdefault(key, len(self.slots))
            records.append((slot, statuses.get(key, _ABSENT), *counts.get(key, Counts()).as_tuple()))
        return marshal.dumps(records)

    @staticmethod
    def decode(blob: bytes) -> list[tuple[int, ...]]:
        records: list[tuple[int, ...]] = marshal.loads(blob)
        return records


def _load(store: _Store, side: str, path: Path, role: str, fields: _Fields) -> None:
    """One file into its table, the last row of a case replacing earlier ones (a resumed run)."""
    sql = f"INSERT OR REPLACE INTO {side} VALUES (?, ?, ?, ?, ?)"
    batch: list[tuple[bytes, float, int, int, bytes]] = []
    for row in _rows(path, role):
        key = row.eval_id.encode("utf-8", "surrogatepass")
        if _is_error(row):
            batch.append((key, 0.0, 0, 1, b""))
        else:
            batch.append((key, row.score, _VERDICTS.index(row.verdict), 0, fields.encode(row)))
        if len(batch) >= _BATCH:
            store.db.executemany(sql, batch)
            batch.clear()
    store.db.executemany(sql, batch)
    counts = fields.counts[_SIDES.index(side)]
    for (blob,) in store.rows(f"SELECT fields FROM {side} WHERE errored = 0"):
        for slot, _, *values in _Fields.decode(blob):
            counts.setdefault(slot, Counts())
            counts[slot] += Counts(*values)


def _pair(result: Comparison, store: _Store, fields: _Fields) -> array[float]:
    """The cases scored in both files: sums, verdict moves, changed cases and field moves; the
    score deltas are returned for the bootstrap."""
    deltas = array("d")
    base_sum = new_sum = 0.0
    base_passed = new_passed = 0
    changed: list[tuple[bytes, float, float, float, int, int]] = []
    moves: list[tuple[int, int, bytes]] = []
    sql = (
        "SELECT b.id, b.score, b.verdict, b.fields, n.score, n.verdict, n.fields FROM base b"
        " JOIN new n ON n.id = b.id WHERE b.errored = 0 AND n.errored = 0"
    )
    for key, before, was, base_fields, after, now, new_fields in store.rows(sql):
        delta = after - before
        deltas.append(delta)
        base_sum += before
        new_sum += after
        was_pass, is_pass = was == 0, now == 0
        base_passed += was_pass
        new_passed += is_pass
        result.pass_to_fail += was_pass and not is_pass
        result.fail_to_pass += is_pass and not was_pass
        if was != now:
            moved_to = f"{_VERDICTS[was]}->{_VERDICTS[now]}"
            result.verdict_changes[moved_to] = result.verdict_changes.get(moved_to, 0) + 1
        if delta != 0 or was != now:
            changed.append((key, before, after, delta, was, now))
        status_before = {record[0]: record[1] for record in _Fields.decode(base_fields)}
        for slot, status, *_ in _Fields.decode(new_fields):
            direction = {(_HIT, _MISS): _HIT_TO_MISS, (_MISS, _HIT): _MISS_TO_HIT}.get(
                (status_before.get(slot, _ABSENT), status)
            )
            if direction is not None:
                moves.append((slot, direction, key))
                fields.moves[slot, direction] = fields.moves.get((slot, direction), 0) + 1
        if len(changed) >= _BATCH or len(moves) >= _BATCH:
            store.db.executemany("INSERT INTO changed VALUES (?, ?, ?, ?, ?, ?)", changed)
            store.db.executemany("INSERT INTO moves VALUES (?, ?, ?)", moves)
            changed.clear()
            moves.clear()
    store.db.executemany("INSERT INTO changed VALUES (?, ?, ?, ?, ?, ?)", changed)
    store.db.executemany("INSERT INTO moves VALUES (?, ?, ?)", moves)
    store.db.execute("CREATE INDEX changed_order ON changed (delta, id)")
    result.changed_count = store.count("SELECT COUNT(*) FROM changed")
    result.paired = len(deltas)
    if deltas:
        result.base_mean, result.new_mean = base_sum / len(deltas), new_sum / len(deltas)
        result.base_pass_rate, result.new_pass_rate = base_passed / len(deltas), new_passed / len(deltas)
    return deltas


def compare(
    base: str | Path,
    new: str | Path,
    *,
    rules: Rules | None = None,
    force: bool = False,
) -> Comparison:
    """Compare two results files (see the module docstring); CompareError for input that cannot
    be compared. `regressions` says why the gate failed by `rules` (report/regressions.py: by
    default any flip, new error, or fall of the mean or of a field's F1). Close the result (it is
    a context manager) to delete its store."""
    base_path, new_path = Path(base), Path(new)
    _check_files(base_path, new_path)
    forced: list[str] = []
    by_manifest = _check_manifests(base_path, new_path, force, forced)
    store = _Store()
    try:
        result = Comparison(str(base), str(new), store, forced=forced)
        fields = _Fields()
        _load(store, "base", base_path, "BASE", fields)
        _load(store, "new", new_path, "NEW", fields)
        in_base, in_new = store.count("SELECT COUNT(*) FROM base"), store.count("SELECT COUNT(*) FROM new")
        shared = store.count("SELECT COUNT(*) FROM base JOIN new ON new.id = base.id")
        if not by_manifest and in_base and in_new and not shared:
            message = f"no case id is in both files ({in_base} in BASE, {in_new} in NEW): not the same dataset"
            if not force:
                raise CompareError(message, hint="compare runs of one dataset, or pass --force to compare them anyway")
            result.forced.append(message)
        result.only_in_base_count, result.only_in_new_count = in_base - shared, in_new - shared
        result.errored_count = store.count(
            "SELECT COUNT(*) FROM base JOIN new ON new.id = base.id WHERE base.errored OR new.errored"
        )
        _check_field_results(store, fields)
        deltas = _pair(result, store, fields)
        store.db.execute("COMMIT")

        keys = {key for key, slot in fields.slots.items() if _has_data(fields, slot)}
        labels = field_labels(keys)  # the bare field, or `evaluator/field` when several evaluators name it
        for key in keys:
            slot = fields.slots[key]
            result.fields[labels[key]] = FieldChange(
                slot,
                hit_to_miss=fields.moves.get((slot, _HIT_TO_MISS), 0),
                miss_to_hit=fields.moves.get((slot, _MISS_TO_HIT), 0),
                base=fields.counts[0].get(slot, Counts()),
                new=fields.counts[1].get(slot, Counts()),
            )
        result.ci95 = bootstrap_ci(deltas)
        result.p_value = mcnemar_p(result.pass_to_fail, result.fail_to_pass)
        result.regressions = regressions(result, rules or Rules())
        return result
    except BaseException:
        store.close()
        raise


def _has_data(fields: _Fields, slot: int) -> bool:
    """A field is reported when either run counted it or a case moved on it."""
    return (
        slot in fields.counts[0]
        or slot in fields.counts[1]
        or (slot, _HIT_TO_MISS) in fields.moves
        or (slot, _MISS_TO_HIT) in fields.moves
    )


SHOWN = 10  # cases (and case ids per field) listed in the table and Markdown; JSON has them all


def _num(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _ids(ids: Iterable[str], total: int) -> str:
    shown = ", ".join(ids)
    return shown + (f" (+{total - SHOWN} more)" if total > SHOWN else "")


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
    for label, side, total in (
        ("only in BASE", "base", result.only_in_base_count),
        ("only in NEW", "new", result.only_in_new_count),
    ):
        if total:
            lines.append(f"{total} {label}: {_ids(result.only_in(side, SHOWN), total)}")
    if result.errored_count:
        ids = (eval_id for eval_id, _ in result.errored(SHOWN))
        lines.append(f"{result.errored_count} errored (not compared): {_ids(ids, result.errored_count)}")
    return lines


def render_table(console: Any, result: Comparison, alpha: float) -> None:
    """Rich tables: headline, changed cases (worst first, SHOWN of them), changed fields. Data
    (ids, field paths) goes through `visible` and is printed as plain text, never as markup."""
    from rich.table import Table
    from rich.text import Text

    for line in summary_lines(result, alpha):
        console.print(Text(visible(line)))
    if result.changed_count:
        cases = Table(title=f"Changed cases ({result.changed_count}, worst first)", title_justify="left")
        for column in ("case", "base", "new", "delta", "verdict"):
            cases.add_column(column, justify="left" if column in ("case", "verdict") else "right")
        for change in result.changed(SHOWN):
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
        if result.changed_count > SHOWN:
            console.print(Text(f"{result.changed_count - SHOWN} more changed cases: --format json lists them all"))
    if result.fields:
        table = Table(title="Fields", title_justify="left")
        for column in ("field", "hit->miss", "miss->hit", "F1 base", "F1 new", "F1 delta"):
            table.add_column(column, justify="left" if column == "field" else "right")
        for name, moved in sorted(result.fields.items()):
            table.add_row(
                Text(visible(name)),
                str(moved.hit_to_miss),
                str(moved.miss_to_hit),
                _num(moved.base.f1),
                _num(moved.new.f1),
                _num(moved.f1_delta, sign=True),
            )
        console.print(table)
        for name, moved in sorted(result.fields.items()):
            if moved.hit_to_miss:
                ids = _ids(result.hit_to_miss(name, SHOWN), moved.hit_to_miss)
                console.print(Text(visible(f"{name} hit->miss: {ids}")))
    console.print(Text(_verdict_line(result)))


def _verdict_line(result: Comparison) -> str:
    if not result.regressions:
        return "no regression"
    return "regression: " + "; ".join(visible(reason) for reason in result.regressions)


def _md(text: str) -> str:
    """Inert Markdown (`report.markdown.cell`): a case id or a field path never becomes an image,
    a link, raw HTML or a table cell of its own."""
    from agentv_py.report.markdown import cell

    return cell(text, limit=1_000)


def render_markdown(result: Comparison, alpha: float) -> str:
    """The comparison as GitHub-flavoured Markdown (a PR comment, a step summary)."""
    out = [f"## Compare {_md(result.base)} -&gt; {_md(result.new)}", ""]
    out += [f"- {_md(line)}" for line in summary_lines(result, alpha)]
    out += ["", f"**{_md(_verdict_line(result))}**", ""]
    if result.changed_count:
        out += [f"### Changed cases ({result.changed_count}, worst first)", ""]
        out += ["| case | base | new | delta | verdict |", "|---|---:|---:|---:|---|"]
        for change in result.changed(SHOWN):
            out.append(
                f"| {_md(change.eval_id)} | {_num(change.base_score)} | {_num(change.new_score)} "
                f"| {_num(change.delta, sign=True)} | {change.base_verdict} -> {change.new_verdict} |"
            )
        if result.changed_count > SHOWN:
            out.append(f"\n{result.changed_count - SHOWN} more (see `--format json`).")
        out.append("")
    if result.fields:
        out += ["### Fields", "", "| field | hit->miss | miss->hit | F1 base | F1 new | F1 delta |"]
        out.append("|---|---:|---:|---:|---:|---:|")
        for name, moved in sorted(result.fields.items()):
            out.append(
                f"| {_md(name)} | {moved.hit_to_miss} | {moved.miss_to_hit} | {_num(moved.base.f1)} "
                f"| {_num(moved.new.f1)} | {_num(moved.f1_delta, sign=True)} |"
            )
        out.append("")
    return "\n".join(out)
