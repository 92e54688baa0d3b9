"""A case's `extend_evaluators:` merged into the suite's evaluators (issue 27, point 4), so that
adjusting one field of one case does not mean copying the suite's whole list.

The rule, by evaluator name (an evaluator's `name`, else its `type`):
- an entry with `type` is a whole evaluator: it replaces the suite's evaluator of the same name,
  in its place, or is added after the suite's;
- an entry without `type` changes the suite's evaluator it names: its options replace the
  suite's, except `fields` (field_accuracy), merged by `path` — a field with a path the suite has
  replaces that field, in its place (of several with that path, the one with its `match`), and any
  other is added — and `remove_fields`, the paths taken out (every field with that path).
The merged list is the case's own (`EvalCase.evaluators`), checked like one written in full.
A case's `evaluators:` still replaces the suite's list, explicitly.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentv_py.errors import Problem
from agentv_py.loading.source import Source
from agentv_py.loading.validation import located, paths_by_identity
from agentv_py.models.base import UNKNOWN_KEYS, unknown_key_error
from agentv_py.models.dataset import Dataset, settle_dates
from agentv_py.models.evaluators import EvaluatorConfig
from agentv_py.models.fields import FieldSpec

_EVALUATOR: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)
_FIELD: TypeAdapter[FieldSpec] = TypeAdapter(FieldSpec)


def merge_case_evaluators(source: Source, model: Dataset) -> list[Problem]:
    """Give each case with `extend_evaluators` its merged list; problems located in the entries."""
    problems: list[Problem] = []
    suite = model.execution.evaluators
    for i, case in enumerate(model.evalcases):
        if case.extend_evaluators is None:
            continue
        merged: list[EvaluatorConfig] = list(suite)
        for j, entry in enumerate(case.extend_evaluators):
            where: list[str | int] = ["evalcases", i, "extend_evaluators", j]
            config = _entry(source, where, entry, merged, problems)
            if config is None:
                continue
            names = [existing.display_name for existing in merged]
            if config.display_name in names:
                merged[names.index(config.display_name)] = config
            else:
                merged.append(config)
        if model.execution.date_order is not None:
            settle_dates(merged, model.execution.date_order)
        case.evaluators = merged
    return problems


def _entry(
    source: Source,
    where: list[str | int],
    entry: dict[str, Any],
    merged: list[EvaluatorConfig],
    problems: list[Problem],
) -> EvaluatorConfig | None:
    """The evaluator an entry gives (a whole one, or the suite's changed), or None (problems said)."""
    if "type" in entry:
        return _validated(source, where, entry, entry, problems)
    names = [config.display_name for config in merged]
    name = entry["name"]
    if name not in names:
        listed = ", ".join(names) if names else "none: the suite lists no evaluators"
        problems.append(
            source.problem(
                [*where, "name"],
                f"names no evaluator of the suite ({listed}); give 'type' to add an evaluator",
            )
        )
        return None
    base = merged[names.index(name)].model_dump(exclude_unset=True, by_alias=False)
    changed = {**base, **{k: v for k, v in entry.items() if k not in ("fields", "remove_fields")}}
    if "fields" in entry or "remove_fields" in entry:
        fields = _merged_fields(source, where, base, entry, problems)
        if fields is None:
            return None
        changed["fields"] = fields
    return _validated(source, where, changed, entry, problems)


def _merged_fields(
    source: Source, where: list[str | int], base: dict[str, Any], entry: dict[str, Any], problems: list[Problem]
) -> list[Any] | None:
    if "fields" not in base:
        problems.append(
            source.problem(where, f"'fields' and 'remove_fields' change a field_accuracy evaluator, not {base['type']}")
        )
        return None
    fields: list[Any] = list(base["fields"])
    paths = [field.get("path") for field in fields]
    removed = entry.get("remove_fields", [])
    if not isinstance(removed, list) or not all(isinstance(path, str) for path in removed):
        problems.append(source.problem([*where, "remove_fields"], "remove_fields is a list of field paths"))
        return None
    for k, path in enumerate(removed):
        if path not in paths:
            problems.append(
                source.problem([*where, "remove_fields", k], f"'{path}' is not a field of '{entry['name']}'")
            )
            return None
    given = entry.get("fields", [])
    if not isinstance(given, list):
        problems.append(source.problem([*where, "fields"], f"fields is a list of fields, got {given!r}"))
        return None
    bad = False
    for k, field in enumerate(given):  # each checked where it is written (merged, its index would differ)
        try:
            _FIELD.validate_python(field, context={UNKNOWN_KEYS: []})
        except ValidationError as exc:
            problems.extend(located(source, [*where, "fields", k], field, exc))
            bad = True
    if bad:
        return None
    for k, field in enumerate(given):
        path, match = field.get("path"), field.get("match", "exact")
        same = [i for i, known in enumerate(paths) if known == path]
        if len(same) > 1:  # `$` counted and paired: the field of the same match is the one replaced
            same = [i for i in same if fields[i].get("match", "exact") == match]
            if len(same) != 1:
                kinds = ", ".join(
                    str(fields[i].get("match", "exact")) for i, known in enumerate(paths) if known == path
                )
                problems.append(
                    source.problem(
                        [*where, "fields", k],
                        f"'{entry['name']}' has several fields with path '{path}' ({kinds}): a field replaces "
                        "the one with its path and match; give the match of the one to replace",
                    )
                )
                return None
        if same:
            fields[same[0]] = field
        else:
            fields.append(field)
            paths.append(path)
    kept = [field for field in fields if field.get("path") not in removed]
    if not kept:
        problems.append(source.problem([*where, "remove_fields"], f"this removes every field of '{entry['name']}'"))
        return None
    return kept


def _validated(
    source: Source, where: list[str | int], data: dict[str, Any], written: dict[str, Any], problems: list[Problem]
) -> EvaluatorConfig | None:
    unknown: list[tuple[int, list[str], list[str]]] = []
    try:
        config = _EVALUATOR.validate_python(data, context={UNKNOWN_KEYS: unknown})
    except ValidationError as exc:
        problems.extend(located(source, where, written, exc))
        return None
    if unknown:
        paths = paths_by_identity(written)
        for identity, keys, valid in unknown:
            base = [*where, *paths.get(identity, [])]
            problems.extend(source.problem([*base, key], str(unknown_key_error([key], valid))) for key in keys)
        return None
    return config
