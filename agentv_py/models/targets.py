"""Target configurations (SPEC §2): `targets.yaml`."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BeforeValidator, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, positive_timeout, suggest, tag_checker

PLACEHOLDERS: tuple[str, ...] = ("PROMPT", "FILES", "IMAGES", "OUTPUT_FILE", "EVAL_ID")
FILES_FORMAT_FIELDS: tuple[str, ...] = ("path", "basename")
PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
PROVIDERS: tuple[str, ...] = ("cli", "mock", "openai")

DEFAULT_TIMEOUT_SECONDS = 60.0


def _check_placeholders(template: str, valid: tuple[str, ...], what: str) -> str:
    for name in PLACEHOLDER_RE.findall(template):
        if name not in valid:
            close = suggest(name, list(valid))
            hint = f" (did you mean {{{close}}}?)" if close else ""
            listed = ", ".join("{" + v + "}" for v in valid)
            raise ValueError(f"unknown placeholder {{{name}}} in {what}{hint}. Valid placeholders: {listed}")
    return template


class Healthcheck(StrictModel):
    command_template: str = Field(validation_alias=AliasChoices("command_template", "command"))
    timeout_seconds: float = 30.0
    cwd: str | None = None

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)


class TargetBase(StrictModel):
    name: str
    judge_target: str | None = None  # the judge for LLM evaluators when this target is evaluated
    vision: bool = False  # the target accepts images (required of judges of cases with images)


class CliTarget(TargetBase):
    """Run a command once per case."""

    provider: Literal["cli"]
    command_template: str = Field(validation_alias=AliasChoices("command_template", "command"))
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    cwd: str | None = None
    files_format: str = "{path}"
    healthcheck: Healthcheck | None = None
    env: dict[str, str] = Field(default_factory=dict)
    # Accepted for AgentV compatibility; batching is not supported, so only `false` is valid.
    provider_batching: Literal[False] = False

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


class OpenAITarget(TargetBase):
    """An OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI v1, vLLM, Ollama, ...)."""

    provider: Literal["openai"]
    model: str
    api_key: str | None = None  # default: $OPENAI_API_KEY; not needed by most local servers
    base_url: str | None = None  # default: the OpenAI API
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    max_retries: int = 2  # retries of 408/409/429/5xx, timeouts and connection errors, with backoff
    system_prompt: str | None = None  # sent first when the case has no system message
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("model must not be empty")
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, value: float | None) -> float | None:
        if value is not None and not 0.0 <= value <= 2.0:
            raise ValueError(f"temperature must be between 0 and 2, got {value!r}")
        return value

    @field_validator("max_tokens")
    @classmethod
    def _max_tokens(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError(f"max_tokens must be at least 1, got {value!r}")
        return value

    @field_validator("max_retries")
    @classmethod
    def _max_retries(cls, value: int) -> int:
        if not 0 <= value <= 10:
            raise ValueError(f"max_retries must be between 0 and 10, got {value!r}")
        return value

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)


_check_provider = tag_checker("provider", PROVIDERS, owner="target", label="provider", plural="providers")


TargetConfig = Annotated[
    Annotated[CliTarget | MockTarget | OpenAITarget, Field(discriminator="provider")], BeforeValidator(_check_provider)
]


class TargetsFile(StrictModel):
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
