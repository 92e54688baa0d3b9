"""`Tagged`: a discriminated union validated by its tag, building only the member a value names.

A dataset names one or two of the twelve evaluator types and one of eight target providers;
pydantic's union builds every member's schema (each with its own validators) when the first
model that holds the union is built, which was most of the models' share of agentv's start-up.
`Annotated[Union, Tagged(full, tag_of, members)]` validates a mapping whose tag names a member
with that member alone (`Model.model_validate`, built on first use: the members are
`defer_build`), passing the validation context on. Anything else (no tag, an unknown one, a value
that is not a mapping) is validated by `full`, the union as it was declared, built on first use:
its errors, word for word. A member's errors are pydantic's own, located from the value (the
union would have put the member's tag in their location too; the loader drops it,
`loading.validation`). The JSON Schema is the full union's (`agentv schema`)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter, ValidationInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema


class Tagged:
    """The metadata of `Annotated[Union, Tagged(...)]` (see the module's docstring)."""

    def __init__(
        self,
        full: Any,
        tag_of: Callable[[dict[Any, Any]], str | None],
        members: Mapping[str, type[BaseModel]],
        before: Callable[[Any], Any] = lambda value: value,
    ) -> None:
        self.full = full  # the union as declared, with its before-validator
        self.tag_of = tag_of  # a mapping's member tag (None: none)
        self.members = members  # tag -> member model
        self.before = before  # what the declared union's before-validator does to a mapping it takes as is
        self._pending: list[JsonSchemaValue] | None = None  # while the JSON Schema is generated

    @functools.cached_property
    def adapter(self) -> TypeAdapter[Any]:
        return TypeAdapter(self.full)

    def validate(self, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, dict):
            member = self.members.get(self.tag_of(value) or "")
            if member is not None:
                return member.model_validate(self.before(value), context=info.context)
        return self.adapter.validate_python(value, context=info.context)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.with_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        if self._pending is not None:  # a member holds the union (a composite's members): filled in below
            placeholder: JsonSchemaValue = {}
            self._pending.append(placeholder)
            return placeholder
        self._pending = []
        try:
            generated = handler(self.adapter.core_schema)
            for placeholder in self._pending:
                placeholder.update(copy.deepcopy(generated))
        finally:
            self._pending = None
        return generated
