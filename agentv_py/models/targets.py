"""Target configurations (SPEC §2): `targets.yaml`. The process targets (`cli`, `python`), `mock`,
the targets AgentV knew that agentv does not run, and the union; the model providers' configs
are in `model_targets`, what all share in `target_base`."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import (
    AliasChoices,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, Timeout, positive_timeout, suggest, tag_checker
from agentv_py.models.model_targets import (
    ANTHROPIC_PROVIDERS,
    AZURE_PROVIDERS,
    GEMINI_PROVIDERS,
    AnthropicTarget,
    AzureTarget,
    GeminiTarget,
    OpenAITarget,
)
from agentv_py.models.tagged import Tagged
from agentv_py.models.target_base import (
    DEFAULT_OUTPUT_SUFFIX,
    DEFAULT_TIMEOUT_SECONDS,
    Healthcheck,
    OutputSuffix,
    TargetBase,
    Workers,
    check_workers,
)

PLACEHOLDERS: tuple[str, ...] = ("PROMPT", "FILES", "IMAGES", "OUTPUT_FILE", "EVAL_ID", "GUIDELINES", "ATTEMPT")
FILES_FORMAT_FIELDS: tuple[str, ...] = ("path", "basename")
PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
PROVIDERS: tuple[str, ...] = (
    "cli",
    "python",
    "mock",
    "openai",
    *AZURE_PROVIDERS,
    *ANTHROPIC_PROVIDERS,
    *GEMINI_PROVIDERS,
)
RUNNABLE_SUMMARY = "cli, python, mock, openai, azure, anthropic and gemini"  # for messages
# Providers AgentV knew that agentv does not run: such a target loads (kept opaque, `OpaqueTarget`)
# and is an error only when a run selects it as the eval target or needs it as a judge.
AGENT_PROVIDERS: tuple[str, ...] = (
    "codex",
    "codex-cli",
    "claude-code",
    "copilot-cli",
    "pi",
    "pi-coding-agent",
    "vscode",
    "vscode-insiders",
)
FOREIGN_PROVIDERS: tuple[str, ...] = ("bedrock", "vertex", *AGENT_PROVIDERS)


def _check_placeholders(template: str, valid: tuple[str, ...], what: str) -> str:
    for name in PLACEHOLDER_RE.findall(template):
        if name not in valid:
            close = suggest(name, list(valid))
            hint = f" (did you mean {{{close}}}?)" if close else ""
            listed = ", ".join("{" + v + "}" for v in valid)
            raise ValueError(f"unknown placeholder {{{name}}} in {what}{hint}. Valid placeholders: {listed}")
    return template


class CliTarget(TargetBase):
    """Run a command once per case (`provider_batching`: once for all of them first)."""

    provider: Literal["cli"]
    command_template: str = Field(validation_alias=AliasChoices("command_template", "command"))
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    cwd: str | None = None
    files_format: str = Field("{path}", validation_alias=AliasChoices("files_format", "attachments_format"))
    healthcheck: Healthcheck | None = None
    env: dict[str, str] = Field(default_factory=dict)
    # inherited variables left out of this target's cache keys (patterns: docs/incremental.md)
    cache_env_ignore: list[str] = Field(default_factory=list)
    # true: one command answers all of a run's cases first, as JSONL (agentv_py/runner/batch.py)
    provider_batching: bool = False
    # worker: the command starts a long-lived worker per slot, asked once per case over JSON
    # Lines (docs/workers.md); process: the command runs once per case
    mode: Literal["process", "worker"] = "process"
    output_suffix: OutputSuffix = DEFAULT_OUTPUT_SUFFIX  # how the {OUTPUT_FILE} name ends (a tool may want .json)
    # AgentV keys accepted without effect: agentv has no per-target verbose output; its
    # {OUTPUT_FILE} lives in the run's temporary directory, removed when the run ends; and
    # `agentv eval --workers` sets the parallelism.
    verbose: bool = Field(False, validation_alias=AliasChoices("verbose", "cli_verbose"))
    keep_temp_files: bool = Field(False, validation_alias=AliasChoices("keep_temp_files", "keep_output_files"))
    workers: int | None = None

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: int | None) -> int | None:
        return check_workers(value)

    @model_validator(mode="before")
    @classmethod
    def _command_spellings(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        # Generated AgentV files carry both spellings (older and newer releases); they must agree.
        if isinstance(data, dict) and "command" in data and "command_template" in data:
            if data["command"] != data["command_template"]:
                raise PydanticCustomError(
                    "alias_conflict",
                    "'command' and 'command_template' are aliases and differ; keep one",
                    {"agentv_key": "command"},
                )
            data = {k: v for k, v in data.items() if k != "command"}
        return data

    @field_validator("command_template")
    @classmethod
    def _command(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("command_template must not be empty")
        return _check_placeholders(value, PLACEHOLDERS, "command_template")

    @field_validator("files_format")
    @classmethod
    def _files_format(cls, value: str) -> str:
        return _check_placeholders(value, FILES_FORMAT_FIELDS, "files_format")

    @model_validator(mode="after")
    def _worker_command(self) -> CliTarget:
        """A worker's command starts it once: the case's values travel in each request instead."""
        if self.mode == "worker":
            used = sorted({p for p in PLACEHOLDERS if "{" + p + "}" in self.command_template})
            if used:
                names = ", ".join("{" + p + "}" for p in used)
                raise ValueError(
                    f"with mode: worker the command starts the worker once, so it takes no per-case placeholder "
                    f"({names}): each request carries the prompt, files, images and output file (docs/workers.md)"
                )
            if self.provider_batching:
                raise ValueError("mode: worker and provider_batching cannot be used together")
        return self

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)


class MockTarget(TargetBase):
    """Return a fixed answer, or the case's ground truth (`echo_expected`)."""

    provider: Literal["mock"]
    response: str | dict[str, Any] | list[Any] | None = None
    echo_expected: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> MockTarget:
        if self.response is None and not self.echo_expected:
            raise ValueError("a mock target needs 'response' or 'echo_expected: true'")
        return self


