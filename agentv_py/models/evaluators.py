"""Evaluator configurations: a closed union discriminated on `type`."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal, Self, get_args

from pydantic import (
    AliasChoices,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, one_of, positive_timeout, suggest, tag_checker

MatchType = Literal["exact", "fuzzy", "numeric_tolerance", "date", "items"]
MATCH_TYPES: tuple[str, ...] = ("exact", "fuzzy", "numeric_tolerance", "date", "items")
FUZZY_ALGORITHMS: tuple[str, ...] = ("levenshtein", "jaro_winkler")
ITEM_ALGORITHMS: tuple[str, ...] = ("optimal", "greedy")  # `match: items` alignment (SPEC §5 line items)
DEFAULT_DATE_FORMATS: tuple[str, ...] = ("YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY")
DATE_TOKENS = ("YYYY", "MMMM", "MMM", "YY", "MM", "DD", "M", "D")

# Options that only make sense for one match type; giving them elsewhere is a config error
# (a `tolerance` on an exact field is almost certainly a mistake in `match`).
_OPTIONS_BY_MATCH: dict[str, tuple[str, ...]] = {
    "exact": (),
    "numeric_tolerance": ("tolerance", "relative"),
    "fuzzy": ("algorithm", "threshold", "case_sensitive"),
    "date": ("formats",),
    "items": ("key", "threshold", "algorithm", "fields"),
}


def _finite_non_negative(value: float, what: str) -> float:
    if isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a number >= 0, got {value!r}")
    return float(value)


def _unit_interval(value: float, what: str) -> float:
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{what} must be between 0 and 1, got {value!r}")
    return float(value)


class FieldSpec(StrictModel):
    """One field of a `field_accuracy` evaluator."""

    path: str
    match: str = "exact"
    required: bool = True
    critical: bool = False  # a miss fails the case, whatever the weighted score
    weight: float | Literal["per_item"] = 1.0  # per_item (match: items): each expected item weighs one
    tolerance: float | None = None
    relative: bool = False
    algorithm: str = "levenshtein"
    threshold: float = 0.85
    case_sensitive: bool = False
    formats: list[str] | None = None
    key: list[str] | None = None  # `match: items`: sub-paths that pair expected and actual items
    fields: list[FieldSpec] | None = None  # `match: items`: sub-fields scored in each matched pair

    @field_validator("match")
    @classmethod
    def _known_match(cls, value: str) -> str:
        return one_of(value, MATCH_TYPES, "match type", "types")

    @field_validator("path")
    @classmethod
    def _non_empty_path(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("path must not be empty")
        return value

    @field_validator("weight", mode="before")
    @classmethod
    def _weight(cls, value: Any) -> float | str:
        if value == "per_item":
            return "per_item"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"weight must be a number >= 0, or per_item for a match 'items' field, got {value!r}")
        return _finite_non_negative(value, "weight")

    @field_validator("tolerance")
    @classmethod
    def _tolerance(cls, value: float | None) -> float | None:
        return None if value is None else _finite_non_negative(value, "tolerance")

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return _unit_interval(value, "threshold")

    @field_validator("algorithm")
    @classmethod
    def _algorithm(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("match") == "items":
            return one_of(value, ITEM_ALGORITHMS, "algorithm", "algorithms")
        return one_of(value, FUZZY_ALGORITHMS, "algorithm", "algorithms")

    @field_validator("key")
    @classmethod
    def _key(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("key must list at least one sub-path (omit it for the default [description])")
        if value is not None and any(not path.strip() for path in value):
            raise ValueError("key paths must not be empty")
        return value

    @field_validator("fields")
    @classmethod
    def _item_fields(cls, value: list[FieldSpec] | None) -> list[FieldSpec] | None:
        if value is not None and not value:
            raise ValueError("fields must list at least one sub-field")
        for spec in value or []:
            if spec.match == "items":
                raise ValueError(
                    f"nested match 'items' (at '{spec.path}') is not supported: score the inner list with a code judge"
                )
            if spec.critical:
                raise ValueError(
                    f"critical applies to a top-level field, not to the sub-field '{spec.path}': make the items "
                    "field critical (it misses when any item is missing, extra or wrong)"
                )
        return value

    @field_validator("formats")
    @classmethod
    def _formats(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("formats must not be empty (omit it to use the defaults)")
        for fmt in value:
            if not any(token in fmt for token in ("YYYY", "YY")) or not any(t in fmt for t in ("M", "D")):
                raise ValueError(
                    f"Invalid date format: {fmt}. A format needs a year (YYYY or YY), a month "
                    "(MM, M, MMM or MMMM) and a day (DD or D), e.g. DD-MMM-YYYY"
                )
        return value

    @model_validator(mode="before")
    @classmethod
    def _options_fit_match(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if not isinstance(data, dict):
            return data
        match = data.get("match", "exact")
        if match not in _OPTIONS_BY_MATCH:
            return data  # the field validator reports the bad match type
        foreign = [
            key
            for other, keys in _OPTIONS_BY_MATCH.items()
            if other != match
            for key in keys
            if key in data and key not in _OPTIONS_BY_MATCH[match]
        ]
        if foreign:
            raise ValueError(
                f"option {', '.join(repr(k) for k in foreign)} does not apply to match '{match}' "
                f"(options for '{match}': {', '.join(_OPTIONS_BY_MATCH[match]) or 'none'})"
            )
        if data.get("weight") == "per_item" and match != "items":
            raise ValueError(
                f"weight per_item applies to a match 'items' field (each expected item weighs one field), "
                f"not to match '{match}': give a number"
            )
        if data.get("critical") is True and data.get("required") is False:
            raise ValueError(
                "a critical field must be required: an optional field the answer leaves out is not scored, "
                "so it could never fail its case (drop 'required: false' or 'critical: true')"
            )
        if match == "numeric_tolerance" and data.get("tolerance") is None:
            raise ValueError("numeric_tolerance needs 'tolerance' (a number >= 0)")
        if match == "items":
            if data.get("fields") is None:
                raise ValueError(
                    "match 'items' needs 'fields': the sub-fields scored in each matched item, "
                    "e.g. [{path: quantity, match: numeric_tolerance, tolerance: 0}]"
                )
            # SPEC §5 line-item defaults (fuzzy's threshold default, 0.85, does not apply here)
            data = {"key": ["description"], "threshold": 0.8, "algorithm": "optimal", **data}
        return data

    @property
    def date_formats(self) -> tuple[str, ...]:
        return tuple(self.formats) if self.formats else DEFAULT_DATE_FORMATS


class EvaluatorBase(StrictModel):
    name: str | None = None
    weight: float = 1.0
    # The evaluator's own pass mark: below it the evaluator fails, and fails its case (a must-pass
    # evaluator). None: the dataset's pass_threshold (default 0.8), which only grades it.
    pass_threshold: float | None = None

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
        return _finite_non_negative(value, "weight")

    @field_validator("pass_threshold")
    @classmethod
    def _pass_threshold(cls, value: float | None) -> float | None:
        return None if value is None else _unit_interval(value, "pass_threshold")

    @property
    def display_name(self) -> str:
        return self.name or str(getattr(self, "type", type(self).__name__))


class FieldAccuracyConfig(EvaluatorBase):
    """`field_accuracy`: compare fields of the JSON answer with the ground truth."""

    type: Literal["field_accuracy"]
    fields: list[FieldSpec]
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"

    @field_validator("fields")
    @classmethod
    def _some_fields(cls, value: list[FieldSpec]) -> list[FieldSpec]:
        if not value:
            raise ValueError("fields must list at least one field")
        return value


def _script_problem(value: list[str] | str) -> list[str] | str:
    """A judge or prompt script: a non-empty argv list whose first item names a program, or a
    non-empty command string."""
    if (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value):
        raise ValueError("script must not be empty: give an argv list such as [uv, run, judge.py]")
    if isinstance(value, list) and not value[0].strip():
        raise ValueError("script[0] must name a program")
    return value


DEFAULT_PROXY_MAX_CALLS = 50  # AgentV's default for a code judge's `target: {max_calls}`


class TargetAccess(StrictModel):
    """`target:` of a code_judge (AgentV, 2026-01-08): the judge may call a judge target through
    agentv's loopback proxy, at most `max_calls` times per judge run. `name` picks the judge
    target (default: the evaluator's default judge, as for llm_judge)."""

    max_calls: int = DEFAULT_PROXY_MAX_CALLS
    name: str | None = None

    @field_validator("max_calls")
    @classmethod
    def _max_calls(cls, value: int) -> int:
        if value < 0:
            raise ValueError(f"max_calls must be a number >= 0, got {value!r}")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("name must not be empty (omit it to use the default judge target)")
        return value


def _target_access(value: Any) -> Any:
    """`target: true` (defaults), `target: false` (off), `target: NAME` (a judge target), or a mapping."""
    if value is True:
        return {}
    if value is False:
        return None
    if isinstance(value, str):
        return {"name": value}
    if value is None or isinstance(value, dict | TargetAccess):
        return value
    raise PydanticCustomError(
        "invalid_option",
        "target must be true, a judge target name, or {max_calls: N, name: NAME}",
        {"agentv_key": "target"},
    )


class CodeJudgeConfig(EvaluatorBase):
    """`code_judge`: a user script fed a JSON payload on stdin, printing one JSON result.

    `script` is an argv list, or a string run through the shell when it needs one. `target`
    lets the script call a judge target through agentv's proxy. Every key other than the ones
    declared here is passed through verbatim to the judge as `config`.
    """

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    type: Literal["code_judge"]
    script: list[str] | str
    cwd: str | None = None
    timeout_seconds: float = 30.0
    target: Annotated[TargetAccess | None, BeforeValidator(_target_access)] = None
    # true: one long-lived judge process per run slot, fed each payload as a JSON line
    # (docs/workers.md); the Python SDK's @judge serves so by itself
    persistent: bool = False

    @classmethod
    def strip_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        return data  # unknown keys are this evaluator's config, not typos

    @field_validator("script")
    @classmethod
    def _script(cls, value: list[str] | str) -> list[str] | str:
        return _script_problem(value)

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)

    @model_validator(mode="after")
    def _persistent_alone(self) -> CodeJudgeConfig:
        if self.persistent and self.target is not None:
            raise ValueError(
                "a persistent code_judge cannot use 'target': the judge target proxy is set up per evaluation; "
                "drop 'persistent: true' for this judge"
            )
        return self

    @property
    def config(self) -> dict[str, Any] | None:
        """The pass-through keys, verbatim (None when there are none)."""
        return dict(self.model_extra) if self.model_extra else None


