"""Rubric items, wherever they are written (a `rubric` evaluator's `rubrics`, a case's inline
`rubrics:`): checklist items and AgentV's analytic items scored 0-10 in `score_ranges` bands, with
their gates (`required`, `required_min_score`, AgentV v4.42's `min_score`) and AgentV v4.42's
`operator`."""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar, Literal, Self

from pydantic import AliasChoices, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, one_of
from agentv_py.models.evaluator_base import finite_non_negative

SCORE_MIN, SCORE_MAX = 0, 10  # the integer scale of AgentV's score_ranges rubrics
# AgentV v4.42's rubric operators (RUBRIC_OPERATOR_VALUES): they change only the judge's prompt
RUBRIC_OPERATORS = ("correctness", "contradiction")


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


def unit_min_score(value: Any) -> Any:
    """AgentV v4.42's `min_score`: a number in (0, 1] (its rule), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and 0 < value <= 1):
        raise ValueError(f"min_score must be a number in (0, 1] (got {value!r})")
    return float(value)


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
    min_score: float | None = None  # AgentV v4.42: the same gate on a 0-1 scale; wins over required_min_score
    operator: Literal["correctness", "contradiction"] | None = None  # AgentV v4.42: adds prompt guidance

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

    @field_validator("min_score", mode="before")
    @classmethod
    def _unit_min_score(cls, value: Any) -> Any:
        return unit_min_score(value)

    @field_validator("operator", mode="before")
    @classmethod
    def _operator(cls, value: Any) -> Any:
        if value is None:
            return None
        return one_of(value if isinstance(value, str) else repr(value), RUBRIC_OPERATORS, "operator", "operators")

    @model_validator(mode="after")
    def _kind(self) -> Self:
        if self.score_ranges is None:
            for key in ("min_score", "required_min_score"):
                if getattr(self, key) is not None:
                    raise PydanticCustomError(
                        "invalid_option",
                        f"{key} applies to an item with score_ranges (0-10 scoring); a checklist item uses "
                        "required: true",
                        {"agentv_key": key},
                    )
            if self.description is None:
                raise ValueError(self._needs_description)
        return self


class RubricItem(RubricFields):
    """One item of a `rubric` evaluator (ids given, or r1, r2, ... for plain strings)."""

    id: str

    @property
    def gate(self) -> float | None:
        """The share of 10 this item needs when its rubric is scored 0-10 (AgentV v4.42's
        `calculateScoreRangeResult`; it fails when score / 10 < gate): its `min_score`; else its
        `required_min_score` / 10; else 1 when it is required (a checklist item by default, a
        score_ranges item only with `required: true` written); else None (no gate)."""
        if self.min_score is not None:
            return self.min_score
        if self.required_min_score is not None:
            return self.required_min_score / 10
        if self.score_ranges is None or "required" in self.model_fields_set:
            return 1.0 if self.required else None
        return None

    @property
    def gate_of_10(self) -> int | None:
        """The gate as an integer 0-10 score when no `min_score` is written: `required_min_score`,
        else 10 for a required item; None otherwise."""
        if self.min_score is not None or self.gate is None:
            return None
        return self.required_min_score if self.required_min_score is not None else 10

    def below_gate(self, score: int) -> bool:
        """True when the 0-10 `score` is under this item's gate (compared as AgentV does, on 0-1)."""
        gate = self.gate
        return gate is not None and score / 10 < gate

    @property
    def label(self) -> str:
        """The item's description, else its id (AgentV's criterion label)."""
        return self.description or self.id
