"""The model providers' target configs: `openai`, `azure`, `anthropic`, `gemini`."""

from __future__ import annotations

import math
import re
from typing import ClassVar, Literal

from pydantic import (
    AliasChoices,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agentv_py.models.base import Timeout
from agentv_py.models.target_base import (
    DEFAULT_TIMEOUT_SECONDS,
    BaseUrl,
    ModelName,
    Retries,
    TargetBase,
    Workers,
    check_at_least,
    check_temperature,
    not_blank,
)

# The model providers agentv runs, each spelling AgentV accepted; the first names the union member.
AZURE_PROVIDERS: tuple[str, ...] = ("azure", "azure-openai")
ANTHROPIC_PROVIDERS: tuple[str, ...] = ("anthropic",)
GEMINI_PROVIDERS: tuple[str, ...] = ("gemini", "google", "google-gemini")
DEFAULT_AZURE_API_VERSION = "2024-12-01-preview"
DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
DEFAULT_ANTHROPIC_MAX_TOKENS = 4096  # Anthropic requires max_tokens: the answer's budget when none is set
AZURE_RESOURCE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")


class OpenAITarget(TargetBase):
    """An OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI v1, vLLM, Ollama, ...)."""

    provider: Literal["openai"]
    model: ModelName = Field(validation_alias=AliasChoices("model", "deployment", "variant"))
    api_key: str | None = None  # default: $OPENAI_API_KEY; not needed by most local servers
    base_url: BaseUrl = Field(None, validation_alias=AliasChoices("base_url", "endpoint"))  # default: the OpenAI API
    # AgentV v4.42's: chat completions, what agentv calls (its `responses` API is not)
    api_format: Literal["chat"] = "chat"
    temperature: float | None = None
    max_tokens: int | None = Field(None, validation_alias=AliasChoices("max_tokens", "max_output_tokens"))
    timeout_seconds: Timeout = DEFAULT_TIMEOUT_SECONDS
    max_retries: Retries = 2  # retries of 408/409/429/5xx, timeouts and connection errors, with backoff
    system_prompt: str | None = None  # sent first when the case has no system message
    headers: dict[str, str] = Field(default_factory=dict)

    key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, value: float | None) -> float | None:
        return check_temperature(value)

    @field_validator("max_tokens")
    @classmethod
    def _max_tokens(cls, value: int | None) -> int | None:
        return check_at_least(value, "max_tokens")

    @field_validator("api_format", mode="before")
    @classmethod
    def _api_format(cls, value: object) -> object:
        if value != "chat":
            raise ValueError(
                f"api_format must be 'chat', got {value!r}: agentv calls the chat completions API "
                "(AgentV's 'responses' is not supported)"
            )
        return value

    @property
    def key_optional(self) -> bool:
        """A server of one's own (base_url) may need no key."""
        return self.base_url is not None


