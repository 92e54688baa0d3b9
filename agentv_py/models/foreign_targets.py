"""Targets agentv loads but does not run (`OpaqueTarget`): the providers AgentV knows (its early-2026
releases and v4.42.4) and the providers of an AgentV project's own (`.agentv/providers/NAME.ts`, run
through the target's `command`); and AgentV's `use_target` aliases (`AliasTarget`)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, suggest
from agentv_py.models.model_targets import ANTHROPIC_PROVIDERS, AZURE_PROVIDERS, GEMINI_PROVIDERS
from agentv_py.models.target_base import check_workers, merge_spellings

# The providers agentv runs, every spelling (the union's tags); for messages, in short.
PROVIDERS: tuple[str, ...] = (
    "cli",
    "python",
    "mock",
    "openai",
    *AZURE_PROVIDERS,
    *ANTHROPIC_PROVIDERS,
    *GEMINI_PROVIDERS,
)
RUNNABLE_SUMMARY = "cli, python, mock, openai, azure, anthropic and gemini"
# Agents AgentV ran (early 2026, then v4.42.4's, aliases included): wrapped as a cli target here.
AGENT_PROVIDERS: tuple[str, ...] = (
    "codex",
    "codex-cli",
    "claude-code",
    "copilot-cli",
    "pi",
    "pi-coding-agent",
    "vscode",
    "vscode-insiders",
    "pi-agent-sdk",  # early 2026, gone by v4.42.4
    "copilot",
    "copilot-sdk",
    "copilot_sdk",
    "pi-cli",
    "claude",
    "claude-cli",
    "claude-sdk",
    "cc-mirror",
)
# v4.42.4's other providers agentv does not run: a model router, AgentV's own grader model, and
# readers of answers recorded earlier.
OTHER_AGENTV_PROVIDERS: tuple[str, ...] = ("openrouter", "agentv", "copilot-log", "transcript", "replay")
# Every provider AgentV knew that agentv does not run: such a target loads (kept opaque) and is an
# error only when a run selects it as the eval target or needs it as a judge. AgentV's validator
# knew bedrock and vertex by name, but its resolver refused them too.
FOREIGN_PROVIDERS: tuple[str, ...] = ("bedrock", "vertex", *AGENT_PROVIDERS, *OTHER_AGENTV_PROVIDERS)
KNOWN_PROVIDERS: tuple[str, ...] = (*PROVIDERS, *FOREIGN_PROVIDERS)
OPENROUTER_URL = "https://openrouter.ai/api/v1"
M = TypeVar("M", bound=BaseModel)


class OpaqueTarget(StrictModel):
    """A target whose provider AgentV knew but agentv does not run (codex, bedrock, ...), or one of
    the project's own (`.agentv/providers/NAME.ts`, given with its `command`): loaded so the file's
    other targets can run; an error only if a run selects it (`not_runnable_message`). Its common
    keys are checked; the others are kept verbatim in `settings`, unchecked."""

    model_config = ConfigDict(  # built on first use: few targets files have one
        strict=True,
        extra="forbid",
        populate_by_name=True,
        json_schema_extra=lambda s: _opaque_schema(s),
        defer_build=True,
    )

    name: str
    provider: str
    judge_target: str | None = Field(None, validation_alias=AliasChoices("judge_target", "grader_target"))
    workers: int | None = None
    provider_batching: bool = Field(False, validation_alias=AliasChoices("provider_batching", "providerBatching"))
    settings: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _collect_settings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = merge_spellings(data)
        common = {"name", "provider", "judge_target", "grader_target", "workers", "provider_batching"}
        common.add("providerBatching")
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

    @property
    def discovered(self) -> bool:
        """A provider of the project's own (AgentV resolves any name it does not know that way)."""
        return self.provider not in FOREIGN_PROVIDERS


def _opaque_schema(schema: dict[str, Any]) -> None:
    """For editors: the providers AgentV knew, or a project's own with its `command`; any other key
    allowed (`settings` is internal); `provider_batching` under its camelCase spelling, so it is
    not taken for a union tag (the schema adds the other spelling back)."""
    properties = schema["properties"]
    properties.pop("settings", None)
    properties["provider"] = {"type": "string", "title": "Provider"}
    properties["providerBatching"] = properties.pop("provider_batching")
    schema["anyOf"] = [{"properties": {"provider": {"enum": list(FOREIGN_PROVIDERS)}}}, {"required": ["command"]}]
    schema["additionalProperties"] = True


