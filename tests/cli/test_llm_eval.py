"""`agentv eval` with model targets and LLM judges: checks before the run, rows, exit codes."""

from __future__ import annotations

import json

import pytest

from tests.chat_server import error, text
from tests.cli.test_eval import invoke, rows
from tests.pngs import png

KEY = "sk-e2e-SECRET-1234567890"
VALID = json.dumps({"score": 0.9, "hits": ["right"], "reasoning": "ok", "details": {"hallucinations": []}})


def targets(ws, server, judge_vision=True, target_extra=""):
    ws.targets(f"""
        targets:
          - name: model
            provider: openai
            model: answer-model
            base_url: {server.base_url}
            api_key: ${{{{ E2E_KEY }}}}
            max_retries: 0
            judge_target: judge
            {target_extra}
          - name: judge
            provider: openai
            model: judge-model
            base_url: {server.base_url}
            api_key: ${{{{ E2E_KEY }}}}
            vision: {str(judge_vision).lower()}
            max_retries: 0
          - name: text_judge
            provider: openai
            model: text-model
            base_url: {server.base_url}
            api_key: ${{{{ E2E_KEY }}}}
    """)


def dataset(ws, evaluator="{type: llm_judge, name: quality, prompt: judges/q.md}", image=True, judge_target=""):
    ws.file("photo.png", png(3, 3))
    ws.file("judges/q.md", "Question: {{input}}\nAnswer: {{output}}\nImages: {{image_references}}\n")
    item = "\n                  - {type: image, value: photo.png}" if image else ""
    ws.dataset(f"""
        execution:
          target: model
          {judge_target}
          evaluators:
            - {evaluator}
        evalcases:
          - id: c1
            input_messages:
              - role: user
                content:
                  - {{type: text, value: What is shown?}}{item}
            expected_outcome: A red square.
    """)


@pytest.fixture
def env_key(monkeypatch):
    monkeypatch.setenv("E2E_KEY", KEY)


def test_model_target_and_llm_judge_end_to_end(ws, chat_server, env_key):
    targets(ws, chat_server, target_extra="vision: true")
    dataset(ws)
    chat_server.reply(text("A red square."), text(VALID))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    [row] = rows("o.jsonl")
    assert row["candidate_answer"] == "A red square." and row["score"] == 0.9
    assert row["trace"]["token_usage"] == {"input": 42, "output": 7} and row["trace"]["model"] == "answer-model"
    judge_request = chat_server.requests[1].body
    assert judge_request["model"] == "judge-model"
    assert judge_request["messages"][1]["content"][0]["text"] == (
        "Question: What is shown?\nAnswer: A red square.\nImages: Image 1 (photo.png)\n"
    )
    assert row["evaluator_results"][0]["details"]["judge"]["target"] == "judge"
    assert row["trace"]["judge_token_usage"] == {"input": 42, "output": 7} and row["trace"]["judge_duration_ms"] > 0
    everything = (ws.root / "o.jsonl").read_text() + result.output
    assert KEY not in everything
    for request in chat_server.requests:
        assert KEY not in json.dumps(request.body)


def test_judge_error_exits_4_and_keeps_the_row(ws, chat_server, env_key):
    targets(ws, chat_server, target_extra="vision: true")
    dataset(ws)
    chat_server.reply(text("A red square."), error(500, f"bad key {KEY}"))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 4, result.output
    [row] = rows("o.jsonl")
    assert row["status"] == "ok" and row["evaluator_results"][0]["status"] == "error"
    assert row["misses"] == [
        f"llm_judge 'quality': judge target 'judge' failed: HTTP 500 from {chat_server.base_url}: bad key ***"
    ]


