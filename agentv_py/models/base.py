"""Shared model base: strict types and unknown keys rejected with a did-you-mean."""

from __future__ import annotations

import difflib
import functools
import math
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

UNKNOWN_KEYS = "unknown_keys"


@functools.cache
def known_keys(model: type[BaseModel]) -> list[str]:
    """Every key a model accepts in its input: field names and their validation aliases."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        alias = field.validation_alias
        choices = getattr(alias, "choices", None)
        if choices:
            keys.extend(str(c) for c in choices)
        elif isinstance(alias, str):
            keys.append(alias)
        else:
            keys.append(field.alias or name)
    return keys


def suggest(word: str, candidates: list[str]) -> str | None:
    """The closest candidate to a mistyped word, if one is close enough."""
    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_key_error(unknown: list[str], valid: list[str]) -> PydanticCustomError:
    first = unknown[0]
    parts = ", ".join(f"'{k}'" for k in unknown)
    noun = "unknown key" if len(unknown) == 1 else "unknown keys"
    close = suggest(first, valid)
    did_you_mean = f" (did you mean '{close}'?)" if close else ""
    message = f"{noun} {parts}{did_you_mean}. Valid keys: {', '.join(valid)}"
    # The offending key rides in the context so the loader can point at its line.
    return PydanticCustomError("unknown_key", message, {"agentv_key": first})


class StrictModel(BaseModel):
    """Strict, closed model: no silent coercion, no silently ignored keys."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=False, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        return cls.strip_unknown_keys(data, info)

    @classmethod
    def strip_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        """Report keys the model does not know.

        With a validation context holding an `unknown_keys` list (the loader's), each finding is
        recorded there by the identity of the offending mapping and the keys are dropped, so
        validation carries on and every other error in the same object is reported too. Without
        one, the first finding is raised. Subclasses with their own before-validators call this
        first, before they copy or reshape the mapping.
        """
        if not isinstance(data, dict):
            return data
        valid = known_keys(cls)
        unknown = [str(k) for k in data if k not in valid]
        if not unknown:
            return data
        sink = info.context.get(UNKNOWN_KEYS) if isinstance(info.context, dict) else None
        if sink is None:
            raise unknown_key_error(unknown, valid)
        sink.append((id(data), unknown, valid))
        return {k: v for k, v in data.items() if k in valid}


def one_of(value: str, valid: Sequence[str], what: str, plural: str) -> str:
    """`value` if it is in `valid`, else the error `Invalid <what>: v. Valid <plural>: ...`."""
    if value not in valid:
        raise ValueError(f"Invalid {what}: {value}. Valid {plural}: {', '.join(valid)}")
    return value


def tag_checker(key: str, valid: Sequence[str], *, owner: str, label: str, plural: str) -> Callable[[Any], Any]:
    """A before-validator for a union discriminated on `key`: one precise error (with a
    did-you-mean) for a missing or unknown tag, instead of one error per union member."""

    def check(value: Any) -> Any:
        if isinstance(value, dict):
            tag = value.get(key)
            listed = ", ".join(valid)
            if tag is None:
                raise PydanticCustomError("missing_tag", f"{owner} needs a '{key}'. Valid {plural}: {listed}")
            if tag not in valid:
                close = suggest(str(tag), list(valid))
                hint = f" (did you mean '{close}'?)" if close else ""
                raise PydanticCustomError(
                    "unknown_tag", f"Unknown {label}: {tag}{hint}. Valid {plural}: {listed}", {"agentv_key": key}
                )
        return value

    return check


def positive_timeout(value: float) -> float:
    """A timeout in seconds: a finite number > 0."""
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"timeout_seconds must be a number > 0, got {value!r}")
    return float(value)


Timeout = Annotated[float, AfterValidator(positive_timeout)]  # seconds, > 0 and finite


def check_metadata(value: Any) -> Any:
    """A case's `metadata:` (`EvalCase.metadata`): a mapping of text keys to one text, number,
    true/false or null each (ValueError, in the user's words, otherwise)."""
    if value is None:
        return value
    if not isinstance(value, dict):
        raise ValueError(
            f"metadata is a mapping of keys to values, e.g. {{doc_type: receipt}}, not {type(value).__name__}"
        )
    for key, item in value.items():
        if not isinstance(key, str):
            raise ValueError(f"metadata keys are texts, not {type(key).__name__} {key!r}")
        if isinstance(item, (list, dict)):
            kind = "a list" if isinstance(item, list) else "a mapping"
            raise ValueError(
                f"metadata value of '{key}' is {kind}: each is one text, number, true/false or null "
                "(a slice of the dataset is one value)"
            )
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"metadata value of '{key}' is not a finite number")
    return value
