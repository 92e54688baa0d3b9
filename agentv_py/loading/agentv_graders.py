"""AgentV v4.42's grader entries (`assertions:` items) read into this tool's evaluator configs.

v4.42 spells grader types in kebab-case (`code-grader`, `llm-grader`, `field-accuracy`,
`contains-any`, ...; snake_case accepted as v4.42 accepted it), names a code grader's program
`command`, a rubric grader's items `criteria` (each item's text `outcome`), a composite's members
`assertions`, and lets a plain string stand for an LLM-graded criterion: every string of a list
becomes one `rubric` evaluator placed where the first string was, weighted by the number of
strings (AgentV's `parseGraderList`). A grader without a `name` gets AgentV's
(`generateAssertionName`). `required` / `min_score` become the evaluator's own pass mark."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentv_py.loading.source import Source
from agentv_py.loading.written_paths import Path_, WrittenPaths
from agentv_py.models.agentv_vocabulary import GRADER_TYPES, MAIN_BRANCH_GRADERS, UNSUPPORTED_TYPES, V4_42, main_branch
from agentv_py.models.base import suggest

_CHECK_NAMES: dict[str, Callable[[Any], str]] = {
    "contains": lambda v: f"contains-{v}" if isinstance(v, str) and v else "contains",
    "icontains": lambda v: f"icontains-{v}" if isinstance(v, str) and v else "icontains",
    "starts-with": lambda v: f"starts-with-{v}" if isinstance(v, str) and v else "starts-with",
    "ends-with": lambda v: f"ends-with-{v}" if isinstance(v, str) and v else "ends-with",
    "equals": lambda v: f"equals-{v}" if isinstance(v, str) and v else "equals",
    "regex": lambda v: f"regex-{v[:30]}" if isinstance(v, str) and v else "regex",
}


def agentv_name(kind: str, entry: dict[str, Any]) -> str:
    """AgentV's name for a grader written without one (`generateAssertionName`)."""
    value = entry.get("value")
    if kind in _CHECK_NAMES:
        return _CHECK_NAMES[kind](value)
    if kind in {"contains-any", "contains-all", "icontains-any", "icontains-all"}:
        return f"{kind}-{len(value)}" if isinstance(value, list) else kind
    if kind == "skill-trigger":
        skill = entry.get("skill")
        return f"skill-trigger-{skill}" if isinstance(skill, str) and skill else kind
    return kind


def all_type_names() -> list[str]:
    """Every grader type either vocabulary names (for a did-you-mean)."""
    from agentv_py.models.evaluators import EVALUATOR_TYPE_NAMES

    return sorted({*GRADER_TYPES, *EVALUATOR_TYPE_NAMES})


class GraderReader:
    """Reads grader lists of one file (v4.42 vocabulary) into evaluator configs, recording where
    each internal key was written (`paths`) and collecting problems at written paths."""

    def __init__(self, paths: WrittenPaths, payload_format: str, threshold: float | None) -> None:
        self.paths = paths
        self.payload_format = payload_format  # a code grader's payload: the file's semantics
        self.threshold = threshold  # the file's pass mark (`required: true` needs it)
        self.problems: list[tuple[Source | None, Path_, str]] = []

    def problem(self, where: Path_, message: str) -> None:
        """A problem at `where` as written, in the file being read (`paths.source`)."""
        self.problems.append((self.paths.source, where, message))

    def read_list(
        self, entries: Any, internal: Path_, written: Path_, *, criteria_weight: float | None = None
    ) -> list[Any] | None:
        """A grader list: entries translated, strings gathered into one rubric, weighing as many
        graders as it has criteria (AgentV's; a turn's: `criteria_weight`). None: not a list (a
        problem recorded)."""
        self.paths.record(internal, written)
        if not isinstance(entries, list):
            self.problem(written, f"expected a list of graders, got {_kind(entries)}")
            return None
        strings = [(j, e.strip()) for j, e in enumerate(entries) if isinstance(e, str) and e.strip()]
        out: list[Any] = []
        rubric_at: int | None = None
        for j, entry in enumerate(entries):
            if isinstance(entry, str):
                if not entry.strip():
                    self.problem((*written, j), "a criterion must not be empty")
                elif rubric_at is None:
                    rubric_at = len(out)
                    self.paths.record((*internal, rubric_at), (*written, j))
                    out.append(
                        {
                            "type": "rubric",
                            "name": "rubrics",
                            "rubrics": [text for _, text in strings],
                            "weight": float(len(strings)) if criteria_weight is None else criteria_weight,
                        }
                    )
                continue
            self.paths.record((*internal, len(out)), (*written, j))
            translated = self.read_entry(entry, (*internal, len(out)), (*written, j))
            if translated is not None:
                out.append(translated)
        return out

    def read_entry(self, entry: Any, internal: Path_, written: Path_) -> dict[str, Any] | None:
        if not isinstance(entry, dict):
            self.problem(written, f"a grader is a mapping or a criterion (a string), got {_kind(entry)}")
            return None
        if set(entry) == {"include"}:
            self.problem(
                (*written, "include"), "assertion templates (include:) are not supported yet: list the graders here"
            )
            return None
        written_type = entry.get("type")
        if not isinstance(written_type, str) or not written_type.strip():
            self.problem((*written, "type"), "a grader needs a 'type' (a string)")
            return None
        if written_type in MAIN_BRANCH_GRADERS:
            self.problem((*written, "type"), main_branch(written_type, MAIN_BRANCH_GRADERS, "grader type"))
            return None
        kind = written_type.strip().replace("_", "-")
        if kind in UNSUPPORTED_TYPES:
            self.problem((*written, "type"), f"grader type '{written_type}' {UNSUPPORTED_TYPES[kind]}")
            return None
        ours = GRADER_TYPES.get(kind) or (written_type if written_type in _own_types() else None)
        if ours is None:
            close = suggest(written_type, all_type_names())
            hint = f" (did you mean '{close}'?)" if close else ""
            self.problem(
                (*written, "type"),
                f"unknown grader type '{written_type}'{hint}; custom assertion types (.agentv/assertions/*.ts) "
                "need AgentV's TypeScript runtime and are not supported",
            )
            return None
        out: dict[str, Any] = {"type": ours}
        if "name" not in entry:
            out["name"] = agentv_name(kind, entry)
        for key, value in entry.items():
            if key == "type":
                continue
            if key in ("required", "min_score"):
                continue
            out[key] = value
        self._pass_mark(entry, out, internal, written)
        special = _BY_TYPE.get(ours)
        if special is not None:
            special(self, entry, out, internal, written)
        return out

    def _pass_mark(self, entry: dict[str, Any], out: dict[str, Any], internal: Path_, written: Path_) -> None:
        """`required: true` (with `min_score`, else the file's pass mark) or `required: <0..1>`:
        the evaluator's own pass mark (it fails its case below it)."""
        required, min_score = entry.get("required"), entry.get("min_score")
        if required is None or required is False:
            return
        floor, given = _unit(min_score), _unit(required)
        if required is True:
            mark = floor if floor is not None else (self.threshold if self.threshold is not None else 0.8)
        elif given is not None:
            mark = floor if floor is not None else given
        else:
            self.problem((*written, "required"), f"required is true or a number in (0, 1], got {required!r}")
            return
        out["pass_threshold"] = mark
        self.paths.record((*internal, "pass_threshold"), (*written, "required"))


