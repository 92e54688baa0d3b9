"""Targets files as AgentV wrote them (issue 12): its model providers (azure, anthropic, gemini)
load as runnable targets under AgentV's keys; providers agentv does not run (agents, bedrock,
vertex) load as opaque targets (an error only when selected or needed as a judge); the era's cli
keys and `$schema`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.errors import TargetError
from agentv_py.loading import load_dataset, load_targets
from agentv_py.models.model_targets import AnthropicTarget, AzureTarget, GeminiTarget
from agentv_py.models.targets import FOREIGN_PROVIDERS, CliTarget, OpaqueTarget, is_model_target
from agentv_py.runner.targets import make_runner

AGENTV_TARGETS = """\
$schema: agentv-targets-v2.2
targets:
  - name: azure_base
    provider: Azure
    endpoint: ${{ AZURE_OPENAI_ENDPOINT }}
    api_key: ${{ AZURE_OPENAI_API_KEY }}
    model: ${{ AZURE_DEPLOYMENT_NAME }}
    judge_target: azure_base
    workers: 2
    providerBatching: false
  - name: codex_agent
    provider: codex
    executable: codex
    args: [--full-auto]
  - name: bedrock_judge
    provider: bedrock
    model: anthropic.claude-3-sonnet
  - name: copy_sh
    provider: cli
    judge_target: bedrock_judge
    command_template: sh {FILES}
    attachments_format: "{path}"
    cli_verbose: true
    keep_output_files: true
    workers: 4
    healthcheck:
      type: command
      command_template: "true"
      timeout_seconds: 5
"""

DATASET = """\
$schema: agentv-eval-v2
execution:
  target: copy_sh
  evaluators:
    - {type: field_accuracy, fields: [{path: a}]}
evalcases:
  - id: c1
    input_messages: [{role: user, content: [{type: file, value: fx/c1.sh}]}]
    expected_messages: [{role: assistant, content: {a: 1}}]