class _GeometryBase(EvaluatorBase):
    path: str | None = None  # where the shape(s) sit in the answer; None: the whole answer
    expected_path: str | None = None  # where they sit in the ground truth; default: `path`
    matching: Literal["optimal", "index"] = "optimal"

    @property
    def label(self) -> str:
        return self.path or "answer"


class IouScoreConfig(_GeometryBase):
    """`iou_score`: intersection over union of boxes or polygons, one or a list."""

    type: Literal["iou_score"]
    format: Literal["xyxy", "xywh", "polygon"] = "xyxy"
    expected_format: Literal["xyxy", "xywh", "polygon"] | None = None
    threshold: float = 0.5
    polygon_mode: Literal["exact", "bbox"] = "exact"

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return _unit_interval(value, "threshold")


class CoordinateDistanceConfig(_GeometryBase):
    """`coordinate_distance`: points within a distance of their expected position."""

    type: Literal["coordinate_distance"]
    metric: Literal["euclidean", "manhattan", "cosine"] = "euclidean"
    threshold: float

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return _finite_non_negative(value, "threshold")


# `{{ name }}` variables of judge prompt templates. AgentV's spellings are accepted as aliases.
TEMPLATE_VARIABLES: tuple[str, ...] = (
    "input",
    "output",
    "expected_output",
    "expected_outcome",
    "image_reference",
    "image_references",
)
TEMPLATE_ALIASES: dict[str, str] = {
    "question": "input",
    "candidate_answer": "output",
    "reference_answer": "expected_output",
    "criteria": "expected_outcome",
}
TEMPLATE_VARIABLE_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
PROMPT_FILE_SUFFIXES = (".md", ".txt", ".prompt", ".tmpl", ".j2", ".jinja", ".jinja2")


