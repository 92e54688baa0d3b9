"""The configs of the evaluators that ask a judge target: `llm_judge` (prompt templates, prompt
scripts, score ranges) and `rubric`."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Literal, Self

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
from agentv_py.models.evaluator_base import EvaluatorBase, Script
from agentv_py.models.preprocessors import Preprocessor

# Re-exported: the rubric item models were defined here, and are read from here.
from agentv_py.models.rubric_items import RubricFields as RubricFields
from agentv_py.models.rubric_items import RubricItem as RubricItem

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
    # AgentV v4.42's: the judge model's sampling temperature (0-2), sent with every judge call in
    # place of the judge target's own; a command or mock judge has none to take (AgentV's cli neither).
    temperature: float | None = None
    # AgentV v4.42's step budget of its agentic judge (a judge with file tools in a workspace,
    # 1-50): accepted, and without effect here, where a judge answers in one reply.
    max_steps: int | None = Field(default=None, validation_alias=AliasChoices("max_steps", "maxSteps"))
    # files the answer names turned into text for the judge (models/preprocessors.py); the suite's too
    preprocessors: list[Preprocessor] | None = None

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and 0 <= value <= 2):
            raise ValueError(f"temperature must be between 0 and 2, got {value!r}")
        return value

    @field_validator("max_steps")
    @classmethod
    def _max_steps(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= 50:
            raise ValueError(f"max_steps must be an integer from 1 to 50, got {value!r}")
        return value


class PromptScript(StrictModel):
    """`prompt: {script: [...]}` of an llm_judge (AgentV's definePromptTemplate, 2026-01-28): a
    program that reads the code-judge payload on stdin and prints the judge's user prompt.
    AgentV v4.42 spells `script` `command`; one of the two, not both."""

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

    script: Script = Field(validation_alias=AliasChoices("script", "command"))
    cwd: str | None = None  # default: the dataset's directory, as for code judges
    config: dict[str, Any] | None = None  # the payload's `config`
    timeout_seconds: Timeout = 30.0

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if isinstance(data, dict) and "script" in data and "command" in data:
            raise PydanticCustomError(
                "alias_conflict",
                "give only one of 'script', 'command' (they are aliases: AgentV v4.42 spells it command)",
                {"agentv_key": "command"},
            )
        return data


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
