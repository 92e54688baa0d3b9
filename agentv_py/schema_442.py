"""The dataset JSON Schema covering both formats (`agentv schema dataset`): a file with `tests:` (or
`agentv_format: "4.42"`) is checked against AgentV v4.42's vocabulary, any other against the
early-2026 schema generated from the models (`schema.json_schema`).

The v4.42 part is written from the vocabulary tables the loader reads
(`models.agentv_vocabulary`): every key v4.42 knows at the top, in `execution` and in a case, with
the shapes the loader accepts; a grader is a criterion (a string) or a mapping whose `type` is one
of either vocabulary's types, its other keys left to `agentv validate` (which checks them per
type). As for the early format, an editor never flags a file `agentv` accepts."""

from __future__ import annotations

from typing import Any

from agentv_py.models.agentv_vocabulary import (
    CASE_INFORMATIONAL,
    CASE_KEPT,
    CASE_REFUSED,
    CASE_WARNED,
    EXECUTION_HANDLED,
    EXECUTION_IGNORED,
    FORMAT_KEY,
    FORMATS,
    GRADER_KEYS,
    GRADER_TYPES,
    TOP_INFORMATIONAL,
    TOP_KEPT,
    TOP_WARNED,
    V4_42,
)
from agentv_py.models.evaluators import EVALUATOR_TYPE_NAMES

Schema = dict[str, Any]

_ANY: Schema = {}
_TEXT: Schema = {"type": "string"}
_GRADER_LIST: Schema = {"type": "array", "items": {"$ref": "#/$defs/AgentV442Grader"}}
_MESSAGES_OR_TEXT: Schema = {"type": ["string", "object", "array"]}


def both_formats(early: Schema) -> Schema:
    """`early` (the early-2026 dataset schema, its root a model) as one branch of a schema that
    sends a v4.42 file to the v4.42 branch."""
    definitions: Schema = early.pop("$defs", {})
    early["properties"][FORMAT_KEY] = {"enum": list(FORMATS), "description": _FORMAT_HELP}
    definitions["Dataset"] = early
    definitions["AgentV442Dataset"] = _dataset()
    definitions["AgentV442Case"] = _case()
    definitions["AgentV442Grader"] = _grader()
    return {
        "title": "agentv dataset (early-2026 `evalcases` format, or AgentV v4.42's `tests` format)",
        "$defs": definitions,
        "if": {
            "type": "object",
            "anyOf": [
                {"required": ["tests"]},
                {"required": [FORMAT_KEY], "properties": {FORMAT_KEY: {"const": V4_42}}},
            ],
        },
        "then": {"$ref": "#/$defs/AgentV442Dataset"},
        "else": {"$ref": "#/$defs/Dataset"},
    }


_FORMAT_HELP = (
    "Which AgentV's meanings apply: 2026-02 (a case's evaluators replace the suite's) or 4.42 (they are added "
    "before the suite's unless execution.skip_defaults). Default: 4.42 for a file with tests:, else 2026-02."
)


def _dataset() -> Schema:
    execution = dict.fromkeys((*EXECUTION_HANDLED, *EXECUTION_IGNORED), _ANY)
    execution.update(dict.fromkeys(GRADER_KEYS, _GRADER_LIST))
    execution["threshold"] = {"type": "number", "minimum": 0, "maximum": 1}
    execution["target"] = _TEXT
    properties: Schema = dict.fromkeys((*TOP_KEPT, *TOP_INFORMATIONAL, *TOP_WARNED), _ANY)
    properties.update(
        {
            "$schema": _TEXT,
            FORMAT_KEY: {"enum": list(FORMATS), "description": _FORMAT_HELP},
            "name": _TEXT,
            "description": _TEXT,
            "target": _TEXT,
            "threshold": {"type": "number", "minimum": 0, "maximum": 1},
            "input": _MESSAGES_OR_TEXT,
            "input_files": {"type": "array", "items": _TEXT},
            "execution": {"type": "object", "properties": execution},
            "tests": {
                "description": "The cases, or the case file (.yaml, .yml, .jsonl) or directory holding them.",
                "anyOf": [
                    _TEXT,
                    {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "anyOf": [{"$ref": "#/$defs/AgentV442Case"}, {"type": "string", "pattern": "^file://"}]
                        },
                    },
                ],
            },
            **dict.fromkeys(GRADER_KEYS, _GRADER_LIST),
        }
    )
    return {"type": "object", "required": ["tests"], "properties": properties}


def _case() -> Schema:
    properties: Schema = dict.fromkeys((*CASE_KEPT, *CASE_INFORMATIONAL, *CASE_WARNED, *CASE_REFUSED), _ANY)
    for key in CASE_REFUSED:  # read by AgentV's runtime alone (dependencies): refused here
        properties.pop(key)
    properties.update(
        {
            "id": {"type": "string", "minLength": 1},
            "criteria": _TEXT,
            "input": _MESSAGES_OR_TEXT,
            "input_files": {"type": "array", "items": _TEXT},
            "expected_output": _ANY,
            "vars": {"type": "object"},
            "mode": {"enum": ["conversation"]},
            "turns": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["input"],
                    "additionalProperties": False,
                    "properties": {
                        "input": _MESSAGES_OR_TEXT,
                        "expected_output": _ANY,
                        "assertions": _GRADER_LIST,
                    },
                },
            },
            "aggregation": {"enum": ["mean", "min", "max"]},
            "on_turn_failure": {"enum": ["continue", "stop"]},
            "window_size": {"type": "integer", "minimum": 1},
            "execution": {
                "type": "object",
                "properties": {
                    "skip_defaults": {"type": "boolean"},
                    "target": _TEXT,
                    **dict.fromkeys(GRADER_KEYS, _GRADER_LIST),
                },
            },
            **dict.fromkeys(GRADER_KEYS, _GRADER_LIST),
        }
    )
    return {"type": "object", "required": ["id"], "properties": properties}


def _grader() -> Schema:
    types = sorted({*GRADER_TYPES, *EVALUATOR_TYPE_NAMES, *(kind.replace("-", "_") for kind in GRADER_TYPES)})
    return {
        "anyOf": [
            {"type": "string", "minLength": 1, "description": "A criterion: graded by the default LLM judge."},
            {
                "type": "object",
                "required": ["type"],
                "properties": {
                    "type": {"enum": types},
                    "name": _TEXT,
                    "weight": {"type": "number", "minimum": 0},
                    "required": {"type": ["boolean", "number"]},
                    "min_score": {"type": "number"},
                    "negate": {"type": "boolean"},
                    "assertions": _GRADER_LIST,
                },
            },
        ]
    }
