"""What every target config shares (`TargetBase`), the checks of keys several providers have, and
a target's `Healthcheck`."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from agentv_py.models.base import StrictModel, positive_timeout

DEFAULT_TIMEOUT_SECONDS = 60.0


def check_base_url(value: str | None) -> str | None:
    if value is not None and "${{" not in value and not value.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
    return value


def check_temperature(value: float | None, top: float = 2.0) -> float | None:
    if value is not None and not 0.0 <= value <= top:
        raise ValueError(f"temperature must be between 0 and {top:g}, got {value!r}")
    return value


def check_at_least(value: int | None, key: str, least: int = 1) -> int | None:
    if value is not None and value < least:
        raise ValueError(f"{key} must be at least {least}, got {value!r}")
    return value


def check_retries(value: int) -> int:
    if not 0 <= value <= 10:
        raise ValueError(f"max_retries must be between 0 and 10, got {value!r}")
    return value


def not_blank(value: str, key: str) -> str:
    if not value.strip():
        raise ValueError(f"{key} must not be empty")
    return value


def check_workers(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise ValueError(f"workers must be at least 1, got {value!r}")
    return value


def model_name(value: str) -> str:
    return not_blank(value, "model")


def check_output_suffix(value: str) -> str:
    """`output_suffix`: how the {OUTPUT_FILE} name ends, for tools that insist on one (`.json`)."""
    if not OUTPUT_SUFFIX_RE.fullmatch(value):
        raise ValueError(
            f"output_suffix must be a dot and 1 to 20 letters, digits, '_', '-' or '.' (like .json), got {value!r}"
        )
    return value


OUTPUT_SUFFIX_RE = re.compile(r"\.[A-Za-z0-9_.-]{1,20}")
DEFAULT_OUTPUT_SUFFIX = ".out"

# Field types whose check is the same wherever they appear (the model providers' shared keys).
ModelName = Annotated[str, AfterValidator(model_name)]
BaseUrl = Annotated[str | None, AfterValidator(check_base_url)]
Retries = Annotated[int, AfterValidator(check_retries)]
Workers = Annotated[int | None, AfterValidator(check_workers)]
OutputSuffix = Annotated[str, AfterValidator(check_output_suffix)]


# Keys AgentV reads under two names: (the name it reads first, the other). A file may give both
# (generated files carry the spellings of older and newer releases): of a `conflicting` pair both
# must agree; of the others the first wins, as in AgentV (`verbose ?? cli_verbose`).
SPELLINGS: tuple[tuple[str, str], ...] = (
    ("grader_target", "judge_target"),
    ("verbose", "cli_verbose"),
    ("keep_temp_files", "keep_output_files"),
    ("files_format", "attachments_format"),
)
CONFLICTING = {"grader_target"}  # which judge scores is not a detail to pick silently


def merge_spellings(data: dict[Any, Any]) -> dict[Any, Any]:
    """`data` with one spelling of each key AgentV reads under two names (`SPELLINGS`)."""
    for first, other in SPELLINGS:
        if first in data and other in data:
            if first in CONFLICTING and data[first] != data[other]:
                raise PydanticCustomError(
                    "alias_conflict",
                    f"'{first}' and '{other}' are aliases and differ; keep one",
                    {"agentv_key": first},
                )
            data = {k: v for k, v in data.items() if k != other}
    return data


class TargetBase(StrictModel):
    # Built on first use: a targets file uses a few of the providers (`models.tagged`).
    model_config = ConfigDict(defer_build=True)

    name: str
    # the judge for LLM evaluators when this target is evaluated (AgentV v4.42: grader_target)
    judge_target: str | None = Field(None, validation_alias=AliasChoices("judge_target", "grader_target"))
    vision: bool = False  # the target accepts images (required of judges of cases with images)
    cache: bool = False  # cache this target's answers (and its replies as a judge): docs/incremental.md
    cache_key: str | None = None  # part of every cache key: what the key cannot see (a model version)
    # `--executor ray`: what each Ray task (a few cases, one at a time) asks of the cluster
    # (None: Ray's default, 1 CPU)
    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)

    @classmethod
    def strip_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        data = super().strip_unknown_keys(data, info)
        return merge_spellings(data) if isinstance(data, dict) else data

    @field_validator("provider", mode="before", check_fields=False)
    @classmethod
    def _provider(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value  # case-insensitive, as in AgentV


class Healthcheck(StrictModel):
    """Run before the first case: `type: command` (the default) runs `command_template`, which
    must exit 0; `type: http` GETs `url`, which must answer 2xx. Either within `timeout_seconds`."""

    model_config = ConfigDict(defer_build=True)  # built with the config that holds it (`models.tagged`)

    type: Literal["command", "http"] = "command"
    command_template: str | None = Field(None, validation_alias=AliasChoices("command_template", "command"))
    url: str | None = None
    timeout_seconds: float = 30.0
    cwd: str | None = None

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: float) -> float:
        return positive_timeout(value)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        # A `${{ VAR }}` url is checked once substituted.
        if value is not None and "${{" not in value and not value.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Healthcheck:
        if self.type == "http":
            if self.url is None:
                raise ValueError("a healthcheck of type http needs 'url'")
            if self.command_template is not None:
                raise ValueError("a healthcheck of type http takes 'url', not 'command_template'")
        else:
            if self.command_template is None:
                raise ValueError("a healthcheck of type command needs 'command_template'")
            if self.url is not None:
                raise ValueError("a healthcheck of type command takes 'command_template', not 'url'")
        return self
