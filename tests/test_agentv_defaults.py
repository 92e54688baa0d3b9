"""AgentV's defaults: the default llm_judge for a case without evaluators, the judge fallback to a
model eval target, case-level `rubrics:`, and the case keys AgentV accepted (description, note,
reference_answer, execution.target)."""

from __future__ import annotations

import pytest

from agentv_py.errors import ConfigError
from agentv_py.eval_plan import EvalRequest
from agentv_py.loading import load_dataset
from agentv_py.loading.evaluator_lists import DEFAULT_JUDGE
from agentv_py.models.evaluators import CodeJudgeConfig
from agentv_py.models.judges import LlmJudgeConfig, RubricConfig, RubricItem
from agentv_py.preflight import check_file, preflight

CASE = "  - id: {id}\n    expected_outcome: says hi\n    input: hi\n"


def _dataset(ws, body: str, suite: str = "") -> None:
    ws.file("dataset.yaml", suite + "evalcases:\n" + body)


def test_a_case_without_evaluators_gets_the_default_llm_judge(ws):
    _dataset(ws, CASE.format(id="c1"))
    [case] = load_dataset("dataset.yaml").cases
    assert case.evaluators == [DEFAULT_JUDGE]
    [judge] = case.evaluators
    assert isinstance(judge, LlmJudgeConfig)
    assert (judge.type, judge.name, judge.prompt, judge.target) == ("llm_judge", "llm_judge", None, None)


SUITE_JUDGE = "execution:\n  evaluators:\n    - {type: code_judge, name: suite, script: [python3, j.py]}\n"


@pytest.mark.parametrize(
    "suite, extra, names",
    [
        ("", "", ["llm_judge"]),
        (SUITE_JUDGE, "", ["suite"]),
        # AgentV: an empty list on the case replaces the suite's, and the default judge decides.
        (SUITE_JUDGE, "    evaluators: []\n", ["llm_judge"]),
        (SUITE_JUDGE, "    execution: {evaluators: []}\n", ["llm_judge"]),
        # a case `execution:` without evaluators still inherits the suite's (AgentV from 2026-01-13)
        (SUITE_JUDGE, "    execution: {}\n", ["suite"]),
        ("", "    rubrics: [Greets]\n", ["rubric"]),
        (SUITE_JUDGE, "    rubrics: [Greets]\n", ["rubric", "suite"]),
        ("", "    rubrics: []\n", ["llm_judge"]),
    ],
    ids=[
        "nothing-anywhere",
        "suite-list",
        "empty-case-list",
        "empty-execution-list",
        "execution-without-evaluators",
        "rubrics-alone",
        "rubrics-first-then-suite",
        "empty-rubrics",
    ],
)
def test_which_evaluators_a_case_gets(ws, suite, extra, names):
    ws.file("j.py", "")
    _dataset(ws, CASE.format(id="c1") + extra, suite)
    [case] = load_dataset("dataset.yaml").cases
    assert [e.display_name for e in case.evaluators] == names


def test_case_rubrics_become_agentvs_rubric_evaluator_before_the_case_evaluators(ws):
    ws.file("j.py", "")
    _dataset(
        ws,
        CASE.format(id="c1")
        + "    rubrics:\n"
        + "      - Greets the user\n"
        + "      - {expected_outcome: Is polite, weight: 2, required: false}\n"
        + "      - {id: short, description: Is short}\n"
        + "    execution:\n      evaluators: [{type: code_judge, name: syntax, script: [python3, j.py]}]\n",
    )
    [case] = load_dataset("dataset.yaml").cases
    rubric, code = case.evaluators
    assert isinstance(code, CodeJudgeConfig) and code.name == "syntax"
    assert rubric == RubricConfig(
        type="rubric",
        name="rubric",
        rubrics=[
            RubricItem(id="rubric-1", description="Greets the user"),
            RubricItem(id="rubric-2", description="Is polite", weight=2.0, required=False),
            RubricItem(id="short", description="Is short"),
        ],
    )


def test_documentation_keys_are_accepted(ws):
    _dataset(ws, CASE.format(id="c1") + "    description: What it checks\n    note: why it exists\n")
    loaded = load_dataset("dataset.yaml")
    assert (loaded.cases[0].case.description, loaded.cases[0].case.note) == ("What it checks", "why it exists")
    assert loaded.warnings == []