"""


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


@pytest.fixture
def project(ws):
    ws.targets(AGENTV_TARGETS)
    ws.file("fx/c1.sh", "echo '{\"a\": 1}'\n")
    ws.dataset(DATASET)
    return ws


def test_an_agentv_targets_file_loads(project):
    loaded = load_targets(".agentv/targets.yaml")
    azure, codex, bedrock, cli = loaded.model.targets
    assert isinstance(azure, AzureTarget) and is_model_target(azure)
    assert (azure.provider, azure.endpoint, azure.api_key, azure.deployment, azure.version) == (
        "azure",  # case-insensitive, as in AgentV
        "${{ AZURE_OPENAI_ENDPOINT }}",  # substituted when the target is used
        "${{ AZURE_OPENAI_API_KEY }}",
        "${{ AZURE_DEPLOYMENT_NAME }}",  # given as `model`, an alias of deployment
        "2024-12-01-preview",
    )
    assert (azure.judge_target, azure.workers, azure.provider_batching) == ("azure_base", 2, False)
    assert isinstance(codex, OpaqueTarget) and codex.settings == {"executable": "codex", "args": ["--full-auto"]}
    assert isinstance(bedrock, OpaqueTarget) and not is_model_target(bedrock)
    assert isinstance(cli, CliTarget) and not is_model_target(cli)
    assert (cli.files_format, cli.verbose, cli.keep_temp_files, cli.workers) == ("{path}", True, True, 4)
    assert cli.healthcheck is not None and (cli.healthcheck.type, cli.healthcheck.command_template) == (
        "command",
        "true",
    )


@pytest.mark.parametrize("provider", [*FOREIGN_PROVIDERS, "Bedrock", "Claude-Code"])
def test_every_agentv_provider_loads(ws, provider):
    ws.file("targets.yaml", f"targets:\n  - name: x\n    provider: {provider}\n    anything: [1, {{a: b}}]\n")
    target = load_targets("targets.yaml").model.targets[0]
    assert isinstance(target, OpaqueTarget)
    assert (target.provider, target.settings) == (provider.lower(), {"anything": [1, {"a": "b"}]})


MODEL_PROVIDERS = [
    ("azure", "endpoint: r, deployment: d", AzureTarget),
    ("AZURE-OpenAI", "resourceName: r, deploymentName: d", AzureTarget),
    ("anthropic", "model: claude", AnthropicTarget),
    ("Anthropic", "variant: claude", AnthropicTarget),
    ("gemini", "model: g", GeminiTarget),
    ("google", "deployment: g", GeminiTarget),
    ("Google-Gemini", "apiKey: k", GeminiTarget),
]


@pytest.mark.parametrize("provider, keys, model", MODEL_PROVIDERS, ids=[p[0] for p in MODEL_PROVIDERS])
def test_agentv_model_providers_load_as_runnable_targets(ws, provider, keys, model):
    ws.file("targets.yaml", f"targets:\n  - {{name: x, provider: {provider}, {keys}}}\n")
    target = load_targets("targets.yaml").model.targets[0]
    assert type(target) is model and target.provider == provider.lower() and is_model_target(target)


def test_runnable_providers_are_case_insensitive(ws):
    ws.file(
        "targets.yaml",
        "targets:\n  - {name: m, provider: Mock, response: x}\n  - {name: c, provider: CLI, command: x}\n",
    )
    assert [t.provider for t in load_targets("targets.yaml").model.targets] == ["mock", "cli"]


def test_other_cli_key_spellings(ws):
    ws.file(
        "targets.yaml",
        "targets:\n  - {name: t, provider: cli, command: x, verbose: false, keep_temp_files: true}\n",
    )
    target = load_targets("targets.yaml").model.targets[0]
    assert isinstance(target, CliTarget) and (target.verbose, target.keep_temp_files) == (False, True)


def test_dataset_schema_key_is_ignored(project):
    assert [c.case.id for c in load_dataset("dataset.yaml").cases] == ["c1"]


def test_validate_passes_a_targets_file_with_agentv_providers(project):
    result = invoke("validate", ".agentv/targets.yaml", "dataset.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["ok: .agentv/targets.yaml (4 targets)", "ok: dataset.yaml (1 case)"]


def test_eval_of_the_cli_target_runs(project):
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in Path("out.jsonl").read_text().splitlines()]
    assert [(r["target"], r["status"], r["score"]) for r in rows] == [("copy_sh", "ok", 1.0)]


SELECTED = [
    (
        "bedrock_judge",
        "error: target 'bedrock_judge' has provider 'bedrock', which agentv does not run; "
        "agentv runs cli, python, mock, openai, azure, anthropic and gemini targets\n"
        "hint: targets agentv can run in .agentv/targets.yaml: azure_base, copy_sh; select one with --target NAME\n",
    ),
    (
        "codex_agent",
        "error: target 'codex_agent' has provider 'codex', which AgentV ran but agentv does not; "
        "agentv runs cli, python, mock, openai, azure, anthropic and gemini targets; "
        "to evaluate codex, wrap the agent as "
        "a cli target (command_template runs it with {PROMPT} and it prints its answer or writes it to {OUTPUT_FILE})\n"
        "hint: targets agentv can run in .agentv/targets.yaml: azure_base, copy_sh; select one with --target NAME\n",
    ),
]


@pytest.mark.parametrize("name, stderr", SELECTED, ids=[s[0] for s in SELECTED])
def test_selecting_a_target_agentv_does_not_run_exits_2(project, name, stderr):
    result = invoke("eval", "dataset.yaml", "--target", name, "--out", "out.jsonl")
    assert result.exit_code == 2
    assert result.stderr == stderr
    assert not Path("out.jsonl").exists()


def test_selecting_the_azure_target_needs_its_variables(project, monkeypatch):
    # AgentV's azure target runs now: its `${{ VAR }}` values are read, and must be set.
    for var in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_DEPLOYMENT_NAME"):
        monkeypatch.delenv(var, raising=False)
    result = invoke("eval", "dataset.yaml", "--target", "azure_base", "--out", "out.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: 3 problems found:",
        "  .agentv/targets.yaml:5: targets[0].endpoint: environment variable AZURE_OPENAI_ENDPOINT is not set "
        "(used as ${{ AZURE_OPENAI_ENDPOINT }})",
        "  .agentv/targets.yaml:6: targets[0].api_key: environment variable AZURE_OPENAI_API_KEY is not set "
        "(used as ${{ AZURE_OPENAI_API_KEY }})",
        "  .agentv/targets.yaml:7: targets[0].model: environment variable AZURE_DEPLOYMENT_NAME is not set "
        "(used as ${{ AZURE_DEPLOYMENT_NAME }})",
    ]
    assert not Path("out.jsonl").exists()


def test_a_file_with_no_runnable_target(ws):
    ws.targets("targets:\n  - {name: default, provider: vscode}\n")
    ws.file("fx/c1.sh", "true\n")
    ws.dataset(DATASET.replace("  target: copy_sh\n", ""))
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: target 'default' has provider 'vscode', which AgentV ran but agentv does not; "
        "agentv runs cli, python, mock, openai, azure, anthropic and gemini targets; "
        "to evaluate vscode, wrap the agent "
        "as a cli target (command_template runs it with {PROMPT} and it prints its answer or writes it to "
        "{OUTPUT_FILE})\n"
        "hint: .agentv/targets.yaml has no target of a provider agentv runs "
        "(cli, python, mock, openai, azure, anthropic and gemini); add one\n"
    )


def test_a_judge_target_agentv_does_not_run_is_a_located_problem(project):
    project.file("judges/q.md", "Q: {{input}} A: {{output}}\n")
    project.dataset(
        DATASET.replace(
            "    - {type: field_accuracy", "    - {type: llm_judge, prompt: judges/q.md}\n    - {type: field_accuracy"
        )
    )
    message = (
        "  dataset.yaml:5: execution.evaluators[0]: llm_judge 'llm_judge': judge target 'bedrock_judge' "
        "(from judge_target of target 'copy_sh') cannot judge: target 'bedrock_judge' has provider 'bedrock', "
        "which agentv does not run; agentv runs cli, python, mock, openai, azure, anthropic and gemini targets"
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error: 1 problem found:", message]
    assert not Path("out.jsonl").exists()
    # `validate` reports what `eval` would refuse to start with.
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [message.strip(), "1 problem found"]


def test_an_explicit_judge_target_agentv_does_not_run(project):
    project.file("judges/q.md", "Q: {{input}} A: {{output}}\n")
    project.dataset(
        DATASET.replace(
            "    - {type: field_accuracy",
            "    - {type: llm_judge, name: q, prompt: judges/q.md, target: codex_agent}\n    - {type: field_accuracy",
        )
    )
    result = invoke("eval", "dataset.yaml", "--judge-target", "copy_sh")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: 1 problem found:",
        "  dataset.yaml:5: execution.evaluators[0].target: llm_judge 'q': judge target 'codex_agent' (from target) "
        "cannot judge: target 'codex_agent' has provider 'codex', which AgentV ran but agentv does not; "
        "agentv runs cli, python, mock, openai, azure, anthropic and gemini targets; "
        "to evaluate codex, wrap the agent as "
        "a cli target (command_template runs it with {PROMPT} and it prints its answer or writes it to {OUTPUT_FILE})",
    ]


def test_make_runner_refuses_an_opaque_target(tmp_path):
    config = OpaqueTarget(name="v", provider="vertex")
    with pytest.raises(TargetError) as caught:
        make_runner(config, dataset_dir=tmp_path, work_dir=tmp_path, secrets=[])
    assert caught.value.message == (
        "target 'v' has provider 'vertex', which agentv does not run; "
        "agentv runs cli, python, mock, openai, azure, anthropic and gemini targets"
    )


def test_the_editor_schema_accepts_an_agentv_targets_file(project):
    import jsonschema

    from agentv_py.loading.source import read_yaml
    from agentv_py.schema import json_schema

    validator = jsonschema.Draft202012Validator(json_schema("targets"))
    _, document = read_yaml(Path(".agentv/targets.yaml"))
    document["targets"][0]["provider"] = "azure"  # the schema lists the lowercase spellings
    assert [e.message for e in validator.iter_errors(document)] == []
    _, dataset = read_yaml(Path("dataset.yaml"))
    assert [e.message for e in jsonschema.Draft202012Validator(json_schema("dataset")).iter_errors(dataset)] == []