class OpaqueTarget(StrictModel):
    """A target whose provider AgentV knew but agentv does not run (codex, bedrock, ...): loaded so the
    file's other targets can run; an error only if a run selects it (`not_runnable_message`).
    Its common keys are checked; the others are kept verbatim in `settings`, unchecked."""

    model_config = ConfigDict(  # built on first use: few targets files have one
        strict=True,
        extra="forbid",
        populate_by_name=True,
        json_schema_extra=lambda s: _opaque_schema(s),
        defer_build=True,
    )

    name: str
    provider: str
    judge_target: str | None = None
    workers: int | None = None
    provider_batching: bool = Field(False, validation_alias=AliasChoices("provider_batching", "providerBatching"))
    settings: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _collect_settings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        common = {"name", "provider", "judge_target", "workers", "provider_batching", "providerBatching"}
        return {
            **{k: v for k, v in data.items() if k in common},
            "settings": {k: v for k, v in data.items() if k not in common},
        }

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: int | None) -> int | None:
        return check_workers(value)

    @property
    def vision(self) -> bool:
        return False


def _opaque_schema(schema: dict[str, Any]) -> None:
    """For editors: the providers AgentV knew, any other key allowed (`settings` is internal);
    `provider_batching` under its camelCase spelling, so it is not taken for a union tag (the
    schema adds the other spelling back)."""
    properties = schema["properties"]
    properties.pop("settings", None)
    properties["provider"] = {"enum": list(FOREIGN_PROVIDERS), "title": "Provider"}
    properties["providerBatching"] = properties.pop("provider_batching")
    schema["additionalProperties"] = True


def not_runnable_message(target: OpaqueTarget) -> str:
    """Why a run cannot use `target`, and what to do instead."""
    # AgentV's validator knew bedrock and vertex by name, but its resolver refused them too.
    ran = "which AgentV ran but agentv does not" if target.provider in AGENT_PROVIDERS else "which agentv does not run"
    message = f"target '{target.name}' has provider '{target.provider}', {ran}; agentv runs {RUNNABLE_SUMMARY} targets"
    if target.provider in AGENT_PROVIDERS:
        message += (
            f"; to evaluate {target.provider}, wrap the agent as a cli target "
            "(command_template runs it with {PROMPT} and it prints its answer or writes it to {OUTPUT_FILE})"
        )
    return message


_check_runnable_provider = tag_checker("provider", PROVIDERS, owner="target", label="provider", plural="providers")


def _check_provider(value: Any) -> Any:
    """Provider names are case-insensitive, as in AgentV. A provider AgentV knew that agentv does
    not run gives an `OpaqueTarget`, validated here so its problems point at their keys (a union
    member's would carry its tag); any other provider is the unknown-provider error."""
    if isinstance(value, dict) and isinstance(value.get("provider"), str):
        lowered = value["provider"].lower()
        if lowered in FOREIGN_PROVIDERS:
            return _opaque_target({**value, "provider": lowered})
        if lowered in PROVIDERS:
            return value  # the member lowercases it (`TargetBase._provider`); a copy would lose lines
    return _check_runnable_provider(value)


def _opaque_target(data: dict[str, Any]) -> OpaqueTarget:
    try:
        return OpaqueTarget.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = error["loc"][0] if error["loc"] else None
        msg = str(error["msg"])
        if error["type"] == "missing":
            text = f"missing required key '{key}'"
        elif error["type"] == "value_error":
            text = msg.removeprefix("Value error, ")
        else:
            text = f"{msg[0].lower()}{msg[1:]}, got {error.get('input')!r}"
        raise PydanticCustomError("invalid_option", text, {"agentv_key": key}) from None