def test_keys_agentv_ignored_are_accepted_with_a_warning(ws):
    _dataset(ws, CASE.format(id="c1") + "    reference_answer: Hello!\n    execution:\n      target: other\n")
    loaded = load_dataset("dataset.yaml")
    assert [str(w) for w in loaded.warnings] == [
        "dataset.yaml:5: evalcases[0].reference_answer: ignored, as AgentV ignored it: judges get the last "
        "expected message as the reference answer; give it as expected_output",
        "dataset.yaml:7: evalcases[0].execution.target: ignored: every case runs on the eval's one target "
        "(--target, else the dataset's execution.target), as in AgentV, which ignored a case's target too ('other')",
    ]


INVALID_RUBRICS = [
    (
        "score-ranges-not-from-0",
        "    rubrics:\n      - id: accuracy\n        score_ranges: {3: ok, 10: good}\n",
        ["dataset.yaml:7: evalcases[0].rubrics[0].score_ranges: score_ranges shorthand map must start at 0 (got 3)"],
    ),
    (
        "no-description",
        "    rubrics:\n      - {id: a, weight: 2}\n",
        [
            "dataset.yaml:6: evalcases[0].rubrics[0]: a rubric item needs a description "
            "(AgentV also spells it expected_outcome)"
        ],
    ),
    (
        "both-spellings",
        "    rubrics:\n      - {description: a, expected_outcome: b}\n",
        [
            "dataset.yaml:6: evalcases[0].rubrics[0].expected_outcome: give only one of 'description', "
            "'expected_outcome' (they are aliases)"
        ],
    ),
    (
        "empty-string",
        "    rubrics: ['  ']\n",
        ["dataset.yaml:5: evalcases[0].rubrics: a rubric must not be empty"],
    ),
    (
        "duplicate-id",
        "    rubrics: [Greets, {id: rubric-1, description: Polite}]\n",
        ["dataset.yaml:5: evalcases[0].rubrics: duplicate rubric id 'rubric-1'"],
    ),
    (
        "negative-weight",
        "    rubrics: [{description: a, weight: -1}]\n",
        ["dataset.yaml:5: evalcases[0].rubrics[0].weight: weight must be a number >= 0, got -1.0"],
    ),
    (
        "unknown-item-key",
        "    rubrics: [{description: a, wieght: 2}]\n",
        [
            "dataset.yaml:5: evalcases[0].rubrics[0].wieght: unknown key 'wieght' (did you mean 'weight'?). "
            "Valid keys: id, description, expected_outcome, weight, required, score_ranges, required_min_score, "
            "min_score, operator"
        ],
    ),
]


@pytest.mark.parametrize("extra, messages", [c[1:] for c in INVALID_RUBRICS], ids=[c[0] for c in INVALID_RUBRICS])
def test_invalid_case_rubrics(ws, extra, messages):
    _dataset(ws, CASE.format(id="c1") + extra)
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    assert [str(p) for p in caught.value.problems] == messages


# --- the judge: who judges the default llm_judge and case rubrics -------------------------------

OPENAI = "provider: openai, model: m, base_url: 'http://127.0.0.1:9/v1', api_key: k"
TARGETS = {
    "model": f"targets:\n  - {{name: t, {OPENAI}}}\n",
    "model+judge": f"targets:\n  - {{name: t, {OPENAI}, judge_target: j}}\n  - {{name: j, {OPENAI}}}\n",
    "cli": "targets:\n  - {name: t, provider: cli, command_template: 'echo hi'}\n",
    "cli+judge": f"targets:\n  - {{name: t, provider: cli, command_template: 'echo hi', judge_target: j}}\n"
    f"  - {{name: j, {OPENAI}}}\n",
    "cli+missing-judge": "targets:\n  - {name: t, provider: cli, command_template: 'echo hi', judge_target: nope}\n",
}
TARGET_T = "execution:\n  target: t\n"


@pytest.mark.parametrize(
    "targets, suite, judge_option, dry_run, judge",
    [
        ("model", TARGET_T, None, False, "t"),
        ("model+judge", TARGET_T, None, False, "j"),
        ("cli+judge", TARGET_T, None, False, "j"),
        ("cli+judge", TARGET_T + "  judge_target: t2\n", "j", False, "j"),
        ("model", TARGET_T, None, True, None),
        ("cli+judge", TARGET_T, "j", True, "j"),
    ],
    ids=[
        "model-target-judges-itself",
        "target-judge-target-first",
        "cli-target-with-judge-target",
        "judge-target-option-first",
        "dry-run-no-self-judging",
        "dry-run-with-option",
    ],
)
def test_the_default_judge(ws, targets, suite, judge_option, dry_run, judge):
    ws.targets(TARGETS[targets])
    _dataset(ws, CASE.format(id="c1"), suite)
    dataset = load_dataset("dataset.yaml")
    request = EvalRequest(dataset.path, judge_target=judge_option, dry_run=dry_run)
    checked = preflight(request, dataset, dataset.cases)
    assert checked.default_judge == judge
    if judge is not None:
        assert checked.failures == [] and list(checked.judges) == [judge]
    if judge == "t":
        assert checked.judges["t"] is checked.target  # one runner answers and judges


