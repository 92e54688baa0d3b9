"""What every evaluator config shares: a name, a weight, its own pass mark, `negate`, an `id`
label, and the checks its subclasses use (numbers in range, a script that names a program)."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import (
    AfterValidator,
    ConfigDict,
    field_validator,
)

from agentv_py.models.base import StrictModel


def finite_non_negative(value: float, what: str) -> float:
    if isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a number >= 0, got {value!r}")
    return float(value)


def unit_interval(value: float, what: str) -> float:
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{what} must be between 0 and 1, got {value!r}")
    return float(value)


class EvaluatorBase(StrictModel):
    # Built on first use: a dataset names one or two of the twelve types (`models.tagged`).
    model_config = ConfigDict(defer_build=True)

    name: str | None = None
    weight: float = 1.0
    # The evaluator's own pass mark: below it the evaluator fails, and fails its case (a must-pass
    # evaluator). None: the dataset's pass_threshold (default 0.8), which only grades it.
    pass_threshold: float | None = None
    # AgentV's `negate`: the result inverted (score 1 - score, hits and misses swapped), applied
    # once to every type's result by `evaluators.run_evaluator` (`scoring.negation`).
    negate: bool = False
    # AgentV's `id` on a grader: a label for the people and tools reading the file (autoresearch
    # keys its assertions by it). Kept in the config; it changes nothing and is shown nowhere.
    id: str | None = None

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
        return finite_non_negative(value, "weight")

    @field_validator("pass_threshold")
    @classmethod
    def _pass_threshold(cls, value: float | None) -> float | None:
        return None if value is None else unit_interval(value, "pass_threshold")

    @property
    def display_name(self) -> str:
        return self.name or str(getattr(self, "type", type(self).__name__))


def script_problem(value: list[str] | str) -> list[str] | str:
    """A judge or prompt script: a non-empty argv list whose first item names a program, or a
    non-empty command string."""
    if (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value):
        raise ValueError("script must not be empty: give an argv list such as [uv, run, judge.py]")
    if isinstance(value, list) and not value[0].strip():
        raise ValueError("script[0] must name a program")
    return value


Script = Annotated[list[str] | str, AfterValidator(script_problem)]  # a program and its arguments, or a command