PLAN_ERRORS = [
    (
        "judge-without-vision",
        {"judge_vision": False},
        {},
        "dataset.yaml:5: execution.evaluators[0]: llm_judge 'quality': judge target 'judge' is not marked "
        "vision: true, but case 'c1' has images; set vision: true on 'judge' if its model accepts images, "
        "or choose a vision judge with target: NAME",
    ),
    (
        "evaluator-picks-text-judge",
        {},
        {"evaluator": "{type: rubric, name: r, target: text_judge, rubrics: [Says red]}"},
        "dataset.yaml:5: execution.evaluators[0]: rubric 'r': judge target 'text_judge' is not marked vision: true, "
        "but case 'c1' has images; set vision: true on 'text_judge' if its model accepts images, or choose a vision "
        "judge with target: NAME",
    ),
    (
        "unknown-judge",
        {},
        {"evaluator": "{type: llm_judge, name: quality, target: nope}"},
        "dataset.yaml:5: execution.evaluators[0].target: llm_judge 'quality': judge target 'nope' (from target) is not "
        "defined in .agentv/targets.yaml. Available targets: model, judge, text_judge",
    ),
    (
        "unknown-dataset-judge",
        {},
        {"judge_target": "judge_target: gpt9"},
        "dataset.yaml:5: execution.evaluators[0]: llm_judge 'quality': judge target 'gpt9' "
        "(from execution.judge_target) is not defined in .agentv/targets.yaml. "
        "Available targets: model, judge, text_judge",
    ),
]


@pytest.mark.parametrize(
    "target_kw, dataset_kw, message", [p[1:] for p in PLAN_ERRORS], ids=[p[0] for p in PLAN_ERRORS]
)
def test_judge_problems_stop_the_run_before_it_starts(ws, chat_server, env_key, target_kw, dataset_kw, message):
    targets(ws, chat_server, target_extra="vision: true", **target_kw)
    dataset(ws, **dataset_kw)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert chat_server.requests == [] and not (ws.root / "o.jsonl").exists()


def test_model_target_without_vision_refuses_images(ws, chat_server, env_key):
    targets(ws, chat_server)
    dataset(ws)
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2
    assert "target 'model' is not marked vision: true, but case 'c1' has images" in result.output


def test_no_judge_target_anywhere(ws, chat_server, env_key):
    ws.targets("targets:\n  - {name: t, provider: mock, response: hi}\n")
    dataset(ws, image=False)
    ws.dataset(ws.root.joinpath("dataset.yaml").read_text().replace("target: model", "target: t"))
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2
    assert (
        "dataset.yaml:5: execution.evaluators[0]: llm_judge 'quality' needs a judge target: set target: NAME on "
        "it, execution.judge_target in the dataset, or judge_target on the eval target (target 't' is a mock "
        "target; only a model target judges itself)"
    ) in result.output


def test_judge_target_option_overrides_the_default(ws, chat_server, env_key):
    targets(ws, chat_server, target_extra="vision: true")
    dataset(ws, image=False)
    chat_server.reply(text("A red square."), text(VALID))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--judge-target", "text_judge")
    assert result.exit_code == 0, result.output
    assert chat_server.requests[1].body["model"] == "text-model"


def test_missing_key_variable_names_it(ws, chat_server, monkeypatch):
    monkeypatch.delenv("E2E_KEY", raising=False)
    targets(ws, chat_server, target_extra="vision: true")
    dataset(ws)
    result = invoke("eval", "dataset.yaml")
    assert result.exit_code == 2
    assert "environment variable E2E_KEY is not set (used as ${{ E2E_KEY }})" in result.output


