"""Targets files of AgentV v4.42.4 projects (issue 29, point 5): every provider name it knows
loads (those agentv does not run are refused only when a run selects them), `grader_target`,
`use_target` aliases, `command`, `verbose` beside `cli_verbose`, the openai keys of its examples,
and providers of a project's own (`.agentv/providers/NAME.ts`, given with their `command`: run as
cli targets, unless the name looks like a known one mistyped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.errors import ConfigError
from agentv_py.loading import load_targets
from agentv_py.models.foreign_targets import KNOWN_PROVIDERS, PROVIDERS, OpaqueTarget, not_runnable_message
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.models.targets import CliTarget

# AgentV v4.42.4 packages/core/src/evaluation/providers/types.ts: KNOWN_PROVIDERS, then PROVIDER_ALIASES.
AGENTV_442_PROVIDERS = [
    *("openai", "openrouter", "azure", "anthropic", "gemini", "codex", "copilot-sdk", "copilot-cli"),
    *("copilot-log", "pi-coding-agent", "pi-cli", "claude", "claude-cli", "claude-sdk", "cli", "mock"),
    *("vscode", "vscode-insiders", "agentv", "transcript", "replay"),
    *("azure-openai", "google", "google-gemini", "codex-cli", "copilot", "copilot_sdk", "pi"),
    *("claude-code", "cc-mirror", "bedrock", "vertex"),
]
EARLY_2026_ONLY = ["pi-agent-sdk"]  # AgentV's until March 2026


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def load_problems(ws, text: str) -> list[str]:
    ws.file("targets.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_targets("targets.yaml")
    return [str(p) for p in caught.value.problems]


def test_every_provider_agentv_knows_is_known_here():
    assert sorted({*AGENTV_442_PROVIDERS, *EARLY_2026_ONLY, "python"}) == sorted(KNOWN_PROVIDERS)


@pytest.mark.parametrize("provider", [p for p in [*AGENTV_442_PROVIDERS, *EARLY_2026_ONLY] if p not in PROVIDERS])
def test_a_provider_agentv_does_not_run_loads(ws, provider):
    ws.file("targets.yaml", f"targets:\n  - name: x\n    provider: {provider}\n    grader_target: g\n    model: m\n")
    target = load_targets("targets.yaml").model.targets[0]
    assert isinstance(target, OpaqueTarget)
    assert (target.provider, target.judge_target, target.settings) == (provider, "g", {"model": "m"})


MESSAGES = [
    (
        "claude-cli",
        "target 't' has provider 'claude-cli', which AgentV ran but agentv does not; agentv runs cli, python, "
        "mock, openai, azure, anthropic and gemini targets; to evaluate claude-cli, wrap the agent as a cli target "
        "(command_template runs it with {PROMPT} and it prints its answer or writes it to {OUTPUT_FILE})",
    ),
    (
        "pi-agent-sdk",
        "target 't' has provider 'pi-agent-sdk', which AgentV ran but agentv does not; agentv runs cli, python, "
        "mock, openai, azure, anthropic and gemini targets; to evaluate pi-agent-sdk, wrap the agent as a cli "
        "target (command_template runs it with {PROMPT} and it prints its answer or writes it to {OUTPUT_FILE})",
    ),
    (
        "openrouter",
        "target 't' has provider 'openrouter', which AgentV ran but agentv does not; agentv runs cli, python, "
        "mock, openai, azure, anthropic and gemini targets; OpenRouter's API is OpenAI's: write provider: openai "
        "with base_url: https://openrouter.ai/api/v1",
    ),
    (
        "replay",
        "target 't' has provider 'replay', which AgentV ran but agentv does not; agentv runs cli, python, "
        "mock, openai, azure, anthropic and gemini targets",
    ),
    (
        "claude-clii",
        "target 't' has provider 'claude-clii' (did you mean 'claude-cli'?), which AgentV runs as a provider of "
        "the project's own (.agentv/providers/claude-clii.ts) through the target's command; agentv runs cli, "
        "python, mock, openai, azure, anthropic and gemini targets; to run that command here, write provider: cli",
    ),
]


@pytest.mark.parametrize("provider, message", MESSAGES, ids=[m[0] for m in MESSAGES])
def test_why_a_target_does_not_run(provider, message):
    target = OpaqueTarget.model_validate({"name": "t", "provider": provider, "command": "x {PROMPT_FILE}"})
    assert not_runnable_message(target) == message


def test_the_keys_of_agentv_442_targets(ws):
    ws.file(
        "targets.yaml",
        "targets:\n"
        "  - {name: a, provider: cli, command: 'run {PROMPT}', grader_target: g, verbose: true, cli_verbose: false}\n"
        "  - {name: b, provider: cli, command: x, verbose: false, cli_verbose: true, keep_temp_files: false,"
        " keep_output_files: true}\n"
        "  - {name: c, provider: cli, command: x, grader_target: g, judge_target: g}\n"
        "  - {name: g, provider: openai, api_format: chat, base_url: 'https://models.example/inference',"
        " model: m, max_output_tokens: 512}\n"
        "  - {name: o, provider: openai, endpoint: 'http://127.0.0.1:1/v1', deployment: d}\n",
    )
    a, b, c, g, o = load_targets("targets.yaml").model.targets
    assert isinstance(a, CliTarget) and (a.command_template, a.judge_target, a.verbose) == ("run {PROMPT}", "g", True)
    assert isinstance(b, CliTarget) and (b.verbose, b.keep_temp_files) == (
        False,
        False,
    )  # AgentV: verbose ?? cli_verbose
    assert isinstance(c, CliTarget) and c.judge_target == "g"
    assert isinstance(g, OpenAITarget) and (g.base_url, g.model, g.max_tokens) == (
        "https://models.example/inference",
        "m",
        512,
    )
    assert isinstance(o, OpenAITarget) and (o.base_url, o.model) == ("http://127.0.0.1:1/v1", "d")


TARGET_ERRORS = [
    (
        "misspelled-provider",
        "targets:\n  - name: t\n    provider: claude-cl\n",
        [
            "targets.yaml:3: targets[0].provider: Unknown provider: claude-cl (did you mean 'claude-cli'?). "
            "Valid providers: cli, python, mock, openai, azure, azure-openai, anthropic, gemini, google, "
            "google-gemini; and AgentV's, loaded but not run here: bedrock, vertex, codex, codex-cli, claude-code, "
            "copilot-cli, pi, pi-coding-agent, vscode, vscode-insiders, pi-agent-sdk, copilot, copilot-sdk, "
            "copilot_sdk, pi-cli, claude, claude-cli, claude-sdk, cc-mirror, openrouter, agentv, copilot-log, "
            "transcript, replay"
        ],
    ),
    (
        "grader-and-judge-differ",
        "targets:\n  - name: t\n    provider: cli\n    command: x\n    grader_target: a\n    judge_target: b\n",
        [
            "targets.yaml:5: targets[0].grader_target: 'grader_target' and 'judge_target' are aliases and differ; "
            "keep one"
        ],
    ),
    (
        "grader-and-judge-differ-on-an-agent",
        "targets:\n  - name: t\n    provider: claude\n    grader_target: a\n    judge_target: b\n",
        [
            "targets.yaml:4: targets[0].grader_target: 'grader_target' and 'judge_target' are aliases and differ; "
            "keep one"
        ],
    ),
    (
        "responses-api",
        "targets:\n  - name: t\n    provider: openai\n    model: m\n    api_format: responses\n",
        [
            "targets.yaml:5: targets[0].api_format: api_format must be 'chat', got 'responses': agentv calls the "
            "chat completions API (AgentV's 'responses' is not supported)"
        ],
    ),
    (
        "use-target-unknown",
        "targets:\n  - name: default\n    use_target: grder\n  - {name: grader, provider: mock, response: x}\n",
        [
            "targets.yaml:3: targets[0].use_target: use_target 'grder' names no target of this file "
            "(did you mean 'grader'?). Available targets: default, grader"
        ],
    ),
    (
        "use-target-cycle",
        "targets:\n  - name: a\n    use_target: b\n  - name: b\n    use_target: c\n  - name: c\n    use_target: a\n",
        ["targets.yaml:7: targets[2].use_target: use_target 'a' makes a cycle: a -> b -> c -> a"],
    ),
    (
        "use-target-itself",
        "targets:\n  - name: a\n    use_target: a\n",
        ["targets.yaml:3: targets[0].use_target: use_target 'a' makes a cycle: a -> a"],
    ),
    (
        "use-target-with-provider",
        "targets:\n  - name: a\n    provider: cli\n    use_target: b\n  - {name: b, provider: mock, response: x}\n",
        [
            "targets.yaml:3: targets[0].provider: a target with use_target takes no provider: it is the target "
            "use_target names; remove one of them"
        ],
    ),
    (
        "use-target-with-other-keys",
        "targets:\n  - name: a\n    use_target: b\n    grader_target: b\n  - {name: b, provider: mock, response: x}\n",
        [
            "targets.yaml:4: targets[0].grader_target: unknown key 'grader_target' (did you mean 'use_target'?). "
            "Valid keys: name, use_target"
        ],
    ),
    (
        "no-provider",
        "targets:\n  - name: a\n",
        [
            "targets.yaml:2: targets[0]: target needs a 'provider' (or use_target: NAME). Valid providers: cli, "
            "python, mock, openai, azure, azure-openai, anthropic, gemini, google, google-gemini"
        ],
    ),
]


@pytest.mark.parametrize("text, messages", [e[1:] for e in TARGET_ERRORS], ids=[e[0] for e in TARGET_ERRORS])
def test_invalid_targets(ws, text, messages):
    assert load_problems(ws, text) == messages


ALIASES = """\
targets:
  - name: default
    use_target: ${{ AGENT_TARGET }}
  - name: agent
    use_target: default
  - {name: copy_sh, provider: cli, command: 'sh {FILES}'}
  - {name: m, provider: mock, response: x}
