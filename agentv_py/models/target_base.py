"""What every target config shares (`TargetBase`), and the checks of keys several providers have."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
)

from agentv_py.models.base import StrictModel

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


class TargetBase(StrictModel):
    name: str
    judge_target: str | None = None  # the judge for LLM evaluators when this target is evaluated
    vision: bool = False  # the target accepts images (required of judges of cases with images)
    cache: bool = False  # cache this target's answers (and its replies as a judge): docs/incremental.md
    cache_key: str | None = None  # part of every cache key: what the key cannot see (a model version)
    # `--executor ray`: what each case's Ray task asks of the cluster (None: Ray's default, 1 CPU)
    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)

    @field_validator("provider", mode="before", check_fields=False)
    @classmethod
    def _provider(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value  # case-insensitive, as in AgentV