def _code_grader(
    reader: GraderReader, entry: dict[str, Any], out: dict[str, Any], internal: Path_, written: Path_
) -> None:
    if "command" in out:
        out["script"] = out.pop("command")
        reader.paths.record((*internal, "script"), (*written, "command"))
    config = out.pop("config", None)
    if isinstance(config, dict):
        for key, value in config.items():  # AgentV: `config:` merged over the other pass-through keys
            out[key] = value
    elif config is not None:
        reader.problem((*written, "config"), f"config is a mapping, got {_kind(config)}")
    out.setdefault("payload_format", reader.payload_format)


def _rubric(reader: GraderReader, entry: dict[str, Any], out: dict[str, Any], internal: Path_, written: Path_) -> None:
    if "criteria" in out:
        items = out.pop("criteria")
        reader.paths.record((*internal, "rubrics"), (*written, "criteria"))
        if isinstance(items, list):
            items = [_rubric_item(item) for item in items]
        out["rubrics"] = items


def _rubric_item(item: Any) -> Any:
    if isinstance(item, dict) and "outcome" in item and "description" not in item:
        item = {("description" if k == "outcome" else k): v for k, v in item.items()}
    return item


def _composite(
    reader: GraderReader, entry: dict[str, Any], out: dict[str, Any], internal: Path_, written: Path_
) -> None:
    key = "assertions" if "assertions" in out else "evaluators" if "evaluators" in out else None
    if key is not None:
        members = reader.read_list(out.pop(key), (*internal, "evaluators"), (*written, key))
        if members is not None:
            out["evaluators"] = members
    aggregator = out.get("aggregator")
    if isinstance(aggregator, dict) and isinstance(aggregator.get("type"), str):
        kind = aggregator["type"].replace("_", "-")
        renamed = {"code-grader": "code_judge", "code-judge": "code_judge", "llm-grader": "llm_judge"}.get(kind)
        if renamed is not None or kind == "weighted-average":
            aggregator = {**aggregator, "type": renamed or "weighted_average"}
            if "command" in aggregator and "path" not in aggregator:
                aggregator["path"] = aggregator.pop("command")
                reader.paths.record((*internal, "aggregator", "path"), (*written, "aggregator", "command"))
            out["aggregator"] = aggregator


def _tool_trajectory(
    reader: GraderReader, entry: dict[str, Any], out: dict[str, Any], internal: Path_, written: Path_
) -> None:
    """v4.42 compares a step's arguments exactly unless `args_match` says otherwise (this tool's
    default, from early 2026, is `superset`): a v4.42 file gets v4.42's default."""
    given = "args_match" in out or "argsMatch" in out
    if reader.payload_format == V4_42 and not given and out.get("mode") != "any_order":
        out["args_match"] = "exact"


_BY_TYPE: dict[str, Callable[[GraderReader, dict[str, Any], dict[str, Any], Path_, Path_], None]] = {
    "code_judge": _code_grader,
    "rubric": _rubric,
    "composite": _composite,
    "tool_trajectory": _tool_trajectory,
}


def _own_types() -> tuple[str, ...]:
    from agentv_py.models.evaluators import EVALUATOR_TYPE_NAMES

    return EVALUATOR_TYPE_NAMES


def _unit(value: Any) -> float | None:
    """A number in (0, 1] as AgentV accepts `required` / `min_score`; None for anything else."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    return None


def _kind(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), f"a {type(value).__name__}")
