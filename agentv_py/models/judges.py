"""The configs of the evaluators that ask a judge target: `llm_judge` (prompt templates, prompt
scripts, score ranges) and `rubric`."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Self

from pydantic import (
    AliasChoices,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, Timeout, suggest
from agentv_py.models.evaluator_base import EvaluatorBase, Script, finite_non_negative

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

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

    script: Script
    cwd: str | None = None  # default: the dataset's directory, as for code judges
    config: dict[str, Any] | None = None  # the payload's `config`
    timeout_seconds: Timeout = 30.0


class Templated(StrictModel):
    """A config whose `prompt` is a template file (resolved like other files) or the template
    itself. A prompt file is read once, at load time, into a new config (`with_template`), so a
    validated config is never changed."""

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

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


class LlmJudgeConfig(_JudgeBase, Templated):
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

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

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

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

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
        return finite_non_negative(value, "weight")

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