TEMPLATE_ERRORS = [
    (
        "inline-unknown-variable",
        "{type: llm_judge, prompt: 'Rate {{answer}}'}",
        "dataset.yaml:5: execution.evaluators[0].prompt: unknown template variable {{answer}}. "
        "Valid variables: {{input}}, {{output}}, {{expected_output}}, {{expected_outcome}}, "
        "{{image_reference}}, {{image_references}}",
    ),
    (
        "file-unknown-variable",
        "{type: llm_judge, prompt: judges/bad.md}",
        "dataset.yaml:5: execution.evaluators[0].prompt: prompt file judges/bad.md: unknown template variable "
        "{{ouptut}} (did you mean {{output}}?). Valid variables: {{input}}, {{output}}, {{expected_output}}, "
        "{{expected_outcome}}, {{image_reference}}, {{image_references}}",
    ),
    (
        "missing-prompt-file",
        "{type: llm_judge, prompt: judges/none.md}",
        "dataset.yaml:5: execution.evaluators[0].prompt: prompt file not found: judges/none.md; "
        "tried: {root}/judges/none.md",
    ),
    (
        "bad-dimension-weight",
        "{type: llm_judge, dimensions: {accuracy: 0}}",
        "dataset.yaml:5: execution.evaluators[0].dimensions: dimension 'accuracy' needs a weight > 0, got 0.0",
    ),
    (
        "duplicate-rubric-id",
        "{type: rubric, rubrics: [{id: a, description: x}, {id: a, description: y}]}",
        "dataset.yaml:5: execution.evaluators[0].rubrics: duplicate rubric id 'a'",
    ),
]


@pytest.mark.parametrize("evaluator, message", [p[1:] for p in TEMPLATE_ERRORS], ids=[p[0] for p in TEMPLATE_ERRORS])
def test_template_and_config_errors_at_load(ws, evaluator, message):
    ws.file("judges/bad.md", "Answer: {{ouptut}}")
    dataset(ws, evaluator=evaluator, image=False)
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert message.replace("{root}", str(ws.root.resolve())) in result.output, result.output


def test_validate_reports_judge_problems_too(ws, chat_server, env_key):
    targets(ws, chat_server, judge_vision=False, target_extra="vision: true")
    dataset(ws)
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert (
        "llm_judge 'quality': judge target 'judge' is not marked vision: true, but case 'c1' has images"
        in result.output
    )


def test_cli_and_mock_targets_can_judge(ws):
    """A cli judge gets the rendered prompt as {PROMPT} and the images as {IMAGES}; a mock judge
    replies with its response (here in a dry run, so no target runs at all)."""
    ws.file(
        "judge.sh",
        'case "$1" in *"Answer: 5 bottles"*) ;; *) echo "prompt not rendered: $1" >&2; exit 3;; esac\n'
        'head -c 4 "$2" | grep -q PNG || { echo "no image: $2" >&2; exit 4; }\n'
        'echo \'{"score": 0.7, "reasoning": "from the shell judge"}\'\n',
    )
    ws.file("shelf.png", png())
    ws.targets("""
        targets:
          - {name: t, provider: mock, response: 5 bottles}
          - {name: shell_judge, provider: cli, command_template: "sh judge.sh {PROMPT} {IMAGES}", vision: true}
          - {name: mock_judge, provider: mock, response: {score: 1.0}, vision: true}
    """)
    ws.dataset("""
        execution:
          target: t
          evaluators:
            - {name: by_shell, type: llm_judge, target: shell_judge, prompt: "Answer: {{output}}"}
            - {name: by_mock, type: llm_judge, target: mock_judge}
        evalcases:
          - id: c1
            input: [{role: user, content: [{type: text, value: Count.}, {type: image, value: shelf.png}]}]
            expected_output: 5 bottles
    """)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, rows("o.jsonl")[0]["misses"]
    by_name = {r["name"]: r for r in rows("o.jsonl")[0]["evaluator_results"]}
    assert (by_name["by_shell"]["score"], by_name["by_shell"]["reasoning"]) == (0.7, "from the shell judge")
    assert by_name["by_mock"]["score"] == 1.0
    dry = invoke("eval", "dataset.yaml", "--dry-run", "--out", "d.jsonl", "-e", "c1")
    assert dry.exit_code == 0, dry.output
    assert rows("d.jsonl")[0]["evaluator_results"][1]["score"] == 1.0
