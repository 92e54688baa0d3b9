"""Target configurations (SPEC §2): `targets.yaml`. The process targets (`cli`, `python`), `mock`,
and the union; the model providers' configs are in `model_targets`, the targets AgentV knew that
agentv does not run and `use_target` aliases in `foreign_targets`, what all share in `target_base`."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, Timeout, positive_timeout, suggest
from agentv_py.models.foreign_targets import (
    FOREIGN_PROVIDERS,
    KNOWN_PROVIDERS,
    PROVIDERS,
    AliasTarget,
    OpaqueTarget,
    check_alias,
    opaque_target,
    unknown_provider,
    validated_member,
)
from agentv_py.models.model_targets import (
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

PLACEHOLDERS: tuple[str, ...] = (
    "PROMPT",
    "PROMPT_FILE",  # AgentV v4.42's: a file holding {PROMPT}'s text
    "FILES",
    "IMAGES",
    "OUTPUT_FILE",
    "EVAL_ID",
    "GUIDELINES",
    "ATTEMPT",
)
FILES_FORMAT_FIELDS: tuple[str, ...] = ("path", "basename")
PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


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


def _check_provider(value: Any) -> Any:
    """Provider names are case-insensitive, as in AgentV. A provider AgentV knew that agentv does
    not run gives an `OpaqueTarget`, validated here so its problems point at their keys (a union
    member's would carry its tag). An unknown name with a `command` is AgentV's provider of the
    project's own (`.agentv/providers/NAME.ts`), which AgentV ran as a cli target with that command:
    a `cli` target here too, unless the name looks like a known one mistyped (then opaque: refused,
    with a did-you-mean, if a run selects it). `use_target` gives an `AliasTarget`; any other
    provider is the unknown-provider error."""
    if not isinstance(value, dict):
        return value
    if "use_target" in value:
        return check_alias(value)
    provider = value.get("provider")
    if isinstance(provider, str):
        lowered = provider.lower()
        if lowered in PROVIDERS:
            return value  # the member lowercases it (`TargetBase._provider`); a copy would lose lines
        if lowered in FOREIGN_PROVIDERS:
            return opaque_target({**value, "provider": lowered})
        if "command" in value:
            if suggest(lowered, list(KNOWN_PROVIDERS)) is None:
                return validated_member(CliTarget, {**value, "provider": "cli"})  # AgentV ran it as a cli
            return opaque_target({**value, "provider": lowered})  # a known name mistyped: refused when used
    return unknown_provider(value)


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
    if isinstance(value, AliasTarget) or isinstance(value, dict) and "use_target" in value:
        return "alias"
    provider = value.get("provider") if isinstance(value, dict) else getattr(value, "provider", None)
    if isinstance(value, OpaqueTarget) or provider in FOREIGN_PROVIDERS:
        return "opaque"
    if not isinstance(provider, str):
        return None
    return _MEMBER_TAGS.get(provider.lower(), provider.lower())


def _runnable_tag(value: dict[Any, Any]) -> str | None:
    """The member of a runnable provider (None: another provider, or none, or an alias: the union decides)."""
    provider = value.get("provider")
    if "use_target" in value or not isinstance(provider, str):
        return None
    if provider.lower() not in PROVIDERS or provider in FOREIGN_PROVIDERS:
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
        | Annotated[OpaqueTarget, Tag("opaque")]
        | Annotated[AliasTarget, Tag("alias")],
        Discriminator(_provider_tag),
    ],
    BeforeValidator(_check_provider),
]
# Targets that call a model through its provider's SDK (every one can judge, as any target can).
ModelTarget = OpenAITarget | AzureTarget | AnthropicTarget | GeminiTarget
# The targets agentv can run.
RunnableTarget = CliTarget | PythonTarget | MockTarget | ModelTarget
# A target as a run uses it (`use_target` followed: `loading.targets.LoadedTargets.get`).
TargetConfig = RunnableTarget | OpaqueTarget
# A target as a file gives it; a member is built only when a file names its provider (`models.tagged`).
TargetEntry = Annotated[RunnableTarget | OpaqueTarget | AliasTarget, Tagged(_DECLARED, _runnable_tag, _MEMBERS)]


def is_model_target(config: object) -> TypeGuard[ModelTarget]:
    """Is `config` a model provider's target (openai, azure, anthropic, gemini), rather than a
    command, a mock or a provider agentv does not run?"""
    return isinstance(config, (OpenAITarget, AzureTarget, AnthropicTarget, GeminiTarget))


class TargetsFile(StrictModel):
    # AgentV files name their JSON schema; accepted and ignored.
    schema_: Any = Field(None, validation_alias="$schema")
    targets: list[TargetEntry]

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
DRY_RUN_TARGET = MockTarget(name="dry-run", provider="mock", echo_expected=True, judge_target=None)
