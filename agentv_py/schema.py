"""JSON Schemas of the file formats (`agentv schema dataset|targets`), generated from the models.

The schema is `Model.model_json_schema(mode="validation")`, then adjusted where the models accept
more than pydantic can describe, so an editor never flags a file `agentv` accepts:

- every spelling of an `AliasChoices` field is a property (`input` and `input_messages`, `command`
  and `command_template`, ...), and a required field is required under any one of its spellings;
- the shorthands the before-validators expand: a case's `input: "text"`, a case's
  `expected_output` given as a bare value, and a rubric given as a plain string;
- a union chosen by a callable discriminator is `anyOf`, not `oneOf`: its members overlap and the
  callable picks one (for message content, the shape rule is written out: a list of objects with a
  `type` is a list of content items; a catch-all member refuses the tags other members fix);
- a top-level `$schema` string is allowed (editors put it there);
- a dataset written in AgentV v4.42's format (`tests:`) is checked against that vocabulary
  (`schema_442.both_formats`).

Only the models are imported; `tests/cli/test_schema.py` checks the result against every example
in the repository.
"""

from __future__ import annotations

import copy
from typing import Any, get_args, get_origin

from pydantic import AliasChoices, BaseModel

from agentv_py.models.conversation import ConversationTurn
from agentv_py.models.dataset import CaseRubric, Dataset, EvalCase, Message
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig, RubricItem
from agentv_py.models.targets import TargetsFile
from agentv_py.schema_442 import both_formats

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

SCHEMA_MODELS: dict[str, type[BaseModel]] = {"dataset": Dataset, "targets": TargetsFile}
SCHEMA_KINDS: tuple[str, ...] = tuple(SCHEMA_MODELS)

Schema = dict[str, Any]


def json_schema(kind: str) -> Schema:
    """The JSON Schema (draft 2020-12) of one file format: `dataset` or `targets`."""
    root_model = SCHEMA_MODELS[kind]
    schema = root_model.model_json_schema(mode="validation")
    _overlapping_unions_any_of(schema)
    _tagged_members_own_their_tags(schema)
    for model in _models_under(root_model):
        _accept_every_alias(model, _definition(schema, model, root_model))
    if root_model is Dataset:
        _dataset_shorthands(schema)
    properties = {k: v for k, v in schema["properties"].items() if k != "$schema"}
    schema["properties"] = {
        "$schema": {"type": "string", "description": "The schema of this file (for editors; optional)."},
        **properties,
    }
    if root_model is Dataset:  # either format: AgentV v4.42's `tests` files too (`schema_442`)
        schema = both_formats(schema)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def _models_under(root: type[BaseModel]) -> list[type[BaseModel]]:
    """Every model reachable from `root` through field annotations, `root` first."""
    found: list[type[BaseModel]] = []
    pending: list[Any] = [root]
    while pending:
        annotation = pending.pop()
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation in found:
                continue
            found.append(annotation)
            pending.extend(field.annotation for field in annotation.model_fields.values())
        elif get_origin(annotation) is not None:  # X | Y, list[X], Annotated[X, ...], ...
            pending.extend(get_args(annotation))
    return found


def _definition(schema: Schema, model: type[BaseModel], root: type[BaseModel]) -> Schema:
    if model is root:
        return schema
    definition: Schema = schema["$defs"][model.__name__]
    return definition


def _overlapping_unions_any_of(node: Any) -> None:
    """`oneOf` without a `discriminator` comes from a callable discriminator: make it `anyOf`."""
    if isinstance(node, dict):
        if "oneOf" in node and "discriminator" not in node:
            node["anyOf"] = node.pop("oneOf")
        for value in node.values():
            _overlapping_unions_any_of(value)
    elif isinstance(node, list):
        for value in node:
            _overlapping_unions_any_of(value)


