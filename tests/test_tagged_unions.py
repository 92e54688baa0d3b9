"""`models.tagged`: an evaluator or target config validated by its tag gives what the declared
discriminated union gives (`Tagged.full`, built only for this comparison): the same model, or
the same errors (their locations without the union's member tag, which the loader drops), and
the same unknown keys reported. Only the members a value names are built."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from agentv_py.models.base import UNKNOWN_KEYS
from agentv_py.models.evaluators import EvaluatorConfig
from agentv_py.models.tagged import Tagged
from agentv_py.models.targets import TargetEntry
from tests.conftest import REPO_ROOT


def _tagged(annotation: Any) -> Tagged:
    return next(meta for meta in annotation.__metadata__ if isinstance(meta, Tagged))


def _outcome(annotation: Any, value: Any, tags: set[str]) -> tuple[Any, ...]:
    """(the model, or the errors with the member tag dropped from their locations; unknown keys)."""
    unknown: list[tuple[int, list[str], list[str]]] = []
    try:
        result: Any = TypeAdapter(annotation).validate_python(value, context={UNKNOWN_KEYS: unknown})
        result = (type(result).__name__, result)
    except ValidationError as exc:
        result = [
            (e["type"], e["msg"], tuple(e["loc"][1:] if e["loc"] and e["loc"][0] in tags else e["loc"]))
            for e in exc.errors()
        ]
    return result, [(keys, valid) for _, keys, valid in unknown]


FIELDS = [{"path": "a"}]
EVALUATORS = [
    pytest.param({"type": "field_accuracy", "fields": FIELDS}, id="field-accuracy"),
    pytest.param({"type": "field_accuracy"}, id="field-accuracy-without-fields"),
    pytest.param({"type": "field_accuracy", "fields": FIELDS, "weigth": 2}, id="unknown-key"),
    pytest.param({"type": "field_accuracy", "fields": [{"path": 1}], "weight": -1}, id="two-errors"),
    pytest.param({"type": "llm_judge", "rubrics": ["is polite"]}, id="llm-judge-with-rubrics-is-a-rubric"),
    pytest.param({"type": "llm_judge", "prompt": "Judge {{ answer }}"}, id="llm-judge"),
    pytest.param({"type": "rubric", "rubrics": []}, id="rubric-without-items"),
    pytest.param({"type": "code_judge", "script": []}, id="code-judge-empty-script"),
    pytest.param(
        {"type": "composite", "evaluators": [{"type": "latency", "threshold": 5}, {"type": "x"}]}, id="composite"
    ),
    pytest.param({"type": "tool_trajectory", "mode": "any_order", "minimums": {"search": 1}}, id="tool-trajectory"),
    pytest.param({"fields": FIELDS}, id="no-type"),
    pytest.param({"type": "field_acuracy", "fields": FIELDS}, id="unknown-type"),
    pytest.param({"type": ["field_accuracy"]}, id="type-not-a-string"),
    pytest.param({"type": None}, id="type-null"),
    pytest.param("field_accuracy", id="not-a-mapping"),
    pytest.param(None, id="null"),
]


@pytest.mark.parametrize("value", EVALUATORS)
def test_an_evaluator_config_validates_as_the_declared_union_does(value: Any) -> None:
    tagged = _tagged(EvaluatorConfig)
    tags = set(tagged.members)
    assert _outcome(EvaluatorConfig, value, tags) == _outcome(tagged.full, value, tags)


TARGETS = [
    pytest.param({"name": "t", "provider": "cli", "command_template": "cat {FILES}"}, id="cli"),
    pytest.param({"name": "t", "provider": "CLI", "command_template": "cat {FILES}"}, id="provider-in-capitals"),
    pytest.param({"name": "t", "provider": "cli"}, id="cli-without-command"),
    pytest.param({"name": "t", "provider": "cli", "command_template": "cat {NOPE}", "timout": 1}, id="cli-errors"),
    pytest.param({"name": "t", "provider": "mock", "response": "{}"}, id="mock"),
    pytest.param({"name": "t", "provider": "azure-openai", "endpoint": "https://x", "deployment": "d"}, id="azure"),
    pytest.param({"name": "t", "provider": "google"}, id="gemini-spelling"),
    pytest.param({"name": "t", "provider": "openai"}, id="openai-without-model"),
    pytest.param({"name": "t", "provider": "python", "callable": "pkg.mod:fn"}, id="python"),
    pytest.param({"name": "t", "provider": "codex", "model": "m"}, id="foreign-provider"),
    pytest.param({"name": "t", "provider": "Bedrock"}, id="foreign-provider-in-capitals"),
    pytest.param({"name": "t", "provider": "nope"}, id="unknown-provider"),
    pytest.param({"name": "t"}, id="no-provider"),
    pytest.param({"name": "t", "provider": 3}, id="provider-not-a-string"),
    pytest.param(["cli"], id="not-a-mapping"),
    pytest.param({"name": "t", "provider": "claude-cli", "grader_target": "g"}, id="agentv-442-provider"),
    pytest.param({"name": "t", "provider": "my-own", "command": "run {PROMPT}"}, id="project-provider"),
    pytest.param({"name": "t", "use_target": "u"}, id="use-target"),
    pytest.param({"name": "t", "use_target": "u", "provider": "cli"}, id="use-target-with-provider"),
]


@pytest.mark.parametrize("value", TARGETS)
def test_a_target_config_validates_as_the_declared_union_does(value: Any) -> None:
    tagged = _tagged(TargetEntry)
    tags = {*tagged.members, "opaque", "alias"}
    assert _outcome(TargetEntry, value, tags) == _outcome(tagged.full, value, tags)


def test_only_the_member_a_value_names_is_built() -> None:
    code = (
        "from typing import get_args\n"
        "from pydantic import TypeAdapter\n"
        "from agentv_py.models.evaluators import EVALUATOR_CONFIG_TYPES, EvaluatorConfig\n"
        "TypeAdapter(list[EvaluatorConfig]).validate_python([{'type': 'latency', 'threshold': 5}])\n"
        "print(sorted(m.__name__ for m in EVALUATOR_CONFIG_TYPES if m.__pydantic_complete__))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    # llm_judge: the default judge is built when the loading code is imported (not here)
    assert result.stdout == "['LatencyConfig']\n"
