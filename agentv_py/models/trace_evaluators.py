"""The configs of the trace evaluators: `tool_trajectory`, `skill_trigger`, `latency`, `cost`,
`token_usage`, `execution_metrics`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AliasChoices,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, one_of
from agentv_py.models.evaluator_base import EvaluatorBase, finite_non_negative

TRAJECTORY_MODES: tuple[str, ...] = ("any_order", "in_order", "exact", "superset", "subset")
ArgsMode = Literal["exact", "superset", "subset", "ignore"]
ARGS_MATCH_MODES: tuple[str, ...] = get_args(ArgsMode)


def args_match_mode(value: Any) -> Any:
    """`args_match` (AgentV v4.42's): one of ARGS_MATCH_MODES, or a non-empty list of field paths
    (a tuple, as `scoring.tool_args` takes it)."""
    if isinstance(value, str):
        return one_of(value, ARGS_MATCH_MODES, "args_match", "values")
    if isinstance(value, list) and value and all(isinstance(item, str) and item.strip() for item in value):
        return tuple(value)
    raise ValueError(
        f"args_match must be one of {', '.join(ARGS_MATCH_MODES)} or a list of argument fields "
        f"(dot paths such as [source, options.limit]), got {value!r}"
    )


ArgsMatchOption = Annotated[ArgsMode | tuple[str, ...], BeforeValidator(args_match_mode)]


class ExpectedToolCall(StrictModel):
    """One step of a `tool_trajectory` sequence: a tool, optionally its arguments (`any`, or a
    mapping compared as `args_match` says: the step's, else the evaluator's) and a latency limit.
    `input` and `output` are accepted and ignored, as AgentV ignored them (its
    tool-trajectory-advanced example gives them)."""

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

    tool: str
    args: Any = None
    max_duration_ms: float | None = Field(
        default=None, validation_alias=AliasChoices("max_duration_ms", "maxDurationMs")
    )
    args_match: ArgsMatchOption | None = Field(default=None, validation_alias=AliasChoices("args_match", "argsMatch"))
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
        return None if value is None else finite_non_negative(value, "max_duration_ms")


def _at(key: str, message: str) -> PydanticCustomError:
    """A config error the loader places at `key` (its line and location)."""
    return PydanticCustomError("invalid_option", message, {"agentv_key": key})


class ToolTrajectoryConfig(EvaluatorBase):
    """`tool_trajectory`: the target's tool calls (from its `output_messages`) against minimum
    counts (`any_order`), an expected sequence (`in_order`, `exact`), expected calls in any order
    (`superset`) or an allowed set (`subset`). `args_match`: how each expected step's `args` are
    compared, unless the step says (`scoring.tool_args`; None: `superset`, agentv's default)."""

    type: Literal["tool_trajectory"]
    mode: str
    minimums: dict[str, float] | None = None
    expected: list[ExpectedToolCall] | None = None
    args_match: ArgsMatchOption | None = Field(default=None, validation_alias=AliasChoices("args_match", "argsMatch"))

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
        return {tool: finite_non_negative(count, f"minimums['{tool}']") for tool, count in value.items()}

    @model_validator(mode="after")
    def _fits_mode(self) -> ToolTrajectoryConfig:
        if self.mode == "any_order":
            if self.expected is not None:
                raise ValueError("'expected' does not apply to mode any_order (it checks 'minimums')")
            if self.args_match is not None:
                raise _at("args_match", "'args_match' does not apply to mode any_order (it counts calls by tool name)")
            if self.minimums is None:
                raise ValueError("mode any_order needs 'minimums' (tool name: minimum number of calls)")
        elif self.mode in TRAJECTORY_MODES:
            if self.minimums is not None:
                raise ValueError(f"'minimums' does not apply to mode {self.mode} (it checks 'expected')")
            if self.expected is None:
                raise ValueError(f"mode {self.mode} needs 'expected' (the list of expected tool calls)")
            if not self.expected and self.mode != "subset":  # subset: an empty allowed set allows no call
                raise _at("expected", "expected must list at least one tool call")
            if self.mode in ("superset", "subset"):
                timed = next((step.tool for step in self.expected if step.max_duration_ms is not None), None)
                if timed is not None:
                    raise _at("expected", f"max_duration_ms (on '{timed}') applies to modes in_order and exact only")
        return self


class SkillTriggerConfig(EvaluatorBase):
    """`skill_trigger` (AgentV v4.42's `skill-trigger`): did the target's tool calls invoke the
    skill `skill` (a `Skill` call naming it, a `Read` of a file under `skills/<skill>/`, a tool
    output mentioning that path)? Score 1 when that is what `should_trigger` expects, else 0
    (`scoring.skills`)."""

    type: Literal["skill_trigger"]
    skill: str
    should_trigger: bool = True

    @field_validator("skill")
    @classmethod
    def _skill(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("skill must name a skill (a non-empty string)")
        return value

    @property
    def display_name(self) -> str:
        """AgentV's generated name when none is given: `skill-trigger-<skill>`."""
        return self.name or f"skill-trigger-{self.skill}"


class LatencyConfig(EvaluatorBase):
    """`latency`: the target call's duration (ms) at most `threshold`."""

    type: Literal["latency"]
    threshold: float

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return finite_non_negative(value, "threshold")


class CostConfig(EvaluatorBase):
    """`cost`: the target-reported cost (USD) at most `budget`."""

    type: Literal["cost"]
    budget: float

    @field_validator("budget")
    @classmethod
    def _budget(cls, value: float) -> float:
        return finite_non_negative(value, "budget")


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
        return None if value is None else finite_non_negative(value, str(info.field_name))

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
        return None if value is None else finite_non_negative(value, str(info.field_name))

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
