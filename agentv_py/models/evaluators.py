"""Evaluator configurations: a closed union discriminated on `type` (the members live by family:
`fields`, `judges`, `trace_evaluators`; code judges, geometry and composites here)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self, get_args

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, Timeout, suggest, tag_checker
from agentv_py.models.checks import CheckConfig
from agentv_py.models.evaluator_base import EvaluatorBase, Script, finite_non_negative, script_problem, unit_interval
from agentv_py.models.fields import AnlsStarConfig, FieldAccuracyConfig
from agentv_py.models.geometry import CoordinateDistanceConfig as CoordinateDistanceConfig  # re-exported
from agentv_py.models.geometry import IouScoreConfig as IouScoreConfig  # re-exported
from agentv_py.models.judges import TEMPLATE_VARIABLE_RE, LlmJudgeConfig, RubricConfig, Templated, template_problem
from agentv_py.models.tagged import Tagged
from agentv_py.models.trace_evaluators import (
    CostConfig,
    ExecutionMetricsConfig,
    LatencyConfig,
    SkillTriggerConfig,
    TokenUsageConfig,
    ToolTrajectoryConfig,
)

DEFAULT_PROXY_MAX_CALLS = 50  # AgentV's default for a code judge's `target: {max_calls}`


class TargetAccess(StrictModel):
    """`target:` of a code_judge (AgentV, 2026-01-08): the judge may call a judge target through
    agentv's loopback proxy, at most `max_calls` times per judge run. `name` picks the judge
    target (default: the evaluator's default judge, as for llm_judge)."""

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

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
    lets the script call a judge target through agentv's proxy. `payload_format` picks the
    payload and reply contract. Every key other than the ones declared here is passed through
    verbatim to the judge as `config`.
    """

    model_config = ConfigDict(strict=True, extra="allow", populate_by_name=True)

    type: Literal["code_judge"]
    script: Script
    cwd: str | None = None
    timeout_seconds: Timeout = 30.0
    target: Annotated[TargetAccess | None, BeforeValidator(_target_access)] = None
    # true: one long-lived judge process per run slot, fed each payload as a JSON line
    # (docs/workers.md); the Python SDK's @judge serves so by itself
    persistent: bool = False
    # the stdin payload and reply contract (docs/code-judges.md): AgentV's early-2026 code judge,
    # or AgentV v4.42's code-grader (`output`, `expected_output` messages, `criteria`, `assertions`)
    payload_format: Literal["2026-02", "4.42"] = "2026-02"

    @classmethod
    def strip_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        return data  # unknown keys are this evaluator's config, not typos

    @field_validator("payload_format", mode="before")
    @classmethod
    def _unquoted_version(cls, value: Any) -> Any:
        return "4.42" if value == 4.42 and isinstance(value, float) else value  # YAML's `4.42` is a float

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


AGGREGATOR_TYPES: tuple[str, ...] = ("weighted_average", "code_judge", "llm_judge", "threshold")
_AGGREGATOR_OPTIONS: dict[str, tuple[str, ...]] = {
    "weighted_average": ("weights",),
    "code_judge": ("path", "cwd", "timeout_seconds"),
    "llm_judge": ("prompt", "target"),
    "threshold": ("threshold",),
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


class CompositeAggregator(Templated):
    """How a `composite` turns its members' results into one: `weighted_average` (`weights` by
    member name, default 1), `code_judge` (`path`: a command reading the results on stdin and
    printing one code-judge result), `llm_judge` (`prompt`: a template file or text with
    `{{EVALUATOR_RESULTS_JSON}}`; `target`: the judge target), or `threshold` (AgentV v4.42's:
    the share of members that pass, passing when it reaches `threshold`, 0-1)."""

    type: Literal["weighted_average", "code_judge", "llm_judge", "threshold"]
    weights: dict[str, float] | None = None
    threshold: float | None = None
    path: list[str] | str | None = None
    cwd: str | None = None  # default: the dataset's directory, as for code judges
    timeout_seconds: Timeout = 30.0
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
        if kind == "threshold" and "threshold" not in data:
            raise PydanticCustomError(
                "invalid_option",
                "a threshold aggregator needs 'threshold': the share of members (0-1) that must pass",
                {},
            )
        return data

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float | None) -> float | None:
        return None if value is None else unit_interval(value, "threshold")

    @field_validator("weights")
    @classmethod
    def _weights(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        return {name: finite_non_negative(weight, f"weight of '{name}'") for name, weight in value.items()}

    @field_validator("path")
    @classmethod
    def _path(cls, value: list[str] | str | None) -> list[str] | str | None:
        return None if value is None else script_problem(value)

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

    @field_validator("aggregator")
    @classmethod
    def _aggregator_judge_built(cls, value: CompositeAggregator) -> CompositeAggregator:
        # A code_judge aggregator is judged as a CodeJudgeConfig made while scoring, on a worker
        # thread (`evaluators.composite`): that deferred model is built here, on the loading
        # thread (older pydantic versions build a deferred model on first use without a lock).
        if value.type == "code_judge":
            CodeJudgeConfig.model_rebuild()
        return value

    def aggregator_judge(self) -> LlmJudgeConfig:
        """The llm_judge an llm_judge aggregator asks as: its `target`, the default judge otherwise."""
        return LlmJudgeConfig(type="llm_judge", name=f"{self.display_name} aggregator", target=self.aggregator.target)

    def with_parts(self, evaluators: list[EvaluatorConfig], aggregator: CompositeAggregator) -> Self:
        """A new composite with these (resolved) members and aggregator; this one is unchanged."""
        return self.model_copy(update={"evaluators": evaluators, "aggregator": aggregator})


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
    | SkillTriggerConfig
    | CheckConfig  # contains, contains_any, ..., regex, equals, is_json (`models.checks`)
    | AnlsStarConfig
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


def _evaluator_tag(value: dict[Any, Any]) -> str | None:
    tag = _rubric_mode(value).get("type")
    return tag if isinstance(tag, str) else None


EvaluatorConfig = Annotated[
    AnyEvaluatorConfig,
    Tagged(
        Annotated[Annotated[AnyEvaluatorConfig, Field(discriminator="type")], BeforeValidator(_check_evaluator)],
        _evaluator_tag,
        dict(zip(EVALUATOR_TYPE_NAMES, EVALUATOR_CONFIG_TYPES, strict=True)),
        before=_rubric_mode,
    ),
]
"""An evaluator config as a dataset gives it: one precise error for a missing or unknown `type`,
then the member named by `type` (built only when a dataset names it, `models.tagged`)."""
