"""`agentv merge RUN... -o ALL`: the results files of one eval run in pieces (`--shard K/N` on
several machines) as one results file and one manifest, checked to belong together.

The runs must share the dataset file (its hash), the evaluators of every case of it (the
manifest's `dataset.evaluators_sha256`), the target (its fingerprint: `target_diff`; unless
`allow_target_change`) and the judge files; a case may have a row in one run only. Rows are
read one at a time and written as they are read; the case ids seen, and each case's evaluator
hash, go to a temporary SQLite store, from which the merged manifest's lists are streamed: memory
does not grow with the number of rows.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.models.manifest import RunManifest
from agentv_py.models.results import ResultRow
from agentv_py.report.jsonl import UnusableInput, dumps_row, read_rows
from agentv_py.report.manifest import (
    ManifestError,
    finish_manifest,
    manifest_path,
    new_run_id,
    read_manifest,
)
from agentv_py.report.merge_manifest import evaluators_sha256, write_streamed_manifest
from agentv_py.report.summary import GateResult, RunSummary
from agentv_py.report.target_diff import ALLOW_HINT, UNRECORDED, indented, target_diff
from agentv_py.report.text import visible

MISSING_SHOWN = 10  # case ids a message names before "and N more"


class MergeError(UnusableInput):
    """The runs cannot be merged (exit 2): what and why, and what to do."""


@dataclass
class Merged:
    """What `merge_results` wrote: the rows' summary, the merged manifest (its lists streamed to
    the file, not held), and the cases of the dataset no run has a row for."""

    summary: RunSummary
    manifest: RunManifest
    rows: int
    cases: int  # cases in the dataset
    missing: int = 0  # cases of the dataset without a row
    missing_ids: list[str] = field(default_factory=list)  # the first MISSING_SHOWN of them, when known
    missing_shards: list[str] = field(default_factory=list)  # "K/N" of shards no run holds
    incomplete: list[str] = field(default_factory=list)  # runs that did not complete (interrupted, failed)
    excluded: int = 0  # rows left out as not their run's own (`exclude_foreign`)
    excluded_shown: list[str] = field(default_factory=list)  # the first MISSING_SHOWN of them, said
    notes: list[str] = field(default_factory=list)  # warnings: a target not compared, or accepted as changed


class _Store:
    """The temporary SQLite database of one merge (deleted on close): every case id seen, with
    the run that had its row and its evaluator list's hash (from that run's manifest)."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="agentv-merge-")
        self.db = sqlite3.connect(os.path.join(self._dir.name, "merge.sqlite3"), isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = FILE", "cache_size = -8192"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute("BEGIN")
        # ids are UTF-8 BLOBs: any text round-trips, and they sort as Python sorts str
        # a row per case, or per run and scoring of it (`unit`: "repeat.rejudge"; "" for a single run)
        self.db.execute(
            "CREATE TABLE rows (id BLOB, unit TEXT, run INT, seq INT, PRIMARY KEY (id, unit)) WITHOUT ROWID"
        )
        self.db.execute("CREATE TABLE evaluators (id BLOB PRIMARY KEY, digest TEXT) WITHOUT ROWID")
        # the cases each run's manifest says it selected: a row of any other case is not its own
        self.db.execute("CREATE TABLE selected (id BLOB, run INT, PRIMARY KEY (id, run)) WITHOUT ROWID")

    def close(self) -> None:
        try:
            self.db.close()
        finally:
            self._dir.cleanup()


def _id(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def _read_light(path: Path, store: _Store, run: int) -> RunManifest:
    """A run's manifest without its per-case lists (each case's evaluator hash goes to the store):
    a shard of 100,000 cases is held only while it is read."""
    if not path.is_file():
        raise MergeError(f"{path}: no such results file")
    try:
        manifest = read_manifest(path)
    except ManifestError as exc:
        raise MergeError(
            f"{path}: {exc}", hint="agentv merge needs each run's manifest (<results>.meta.json)"
        ) from None
    store.db.executemany(
        "INSERT OR IGNORE INTO evaluators VALUES (?, ?)",
        ((_id(case_id), digest) for case_id, digest in manifest.case_evaluators.items()),
    )
    store.db.executemany(
        "INSERT OR IGNORE INTO selected VALUES (?, ?)", ((_id(case_id), run) for case_id in manifest.case_evaluators)
    )
    selected = manifest.counts.selected or len(manifest.dataset.case_ids)
    return manifest.model_copy(
        update={
            "dataset": manifest.dataset.model_copy(update={"case_ids": []}),
            "case_evaluators": {},
            "counts": manifest.counts.model_copy(update={"selected": selected}),
        }
    )


def _check_together(paths: Sequence[Path], manifests: Sequence[RunManifest], allow_target_change: bool) -> list[str]:
    """The runs are pieces of one eval: else MergeError naming the first pair that differs. A
    target that differs (`target_diff`) is accepted with `allow_target_change`; the warnings
    returned say so, and name each manifest that records no fingerprint of its target."""
    first, shown = manifests[0], str(paths[0])
    notes: list[str] = []
    if not first.dataset.evaluators_sha256:
        raise MergeError(
            f"{shown} was written by an agentv that does not record the evaluators of the whole dataset",
            hint="run the shards again with this agentv",
        )
    shards: dict[int, Path] = {}
    files: dict[str, tuple[str, Path]] = {}
    for path, manifest in zip(paths, manifests, strict=True):
        if manifest.dataset.sha256 != first.dataset.sha256:
            raise MergeError(
                f"{path} is a run of another dataset than {shown}: '{visible(manifest.dataset.name)}' "
                f"(sha256 {manifest.dataset.sha256[:12]}) vs '{visible(first.dataset.name)}' "
                f"(sha256 {first.dataset.sha256[:12]})",
                hint="merge the shards of one dataset file",
            )
        if manifest.dataset.evaluators_sha256 != first.dataset.evaluators_sha256:
            raise MergeError(
                f"{path} scored the dataset with other evaluators than {shown} "
                f"(evaluators sha256 {manifest.dataset.evaluators_sha256[:12] or 'unknown'} vs "
                f"{first.dataset.evaluators_sha256[:12]})",
                hint="every shard must run the same agentv on the same dataset",
            )
        if manifest.target.fingerprint is None:
            notes.append(f"the manifest of {path} {UNRECORDED}: the runs' targets are compared by their config only")
        changed = target_diff(first.target, manifest.target)
        if changed and not allow_target_change:
            raise MergeError(
                f"{path} ran another version of the target than {shown}:\n{indented(changed)}",
                hint=f"run every shard with the same target, or pass {ALLOW_HINT} to merge them anyway",
            )
        if changed:
            notes.append(f"{path} ran another version of the target than {shown} ({ALLOW_HINT}): {'; '.join(changed)}")
        for name, digest in manifest.files.items():
            known = files.setdefault(name, (digest, path))
            if known[0] != digest:
                raise MergeError(
                    f"judge file {visible(name)} differs between {known[1]} and {path}",
                    hint="every shard must run the same judge scripts and prompts",
                )
        shard = manifest.shard
        if shard is not None:
            counts = {m.shard.count for m in manifests if m.shard is not None}
            if len(counts) > 1:
                raise MergeError(
                    f"the runs are shards of different splits ({', '.join(f'N={n}' for n in sorted(counts))})",
                    hint="merge the shards of one --shard K/N split",
                )
            if shard.index in shards:
                raise MergeError(f"shard {shard.index}/{shard.count} is given twice: {shards[shard.index]} and {path}")
            shards[shard.index] = path
    return notes


def merge_results(
    paths: Sequence[Path],
    out: Path,
    *,
    dataset_ids: Sequence[str] | None = None,
    version: str = "unknown",
    judge: Callable[[RunSummary], GateResult | None] = lambda _: None,
    shard_of: Callable[[str, int], int] | None = None,
    exclude_foreign: bool = False,
    allow_target_change: bool = False,
) -> Merged:
    """Merge the results files `paths` into `out` (and its manifest). `dataset_ids`: every case id
    of the runs' dataset, when it can be read (to name the cases no run has).
    Raises MergeError (nothing written) when the runs do not belong together, a file is missing,
    unreadable or has no manifest, a case has rows in two runs, or a row is not its run's own: a
    case the dataset does not have, of another shard (`shard_of(id, N)`: the shard that owns it),
    or one its run's manifest did not select. With `exclude_foreign` such rows are left out and
    counted (`Merged.excluded`), never gated. With `allow_target_change` runs of different
    versions of the target are merged (`Merged.notes` says so). `judge(summary)`: the gate of the
    merged rows, recorded in the manifest (None: no gate)."""
    resolved = [path.resolve() for path in paths]
    if len(set(resolved)) < len(resolved):
        twice = next(p for p in paths if resolved.count(p.resolve()) > 1)
        raise MergeError(f"{twice} is given twice")
    if out.resolve() in resolved:
        raise MergeError(f"-o {out} is one of the runs to merge", hint="write the merged results to a new file")
    store = _Store()
    try:
        manifests = [_read_light(path, store, run) for run, path in enumerate(paths)]
        notes = _check_together(paths, manifests, allow_target_change)
        runs = {(m.repeats or 1, m.rejudges or 1) for m in manifests}
        if len(runs) > 1:
            said = ", ".join(f"{p} ran each case {m.repeats or 1} times" for p, m in zip(paths, manifests, strict=True))
            raise MergeError(f"the runs were not repeated alike: {said}", hint="merge the shards of one run")
    except BaseException:
        store.close()
        raise
    out.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - renamed to `out` once complete, else removed
        "wb", dir=out.parent, prefix=f".{out.name}.", suffix=".tmp", delete=False
    )
    try:
        summary = RunSummary(total_selected=sum(m.counts.selected for m in manifests))
        rows = excluded = 0
        excluded_shown: list[str] = []
        known = frozenset(dataset_ids) if dataset_ids is not None else None
        listed = [  # runs whose manifest lists the cases it selected (older manifests may not)
            store.db.execute("SELECT 1 FROM selected WHERE run = ? LIMIT 1", (run,)).fetchone() is not None
            for run in range(len(paths))
        ]
        with handle:
            for run, path in enumerate(paths):
                for number, row in read_rows(path):
                    if isinstance(row, str):
                        raise MergeError(f"{path}:{number}: {row}", hint="merge results files written by agentv")
                    key = _id(row.eval_id)
                    foreign = _not_its_own(row, run, manifests[run], store, known, shard_of, listed[run])
                    if foreign is not None:
                        said = f"{path}:{number}: case '{visible(row.eval_id)}' {foreign}"
                        if not exclude_foreign:
                            raise MergeError(said, hint=FOREIGN_HINT)
                        excluded += 1
                        if len(excluded_shown) < MISSING_SHOWN:
                            excluded_shown.append(said)
                        continue
                    unit = "" if row.repeat is None and row.rejudge is None else f"{row.repeat}.{row.rejudge}"
                    try:
                        store.db.execute("INSERT INTO rows VALUES (?, ?, ?, ?)", (key, unit, run, rows))
                    except sqlite3.IntegrityError:
                        found = store.db.execute("SELECT run FROM rows WHERE id = ? AND unit = ?", (key, unit))
                        other = paths[found.fetchone()[0]]
                        where = f"twice in {path}" if other == path else f"in both {other} and {path}"
                        raise MergeError(
                            f"case '{visible(row.run_label)}' has a row {where}",
                            hint="each case must have its row in one run only (shards of one --shard K/N split)",
                        ) from None
                    handle.write((row.to_json_line() or dumps_row(row.to_json_dict())) + b"\n")
                    summary.add(row, rows)
                    rows += 1
        merged = _merged(paths, manifests, out, summary, rows, version, store, dataset_ids)
        merged.excluded, merged.excluded_shown, merged.notes = excluded, excluded_shown, notes
        base = merged.manifest  # its end and status are the shards', not finish_manifest's
        merged.manifest = finish_manifest(base, summary, judge(summary)).model_copy(
            update={"ended_at": base.ended_at, "status": base.status}
        )
        os.replace(handle.name, out)
        write_streamed_manifest(manifest_path(out), merged.manifest, store.db)
        return merged
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    finally:
        store.close()


FOREIGN_HINT = (
    "a results file holds only its run's rows; to leave such rows out (each counted and the first "
    "ones listed, never gated), pass --exclude-foreign"
)


def _not_its_own(
    row: ResultRow,
    run: int,
    manifest: RunManifest,
    store: _Store,
    known: frozenset[str] | None,
    shard_of: Callable[[str, int], int] | None,
    listed: bool,
) -> str | None:
    """Why a row is not its run's own (None: it is): a case the dataset does not have, a case of
    another shard, one the run's manifest did not select (when it lists them), or a row another
    run wrote (agentv stamps every row with its run's id)."""
    eval_id = row.eval_id
    if known is not None and eval_id not in known:
        return "is not a case of the dataset"
    shard = manifest.shard
    if shard is not None and shard_of is not None and (owner := shard_of(eval_id, shard.count)) != shard.index:
        return f"belongs to shard {owner}/{shard.count}, not to this run's {shard.index}/{shard.count}"
    if (
        listed
        and store.db.execute("SELECT 1 FROM selected WHERE id = ? AND run = ?", (_id(eval_id), run)).fetchone() is None
    ):
        return "is not one of the cases its run selected (its manifest)"
    if row.run_id not in (manifest.run_id, *manifest.merged_from):
        written_by = f"run {visible(row.run_id)}" if row.run_id is not None else "no run (it has no run_id)"
        return f"was written by {written_by}, not by this file's run {manifest.run_id}"
    return None


def _merged(
    paths: Sequence[Path],
    manifests: Sequence[RunManifest],
    out: Path,
    summary: RunSummary,
    rows: int,
    version: str,
    store: _Store,
    dataset_ids: Sequence[str] | None,
) -> Merged:
    first = manifests[0]
    statuses = {m.status for m in manifests}
    incomplete = [str(p) for p, m in zip(paths, manifests, strict=True) if m.status != "completed"]
    missing_shards: list[str] = []
    count = first.shard.count if first.shard is not None else None
    if count is not None and all(m.shard is not None for m in manifests):
        given = {m.shard.index for m in manifests if m.shard is not None}
        missing_shards = [f"{k}/{count}" for k in range(1, count + 1) if k not in given]
    left_out = {case: why for m in manifests for case, why in m.skipped.items()}
    skipped = summary.skipped = sorted(left_out.items())
    total = first.dataset.cases - len(skipped)  # `skip:` cases have no row, in any shard
    each = (first.repeats or 1) * (first.rejudges or 1)  # rows of a case: its runs and scorings
    missing = max(total - rows // each, 0)
    missing_ids: list[str] = []
    if rows % each or (missing and dataset_ids is not None):  # a case with some runs missing is missing too
        have, wanted = store.db.execute, [i for i in dataset_ids or () if i not in left_out]
        query = "SELECT COUNT(*) FROM rows WHERE id = ?"
        missing_ids = [i for i in wanted if have(query, (_id(i),)).fetchone()[0] < each]
        missing = len(missing_ids) if dataset_ids is not None else max(missing, 1)
        missing_ids = missing_ids[:MISSING_SHOWN]
    evaluators: dict[str, Any] = {}
    judges: dict[str, Any] = {}
    files: dict[str, str] = {}
    for manifest in manifests:
        evaluators.update(manifest.evaluators)
        judges.update(manifest.judges)
        files.update(manifest.files)
    options = {key: value for key, value in first.options.items() if key != "shard"}
    manifest = RunManifest(
        run_id=new_run_id(),
        tool={"name": "agentv", "version": version},
        results=str(out.resolve()),
        dataset=first.dataset.model_copy(update={"case_ids": []}),
        evaluators=evaluators,
        evaluators_sha256=evaluators_sha256(store.db),
        files=files,
        target=first.target,
        judges=judges,
        options=options,
        started_at=min(m.started_at for m in manifests),
        ended_at=max(m.ended_at or m.started_at for m in manifests),
        status="completed" if statuses == {"completed"} else "interrupted",
        merged_from=[m.run_id for m in manifests],
        skipped=dict(skipped),
        repeats=first.repeats,
        rejudges=first.rejudges,
    )
    return Merged(summary, manifest, rows, total, missing, missing_ids, missing_shards, incomplete)