def _tagged_members_own_their_tags(schema: Schema) -> None:
    """In a union of models where some members fix a tag (`provider: cli`) and another takes any
    string there (a catch-all), a document with a fixed tag must match its own member only: the
    catch-all is made to refuse the fixed tags, as the callable discriminator does."""
    defs: Schema = schema.get("$defs", {})

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for value in node:
                visit(value)
            return
        if not isinstance(node, dict):
            return
        for value in node.values():
            visit(value)
        members = node.get("anyOf")
        if not isinstance(members, list) or not all(isinstance(m, dict) and "$ref" in m for m in members):
            return
        targets = [defs.get(str(m["$ref"]).removeprefix("#/$defs/"), {}).get("properties", {}) for m in members]
        for tag in {name for props in targets for name, sub in props.items() if _fixed(sub)}:
            fixed = [value for props in targets for value in _fixed(props.get(tag, {}))]
            for index, props in enumerate(targets):
                if tag in props and not _fixed(props[tag]):
                    refuse = {"not": {"required": [tag], "properties": {tag: {"enum": fixed}}}}
                    members[index] = {"allOf": [members[index], refuse]}

    visit(schema)


def _fixed(tag: Schema) -> list[Any]:
    """The values a member's tag is fixed to: a `const` (`provider: cli`) or an `enum` (the
    spellings of one provider, `azure` and `azure-openai`); none for a catch-all string."""
    if "const" in tag:
        return [tag["const"]]
    return list(tag.get("enum", []))


def _accept_every_alias(model: type[BaseModel], definition: Schema) -> None:
    properties: Schema = definition["properties"]
    for field in model.model_fields.values():
        alias = field.validation_alias
        if not isinstance(alias, AliasChoices):
            continue
        spellings = [str(choice) for choice in alias.choices]
        key = next(s for s in spellings if s in properties)
        for spelling in spellings:
            properties.setdefault(spelling, copy.deepcopy(properties[key]))
        required: list[str] = definition.get("required", [])
        if key in required:
            required.remove(key)
            if not required:
                definition.pop("required")
            one_spelling = {"anyOf": [{"required": [s]} for s in spellings]}
            definition.setdefault("allOf", []).append(one_spelling)


def _dataset_shorthands(schema: Schema) -> None:
    defs: Schema = schema["$defs"]
    case = defs[EvalCase.__name__]["properties"]
    # `input: "text"` is one user message.
    case["input"] = {"anyOf": [case["input"], {"type": "string"}]}
    # `expected_output: <value>` (not a message list) is one assistant message with that content
    # (a conversation turn's too).
    case["expected_output"] = {"anyOf": [case["expected_output"], {"type": ["string", "object", "array"]}]}
    turn = defs[ConversationTurn.__name__]["properties"]
    turn["expected_output"] = {"anyOf": [turn["expected_output"], {"type": ["string", "object", "array"]}]}
    # Message content is read by shape (`dataset._content_kind`): a non-empty list of objects that
    # all have a `type` is a list of content items, checked as such; any other list is data.
    message = defs[Message.__name__]
    if "tool_calls" in message["properties"]:  # a message needs content, or (tool use) tool calls
        needs = [{"required": ["content"]}, {"required": ["tool_calls"], "properties": {"tool_calls": {"minItems": 1}}}]
        message.setdefault("allOf", []).append({"anyOf": needs})
    content = message["properties"]["content"]
    if {"type": "null"} in content["anyOf"]:  # optional content: the union is the other member
        content = next(member for member in content["anyOf"] if member != {"type": "null"})
    text, items, mapping, data = content["anyOf"]
    items["minItems"] = 1
    data["not"] = {"minItems": 1, "items": {"type": "object", "required": ["type"]}}
    # `rubrics: ["Mentions the total", ...]` gives items ids r1, r2, ...
    rubrics = defs[RubricConfig.__name__]["properties"]["rubrics"]
    rubrics["items"] = {"anyOf": [rubrics["items"], {"type": "string"}]}
    # AgentV: an llm_judge with `rubrics` is the rubric evaluation (`models.evaluators._rubric_mode`).
    defs[LlmJudgeConfig.__name__]["properties"]["rubrics"] = rubrics
    # `score_ranges` may be AgentV's map {lowest score: description} (`score_ranges_shorthand`).
    shorthand = {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}
    for item in (RubricItem, CaseRubric):
        properties = defs[item.__name__]["properties"] if item.__name__ in defs else {}
        bands = properties.get("score_ranges")
        if bands is not None:
            properties["score_ranges"] = {
                **{k: v for k, v in bands.items() if k in ("default", "title")},
                "anyOf": [*bands.get("anyOf", [bands]), shorthand],
            }


__all__ = ["JSON_SCHEMA_DIALECT", "SCHEMA_KINDS", "SCHEMA_MODELS", "json_schema"]