class ProviderTarget(TargetBase):
    """The keys AgentV's model providers (azure, anthropic, gemini) share, under AgentV's names and
    camelCase twins. Retries: `max_retries` goes to the SDK; the `retry_*` keys set its backoff and
    which HTTP statuses are retried (see docs/providers.md); 401 and 403 are never retried."""

    api_key: str | None = Field(None, validation_alias=AliasChoices("api_key", "apiKey"))
    temperature: float | None = None
    max_output_tokens: int | None = Field(None, validation_alias=AliasChoices("max_output_tokens", "maxTokens"))
    system_prompt: str | None = Field(None, validation_alias=AliasChoices("system_prompt", "systemPrompt"))
    timeout_seconds: Timeout = DEFAULT_TIMEOUT_SECONDS
    max_retries: Retries = Field(3, validation_alias=AliasChoices("max_retries", "maxRetries"))  # AgentV's default
    retry_initial_delay_ms: float | None = Field(
        None, validation_alias=AliasChoices("retry_initial_delay_ms", "retryInitialDelayMs")
    )
    retry_max_delay_ms: float | None = Field(
        None, validation_alias=AliasChoices("retry_max_delay_ms", "retryMaxDelayMs")
    )
    retry_backoff_factor: float | None = Field(
        None, validation_alias=AliasChoices("retry_backoff_factor", "retryBackoffFactor")
    )
    retry_status_codes: list[int] | None = Field(
        None, validation_alias=AliasChoices("retry_status_codes", "retryStatusCodes")
    )
    # Accepted for AgentV compatibility: `agentv eval --workers` sets the parallelism; no batching.
    workers: Workers = None
    provider_batching: Literal[False] = Field(
        False, validation_alias=AliasChoices("provider_batching", "providerBatching")
    )

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, value: float | None) -> float | None:
        return check_temperature(value)

    @field_validator("max_output_tokens")
    @classmethod
    def _max_output_tokens(cls, value: int | None) -> int | None:
        return check_at_least(value, "max_output_tokens")

    @field_validator("retry_initial_delay_ms", "retry_max_delay_ms")
    @classmethod
    def _delay(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is not None and (isinstance(value, bool) or not math.isfinite(value) or value < 0):
            raise ValueError(f"{info.field_name} must be a number of milliseconds >= 0, got {value!r}")
        return value

    @field_validator("retry_backoff_factor")
    @classmethod
    def _factor(cls, value: float | None) -> float | None:
        if value is not None and (not math.isfinite(value) or value < 1):
            raise ValueError(f"retry_backoff_factor must be a number >= 1, got {value!r}")
        return value

    @field_validator("retry_status_codes")
    @classmethod
    def _codes(cls, value: list[int] | None) -> list[int] | None:
        for code in value or []:
            if not 400 <= code <= 599:
                raise ValueError(f"retry_status_codes must list HTTP error statuses (400-599), got {code!r}")
        return value

    @property
    def custom_retry(self) -> bool:
        """Did the file set the backoff or the statuses (else the SDK's own policy applies)?"""
        return any(
            v is not None
            for v in (
                self.retry_initial_delay_ms,
                self.retry_max_delay_ms,
                self.retry_backoff_factor,
                self.retry_status_codes,
            )
        )


class AzureTarget(ProviderTarget):
    """An Azure OpenAI deployment (AgentV's `azure`): `endpoint` is a URL or a resource name."""

    provider: Literal["azure", "azure-openai"]
    endpoint: str = Field(validation_alias=AliasChoices("endpoint", "resource", "resourceName"))
    deployment: str = Field(validation_alias=AliasChoices("deployment", "deploymentName", "model"))
    version: str = Field(DEFAULT_AZURE_API_VERSION, validation_alias=AliasChoices("version", "api_version"))

    key_env: ClassVar[tuple[str, ...]] = ("AZURE_OPENAI_API_KEY",)

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        value = value.strip()
        if "${{" in value or value.startswith(("http://", "https://")) or AZURE_RESOURCE_RE.match(value):
            return value
        raise ValueError(
            "endpoint must be an http:// or https:// URL or an Azure resource name "
            f"(letters, digits and hyphens), got {value!r}"
        )

    @field_validator("deployment")
    @classmethod
    def _deployment(cls, value: str) -> str:
        return not_blank(value, "deployment")

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        # As AgentV: `api-version=2024-10-21` is the version 2024-10-21; blank is the default.
        return re.sub(r"^api[-_]?version\s*=\s*", "", value.strip(), flags=re.IGNORECASE) or DEFAULT_AZURE_API_VERSION

    @property
    def key_optional(self) -> bool:
        return False  # Azure always needs one


class AnthropicTarget(ProviderTarget):
    """Anthropic's Messages API (or a proxy of it at `base_url`)."""

    provider: Literal["anthropic"]
    model: ModelName = Field(validation_alias=AliasChoices("model", "deployment", "variant"))
    base_url: BaseUrl = None  # default: the Anthropic API ($ANTHROPIC_BASE_URL, as the SDK reads it)
    thinking_budget: int | None = Field(None, validation_alias=AliasChoices("thinking_budget", "thinkingBudget"))

    key_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, value: float | None) -> float | None:
        return check_temperature(value, top=1.0)

    @field_validator("thinking_budget")
    @classmethod
    def _thinking_budget(cls, value: int | None) -> int | None:
        return check_at_least(value, "thinking_budget", 1024)  # Anthropic's minimum

    @model_validator(mode="after")
    def _thinking_without_temperature(self) -> AnthropicTarget:
        if self.thinking_budget is not None and self.temperature is not None:
            raise ValueError("temperature cannot be set with thinking_budget: extended thinking needs the default")
        return self

    @property
    def key_optional(self) -> bool:
        return self.base_url is not None


class GeminiTarget(ProviderTarget):
    """Google's Gemini API (`generateContent`), or a proxy of it at `base_url`."""

    provider: Literal["gemini", "google", "google-gemini"]
    model: ModelName = Field(DEFAULT_GEMINI_MODEL, validation_alias=AliasChoices("model", "deployment", "variant"))
    base_url: BaseUrl = None  # default: the Gemini API

    # AgentV's name first (its SDK read it), then the two the google-genai SDK reads.
    key_env: ClassVar[tuple[str, ...]] = ("GOOGLE_GENERATIVE_AI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY")

    @property
    def key_optional(self) -> bool:
        return self.base_url is not None