"""


def test_use_target_is_followed(ws, monkeypatch):
    ws.file("targets.yaml", ALIASES)
    loaded = load_targets("targets.yaml")
    monkeypatch.setenv("AGENT_TARGET", "copy_sh")
    assert (loaded.resolve("agent"), loaded.resolve("m")) == ("copy_sh", "m")
    target = loaded.get("agent")
    assert isinstance(target, CliTarget) and target.name == "copy_sh"
    assert loaded.with_env("default", {"AGENT_TARGET": "m"})[0].name == "m"


USE_TARGET_ERRORS = [
    (
        "unset",
        {},
        "targets.yaml:3: targets[0].use_target: environment variable AGENT_TARGET is not set "
        "(used as ${{ AGENT_TARGET }})",
    ),
    (
        "unknown",
        {"AGENT_TARGET": "copy-sh"},
        "targets.yaml:3: targets[0].use_target: use_target ${{ AGENT_TARGET }} ('copy-sh') names no target of this "
        "file (did you mean 'copy_sh'?). Available targets: default, agent, copy_sh, m",
    ),
    (
        "cycle",
        {"AGENT_TARGET": "agent"},
        "targets.yaml:3: targets[0].use_target: use_target ${{ AGENT_TARGET }} ('agent') makes a cycle: "
        "agent -> default -> agent",
    ),
]


@pytest.mark.parametrize("environ, message", [e[1:] for e in USE_TARGET_ERRORS], ids=[e[0] for e in USE_TARGET_ERRORS])
def test_a_use_target_that_cannot_be_followed(ws, environ, message):
    ws.file("targets.yaml", ALIASES)
    loaded = load_targets("targets.yaml")
    with pytest.raises(ConfigError) as caught:
        loaded.resolve("agent", environ)
    assert [str(p) for p in caught.value.problems] == [message]


# ----------------------------------------------------------------------------- the CLI

TARGETS = """\
$schema: agentv-targets-v2.2
targets:
  - name: default
    use_target: ${{ AGENT_TARGET }}
  - name: claude
    provider: claude-cli
    grader_target: grader
  - name: mimo
    provider: openrouter
    api_key: ${{ OPENROUTER_API_KEY }}
    model: xiaomi/mimo-v2.5-pro
  - name: grader
    use_target: mimo
  - name: file_output
    provider: claude-clii
    command: bun run .agentv/providers/claude-clii.ts {PROMPT_FILE} {OUTPUT_FILE}
  - name: copy_sh
    provider: cli
    command: sh {FILES}
    verbose: true
    cli_verbose: false