def template_problem(text: str) -> str | None:
    """Why a prompt template cannot be rendered (an unknown `{{ variable }}`), or None."""
    valid = [*TEMPLATE_VARIABLES, *TEMPLATE_ALIASES]
    for name in TEMPLATE_VARIABLE_RE.findall(text):
        if name not in valid:
            close = suggest(name, valid)
            hint = f" (did you mean {{{{{close}}}}}?)" if close else ""
            listed = ", ".join("{{" + v + "}}" for v in TEMPLATE_VARIABLES)
            return f"unknown template variable {{{{{name}}}}}{hint}. Valid variables: {listed}"
    return None


def is_prompt_file(prompt: str) -> bool:
    """A one-line `prompt` ending in a template suffix, or starting like a path, names a file."""
    text = prompt.strip()
    if "\n" in text:
        return False
    return text.lower().endswith(PROMPT_FILE_SUFFIXES) or text.startswith(("./", "../", "/", "~/"))


class _JudgeBase(EvaluatorBase):
    target: str | None = None  # the judge target; default: execution.judge_target, then the target's


class PromptScript(StrictModel):
    """`prompt: {script: [...]}` of an llm_judge (AgentV's definePromptTemplate, 2026-01-28): a
    program that reads the code-judge payload on stdin and prints the judge's user prompt."""

    script: list[str] | str
    cwd: str | None = None  # default: the dataset's directory, as for code judges
    config: dict[str, Any] | None = None  # the payload's `config`
    timeout_seconds: float = 30.0

    @field_validator("script")
    @classmethod
    def _script(cls, value: list[str] | str) -> list[str] | str:
        return _script_problem(value)

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)


class _Templated(StrictModel):
    """A config whose `prompt` is a template file (resolved like other files) or the template
    itself. A prompt file is read once, at load time, into a new config (`with_template`), so a
    validated config is never changed."""

    _template: str | None = PrivateAttr(default=None)

    def _take_inline(self, problem_of: Callable[[str], str | None]) -> None:
        """Check a non-empty `prompt`; an inline one (not a file) is the template (or a problem)."""
        prompt = getattr(self, "prompt", None)
        if not isinstance(prompt, str):
            return
        if not prompt.strip():
            raise ValueError("prompt must not be empty (omit it to use the default prompt)")
        if not is_prompt_file(prompt):
            problem = problem_of(prompt)
            if problem:
                raise PydanticCustomError("invalid_option", problem, {"agentv_key": "prompt"})
            self._template = prompt

    @property
    def prompt_file(self) -> str | None:
        """The prompt template file named (None for an inline prompt, a script or the default)."""
        prompt = getattr(self, "prompt", None)
        if not isinstance(prompt, str) or not is_prompt_file(prompt):
            return None
        return prompt.strip()

    @property
    def template(self) -> str | None:
        """The prompt template text: given inline, or read from the prompt file (`with_template`).
        None for a prompt file not read yet: the evaluator then reads it itself."""
        return self._template

    def with_template(self, text: str) -> Self:
        """A new, complete config whose prompt file has been read: `text` is its template."""
        resolved = self.model_copy()
        resolved._template = text
        return resolved