def not_runnable_message(target: OpaqueTarget) -> str:
    """Why a run cannot use `target`, and what to do instead."""
    provider = target.provider
    if target.discovered:
        close = suggest(provider, list(KNOWN_PROVIDERS))
        guess = f" (did you mean '{close}'?)" if close else ""
        return (
            f"target '{target.name}' has provider '{provider}'{guess}, which AgentV runs as a provider of the "
            f"project's own (.agentv/providers/{provider}.ts) through the target's command; agentv runs "
            f"{RUNNABLE_SUMMARY} targets; to run that command here, write provider: cli"
        )
    ran = "which agentv does not run" if provider in ("bedrock", "vertex") else "which AgentV ran but agentv does not"
    message = f"target '{target.name}' has provider '{provider}', {ran}; agentv runs {RUNNABLE_SUMMARY} targets"
    if provider in AGENT_PROVIDERS:
        message += (
            f"; to evaluate {provider}, wrap the agent as a cli target "
            "(command_template runs it with {PROMPT} and it prints its answer or writes it to {OUTPUT_FILE})"
        )
    elif provider == "openrouter":
        message += f"; OpenRouter's API is OpenAI's: write provider: openai with base_url: {OPENROUTER_URL}"
    return message


def unknown_provider(value: Any) -> Any:
    """The error of a provider no one knows (no `command`: not one of the project's own), with a
    did-you-mean among all AgentV knew; a missing provider is an error too."""
    provider = value.get("provider")
    runnable = ", ".join(PROVIDERS)
    if provider is None:
        raise PydanticCustomError(
            "missing_tag", f"target needs a 'provider' (or use_target: NAME). Valid providers: {runnable}"
        )
    close = suggest(str(provider), list(KNOWN_PROVIDERS))
    hint = f" (did you mean '{close}'?)" if close else ""
    raise PydanticCustomError(
        "unknown_tag",
        f"Unknown provider: {provider}{hint}. Valid providers: {runnable}; "
        f"and AgentV's, loaded but not run here: {', '.join(FOREIGN_PROVIDERS)}",
        {"agentv_key": "provider"},
    )


def opaque_target(data: dict[str, Any]) -> OpaqueTarget:
    """`data` as an `OpaqueTarget`, its problems pointing at their keys."""
    return validated_member(OpaqueTarget, data)


def validated_member(model: type[M], data: dict[str, Any]) -> M:
    """`data` validated as `model` outside the targets union, its problems pointing at their keys
    (a union member's would carry its tag)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = error["loc"][0] if error["loc"] else (error.get("ctx") or {}).get("agentv_key")
        msg = str(error["msg"])
        if error["type"] == "missing":
            text = f"missing required key '{key}'"
        elif error["type"] == "value_error":
            text = msg.removeprefix("Value error, ")
        elif error["type"] in ("alias_conflict", "unknown_key"):
            text = msg
        else:
            text = f"{msg[0].lower()}{msg[1:]}, got {error.get('input')!r}"
        raise PydanticCustomError("invalid_option", text, {"agentv_key": key}) from None


class AliasTarget(StrictModel):
    """AgentV's `use_target: NAME`: this target is the one NAME names (its name may be `${{ VAR }}`,
    read when the target is used). Resolved by the loader (`LoadedTargets.resolve`): a run uses,
    and records, the target it ends at."""

    model_config = ConfigDict(defer_build=True)

    name: str
    use_target: str

    @field_validator("use_target")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("use_target must name a target")
        return value.strip()


def check_alias(value: dict[Any, Any]) -> dict[Any, Any]:
    """A target with `use_target` is the target it names: it takes no provider of its own."""
    if "provider" in value:
        raise PydanticCustomError(
            "invalid_option",
            "a target with use_target takes no provider: it is the target use_target names; remove one of them",
            {"agentv_key": "provider"},
        )
    return value