"""

DATASET = """\
execution:
  target: copy_sh
  evaluators:
    - {type: field_accuracy, fields: [{path: a}]}
evalcases:
  - id: c1
    input_messages: [{role: user, content: [{type: file, value: fx/c1.sh}]}]
    expected_messages: [{role: assistant, content: {a: 1}}]
"""

RUNS_HERE = "agentv runs cli, python, mock, openai, azure, anthropic and gemini targets"


@pytest.fixture
def project(ws, monkeypatch):
    monkeypatch.delenv("AGENT_TARGET", raising=False)
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    ws.targets(TARGETS)
    ws.file("fx/c1.sh", "echo '{\"a\": 1}'\n")
    ws.dataset(DATASET)
    return ws


def rows() -> list[tuple[str, str, float]]:
    found = [json.loads(line) for line in Path("out.jsonl").read_text().splitlines()]
    return [(r["target"], r["status"], r["score"]) for r in found]


def test_validate_passes(project):
    result = invoke("validate", ".agentv/targets.yaml", "dataset.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["ok: .agentv/targets.yaml (6 targets)", "ok: dataset.yaml (1 case)"]


def test_eval_of_the_cli_target_runs(project):
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert rows() == [("copy_sh", "ok", 1.0)]


def test_eval_through_use_target_runs_the_target_it_names(project, monkeypatch):
    monkeypatch.setenv("AGENT_TARGET", "copy_sh")
    result = invoke("eval", "dataset.yaml", "--target", "default", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert rows() == [("copy_sh", "ok", 1.0)]


SELECTED = [
    ("claude", "claude", MESSAGES[0][1].replace("target 't'", "target 'claude'")),
    ("mimo", "mimo", MESSAGES[2][1].replace("target 't'", "target 'mimo'")),
    ("grader", "mimo", MESSAGES[2][1].replace("target 't'", "target 'mimo'")),  # through use_target
    ("file_output", "file_output", MESSAGES[4][1].replace("target 't'", "target 'file_output'")),
]


@pytest.mark.parametrize("name, shown, message", SELECTED, ids=[s[0] for s in SELECTED])
def test_selecting_a_target_agentv_does_not_run_exits_2(project, name, shown, message):
    assert RUNS_HERE in message
    result = invoke("eval", "dataset.yaml", "--target", name, "--out", "out.jsonl")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {message}\n"
        "hint: targets agentv can run in .agentv/targets.yaml: copy_sh; select one with --target NAME\n"
    )
    assert not Path("out.jsonl").exists()


def test_a_use_target_whose_variable_is_unset(project):
    message = (
        ".agentv/targets.yaml:4: targets[0].use_target: environment variable AGENT_TARGET is not set "
        "(used as ${{ AGENT_TARGET }})"
    )
    result = invoke("eval", "dataset.yaml", "--target", "default", "--out", "out.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error: 1 problem found:", f"  {message}"]
    # validate, run where secrets are not set: a warning
    result = invoke("validate", "dataset.yaml", "--target", "default")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"warning: {message}"]


def test_a_judge_named_through_use_target_agentv_does_not_run(project):
    project.file("judges/q.md", "Q: {{input}} A: {{output}}\n")
    project.dataset(
        DATASET.replace(
            "    - {type: field_accuracy", "    - {type: llm_judge, prompt: judges/q.md}\n    - {type: field_accuracy"
        )
    )
    result = invoke("eval", "dataset.yaml", "--judge-target", "grader", "--out", "out.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: 1 problem found:",
        "  dataset.yaml:4: execution.evaluators[0]: llm_judge 'llm_judge': judge target 'grader' (from --judge-target) "
        "cannot judge: " + MESSAGES[2][1].replace("target 't'", "target 'mimo'"),
    ]


def test_the_editor_schema_accepts_an_agentv_442_targets_file(project):
    import jsonschema

    from agentv_py.loading.source import read_yaml
    from agentv_py.schema import json_schema

    validator = jsonschema.Draft202012Validator(json_schema("targets"))
    _, document = read_yaml(Path(".agentv/targets.yaml"))
    assert [e.message for e in validator.iter_errors(document)] == []
    document["targets"][1]["provider"] = "claude-cl"  # neither AgentV's nor with a command
    del document["targets"][4]["command"]  # file_output: a project's own provider needs its command
    assert len(list(validator.iter_errors(document))) == 2


def test_a_provider_of_the_projects_own_runs_its_command_as_a_cli_target(ws):
    ws.targets("""
        targets:
          - name: own
            provider: file-output
            command: sh answer.sh {OUTPUT_FILE}
            cwd: sub
            grader_target: own
    """)
    ws.file("sub/answer.sh", 'printf \'{"a": 1}\' > "$1"\n')
    ws.file("fx/c1.sh", "")
    ws.dataset(DATASET.replace("target: copy_sh", "target: own"))
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert rows() == [("own", "ok", 1.0)]


def test_a_provider_of_the_projects_own_with_a_bad_key_is_located_at_it(ws):
    ws.targets("""
        targets:
          - name: own
            provider: file-output
            command: sh answer.sh
            bogus: 1
    """)
    result = invoke("validate", ".agentv/targets.yaml")
    assert result.exit_code == 2
    assert ".agentv/targets.yaml:5: targets[0].bogus: unknown key 'bogus'. Valid keys: name," in result.output


def test_prompt_file_holds_the_prompt_and_is_removed_after_the_call(ws):
    ws.file("read_prompt.py", "import sys\ntext = open(sys.argv[1]).read()\nprint(sys.argv[1] + '|' + text)\n")
    ws.targets("""
        targets:
          - name: reader
            provider: cli
            command: python3 read_prompt.py {PROMPT_FILE}
    """)
    ws.dataset("""
        execution: {target: reader}
        evalcases:
          - {id: c1, input: "multi\\nline prompt", evaluators: [{type: contains, value: "|multi\\nline prompt"}]}
    """)
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in Path("out.jsonl").read_text().splitlines()]
    path = row["candidate_answer"].split("|")[0]
    assert path.endswith(".prompt.txt") and not Path(path).exists()
