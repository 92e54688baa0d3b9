"""`agentv explain RESULTS CASE [FIELD]`: everything behind one case's score, or one field's.

The row comes from the results file (the last row of the case); the evaluator configs, each
option's source (the dataset line that set it, or `default`) and the case's ground truth come
from the dataset (`--dataset`, else the one the run manifest names) when it loads. Without it the
view is made from the row alone and says why. Rendering is `report.explain` (pure).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentv_py.errors import AgentvError, ConfigError
from agentv_py.loading.case_spool import CaseSpool
from agentv_py.loading.evaluator_lists import added_evaluators
from agentv_py.loading.source import read_yaml, unpack_cases
from agentv_py.models.base import suggest
from agentv_py.models.evaluators import EvaluatorConfig
from agentv_py.models.fields import FieldAccuracyConfig, FieldSpec
from agentv_py.models.results import ResultRow
from agentv_py.prepared import LoadedDataset
from agentv_py.report.explain import EvaluatorSource, Explained
from agentv_py.report.jsonl import not_results, read_rows
from agentv_py.report.manifest import ManifestError, read_manifest
from agentv_py.report.text import visible
from agentv_py.run_reports import run_dataset

IDS_LISTED = 5  # case ids named when the case is not found


@dataclass
class _Dataset:
    loaded: LoadedDataset
    raw: Any  # the parsed YAML, to tell a key that was written from a default
    display: str


def find_row(results: Path, case_id: str, run: int | None = None) -> tuple[ResultRow, list[ResultRow]]:
    """The row of `case_id` in a results file (the last one; of a repeated run, that of run `run`,
    else the first run that did not pass, else the first), and every run of the case at its first
    scoring (one row unless the run was repeated). A usage error (exit 2) naming near ids, or for a
    case the run skipped (`skip:`, no row) its reason, or the runs there are."""
    if (why := not_results(results)) is not None:
        raise AgentvError(f"results file {why}: {results}", hint="pass the JSONL file `agentv eval` wrote (--out)")
    found: ResultRow | None = None
    runs: list[ResultRow] = []
    ids: dict[str, None] = {}
    for line, row in read_rows(results):
        if isinstance(row, str):
            raise AgentvError(f"{results}:{line}: {row}", hint="the file was cut short or is not a results file")
        ids.setdefault(row.eval_id, None)
        if row.eval_id == case_id:
            found = row
            if row.rejudge in (None, 1):
                runs.append(row)
    if found is not None and (found.repeat is not None or run is not None):
        return _pick_run(results, case_id, runs, run), sorted(runs, key=lambda r: r.repeat or 1)
    if found is None:
        reason = skip_reason(results, case_id)
        if reason is not None:
            raise AgentvError(f"case '{case_id}' was skipped: {visible(reason)} (skip: in the dataset); it has no row")
        close = suggest(case_id, list(ids))
        listed = ", ".join(list(ids)[:IDS_LISTED]) + (" ..." if len(ids) > IDS_LISTED else "")
        did_you_mean = f" (did you mean '{close}'?)" if close else ""
        raise AgentvError(
            f"no case '{case_id}' in {results}{did_you_mean}", hint=f"its cases: {listed}" if ids else None
        )
    return found, [found]


def _pick_run(results: Path, case_id: str, runs: list[ResultRow], run: int | None) -> ResultRow:
    """`--run N` of a repeated case, else its first run that did not pass, else its first."""
    ordered = sorted(runs, key=lambda r: r.repeat or 1)
    if run is None:
        return next((r for r in ordered if r.status == "error" or r.verdict != "pass"), ordered[0])
    chosen = next((r for r in ordered if (r.repeat or 1) == run), None)
    if chosen is None:
        had = ", ".join(str(r.repeat or 1) for r in ordered)
        raise AgentvError(f"case '{case_id}' has no run {run} in {results}", hint=f"its runs: {had}")
    return chosen


def skip_reason(results: Path, case_id: str) -> str | None:
    """Why the run did not run `case_id` (`skip:`), as its manifest records it; None when it was
    not skipped or the manifest is not there."""
    try:
        return read_manifest(results).skipped.get(case_id)
    except ManifestError:
        return None


def _load(results: Path, dataset: Path | None) -> tuple[_Dataset | None, str | None]:
    """The dataset, loaded, with its YAML parsed (to tell written keys from defaults), or (None, why not)."""
    loaded, why = run_dataset(results, dataset)
    if loaded is None:
        return None, why
    raw: Any = None
    if loaded.path.suffix.lower() in (".yaml", ".yml"):
        try:  # the loader's own parse (bounded, cached): the cases stay packed, one is unpacked when asked
            raw = read_yaml(loaded.path, pack_cases=True)[1]
        except ConfigError:
            raw = None
    display = loaded.source.problem([], "").file if loaded.source is not None else str(loaded.path)
    return _Dataset(loaded, raw, display), None


def _case_evaluators(data: _Dataset, index: int) -> list[tuple[EvaluatorConfig, list[str | int]]]:
    """The case's evaluators in run order, each with where it is written in the dataset."""
    model = data.loaded.model
    case = model.evalcases[index]
    placed: list[tuple[EvaluatorConfig, list[str | int]]] = [
        (config, parts) for i, parts, config in added_evaluators(model) if i == index
    ]
    if case.evaluators is not None:
        placed += [(c, ["evalcases", index, case.own_key, e]) for e, c in enumerate(case.evaluators)]
    elif case.execution is not None and case.execution.evaluators is not None:
        placed += [
            (c, ["evalcases", index, "execution", "evaluators", e]) for e, c in enumerate(case.execution.evaluators)
        ]
    else:
        placed += [(c, ["execution", "evaluators", e]) for e, c in enumerate(model.execution.evaluators)]
    return placed


