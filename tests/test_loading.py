"""Dataset and targets loading (SPEC §1, §2): every error names file, line, location, what is valid."""

from __future__ import annotations

import re
import textwrap

import pytest

from agentv_py.errors import ConfigError, TargetError
from agentv_py.loading import (
    discover_targets_file,
    load_dataset,
    load_targets,
    select_target_name,
)

pytestmark = pytest.mark.usefixtures("both_chunkings")

THEIRS = "<library's words>"
"""In an expected message, stands for words a library writes (pydantic, PyYAML, Python's codecs),
which any release of it may change: the test pins agentv's part around them, never theirs."""


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected` exactly, each THEIRS in it standing for some (non-empty) text."""
    return re.fullmatch(".+".join(map(re.escape, expected.split(THEIRS))), actual, re.DOTALL) is not None


def assert_messages(actual: list[str], expected: list[str]) -> None:
    assert len(actual) == len(expected) and all(map(matches, expected, actual)), (actual, expected)


SUITE = """\
execution:
  evaluators:
    - {type: field_accuracy, fields: [{path: a}]}
"""

INVALID = [
    (
        "typo-in-case-key",
        SUITE + "evalcases:\n  - id: c1\n    expected_message: [{role: assistant, content: {a: 1}}]\n",
        [
            "dataset.yaml:6: evalcases[0].expected_message: unknown key 'expected_message' (did you mean "
            "'expected_messages'?). Valid keys: id, conversation_id, expected_outcome, outcome, criteria, "
            "input_messages, input, expected_messages, expected_output, evaluators, extend_evaluators, execution, "
            "rubrics, skip, xfail, description, note, reference_answer, conversation, metadata"
        ],
    ),
    (
        "invalid-match-type",
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n        - {path: a}\n"
        "        - {path: total, match: invalid_type}\nevalcases:\n  - id: c1\n",
        [
            "dataset.yaml:6: execution.evaluators[0].fields[1].match: Invalid match type: invalid_type. "
            "Valid types: exact, fuzzy, numeric_tolerance, date, items, set, any, count, anls, cer, wer, table"
        ],
    ),
    (
        "negative-tolerance",
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: a, match: numeric_tolerance, tolerance: -1}\nevalcases:\n  - id: c1\n",
        ["dataset.yaml:5: execution.evaluators[0].fields[0].tolerance: tolerance must be a number >= 0, got -1.0"],
    ),
    (
        "tolerance-not-a-number",
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: a, match: numeric_tolerance, tolerance: lots}\nevalcases:\n  - id: c1\n",
        ["dataset.yaml:5: execution.evaluators[0].fields[0].tolerance: " + THEIRS + ', got string "lots"'],
    ),
    (
        "numeric-without-tolerance",
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: a, match: numeric_tolerance}\nevalcases:\n  - id: c1\n",
        ["dataset.yaml:5: execution.evaluators[0].fields[0]: numeric_tolerance needs 'tolerance' (a number >= 0)"],
    ),
    (
        "threshold-out-of-range",
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: a, match: fuzzy, threshold: 1.5}\nevalcases:\n  - id: c1\n",
        ["dataset.yaml:5: execution.evaluators[0].fields[0].threshold: threshold must be between 0 and 1, got 1.5"],
    ),
    (
        "unknown-algorithm",
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: a, match: fuzzy, algorithm: soundex}\nevalcases:\n  - id: c1\n",
        [
            "dataset.yaml:5: execution.evaluators[0].fields[0].algorithm: Invalid algorithm: soundex. "
            "Valid algorithms: levenshtein, jaro_winkler"
        ],
    ),
    (
        "option-for-another-match",
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: a, match: exact, tolerance: 1}\nevalcases:\n  - id: c1\n",
        [
            "dataset.yaml:5: execution.evaluators[0].fields[0]: option 'tolerance' does not apply to match 'exact' "
            "(options for 'exact': none)"
        ],
    ),
    (
        "unknown-evaluator-type",
        "execution:\n  evaluators:\n    - {type: field_acuracy, fields: []}\nevalcases:\n  - id: c1\n",
        [
            "dataset.yaml:3: execution.evaluators[0].type: Unknown evaluator type: field_acuracy "
            "(did you mean 'field_accuracy'?). "
            "Valid types: field_accuracy, code_judge, iou_score, coordinate_distance, llm_judge, rubric, composite, "
            "tool_trajectory, latency, cost, token_usage, execution_metrics, skill_trigger, contains, contains_any, "
            "contains_all, icontains, icontains_any, icontains_all, starts_with, ends_with, regex, equals, is_json, "
            "anls_star"
        ],
    ),
    (
        "evaluator-without-type",
        "execution:\n  evaluators:\n    - {fields: []}\nevalcases:\n  - id: c1\n",
        [
            "dataset.yaml:3: execution.evaluators[0]: evaluator needs a 'type'. "
            "Valid types: field_accuracy, code_judge, iou_score, coordinate_distance, llm_judge, rubric, composite, "
            "tool_trajectory, latency, cost, token_usage, execution_metrics, skill_trigger, contains, contains_any, "
            "contains_all, icontains, icontains_any, icontains_all, starts_with, ends_with, regex, equals, is_json, "
            "anls_star"
        ],
    ),
    (
        "no-fields",
        "execution:\n  evaluators:\n    - {type: field_accuracy, fields: []}\nevalcases:\n  - id: c1\n",
        ["dataset.yaml:3: execution.evaluators[0].fields: fields must list at least one field"],
    ),
    (
        "empty-evalcases",
        SUITE + "evalcases: []\n",
        ["dataset.yaml:4: evalcases: evalcases must be a non-empty list of cases"],
    ),
    (
        "missing-evalcases",
        SUITE,
        ["dataset.yaml:1: evalcases: missing required key 'evalcases'"],
    ),
    (
        "missing-id",
        SUITE + "evalcases:\n  - outcome: no id\n",
        ["dataset.yaml:5: evalcases[0].id: missing required key 'id'"],
    ),
    (
        "duplicate-ids",
        SUITE + "evalcases:\n  - id: c1\n  - id: c2\n  - id: c1\n",
        ["dataset.yaml:7: evalcases[2].id: duplicate id 'c1' (first used by evalcases[0]); ids must be unique"],
    ),
    (
        "wrong-type-for-id",
        SUITE + "evalcases:\n  - id: 7\n",
        ["dataset.yaml:5: evalcases[0].id: " + THEIRS + ", got number 7"],
    ),
    (
        "yaml-boolean-id",
        SUITE + "evalcases:\n  - id: off\n",
        [
            "dataset.yaml:5: evalcases[0].id: " + THEIRS + ", got boolean false "
            "(YAML reads yes/no/on/off/true/false as booleans: quote the value)"
        ],
    ),
    (
        "bad-role",
        SUITE + "evalcases:\n  - id: c1\n    input_messages: [{role: robot, content: hi}]\n",
        [
            'dataset.yaml:6: evalcases[0].input_messages[0].role: invalid value "robot": '
            "expected 'system', 'user', 'assistant' or 'tool'"
        ],
    ),
    (
        "typo-in-content-item",
        SUITE + "evalcases:\n  - id: c1\n    input_messages:\n      - role: user\n        content:\n"
        "          - {type: text, valeu: hi}\n",
        [
            "dataset.yaml:9: evalcases[0].input_messages[0].content[0].valeu: unknown key 'valeu' "
            "(did you mean 'value'?). Valid keys: type, value, detail",
            "dataset.yaml:9: evalcases[0].input_messages[0].content[0].value: missing required key 'value'",
        ],
    ),
    (
        "alias-given-twice",
        SUITE + "evalcases:\n  - id: c1\n    input: hi\n    input_messages: [{role: user, content: hi}]\n",
        ["dataset.yaml:6: evalcases[0].input: give only one of 'input_messages', 'input' (they are aliases)"],
    ),
    (
        "top-level-list",
        "- id: c1\n",
        ["dataset.yaml:1: expected a mapping at the top level, the file is an array"],
    ),
    (
        "yaml-syntax",
        "evalcases:\n  - id: [c1\n",
        ["dataset.yaml:3: invalid YAML at column 1: " + THEIRS + " (" + THEIRS + ")"],
    ),
]


def assert_problems(load, path: str, messages: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        load(path)
    assert_messages([str(p) for p in caught.value.problems], messages)


@pytest.mark.parametrize("text, messages", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_dataset_messages(ws, text, messages):
    ws.file("dataset.yaml", text)
    assert_problems(load_dataset, "dataset.yaml", messages)


def test_all_problems_are_reported_together(ws):
    ws.dataset(
        """
        execution:
          evaluators:
            - {type: field_accuracy, fields: [{path: a, match: nope}]}
        evalcases:
          - id: c1
            expected_mesages: []
          - id: c1
        """
    )
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    assert len(caught.value.problems) == 3
    assert str(caught.value).startswith("3 problems found:\n  dataset.yaml:3: execution.evaluators[0].fields[0].match")


def test_missing_file_names_case_and_every_place_tried(ws):
    ws.dataset(
        SUITE
        + "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: [{type: file, value: nope.json}]}]\n",
        "evals/ds/dataset.yaml",
    )
    with pytest.raises(ConfigError) as caught:
        load_dataset("evals/ds/dataset.yaml")
    root = ws.root.resolve()
    assert [str(p) for p in caught.value.problems] == [
        "evals/ds/dataset.yaml:6: evalcases[0].input_messages[0].content[0].value: file not found: nope.json "
        f"(case 'c1'); tried: {root}/evals/ds/nope.json, {root}/evals/nope.json, {root}/nope.json"
    ]


def test_relative_files_resolve_against_ancestors(ws):
    ws.file("fixtures/a.json", "{}")
    ws.dataset(
        SUITE
        + (
            "evalcases:\n  - id: c1\n    expected_output: {a: 1}\n"
            "    input_messages: [{role: user, content: [{type: file, value: ../fixtures/a.json}]}]\n"
        ),
        "evals/ds/dataset.yaml",
    )
    loaded = load_dataset("evals/ds/dataset.yaml")
    assert loaded.cases[0].files == [str(ws.root.resolve() / "fixtures/a.json")]


def test_aliases_and_shorthands(ws):
    ws.dataset(
        SUITE
        + """\
evalcases:
  - id: c1
    outcome: described
    input: Extract the header.
    expected_output: {a: 1}
    execution:
      evaluators: [{type: field_accuracy, fields: [{path: a, match: exact}]}]
"""
    )
    case = load_dataset("dataset.yaml").cases[0]
    assert case.case.expected_outcome == "described"
    assert case.question == "Extract the header."
    assert case.expected == {"a": 1}
    assert case.case.case_evaluators is not None and len(case.case.case_evaluators) == 1


@pytest.mark.parametrize(
    "content, expected",
    [
        ("'{\"a\": 1}'", {"a": 1}),
        ("'[1, 2]'", [1, 2]),
        ("plain words", "plain words"),
        ("'{not json'", "{not json"),
        ("{a: 2025-01-15}", {"a": "2025-01-15"}),  # unquoted YAML dates stay strings
    ],
    ids=["json-object-string", "json-list-string", "text", "broken-json-is-text", "dates-stay-strings"],
)
def test_ground_truth_is_last_assistant_message(ws, content, expected):
    ws.dataset(
        SUITE + f"evalcases:\n  - id: c1\n    expected_messages:\n      - {{role: assistant, content: ignored}}\n"
        f"      - {{role: user, content: not this}}\n      - role: assistant\n        content: {content}\n"
    )
    assert load_dataset("dataset.yaml").cases[0].expected == expected


def test_dataset_name_defaults_to_file_stem(ws):
    ws.dataset(SUITE + "evalcases:\n  - {id: c1, expected_output: {a: 1}}\n", "invoices.yaml")
    assert load_dataset("invoices.yaml").name == "invoices"


def test_malformed_field_path_is_a_warning(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: 'a..b'}]}\n"
        "evalcases:\n  - {id: c1, expected_output: {a: 1}}\n"
    )
    warnings = [str(w) for w in load_dataset("dataset.yaml").warnings]
    assert warnings == [
        "dataset.yaml:3: execution.evaluators[0].fields[0].path: malformed path 'a..b': segment '' is not a key "
        "optionally followed by [index] or [*] ('$' alone is the whole answer); the field will always be missing"
    ]


# ----------------------------------------------------------------------------- targets

# The providers AgentV knew (early 2026 and v4.42.4) that agentv loads but does not run.
AGENTV_ONLY = (
    "bedrock, vertex, codex, codex-cli, claude-code, copilot-cli, pi, pi-coding-agent, vscode, vscode-insiders, "
    "pi-agent-sdk, copilot, copilot-sdk, copilot_sdk, pi-cli, claude, claude-cli, claude-sdk, cc-mirror, "
    "openrouter, agentv, copilot-log, transcript, replay"
)

TARGET_ERRORS = [
    (
        "unknown-placeholder",
        "targets:\n  - name: t\n    provider: cli\n    command_template: run {FILE} {OUTPUT_FILE}\n",
        [
            "targets.yaml:4: targets[0].command_template: unknown placeholder {FILE} in command_template "
            "(did you mean {FILES}?). Valid placeholders: {PROMPT}, {PROMPT_FILE}, {FILES}, {IMAGES}, {OUTPUT_FILE}, "
            "{EVAL_ID}, {GUIDELINES}, {ATTEMPT}"
        ],
    ),
    (
        "unknown-provider",
        "targets:\n  - name: t\n    provider: clii\n",
        [
            "targets.yaml:3: targets[0].provider: Unknown provider: clii (did you mean 'cli'?). "
            "Valid providers: cli, python, mock, openai, azure, azure-openai, anthropic, gemini, google, "
            "google-gemini; and AgentV's, loaded but not run here: " + AGENTV_ONLY
        ],
    ),
    (
        "missing-command",
        "targets:\n  - name: t\n    provider: cli\n",
        ["targets.yaml:2: targets[0].command_template: missing required key 'command_template'"],
    ),
    (
        "typo-in-target-key",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    timeout: 5\n",
        [
            "targets.yaml:5: targets[0].timeout: unknown key 'timeout' (did you mean 'timeout_seconds'?). Valid keys: "
            "name, judge_target, grader_target, vision, cache, cache_key, num_cpus, num_gpus, provider, "
            "command_template, command, "
            "timeout_seconds, cwd, "
            "files_format, "
            "attachments_format, healthcheck, env, cache_env_ignore, provider_batching, mode, output_suffix, "
            "verbose, cli_verbose, "
            "keep_temp_files, "
            "keep_output_files, workers"
        ],
    ),
    (
        "unknown-provider-among-agentv-ones",
        "targets:\n  - {name: az, provider: bedrock}\n  - name: t\n    provider: azur-openai\n",
        [
            "targets.yaml:4: targets[1].provider: Unknown provider: azur-openai (did you mean 'azure-openai'?). "
            "Valid providers: cli, python, mock, openai, azure, azure-openai, anthropic, gemini, google, "
            "google-gemini; and AgentV's, loaded but not run here: " + AGENTV_ONLY
        ],
    ),
    (
        "agentv-target-bad-workers",
        "targets:\n  - name: az\n    provider: bedrock\n    workers: 0\n",
        ["targets.yaml:4: targets[0].workers: workers must be at least 1, got 0"],
    ),
    (
        "uppercase-provider-keeps-lines",
        "targets:\n  - name: t\n    provider: CLI\n    command: x\n    timeout: 5\n",
        [
            "targets.yaml:5: targets[0].timeout: unknown key 'timeout' (did you mean 'timeout_seconds'?). Valid keys: "
            "name, judge_target, grader_target, vision, cache, cache_key, num_cpus, num_gpus, provider, "
            "command_template, command, "
            "timeout_seconds, cwd, "
            "files_format, "
            "attachments_format, healthcheck, env, cache_env_ignore, provider_batching, mode, output_suffix, "
            "verbose, cli_verbose, "
            "keep_temp_files, "
            "keep_output_files, workers"
        ],
    ),
    (
        "agentv-target-without-name",
        "targets:\n  - provider: Codex\n",
        ["targets.yaml:2: targets[0].name: missing required key 'name'"],
    ),
    (
        "agentv-target-bad-batching",
        "targets:\n  - name: az\n    provider: bedrock\n    providerBatching: 'yes'\n",
        ["targets.yaml:4: targets[0].providerBatching: " + THEIRS + ", got 'yes'"],
    ),
    (
        "cli-bad-workers",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    workers: 0\n",
        ["targets.yaml:5: targets[0].workers: workers must be at least 1, got 0"],
    ),
    (
        "http-healthcheck-without-url",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    healthcheck:\n      type: http\n",
        ["targets.yaml:5: targets[0].healthcheck: a healthcheck of type http needs 'url'"],
    ),
    (
        "http-healthcheck-with-command",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    healthcheck:\n"
        "      {type: http, url: 'http://127.0.0.1:1/', command_template: x}\n",
        ["targets.yaml:5: targets[0].healthcheck: a healthcheck of type http takes 'url', not 'command_template'"],
    ),
    (
        "command-healthcheck-without-command",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    healthcheck: {type: command}\n",
        ["targets.yaml:5: targets[0].healthcheck: a healthcheck of type command needs 'command_template'"],
    ),
    (
        "command-healthcheck-with-url",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    healthcheck:\n"
        "      {command_template: x, url: 'http://127.0.0.1:1/'}\n",
        ["targets.yaml:5: targets[0].healthcheck: a healthcheck of type command takes 'command_template', not 'url'"],
    ),
    (
        "http-healthcheck-bad-url",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    healthcheck:\n"
        "      {type: http, url: 'file:///etc/passwd'}\n",
        [
            "targets.yaml:6: targets[0].healthcheck.url: url must start with http:// or https://, got 'file:///etc/passwd'"
        ],
    ),
    (
        "unknown-healthcheck-type",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    healthcheck:\n"
        "      {type: tcp, command_template: x}\n",
        ["targets.yaml:6: targets[0].healthcheck.type: invalid value \"tcp\": expected 'command' or 'http'"],
    ),
    (
        "bad-timeout",
        "targets:\n  - name: t\n    provider: cli\n    command_template: x\n    timeout_seconds: 0\n",
        ["targets.yaml:5: targets[0].timeout_seconds: timeout_seconds must be a number > 0, got 0.0"],
    ),
    (
        "duplicate-name",
        "targets:\n  - {name: t, provider: mock, response: x}\n  - {name: t, provider: mock, response: y}\n",
        ["targets.yaml:1: targets: duplicate target name 't'"],
    ),
    (
        "mock-without-answer",
        "targets:\n  - {name: t, provider: mock}\n",
        ["targets.yaml:2: targets[0]: a mock target needs 'response' or 'echo_expected: true'"],
    ),
]


@pytest.mark.parametrize("text, messages", [c[1:] for c in TARGET_ERRORS], ids=[c[0] for c in TARGET_ERRORS])
def test_invalid_targets_messages(ws, text, messages):
    ws.file("targets.yaml", text)
    assert_problems(load_targets, "targets.yaml", messages)


def test_agentv_generated_targets_with_both_command_spellings_load(ws):
    ws.file(
        "targets.yaml",
        'targets:\n  - name: "copy_sh"\n    provider: "cli"\n    provider_batching: false\n'
        '    command_template: "sh ../copy.sh {FILES} {OUTPUT_FILE}"\n'
        '    command: "sh ../copy.sh {FILES} {OUTPUT_FILE}"\n    timeout_seconds: 60\n',
    )
    assert load_targets("targets.yaml").get("copy_sh").command_template == "sh ../copy.sh {FILES} {OUTPUT_FILE}"


def test_env_substitution_and_missing_variable(ws, monkeypatch):
    ws.file(
        "targets.yaml",
        "targets:\n  - name: t\n    provider: cli\n    command_template: run --key ${{ API_KEY }} {FILES}\n",
    )
    loaded = load_targets("targets.yaml")
    monkeypatch.setenv("API_KEY", "sk-secret-123")
    target, secrets = loaded.with_env("t")
    assert target.command_template == "run --key sk-secret-123 {FILES}"
    assert secrets == ["sk-secret-123"]
    monkeypatch.delenv("API_KEY")
    with pytest.raises(ConfigError) as caught:
        loaded.with_env("t")
    assert str(caught.value.problems[0]) == (
        "targets.yaml:4: targets[0].command_template: environment variable API_KEY is not set (used as ${{ API_KEY }})"
    )


def test_target_selection_lists_available_names(ws):
    ws.file(
        "targets.yaml",
        "targets:\n  - {name: a, provider: mock, response: x}\n  - {name: b, provider: mock, response: y}\n",
    )
    ws.dataset(SUITE + "evalcases:\n  - {id: c1, expected_output: {a: 1}}\n")
    targets, dataset = load_targets("targets.yaml"), load_dataset("dataset.yaml").model
    assert select_target_name(targets, "b", dataset) == "b"
    with pytest.raises(TargetError) as caught:
        select_target_name(targets, None, dataset)
    assert caught.value.message == (
        "target 'default' (from default) is not defined in targets.yaml. Available targets: a, b"
    )
    with pytest.raises(TargetError) as caught:
        select_target_name(targets, "c", dataset, ws.root / "dataset.yaml")
    assert caught.value.message == (
        "target 'c' (from --target) is not defined in targets.yaml, the targets file read for dataset.yaml. "
        "Available targets: a, b"
    )
    assert caught.value.hint == "pass --target NAME, set execution.target in the dataset, or pass --targets PATH"


def test_targets_discovery_walks_up_to_repo_root(ws):
    ws.targets("targets:\n  - {name: t, provider: mock, response: x}\n")
    (ws.root / "evals" / "ds").mkdir(parents=True)
    assert discover_targets_file(ws.root / "evals" / "ds") == ws.root / ".agentv" / "targets.yaml"
    nearer = ws.file("evals/targets.yaml", textwrap.dedent("targets: []\n"))
    assert discover_targets_file(ws.root / "evals" / "ds") == nearer


def test_non_utf8_dataset(ws):
    ws.file("dataset.yaml", b'evalcases:\n  - id: "\xff"\n')
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    assert_messages(
        [str(p) for p in caught.value.problems],
        ["dataset.yaml:2: not valid UTF-8 (byte 0xff at offset 20: " + THEIRS + ")"],
    )


def test_parse_cache_gives_the_same_data(ws, monkeypatch, tmp_path_factory):
    cache = tmp_path_factory.mktemp("parse-cache")
    monkeypatch.setenv("AGENTV_CACHE_DIR", str(cache))
    ws.dataset(
        SUITE
        + "evalcases:\n"
        + "".join(f"  - id: c{i}\n    expected_output: {{a: {i}, when: 2025-01-15}}\n" for i in range(3000))
    )
    first = load_dataset("dataset.yaml")
    assert len(list((cache / "yaml").glob("*.cases"))) == 1
    second = load_dataset("dataset.yaml")  # from the cache
    assert [c.expected for c in second.cases] == [c.expected for c in first.cases]
    assert second.cases[5].expected == {"a": 5, "when": "2025-01-15"}
    monkeypatch.setenv("AGENTV_NO_CACHE", "1")
    assert [c.expected for c in load_dataset("dataset.yaml").cases] == [c.expected for c in first.cases]


# ----------------------------------------------------------------------------- code judges

JUDGE_ERRORS = [
    (
        "missing-script-file",
        "[python3, judges/nope.py]",
        "dataset.yaml:3: execution.evaluators[0].script: script file not found: judges/nope.py (relative to {root})",
    ),
    (
        "missing-relative-program",
        "[./judges/nope.sh]",
        "dataset.yaml:3: execution.evaluators[0].script: script not found: ./judges/nope.sh (looked in {root})",
    ),
    (
        "not-executable",
        "[./judges/run.sh]",
        "dataset.yaml:3: execution.evaluators[0].script: not executable: ./judges/run.sh; "
        "run `chmod +x ./judges/run.sh`, or name its interpreter first, e.g. script: [python3, ./judges/run.sh]",
    ),
    (
        "unknown-program",
        "[judge-runner-xyz, a]",
        "dataset.yaml:3: execution.evaluators[0].script: command not found: judge-runner-xyz (not on PATH)",
    ),
    (
        "empty-argv",
        "[]",
        "dataset.yaml:3: execution.evaluators[0].script: script must not be empty: "
        "give an argv list such as [uv, run, judge.py]",
    ),
    (
        "timeout-type",
        "[python3, judges/ok.py], timeout_seconds: soon",
        "dataset.yaml:3: execution.evaluators[0].timeout_seconds: " + THEIRS + ', got string "soon"',
    ),
    (
        "missing-cwd",
        "[python3, judges/ok.py], cwd: elsewhere",
        "dataset.yaml:3: execution.evaluators[0].cwd: directory not found: {root}/elsewhere",
    ),
]


@pytest.mark.parametrize("script, message", [c[1:] for c in JUDGE_ERRORS], ids=[c[0] for c in JUDGE_ERRORS])
def test_code_judges_that_cannot_run_are_rejected_at_load(ws, script, message):
    ws.file("judges/run.sh", "#!/bin/sh\n")
    ws.file("judges/ok.py", "")
    ws.dataset(f"execution:\n  evaluators:\n    - {{type: code_judge, script: {script}}}\nevalcases:\n  - id: c1\n")
    assert_problems(load_dataset, "dataset.yaml", [message.format(root=ws.root.resolve())])


def test_missing_uv_says_how_to_install_it(ws, monkeypatch):
    monkeypatch.setattr("agentv_py.process.programs.find_program", lambda name, env=None: None)
    ws.file("judge.py", "")
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: code_judge, script: [uv, run, judge.py]}\nevalcases:\n  - id: c1\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    assert str(caught.value.problems[0]) == (
        "dataset.yaml:3: execution.evaluators[0].script: uv is not installed: `pip install uv` (it is a dependency "
        "of agentv, so reinstalling agentv also brings it), or see https://docs.astral.sh/uv/getting-started/installation/"
    )


def test_code_judge_extra_keys_are_config_not_typos(ws):
    ws.file("judge.py", "")
    ws.dataset(
        "execution:\n  evaluators:\n    - type: code_judge\n      script: [python3, judge.py]\n"
        "      fields: [{path: a, threshold: 0.9}]\n      CaseSensitive: true\nevalcases:\n  - id: c1\n"
    )
    judge = load_dataset("dataset.yaml").model.execution.evaluators[0]
    assert judge.config == {"fields": [{"path": "a", "threshold": 0.9}], "CaseSensitive": True}


def _image_case(*items: str) -> str:
    content = ", ".join(items)
    case = f"  - id: c1\n    input_messages: [{{role: user, content: [{content}]}}]\n    expected_output: {{a: 1}}\n"
    return SUITE + "evalcases:\n" + case


def test_images_are_checked_and_resolved(ws):
    from tests.pngs import JPEG, data_uri, png

    ws.file("img/office.png", png())
    uri = data_uri(JPEG, "image/jpeg")
    ws.dataset(
        _image_case(
            "{type: image, value: img/office.png, detail: high}",
            f"{{type: image_url, value: '{uri}'}}",
            "{type: image_url, value: 'https://example.com/a.webp', detail: low}",
        )
    )
    images = load_dataset("dataset.yaml").cases[0].images
    assert [(i.source, i.media_type, i.detail, i.name) for i in images] == [
        ("file", "image/png", "high", "office.png"),
        ("data", "image/jpeg", None, "inline image/jpeg"),
        ("url", None, "low", "a.webp"),
    ]
    assert images[0].value == str(ws.root.resolve() / "img/office.png")


IMAGE_PROBLEMS = [
    ("missing", "{type: image, value: nope.png}", "image not found: nope.png (case 'c1'); tried: {root}/nope.png"),
    (
        "not-an-image",
        "{type: image, value: notes.txt}",
        "unusable image notes.txt (case 'c1'): not a png, jpeg, webp, gif image (it looks like text)",
    ),
    (
        "bad-data-uri",
        "{type: image, value: 'data:image/png;base64,@@'}",
        "data URI payload is not valid base64 (case 'c1')",
    ),
    (
        "image-url-with-path",
        "{type: image_url, value: photo.png}",
        "image_url needs an http(s) URL or a data URI, got 'photo.png'; use type: image for a local file",
    ),
]


@pytest.mark.parametrize("item, message", [p[1:] for p in IMAGE_PROBLEMS], ids=[p[0] for p in IMAGE_PROBLEMS])
def test_image_problems(ws, item, message):
    ws.file("notes.txt", "{not an image}")
    ws.dataset(_image_case(item))
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    expected = "dataset.yaml:6: evalcases[0].input_messages[0].content[0].value: " + message
    assert [str(p) for p in caught.value.problems] == [expected.format(root=ws.root.resolve())]


def test_detail_only_on_images(ws):
    ws.dataset(_image_case("{type: text, value: hi, detail: high}"))
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    assert [str(p) for p in caught.value.problems] == [
        "dataset.yaml:6: evalcases[0].input_messages[0].content[0]: "
        "'detail' applies to image and image_url items, not to text"
    ]