class LlmJudgeConfig(_JudgeBase, _Templated):
    """`llm_judge`: a model scores the answer from a prompt template; replies are schema-checked."""

    type: Literal["llm_judge"]
    # a template file (resolved like other files), the template itself, or a script printing the prompt
    prompt: str | PromptScript | None = None
    dimensions: dict[str, float] | None = None  # name -> weight; the score is their weighted mean

    @field_validator("dimensions")
    @classmethod
    def _dimensions(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("dimensions must name at least one dimension (omit it for a single score)")
        for name, weight in value.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"dimension name {name!r} must be an identifier such as visual_accuracy")
            if isinstance(weight, bool) or not math.isfinite(weight) or weight <= 0:
                raise ValueError(f"dimension '{name}' needs a weight > 0, got {weight!r}")
        return {name: float(weight) for name, weight in value.items()}

    @model_validator(mode="after")
    def _inline_template(self) -> LlmJudgeConfig:
        self._take_inline(template_problem)
        return self

    @property
    def prompt_script(self) -> PromptScript | None:
        """The script printing this judge's user prompt (`prompt: {script: [...]}`), if any."""
        return self.prompt if isinstance(self.prompt, PromptScript) else None


SCORE_MIN, SCORE_MAX = 0, 10  # the integer scale of AgentV's score_ranges rubrics