def _written(raw: Any, parts: list[str | int]) -> bool:
    """Is this key written in the YAML (not a default)?"""
    node = raw
    for part in parts:
        if isinstance(node, (list, tuple, CaseSpool)) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part] if isinstance(node, list) else unpack_cases((node[part],))[0]  # a packed case
            continue
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node = node[part]
            continue
        return False
    return True


def _where(data: _Dataset, parts: list[str | int]) -> str:
    line = data.loaded.source.problem(parts, "").line if data.loaded.source is not None else None
    return f"{data.display}:{line}" if line is not None else data.display


# The options each matcher reads (`match`, `required` and `weight` apply to all).
MATCHER_OPTIONS = {
    "exact": (),
    "fuzzy": ("algorithm", "threshold", "case_sensitive"),
    "anls": ("threshold",),
    "cer": ("threshold", "case_sensitive"),
    "wer": ("threshold", "case_sensitive"),
    "table": ("metric", "threshold"),
    "numeric_tolerance": ("tolerance", "relative"),
    "date": ("formats",),
    "items": ("key", "threshold", "algorithm"),
}


def _field_options(data: _Dataset, spec: FieldSpec, parts: list[str | int]) -> dict[str, tuple[Any, str]]:
    """Each option the field's matcher reads, with its value and source: `dataset.yaml:LINE` or
    `default`."""
    options: dict[str, tuple[Any, str]] = {}
    for name in ("match", "required", "weight", *MATCHER_OPTIONS.get(spec.match, ())):
        value = getattr(spec, name)
        if name == "formats" and spec.match == "date":
            value = list(spec.date_formats)
        written = _written(data.raw, [*parts, name]) if data.raw is not None else name in spec.model_fields_set
        options[name] = (value, _where(data, [*parts, name]) if written else "default")
    return options


def _sources(data: _Dataset, row: ResultRow, index: int) -> list[EvaluatorSource | None]:
    """Per evaluator result of the row (case `index` of the dataset): its config and where it
    comes from (matched by name)."""
    placed = _case_evaluators(data, index)
    by_name: dict[str, list[tuple[EvaluatorConfig, list[str | int]]]] = {}
    for config, parts in placed:
        by_name.setdefault(config.display_name, []).append((config, parts))
    out: list[EvaluatorSource | None] = []
    for result in row.evaluator_results:
        candidates = by_name.get(result.name) or []
        if not candidates:
            out.append(None)
            continue
        config, parts = candidates.pop(0)
        fields: dict[str, dict[str, tuple[Any, str]]] = {}
        if isinstance(config, FieldAccuracyConfig):
            for k, spec in enumerate(config.fields):
                fields[spec.path] = _field_options(data, spec, [*parts, "fields", k])
                for s, sub in enumerate(spec.fields or []):
                    fields[f"{spec.path}[].{sub.path}"] = _field_options(data, sub, [*parts, "fields", k, "fields", s])
        out.append(EvaluatorSource(config, _where(data, parts), fields))
    return out


def explain(results: Path, case_id: str, dataset: Path | None = None, run: int | None = None) -> Explained:
    """What `agentv explain` shows for one case (AgentvError, exit 2, for bad input); of a
    repeated run, one run of it (`find_row`) with the others listed."""
    row, runs = find_row(results, case_id, run)
    explained = _explained(results, case_id, dataset, row)
    explained.runs = runs if len(runs) > 1 or row.repeat is not None else []
    return explained


def _explained(results: Path, case_id: str, dataset: Path | None, row: ResultRow) -> Explained:
    data, why = _load(results, dataset)
    if data is None:
        return Explained(row, [None] * len(row.evaluator_results), None, why)
    try:  # by id, without reading back a big dataset's other cases
        prepared = data.loaded.cases[data.loaded.cases.ids.index(case_id)]
    except ValueError:
        why = f"case '{case_id}' is not in {data.display} any more"
        return Explained(row, [None] * len(row.evaluator_results), None, why)
    return Explained(row, _sources(data, row, prepared.index), prepared.expected, None, dataset_display=data.display)
