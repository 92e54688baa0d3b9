"""Evaluator configurations: a closed union discriminated on `type`."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import BeforeValidator, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, one_of, positive_timeout, suggest, tag_checker

MatchType = Literal["exact", "fuzzy", "numeric_tolerance", "date"]
MATCH_TYPES: tuple[str, ...] = ("exact", "fuzzy", "numeric_tolerance", "date")
FUZZY_ALGORITHMS: tuple[str, ...] = ("levenshtein", "jaro_winkler")
DEFAULT_DATE_FORMATS: tuple[str, ...] = ("YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY")
DATE_TOKENS = ("YYYY", "MMMM", "MMM", "YY", "MM", "DD", "M", "D")

# Options that only make sense for one match type; giving them elsewhere is a config error
# (a `tolerance` on an exact field is almost certainly a mistake in `match`).
_OPTIONS_BY_MATCH: dict[str, tuple[str, ...]] = {
    "exact": (),
    "numeric_tolerance": ("tolerance", "relative"),
    "fuzzy": ("algorithm", "threshold", "case_sensitive"),
    "date": ("formats",),
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
    weight: float = 1.0
    tolerance: float | None = None
    relative: bool = False
    algorithm: str = "levenshtein"
    threshold: float = 0.85
    case_sensitive: bool = False
    formats: list[str] | None = None

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

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
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
    def _algorithm(cls, value: str) -> str:
        return one_of(value, FUZZY_ALGORITHMS, "algorithm", "algorithms")

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
        if match == "numeric_tolerance" and data.get("tolerance") is None:
            raise ValueError("numeric_tolerance needs 'tolerance' (a number >= 0)")
        return data

    @property
    def date_formats(self) -> tuple[str, ...]:
        return tuple(self.formats) if self.formats else DEFAULT_DATE_FORMATS


class EvaluatorBase(StrictModel):
    name: str | None = None
    weight: float = 1.0

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
        return _finite_non_negative(value, "weight")

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


class CodeJudgeConfig(EvaluatorBase):
    """`code_judge`: a user script fed a JSON payload on stdin, printing one JSON result.

    `script` is an argv list, or a string run through the shell when it needs one. Every key
    other than the ones declared here is passed through verbatim to the judge as `config`.
    """

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    type: Literal["code_judge"]
    script: list[str] | str
    cwd: str | None = None
    timeout_seconds: float = 30.0

    @classmethod
    def strip_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        return data  # unknown keys are this evaluator's config, not typos

    @field_validator("script")
    @classmethod
    def _script(cls, value: list[str] | str) -> list[str] | str:
        if (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value):
            raise ValueError("script must not be empty: give an argv list such as [uv, run, judge.py]")
        if isinstance(value, list) and not value[0].strip():
            raise ValueError("script[0] must name a program")
        return value

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)

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


class LlmJudgeConfig(_JudgeBase):
    """`llm_judge`: a model scores the answer from a prompt template; replies are schema-checked."""

    type: Literal["llm_judge"]
    prompt: str | None = None  # a template file (resolved like other files) or the template itself
    dimensions: dict[str, float] | None = None  # name -> weight; the score is their weighted mean

    _template: str | None = PrivateAttr(default=None)

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
        if self.prompt is not None:
            if not self.prompt.strip():
                raise ValueError("prompt must not be empty (omit it to use the default prompt)")
            if not is_prompt_file(self.prompt):
                problem = template_problem(self.prompt)
                if problem:
                    raise PydanticCustomError("invalid_option", problem, {"agentv_key": "prompt"})
                self._template = self.prompt
        return self

    @property
    def prompt_file(self) -> str | None:
        """The prompt template file this judge names (None for an inline or the default prompt)."""
        if self.prompt is None or not is_prompt_file(self.prompt):
            return None
        return self.prompt.strip()


class RubricItem(StrictModel):
    id: str
    description: str
    weight: float = 1.0
    required: bool = True

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
        return _finite_non_negative(value, "weight")

    @field_validator("id", "description")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class RubricConfig(_JudgeBase):
    """`rubric`: a model checks each rubric item; score = satisfied weight / total weight."""

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


# The closed set of evaluator configs, written once as a union. Add a member here AND register its
# evaluator in agentv_py.evaluators; a test checks the two sets are equal.
AnyEvaluatorConfig = (
    FieldAccuracyConfig | CodeJudgeConfig | IouScoreConfig | CoordinateDistanceConfig | LlmJudgeConfig | RubricConfig
)
EVALUATOR_CONFIG_TYPES: tuple[type[EvaluatorBase], ...] = get_args(AnyEvaluatorConfig)
JUDGE_CONFIG_TYPES: tuple[type[EvaluatorBase], ...] = (LlmJudgeConfig, RubricConfig)  # they call a judge target
EVALUATOR_TYPE_NAMES: tuple[str, ...] = tuple(
    get_args(cls.model_fields["type"].annotation)[0] for cls in EVALUATOR_CONFIG_TYPES
)


def calls_judge(config: EvaluatorBase) -> bool:
    """Does this evaluator call a judge target (a model) when it runs? The one question the
    judge-target checks ask of an evaluator config; extend it when an evaluator gains a judge."""
    return isinstance(config, JUDGE_CONFIG_TYPES)


_check_type_tag = tag_checker("type", EVALUATOR_TYPE_NAMES, owner="evaluator", label="evaluator type", plural="types")

EvaluatorConfig = Annotated[
    Annotated[AnyEvaluatorConfig, Field(discriminator="type")], BeforeValidator(_check_type_tag)
]
"""An evaluator config as a dataset gives it: one precise error for a missing or unknown `type`,
then the member named by `type`."""