def _score_integer(value: Any) -> int | None:
    """`value` as an integer of the 0-10 scale when it is an integral number (3 or 3.0), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value)


class ScoreRange(StrictModel):
    """One band of a score_ranges rubric item (AgentV's analytic rubrics): the integer scores
    `score_range: [min, max]` (0-10) and what an answer scoring there looks like."""

    score_range: tuple[int, int]
    description: str = Field(validation_alias=AliasChoices("description", "expected_outcome"))

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if isinstance(data, dict):
            present = [k for k in ("description", "expected_outcome") if k in data]
            if len(present) > 1:
                raise PydanticCustomError(
                    "alias_conflict",
                    "give only one of 'description', 'expected_outcome' (they are aliases)",
                    {"agentv_key": present[1]},
                )
            if not present:
                raise ValueError("a score range needs a description (AgentV spells it expected_outcome)")
        return data

    @field_validator("score_range", mode="before")
    @classmethod
    def _range(cls, value: Any) -> Any:
        if (
            not isinstance(value, list | tuple)
            or len(value) != 2
            or any(isinstance(v, bool) or not isinstance(v, int | float) for v in value)
        ):
            raise ValueError("score_range must be [min, max], two integers from 0 to 10")
        shown = f"[{value[0]!r}, {value[1]!r}]"
        low, high = _score_integer(value[0]), _score_integer(value[1])
        if low is None or high is None:
            raise ValueError(f"score_range values must be integers (got {shown})")
        if not (SCORE_MIN <= low <= SCORE_MAX and SCORE_MIN <= high <= SCORE_MAX):
            raise ValueError(f"score_range values must be 0-10 (got {shown})")
        if low > high:
            raise ValueError(f"score_range min must be <= max (got {shown})")
        return (low, high)

    @field_validator("description")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @property
    def label(self) -> str:
        """`3-5`, or `10` for a one-score band (AgentV's prompt and hit/miss texts)."""
        low, high = self.score_range
        return f"{low}" if low == high else f"{low}-{high}"


def score_ranges_shorthand(value: Any) -> Any:
    """AgentV's shorthand map `{0: Bad, 3: OK, 7: Good, 10: Perfect}` (each key a band's lowest
    score, the band running to the next key - 1, the last to 10) as the list of bands; a list is
    returned as it is. Anything else is an error."""
    if isinstance(value, list):
        return value
    if not isinstance(value, dict) or not value:
        raise ValueError(
            "score_ranges must be a list of {score_range: [min, max], expected_outcome} or a map "
            "{lowest score: description}, e.g. {0: Wrong, 5: Partly right, 10: Right}"
        )
    lows: dict[int, Any] = {}
    for key, text in value.items():
        low = _score_integer(int(key) if isinstance(key, str) and key.strip().isdigit() else key)
        if low is None or not SCORE_MIN <= low <= SCORE_MAX:
            raise ValueError(f"score_ranges map keys must be the integer lowest scores 0-10 of the bands (got {key!r})")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"score_ranges map value for {key!r} must be a non-empty description")
        lows[low] = text
    ordered = sorted(lows)
    if ordered[0] != SCORE_MIN:
        raise ValueError(f"score_ranges shorthand map must start at 0 (got {ordered[0]})")
    bounds = [*ordered[1:], SCORE_MAX + 1]
    return [
        {"score_range": [low, nxt - 1], "expected_outcome": lows[low]} for low, nxt in zip(ordered, bounds, strict=True)
    ]


def check_score_ranges(ranges: list[ScoreRange]) -> list[ScoreRange]:
    """AgentV's rule: the bands do not overlap and cover every integer score 0-10."""
    ordered = sorted(ranges, key=lambda r: r.score_range)
    for before, after in itertools.pairwise(ordered):
        if after.score_range[0] <= before.score_range[1]:
            raise ValueError(
                f"score_ranges overlap: [{before.score_range[0]}, {before.score_range[1]}] overlaps with "
                f"[{after.score_range[0]}, {after.score_range[1]}]"
            )
    covered = {score for r in ranges for score in range(r.score_range[0], r.score_range[1] + 1)}
    missing = [str(score) for score in range(SCORE_MIN, SCORE_MAX + 1) if score not in covered]
    if missing:
        raise ValueError(f"score_ranges must cover every integer score 0-10; not covered: {', '.join(missing)}")
    return ranges


def required_min_score(value: Any) -> Any:
    """`required_min_score`: an integer 0-10 (AgentV's words), or None."""
    if value is None:
        return None
    score = _score_integer(value)
    if score is None or not SCORE_MIN <= score <= SCORE_MAX:
        raise ValueError(f"required_min_score must be an integer 0-10 (got {value!r})")
    return score


class RubricFields(StrictModel):
    """What every rubric item holds, wherever it is written (a `rubric` evaluator's `rubrics`, a
    case's inline `rubrics:`): a checklist item (`description`, satisfied or not) or, with
    `score_ranges`, a criterion scored 0-10 (AgentV's analytic rubrics; `description` optional)."""

    id: str | None = None
    description: str | None = None
    weight: float = 1.0
    required: bool = True
    # AgentV's analytic rubrics: bands of 0-10 scores (a list, or the map {lowest score: description})
    score_ranges: list[ScoreRange] | None = None
    required_min_score: int | None = None  # score_ranges items: the lowest 0-10 score that passes

    _needs_description: ClassVar[str] = "a rubric item needs a description (or score_ranges, for 0-10 scoring)"

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
        return _finite_non_negative(value, "weight")

    @field_validator("id", "description")
    @classmethod
    def _non_empty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("score_ranges", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return None if value is None else score_ranges_shorthand(value)

    @field_validator("score_ranges")
    @classmethod
    def _bands(cls, value: list[ScoreRange] | None) -> list[ScoreRange] | None:
        return None if value is None else check_score_ranges(value)

    @field_validator("required_min_score", mode="before")
    @classmethod
    def _min_score(cls, value: Any) -> Any:
        return required_min_score(value)

    @model_validator(mode="after")
    def _kind(self) -> Self:
        if self.score_ranges is None:
            if self.required_min_score is not None:
                raise PydanticCustomError(
                    "invalid_option",
                    "required_min_score applies to an item with score_ranges (0-10 scoring); a checklist item "
                    "uses required: true",
                    {"agentv_key": "required_min_score"},
                )
            if self.description is None:
                raise ValueError(self._needs_description)
        return self


class RubricItem(RubricFields):
    """One item of a `rubric` evaluator (ids given, or r1, r2, ... for plain strings)."""

    id: str

    @property
    def min_score(self) -> int | None:
        """The 0-10 score this item needs when its rubric is scored 0-10 (AgentV): its
        `required_min_score`; else 10 when it is required (a checklist item by default, a
        score_ranges item only with `required: true` written); else None (no gate)."""
        if self.required_min_score is not None:
            return self.required_min_score
        if self.score_ranges is None or "required" in self.model_fields_set:
            return 10 if self.required else None
        return None

    @property
    def label(self) -> str:
        """The item's description, else its id (AgentV's criterion label)."""
        return self.description or self.id


class RubricConfig(_JudgeBase):
    """`rubric`: a model checks each rubric item; score = satisfied weight / total weight (or, when
    an item has score_ranges, the weighted mean of the items' 0-10 scores / 10)."""

    type: Literal["rubric"]
    rubrics: list[RubricItem]

    @field_validator("rubrics", mode="before")
    @classmethod
    def _plain_strings(cls, value: Any) -> Any:
        # `rubrics: ["Mentions the total", ...]` is shorthand for ids r1, r2, ...
        if isinstance(value, list):
            return [
                {"id": f"r{i}", "description": item} if isinstance(item, str) else item
                for i, item in enumerate(value, 1)
            ]
        return value

    @field_validator("rubrics")
    @classmethod
    def _rubrics(cls, value: list[RubricItem]) -> list[RubricItem]:
        if not value:
            raise ValueError("rubrics must list at least one item")
        seen: set[str] = set()
        for item in value:
            if item.id in seen:
                raise ValueError(f"duplicate rubric id '{item.id}'")
            seen.add(item.id)
        if sum(item.weight for item in value) <= 0:
            raise ValueError("the rubric weights add up to 0; give at least one a weight > 0")
        return value


AGGREGATOR_TYPES: tuple[str, ...] = ("weighted_average", "code_judge", "llm_judge")
_AGGREGATOR_OPTIONS: dict[str, tuple[str, ...]] = {
    "weighted_average": ("weights",),
    "code_judge": ("path", "cwd", "timeout_seconds"),
    "llm_judge": ("prompt", "target"),
}
RESULTS_VARIABLE = "EVALUATOR_RESULTS_JSON"
"""The `{{ variable }}` of an llm_judge aggregator's prompt that the members' results replace."""


def aggregator_template_problem(text: str) -> str | None:
    """Why an llm_judge aggregator prompt cannot be used, or None: it must hold
    `{{EVALUATOR_RESULTS_JSON}}`; any other variable must be a judge template variable."""
    if RESULTS_VARIABLE not in TEMPLATE_VARIABLE_RE.findall(text):
        return f"the aggregator prompt must contain {{{{{RESULTS_VARIABLE}}}}} (where the members' results go)"
    others = TEMPLATE_VARIABLE_RE.sub(lambda m: "" if m.group(1) == RESULTS_VARIABLE else m.group(0), text)
    problem = template_problem(others)
    return f"{problem}, {{{{{RESULTS_VARIABLE}}}}}" if problem else None


class CompositeAggregator(_Templated):
    """How a `composite` turns its members' results into one: `weighted_average` (`weights` by
    member name, default 1), `code_judge` (`path`: a command reading the results on stdin and
    printing one code-judge result), or `llm_judge` (`prompt`: a template file or text with
    `{{EVALUATOR_RESULTS_JSON}}`; `target`: the judge target)."""

    type: Literal["weighted_average", "code_judge", "llm_judge"]
    weights: dict[str, float] | None = None
    path: list[str] | str | None = None
    cwd: str | None = None  # default: the dataset's directory, as for code judges
    timeout_seconds: float = 30.0
    prompt: str | None = None
    target: str | None = None  # default: the evaluator's default judge, as for llm_judge

    @model_validator(mode="before")
    @classmethod
    def _options_fit_type(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if not isinstance(data, dict) or data.get("type") not in _AGGREGATOR_OPTIONS:
            return data  # the type check reports it
        kind = data["type"]
        options = _AGGREGATOR_OPTIONS[kind]
        foreign = [key for key in data if key != "type" and key not in options]
        if foreign:
            raise PydanticCustomError(
                "invalid_option",
                f"option '{foreign[0]}' does not apply to aggregator type '{kind}' "
                f"(options for '{kind}': {', '.join(options)})",
                {"agentv_key": foreign[0]},
            )
        if kind == "code_judge" and "path" not in data:
            raise PydanticCustomError(
                "invalid_option",
                "a code_judge aggregator needs 'path': the command that reads the members' results on stdin "
                "and prints one JSON result",
                {},
            )
        return data

    @field_validator("weights")
    @classmethod
    def _weights(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        return {name: _finite_non_negative(weight, f"weight of '{name}'") for name, weight in value.items()}

    @field_validator("path")
    @classmethod
    def _path(cls, value: list[str] | str | None) -> list[str] | str | None:
        return None if value is None else _script_problem(value)

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)

    @model_validator(mode="after")
    def _inline_template(self) -> CompositeAggregator:
        self._take_inline(aggregator_template_problem)
        return self


_check_aggregator_tag = tag_checker(
    "type", AGGREGATOR_TYPES, owner="aggregator", label="aggregator type", plural="types"
)


class CompositeConfig(EvaluatorBase):
    """`composite`: member evaluators (any type, composites included) run on the same case;
    `aggregator` makes one result of theirs. Members are known by name, so names are unique."""

    type: Literal["composite"]
    evaluators: list[EvaluatorConfig]
    aggregator: Annotated[CompositeAggregator, BeforeValidator(_check_aggregator_tag)]

    @field_validator("evaluators")
    @classmethod
    def _members(cls, value: list[EvaluatorBase]) -> list[EvaluatorBase]:
        if not value:
            raise ValueError("evaluators must list at least one member evaluator")
        first: dict[str, int] = {}
        for m, member in enumerate(value):
            name = member.display_name
            if name in first:
                raise PydanticCustomError(
                    "invalid_option",
                    f"duplicate member name '{name}' (first used by evaluators[{first[name]}]); the aggregator "
                    "knows members by name: give each a distinct name",
                    {"agentv_key": m},
                )
            first[name] = m
        return value

    @field_validator("aggregator")
    @classmethod
    def _weights_name_members(cls, value: CompositeAggregator, info: ValidationInfo) -> CompositeAggregator:
        members = [member.display_name for member in info.data.get("evaluators") or []]
        for name in value.weights or {}:
            if members and name not in members:
                close = suggest(name, members)
                hint = f" (did you mean '{close}'?)" if close else ""
                raise PydanticCustomError(
                    "invalid_option",
                    f"weights names '{name}', which is not a member{hint}. Members: {', '.join(members)}",
                    {"agentv_key": "weights"},
                )
        return value

    def aggregator_judge(self) -> LlmJudgeConfig:
        """The llm_judge an llm_judge aggregator asks as: its `target`, the default judge otherwise."""
        return LlmJudgeConfig(type="llm_judge", name=f"{self.display_name} aggregator", target=self.aggregator.target)

    def with_parts(self, evaluators: list[EvaluatorConfig], aggregator: CompositeAggregator) -> Self:
        """A new composite with these (resolved) members and aggregator; this one is unchanged."""
        return self.model_copy(update={"evaluators": evaluators, "aggregator": aggregator})


TRAJECTORY_MODES: tuple[str, ...] = ("any_order", "in_order", "exact")


class ExpectedToolCall(StrictModel):
    """One step of a `tool_trajectory` sequence: a tool, optionally its arguments (`any`, or a
    mapping checked key by key) and a latency limit. `input` and `output` are accepted and
    ignored, as AgentV ignored them (its tool-trajectory-advanced example gives them)."""

    tool: str
    args: Any = None
    max_duration_ms: float | None = Field(
        default=None, validation_alias=AliasChoices("max_duration_ms", "maxDurationMs")
    )
    input: Any = None
    output: Any = None

    @field_validator("tool")
    @classmethod
    def _tool(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("tool must name a tool")
        return value

    @field_validator("args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        if value is None or value == "any" or isinstance(value, dict):
            return value
        raise ValueError(f"args must be 'any' or a mapping of argument names to expected values, got {value!r}")

    @field_validator("max_duration_ms")
    @classmethod
    def _max_duration(cls, value: float | None) -> float | None:
        return None if value is None else _finite_non_negative(value, "max_duration_ms")


class ToolTrajectoryConfig(EvaluatorBase):
    """`tool_trajectory`: the target's tool calls (from its `output_messages`) against minimum
    counts (`any_order`) or an expected sequence (`in_order`, `exact`)."""

    type: Literal["tool_trajectory"]
    mode: str
    minimums: dict[str, float] | None = None
    expected: list[ExpectedToolCall] | None = None

    @field_validator("mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        return one_of(value, TRAJECTORY_MODES, "mode", "modes")

    @field_validator("minimums")
    @classmethod
    def _minimums(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("minimums must name at least one tool")
        return {tool: _finite_non_negative(count, f"minimums['{tool}']") for tool, count in value.items()}

    @field_validator("expected")
    @classmethod
    def _expected(cls, value: list[ExpectedToolCall] | None) -> list[ExpectedToolCall] | None:
        if value is not None and not value:
            raise ValueError("expected must list at least one tool call")
        return value

    @model_validator(mode="after")
    def _fits_mode(self) -> ToolTrajectoryConfig:
        if self.mode == "any_order":
            if self.expected is not None:
                raise ValueError("'expected' does not apply to mode any_order (it checks 'minimums')")
            if self.minimums is None:
                raise ValueError("mode any_order needs 'minimums' (tool name: minimum number of calls)")
        elif self.mode in TRAJECTORY_MODES:
            if self.minimums is not None:
                raise ValueError(f"'minimums' does not apply to mode {self.mode} (it checks 'expected')")
            if self.expected is None:
                raise ValueError(f"mode {self.mode} needs 'expected' (the list of expected tool calls)")
        return self


class LatencyConfig(EvaluatorBase):
    """`latency`: the target call's duration (ms) at most `threshold`."""

    type: Literal["latency"]
    threshold: float

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return _finite_non_negative(value, "threshold")


class CostConfig(EvaluatorBase):
    """`cost`: the target-reported cost (USD) at most `budget`."""

    type: Literal["cost"]
    budget: float

    @field_validator("budget")
    @classmethod
    def _budget(cls, value: float) -> float:
        return _finite_non_negative(value, "budget")


def _alias(snake: str, camel: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(snake, camel))


class TokenUsageConfig(EvaluatorBase):
    """`token_usage`: the target-reported input, output and total tokens within limits."""

    type: Literal["token_usage"]
    max_total: float | None = _alias("max_total", "maxTotal")
    max_input: float | None = _alias("max_input", "maxInput")
    max_output: float | None = _alias("max_output", "maxOutput")

    @field_validator("max_total", "max_input", "max_output")
    @classmethod
    def _limit(cls, value: float | None, info: ValidationInfo) -> float | None:
        return None if value is None else _finite_non_negative(value, str(info.field_name))

    @model_validator(mode="after")
    def _some_limit(self) -> TokenUsageConfig:
        if self.max_total is None and self.max_input is None and self.max_output is None:
            raise ValueError("token_usage needs at least one of max_total, max_input, max_output")
        return self


class ExecutionMetricsConfig(EvaluatorBase):
    """`execution_metrics`: tool calls, LLM calls, tokens, cost, duration and exploration ratio
    against thresholds; each threshold given is one check."""

    type: Literal["execution_metrics"]
    max_tool_calls: float | None = _alias("max_tool_calls", "maxToolCalls")
    max_llm_calls: float | None = _alias("max_llm_calls", "maxLlmCalls")
    max_tokens: float | None = _alias("max_tokens", "maxTokens")
    max_cost_usd: float | None = _alias("max_cost_usd", "maxCostUsd")
    max_duration_ms: float | None = _alias("max_duration_ms", "maxDurationMs")
    target_exploration_ratio: float | None = _alias("target_exploration_ratio", "targetExplorationRatio")
    exploration_tolerance: float | None = _alias("exploration_tolerance", "explorationTolerance")

    @field_validator(
        "max_tool_calls",
        "max_llm_calls",
        "max_tokens",
        "max_cost_usd",
        "max_duration_ms",
        "target_exploration_ratio",
        "exploration_tolerance",
    )
    @classmethod
    def _threshold(cls, value: float | None, info: ValidationInfo) -> float | None:
        return None if value is None else _finite_non_negative(value, str(info.field_name))

    @model_validator(mode="after")
    def _some_threshold(self) -> ExecutionMetricsConfig:
        checks = (
            self.max_tool_calls,
            self.max_llm_calls,
            self.max_tokens,
            self.max_cost_usd,
            self.max_duration_ms,
            self.target_exploration_ratio,
        )
        if all(value is None for value in checks):
            raise ValueError(
                "execution_metrics needs at least one threshold: max_tool_calls, max_llm_calls, max_tokens, "
                "max_cost_usd, max_duration_ms or target_exploration_ratio"
            )
        if self.exploration_tolerance is not None and self.target_exploration_ratio is None:
            raise ValueError("exploration_tolerance applies only with target_exploration_ratio")
        return self


# The closed set of evaluator configs, written once as a union. Add a member here AND register its
# evaluator in agentv_py.evaluators; a test checks the two sets are equal.
AnyEvaluatorConfig = (
    FieldAccuracyConfig
    | CodeJudgeConfig
    | IouScoreConfig
    | CoordinateDistanceConfig
    | LlmJudgeConfig
    | RubricConfig
    | CompositeConfig
    | ToolTrajectoryConfig
    | LatencyConfig
    | CostConfig
    | TokenUsageConfig
    | ExecutionMetricsConfig
)
EVALUATOR_CONFIG_TYPES: tuple[type[EvaluatorBase], ...] = get_args(AnyEvaluatorConfig)
JUDGE_CONFIG_TYPES: tuple[type[EvaluatorBase], ...] = (LlmJudgeConfig, RubricConfig)  # they call a judge target
EVALUATOR_TYPE_NAMES: tuple[str, ...] = tuple(
    get_args(cls.model_fields["type"].annotation)[0] for cls in EVALUATOR_CONFIG_TYPES
)


def calls_judge(config: EvaluatorBase) -> bool:
    """Does this evaluator call a judge target (a model) when it runs? The one question the
    judge-target checks ask of an evaluator config; extend it when an evaluator gains a judge."""
    if isinstance(config, CodeJudgeConfig):
        return config.target is not None  # the judge calls one through agentv's target proxy
    if isinstance(config, CompositeConfig):  # a member, or an llm_judge aggregator
        return config.aggregator.type == "llm_judge" or any(calls_judge(member) for member in config.evaluators)
    return isinstance(config, JUDGE_CONFIG_TYPES)


def judge_target_name(config: EvaluatorBase) -> str | None:
    """The judge target an evaluator names itself (None: the default judge): `target: NAME` of
    llm_judge and rubric, `target: {name: NAME}` of a code_judge."""
    if isinstance(config, CodeJudgeConfig):
        return config.target.name if config.target is not None else None
    target = getattr(config, "target", None)
    return target if isinstance(target, str) else None


_check_type_tag = tag_checker("type", EVALUATOR_TYPE_NAMES, owner="evaluator", label="evaluator type", plural="types")


def _rubric_mode(value: Any) -> Any:
    """AgentV: an `llm_judge` with `rubrics` is its rubric evaluation (agentv's `rubric`)."""
    if isinstance(value, dict) and value.get("type") == "llm_judge" and "rubrics" in value:
        return {**value, "type": "rubric"}
    return value


def _check_evaluator(value: Any) -> Any:
    return _check_type_tag(_rubric_mode(value))


EvaluatorConfig = Annotated[
    Annotated[AnyEvaluatorConfig, Field(discriminator="type")], BeforeValidator(_check_evaluator)
]
"""An evaluator config as a dataset gives it: one precise error for a missing or unknown `type`,
then the member named by `type`."""

CompositeConfig.model_rebuild()  # its members are EvaluatorConfig, defined just above