CALLABLE_RE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def _one_or_more_strings(schema: dict[str, Any]) -> None:
    """The schema of a list of strings that a single string may stand for (a before-validator wraps it)."""
    items = schema.pop("items", {"type": "string"})
    schema.pop("type", None)
    schema["anyOf"] = [{"type": "string"}, {"type": "array", "items": items}]


class PythonTarget(TargetBase):
    """Call a Python function (`callable: package.module:function`, sync or async) with each
    case, in long-lived worker subprocesses, never in agentv's own process (docs/workers.md)."""

    provider: Literal["python"]
    callable: str
    # put first on sys.path (relative: to the dataset); one directory may be written as a string
    path: list[str] = Field(default_factory=list, json_schema_extra=_one_or_more_strings)
    timeout_seconds: Timeout = DEFAULT_TIMEOUT_SECONDS
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cache_env_ignore: list[str] = Field(default_factory=list)  # as a cli target's
    workers: Workers = None
    output_suffix: OutputSuffix = DEFAULT_OUTPUT_SUFFIX  # as a cli target's: the request's output_file

    @field_validator("callable")
    @classmethod
    def _callable(cls, value: str) -> str:
        if not CALLABLE_RE.fullmatch(value.strip()):
            raise ValueError(f"callable must be 'package.module:function', got {value!r}")
        return value.strip()

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


# Each spelling of a provider -> the tag of its union member.
_MEMBER_TAGS = {
    **dict.fromkeys(AZURE_PROVIDERS, AZURE_PROVIDERS[0]),
    **dict.fromkeys(GEMINI_PROVIDERS, GEMINI_PROVIDERS[0]),
}


def _provider_tag(value: Any) -> str | None:
    provider = value.get("provider") if isinstance(value, dict) else getattr(value, "provider", None)
    if isinstance(value, OpaqueTarget) or provider in FOREIGN_PROVIDERS:
        return "opaque"
    if not isinstance(provider, str):
        return None
    return _MEMBER_TAGS.get(provider.lower(), provider.lower())


def _runnable_tag(value: dict[Any, Any]) -> str | None:
    """The member of a runnable provider (None: another provider, or none: the union decides)."""
    provider = value.get("provider")
    if not isinstance(provider, str) or provider.lower() not in PROVIDERS or provider in FOREIGN_PROVIDERS:
        return None
    return _provider_tag(value)


_MEMBERS: dict[str, type[TargetBase]] = {"cli": CliTarget, "python": PythonTarget, "mock": MockTarget}
_MEMBERS |= {"openai": OpenAITarget, "azure": AzureTarget, "anthropic": AnthropicTarget, "gemini": GeminiTarget}
_DECLARED = Annotated[  # the union as declared: what a provider not named in _MEMBERS, or none, meets
    Annotated[
        Annotated[CliTarget, Tag("cli")]
        | Annotated[PythonTarget, Tag("python")]
        | Annotated[MockTarget, Tag("mock")]
        | Annotated[OpenAITarget, Tag("openai")]
        | Annotated[AzureTarget, Tag("azure")]
        | Annotated[AnthropicTarget, Tag("anthropic")]
        | Annotated[GeminiTarget, Tag("gemini")]
        | Annotated[OpaqueTarget, Tag("opaque")],
        Discriminator(_provider_tag),
    ],
    BeforeValidator(_check_provider),
]
# Targets that call a model through its provider's SDK (every one can judge, as any target can).
ModelTarget = OpenAITarget | AzureTarget | AnthropicTarget | GeminiTarget
# The targets agentv can run.
RunnableTarget = CliTarget | PythonTarget | MockTarget | ModelTarget
# A member is built only when a file names its provider (`models.tagged`).
TargetConfig = Annotated[RunnableTarget | OpaqueTarget, Tagged(_DECLARED, _runnable_tag, _MEMBERS)]


def is_model_target(config: object) -> TypeGuard[ModelTarget]:
    """Is `config` a model provider's target (openai, azure, anthropic, gemini), rather than a
    command, a mock or a provider agentv does not run?"""
    return isinstance(config, (OpenAITarget, AzureTarget, AnthropicTarget, GeminiTarget))


class TargetsFile(StrictModel):
    # AgentV files name their JSON schema; accepted and ignored.
    schema_: Any = Field(None, validation_alias="$schema")
    targets: list[TargetConfig]

    @field_validator("targets")
    @classmethod
    def _unique_names(cls, value: list[Any]) -> list[Any]:
        seen: set[str] = set()
        for target in value:
            if target.name in seen:
                raise ValueError(f"duplicate target name '{target.name}'")
            seen.add(target.name)
        return value


# The target of `--dry-run` (each case answered with its own ground truth): checked by identity.
DRY_RUN_TARGET = MockTarget(name="dry-run", provider="mock", echo_expected=True)