NO_JUDGE = (
    "case 'c1' has no evaluators, so AgentV's default llm_judge scores it, and it needs a judge target: set "
    "execution.judge_target in the dataset or judge_target on the eval target, pass --judge-target NAME, or give "
    "the case evaluators"
)


@pytest.mark.parametrize(
    "targets, body, suite, messages",
    [
        (
            "cli",
            CASE.format(id="c1"),
            TARGET_T,
            [
                f"dataset.yaml:4: evalcases[0]: {NO_JUDGE} (target 't' is a cli target; "
                "only a model target judges itself)"
            ],
        ),
        (
            "cli",
            CASE.format(id="c1") + "    rubrics: [Greets]\n",
            TARGET_T,
            [
                "dataset.yaml:7: evalcases[0].rubrics: case 'c1': its rubrics need a judge target: set "
                "execution.judge_target in the dataset or judge_target on the eval target, or pass --judge-target "
                "NAME (target 't' is a cli target; only a model target judges itself)"
            ],
        ),
        (
            "cli",
            CASE.format(id="c1"),
            "execution:\n  target: t\n  evaluators: [{type: llm_judge, name: q}]\n",
            [
                "dataset.yaml:3: execution.evaluators[0]: llm_judge 'q' needs a judge target: set target: NAME on "
                "it, execution.judge_target in the dataset, or judge_target on the eval target (target 't' is a cli "
                "target; only a model target judges itself)"
            ],
        ),
        (
            # AgentV fell back to the eval target when judge_target named no target; here it is an error
            "cli+missing-judge",
            CASE.format(id="c1"),
            TARGET_T,
            [
                "dataset.yaml:4: evalcases[0]: llm_judge 'llm_judge': judge target 'nope' (from judge_target of "
                "target 't') is not defined in .agentv/targets.yaml. Available targets: t"
            ],
        ),
    ],
    ids=["default-judge", "case-rubrics", "listed-llm-judge", "judge-target-not-defined"],
)
def test_no_judge_is_a_located_problem(ws, targets, body, suite, messages):
    ws.targets(TARGETS[targets])
    _dataset(ws, body, suite)
    check = check_file(ws.root / "dataset.yaml")
    assert [f"{p.file.split('/')[-1]}:{p.line}: {p.location}: {p.message}" for p in check.problems] == messages


def test_a_dry_run_needs_a_judge_for_the_default_llm_judge(ws):
    ws.targets(TARGETS["model"])
    _dataset(ws, CASE.format(id="c1"), TARGET_T)
    dataset = load_dataset("dataset.yaml")
    [failure] = preflight(EvalRequest(dataset.path, dry_run=True), dataset, dataset.cases).failures
    assert isinstance(failure, ConfigError)
    assert [str(p) for p in failure.problems] == [
        f"dataset.yaml:4: evalcases[0]: {NO_JUDGE} (with --dry-run no eval target can judge)"
    ]


@pytest.mark.parametrize(
    "suite, expected",
    [
        ("target: legacy\n", "legacy"),
        ("target: legacy\nexecution: {target: modern}\n", "modern"),
        ("", None),
    ],
    ids=["root-level-target", "execution-target-wins", "none"],
)
def test_the_legacy_root_level_target_is_the_fallback(ws, suite, expected):
    _dataset(ws, CASE.format(id="c1"), suite)
    assert load_dataset("dataset.yaml").model.target_name == expected


def test_criteria_is_an_alias_of_expected_outcome(ws):
    _dataset(ws, "  - id: c1\n    criteria: greets\n    input: hi\n")
    assert load_dataset("dataset.yaml").cases[0].case.expected_outcome == "greets"
    _dataset(ws, "  - id: c1\n    criteria: greets\n    outcome: greets\n    input: hi\n")
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    assert [p.message for p in caught.value.problems] == ["give only one of 'outcome', 'criteria' (they are aliases)"]
