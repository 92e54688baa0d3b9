"""`agentv schema dataset|targets`: JSON Schemas generated from the models, for editors.

The schemas must accept every example in the repository and both spellings of every alias, and
reject the obvious mistakes an editor should flag.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.cli.base import SCHEMA_EXIT_CODES
from agentv_py.cli.schema_cmd import KINDS
from agentv_py.loading.source import read_yaml
from agentv_py.schema import JSON_SCHEMA_DIALECT, SCHEMA_KINDS, json_schema
from tests.cli.test_help import exit_codes, help_text
from tests.conftest import REPO_ROOT

USAGE = "Usage: agentv schema [OPTIONS] [FORMAT]\nTry 'agentv schema -h' for help.\n\n"


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "100", "NO_COLOR": "1"}).invoke(app, list(args))


def printed(kind: str) -> dict[str, Any]:
    result = invoke("schema", kind)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def errors(kind: str, document: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(printed(kind))
    return [error.message for error in validator.iter_errors(document)]


def failures(kind: str, document: Any) -> list[tuple[list[str | int], str, Any]]:
    """Each way `document` fails the printed schema, as (where, the schema keyword that failed,
    what failed it), read from jsonschema's error fields rather than its wording; its sentence
    need only be there."""
    out: list[tuple[list[str | int], str, Any]] = []
    for error in jsonschema.Draft202012Validator(printed(kind)).iter_errors(document):
        assert error.message, error
        if error.validator == "additionalProperties":  # the keys no `properties` entry names
            what: Any = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        elif error.validator == "required":  # the required keys that are absent
            what = [key for key in error.validator_value if key not in error.instance]
        else:
            what = error.validator_value
        out.append((list(error.absolute_path), str(error.validator), what))
    return out


def case(**fields: Any) -> dict[str, Any]:
    return {"evalcases": [{"id": "c1", **fields}]}


def cli_target(**fields: Any) -> dict[str, Any]:
    return {"targets": [{"name": "t", "provider": "cli", **fields}]}


# --- the command -------------------------------------------------------------------------------


def test_help_text():
    assert help_text(["schema"]) == (
        "Usage: agentv schema [OPTIONS] [FORMAT]\n"
        "\n"
        "  Print the JSON Schema of a dataset or targets file (for an editor's YAML\n"
        "  language server).\n"
        "\n"
        "Arguments:\n"
        "  FORMAT  dataset or targets.\n"
        "\n"
        "Options:\n"
        "  -h, --help  Show this message and exit.\n"
        "\n"
        "Exit codes:\n"
        "  0  schema printed\n"
        "  2  usage error: no file format, or not one of dataset, targets\n"
        "  3  internal error (a bug: traceback shown)\n"
    )
    assert exit_codes(help_text(["schema"])) == [code for code, _ in SCHEMA_EXIT_CODES] == [0, 2, 3]


def test_top_level_help_lists_the_command():
    import re

    assert re.search(r"\n  schema +Print the JSON Schema of datasets or targets files\.\n", help_text([]))


@pytest.mark.parametrize("kind", ["dataset", "targets"])
def test_prints_pretty_json_with_a_trailing_newline(kind):
    result = invoke("schema", kind)
    assert result.exit_code == 0 and result.stderr == ""
    schema = json.loads(result.stdout)
    assert result.stdout == json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    assert result.stdout.startswith('{\n  "$schema": "https://json-schema.org/draft/2020-12/schema",\n')
    assert schema == json_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "Missing argument 'FORMAT'. Choose one of: dataset, targets."),
        (["datasets"], "Unknown FORMAT 'datasets'. Choose one of: dataset, targets."),
        (["results"], "Unknown FORMAT 'results'. Choose one of: dataset, targets."),
        (["\x1b[31mred"], "Unknown FORMAT '\\x1b[31mred'. Choose one of: dataset, targets."),
    ],
    ids=["missing", "plural", "unknown", "control-characters"],
)
def test_usage_errors(args, message):
    result = invoke("schema", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"{USAGE}Error: {message}\n"


def test_extra_argument_is_a_usage_error():
    result = invoke("schema", "dataset", "targets")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"{USAGE}Error: Got unexpected extra argument(s) (targets)\n"


def test_the_command_lists_the_library_kinds():
    assert KINDS == SCHEMA_KINDS == ("dataset", "targets")


def test_help_imports_no_models():
    code = (
        "import sys\nfrom agentv_py.cli import app\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'agentv_py.models', 'agentv_py.schema'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert result.stdout == "[]\n"


# --- the repository's own files validate ------------------------------------------------------

EXAMPLES = sorted((REPO_ROOT / "evals").rglob("*.yaml"))


def kind_of(path: Path) -> str:
    return "targets" if path.parent.name == ".agentv" and path.name == "targets.yaml" else "dataset"


def test_the_examples_are_found():
    kinds = [kind_of(path) for path in EXAMPLES]
    assert kinds.count("targets") >= 3 and kinds.count("dataset") >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_example_validates(path):
    # The loader's own parser: libyaml (as agentv reads the file) and dates kept as strings.
    _, document = read_yaml(path)
    assert errors(kind_of(path), document) == []


# --- mistakes are rejected ---------------------------------------------------------------------


def test_a_minimal_dataset_and_targets_file_validate():
    assert errors("dataset", case(input="hi")) == []
    assert errors("targets", cli_target(command_template="run {PROMPT}")) == []


def test_unknown_top_level_key_is_rejected():
    assert failures("dataset", {**case(input="hi"), "evalcase": []}) == [([], "additionalProperties", ["evalcase"])]
    assert failures("targets", {**cli_target(command="x"), "target": []}) == [([], "additionalProperties", ["target"])]


def test_unknown_case_key_is_rejected():
    assert failures("dataset", case(inptu="hi")) == [(["evalcases", 0], "additionalProperties", ["inptu"])]


def test_missing_evalcases_is_rejected():
    assert failures("dataset", {"description": "x"}) == [([], "required", ["evalcases"])]


@pytest.mark.parametrize("where", ["suite", "case"])
def test_wrong_evaluator_type_is_rejected(where):
    evaluator = {"name": "e", "type": "field_acuracy", "fields": [{"path": "total"}]}
    if where == "suite":
        document = {**case(input="hi"), "execution": {"evaluators": [evaluator]}}
    else:
        document = case(input="hi", evaluators=[evaluator])
    assert len(errors("dataset", document)) == 1
    good = {**evaluator, "type": "field_accuracy"}
    fixed = {**case(input="hi"), "execution": {"evaluators": [good]}} if where == "suite" else case(evaluators=[good])
    assert errors("dataset", fixed) == []


def test_wrong_role_is_rejected():
    assert errors("dataset", case(input=[{"role": "usr", "content": "hi"}]))


def test_content_items_are_checked_other_lists_are_data():
    """Message content is read by shape, as the model reads it."""
    item = {"type": "text", "value": "hi"}
    assert errors("dataset", case(input=[{"role": "user", "content": [item]}])) == []
    assert errors("dataset", case(input=[{"role": "user", "content": [{**item, "type": "txt"}]}]))
    assert errors("dataset", case(input=[{"role": "user", "content": [{"type": "text", "valeu": "hi"}]}]))
    for data in ([], [1, 2], [{"x": 1}], [item, "x"]):  # not all objects with a type: ground truth
        assert errors("dataset", case(input="hi", expected_output=[{"role": "assistant", "content": data}])) == []


def test_wrong_value_types_are_rejected():
    assert errors("targets", cli_target(command="x", timeout_seconds="60"))
    assert errors("targets", cli_target(command="x", vision="yes"))
    assert errors("dataset", {"evalcases": "c1"})


# --- aliases and shorthands: every spelling the models accept ----------------------------------

MESSAGES = [{"role": "user", "content": "What is the total?"}]
EXPECTED = [{"role": "assistant", "content": {"total": 12}}]


@pytest.mark.parametrize("key", ["input", "input_messages"])
def test_both_input_spellings(key):
    assert errors("dataset", case(**{key: MESSAGES})) == []


@pytest.mark.parametrize("key", ["expected_output", "expected_messages"])
def test_both_expected_spellings(key):
    assert errors("dataset", case(input="hi", **{key: EXPECTED})) == []


@pytest.mark.parametrize("key", ["expected_outcome", "outcome"])
def test_both_outcome_spellings(key):
    assert errors("dataset", case(input="hi", **{key: "The total is read"})) == []


@pytest.mark.parametrize("value", ["12", {"total": 12}, [1, 2]], ids=["string", "object", "list"])
def test_expected_output_shorthand(value):
    assert errors("dataset", case(input="hi", expected_output=value)) == []


def test_input_shorthand_is_a_string_and_messages_are_checked():
    assert errors("dataset", case(input="hi")) == []
    assert errors("dataset", case(input_messages="hi"))  # the shorthand is `input` only, as in the model
    assert errors("dataset", case(input=[{"role": "user"}]))


def test_rubric_items_may_be_plain_strings():
    evaluator = {"name": "r", "type": "rubric", "rubrics": ["Mentions the total", {"id": "x", "description": "d"}]}
    assert errors("dataset", case(input="hi", evaluators=[evaluator])) == []


@pytest.mark.parametrize("key", ["command", "command_template"])
def test_both_command_spellings(key):
    assert errors("targets", cli_target(**{key: "run {PROMPT}"})) == []
    assert errors("targets", cli_target(command="x", healthcheck={key: "true"})) == []


def test_a_command_is_required_under_either_spelling():
    assert errors("targets", cli_target())
    assert errors("targets", cli_target(command_template="x")) == []


@pytest.mark.parametrize("kind, document", [("dataset", case(input="hi")), ("targets", cli_target(command="x"))])
def test_a_top_level_schema_key_is_allowed_and_must_be_a_string(kind, document):
    assert errors(kind, {"$schema": "./dataset.schema.json", **document}) == []
    assert failures(kind, {"$schema": 1, **document}) == [(["$schema"], "type", "string")]


def test_the_dialect_is_draft_2020_12():
    for kind in SCHEMA_KINDS:
        assert json_schema(kind)["$schema"] == JSON_SCHEMA_DIALECT


def target(**fields: Any) -> dict[str, Any]:
    return {"targets": [{"name": "t", **fields}]}


PROVIDER_TARGETS = [
    ("azure", {"provider": "azure", "endpoint": "https://r.openai.azure.com", "deployment": "d"}),
    ("azure-openai-camel", {"provider": "azure-openai", "resourceName": "r", "deploymentName": "d", "maxTokens": 9}),
    ("azure-model-alias", {"provider": "azure", "resource": "r", "model": "d", "api_version": "2024-10-21"}),
    ("anthropic", {"provider": "anthropic", "model": "m", "thinking_budget": 2048, "retry_status_codes": [529]}),
    ("anthropic-variant", {"provider": "anthropic", "variant": "m", "apiKey": "k", "thinkingBudget": 1024}),
    ("gemini-defaults", {"provider": "gemini"}),
    ("google", {"provider": "google", "model": "m", "retryInitialDelayMs": 5, "providerBatching": False}),
    ("google-gemini", {"provider": "google-gemini", "max_output_tokens": 5, "system_prompt": "s", "vision": True}),
]


@pytest.mark.parametrize("fields", [p[1] for p in PROVIDER_TARGETS], ids=[p[0] for p in PROVIDER_TARGETS])
def test_model_provider_targets_validate(fields):
    assert errors("targets", target(**fields)) == []


@pytest.mark.parametrize(
    "fields",
    [
        {"provider": "azure", "deployment": "d"},  # no endpoint under any spelling
        {"provider": "azure", "endpoint": "r"},  # no deployment
        {"provider": "anthropic"},  # no model
        {"provider": "gemini", "temperature": "hot"},
        {"provider": "gemini", "max_retries": "3"},
        {"provider": "anthropic", "model": "m", "nonsense": 1},  # closed, unlike an opaque target
    ],
    ids=["azure-endpoint", "azure-deployment", "anthropic-model", "temperature", "max-retries", "unknown-key"],
)
def test_model_provider_targets_are_checked(fields):
    assert errors("targets", target(**fields))


def test_providers_agentv_does_not_run_take_any_key():
    assert errors("targets", target(provider="codex", executable="codex", anything=[1])) == []
    assert errors("targets", target(provider="bedrock", model="m")) == []


def test_agentv_rubric_forms_validate():
    """AgentV's rubric spellings: an llm_judge with rubrics, and score_ranges as a list of bands
    or as the map {lowest score: description}, on the case and on the evaluator."""
    bands = [{"score_range": [0, 4], "expected_outcome": "wrong"}, {"score_range": [5, 10], "expected_outcome": "ok"}]
    llm = {
        "type": "llm_judge",
        "name": "r",
        "rubrics": ["Greets", {"id": "a", "score_ranges": {"0": "no", "5": "yes"}}],
    }
    assert errors("dataset", case(input="hi", evaluators=[llm])) == []
    assert errors("dataset", case(input="hi", rubrics=[{"id": "b", "score_ranges": bands}])) == []
    assert errors("dataset", case(input="hi", rubrics=[{"id": "c", "score_ranges": {"0": "no", "7": "yes"}}])) == []


def test_an_llm_judge_with_rubrics_loads_as_the_rubric_evaluation(tmp_path):
    from agentv_py.loading import load_dataset
    from agentv_py.models.judges import RubricConfig

    path = tmp_path / "d.yaml"
    path.write_text(
        "evalcases:\n  - id: c1\n    input: hi\n"
        "    evaluators: [{type: llm_judge, name: r, target: j, rubrics: [Greets, Is polite]}]\n"
    )
    [evaluator] = load_dataset(path).cases[0].evaluators
    assert isinstance(evaluator, RubricConfig)
    assert (evaluator.name, evaluator.target, [i.description for i in evaluator.rubrics]) == (
        "r",
        "j",
        ["Greets", "Is polite"],
    )


# --- the documentation's examples validate ----------------------------------------------------

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def documented_files() -> list[tuple[str, str, Any]]:
    """(where, kind, document) for every YAML block in README.md and docs/ that is a whole dataset
    (a top-level `evalcases:`) or targets file (`targets:`); a block with a `...` value is an
    outline (illustrative) and is left out."""
    import yaml

    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"```ya?ml\n(.*?)```", text, re.S):
            body = block.group(1)
            data = yaml.load(body, Loader=yaml.BaseLoader)  # strings only, as the loader reads dates
            if isinstance(data, dict) and ("evalcases" in data or "targets" in data) and not outline(data):
                line = text[: block.start()].count("\n") + 2
                kind = "dataset" if "evalcases" in data else "targets"
                found.append((f"{doc.relative_to(REPO_ROOT)}:{line}", kind, yaml.safe_load(body)))
    return found


def outline(value: Any) -> bool:
    """Whether a value holds `...` (a documented outline, not a file)."""
    if isinstance(value, dict):
        return any(outline(item) for item in value.values())
    if isinstance(value, list):
        return any(outline(item) for item in value)
    return value == "..."


def test_the_documented_examples_are_found():
    kinds = [kind for _, kind, _ in documented_files()]
    assert kinds.count("targets") >= 4  # the documented datasets are outlines; evals/ holds whole ones


@pytest.mark.parametrize("where, kind, document", documented_files(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_documented_example_validates(where, kind, document):
    assert errors(kind, document) == [], where


def test_the_schema_enumerates_match_types_and_takes_one_python_path():
    fields = {"execution": {"evaluators": [{"type": "field_accuracy", "fields": [{"path": "a", "match": "fuzy"}]}]}}
    assert errors("dataset", {**case(input="hi"), **fields})  # an editor flags the typo
    assert errors("dataset", {**case(input="hi"), "execution": {"evaluators": []}}) == []
    for path in ("src", ["src", "lib"]):
        target = {"targets": [{"name": "x", "provider": "python", "callable": "pkg.mod:run", "path": path}]}
        assert errors("targets", target) == []


# --- AgentV v4.42's format (`tests:`): the other branch of the dataset schema ------------------

V442 = {
    "name": "demo",
    "execution": {"target": "llm", "threshold": 0.7, "workers": 2},
    "assertions": [{"type": "contains", "value": "READY"}],
    "tests": [
        {
            "id": "c1",
            "criteria": "Greets",
            "input": "hello",
            "vars": {"who": "Ada"},
            "assertions": ["Says hello", {"type": "code-grader", "command": ["python3", "g.py"], "required": True}],
            "execution": {"skip_defaults": True},
            "metadata": {"tier": 1},
        },
        "file://more.jsonl",
    ],
}


def test_an_agentv_442_dataset_validates():
    assert errors("dataset", V442) == []
    assert errors("dataset", {"tests": "./cases/"}) == []
    assert errors("dataset", {"agentv_format": "2026-02", **case(input="hi")}) == []


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"tests": [{"id": "c1", "assertions": [{"type": "contains-som", "value": "x"}]}]}, id="bad-type"),
        pytest.param({"tests": [{"input": "hi"}]}, id="no-id"),
        pytest.param({"tests": []}, id="no-case"),
        pytest.param({"tests": [{"id": "c1", "execution": {"skip_defaults": "yes"}}]}, id="skip-defaults-text"),
    ],
)
def test_an_agentv_442_dataset_is_checked_against_its_own_vocabulary(document):
    assert [where for where, _, _ in failures("dataset", document)] == [["tests"]]
