"""AgentV v4.42's dataset format (`tests:`, `assertions:`, kebab-case graders) read into the same
model as the early-2026 format, with the meanings its format gives (loading.agentv_442)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset
from agentv_py.prepared import LoadedDataset

pytestmark = pytest.mark.usefixtures("both_chunkings")


def load(tmp_path: Path, text: str, name: str = "dataset.eval.yaml") -> LoadedDataset:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return load_dataset(path)


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return [str(p) for p in caught.value.problems]


def graders(dataset: LoadedDataset, case: int) -> list[tuple[str, str]]:
    return [(config.type, config.display_name) for config in dataset.cases[case].evaluators]


MERGING = """\
    name: merging
    {format}
    assertions:
      - type: contains
        value: READY
    tests:
      - id: own
        criteria: answers
        input: hello
        assertions:
          - type: equals
            value: hi
      - id: none
        criteria: answers
        input: hello
      - id: skipping
        criteria: answers
        input: hello
        execution:
          skip_defaults: true
        assertions:
          - type: regex
            value: "^h"
"""


@pytest.mark.parametrize(
    ("format_line", "expected"),
    [
        pytest.param(
            "",
            [
                [("equals", "equals-hi"), ("contains", "contains-READY")],
                [("contains", "contains-READY")],
                [("regex", "regex-^h")],
            ],
            id="v4.42-merges-case-first",
        ),
        pytest.param(
            'agentv_format: "2026-02"',
            [[("equals", "equals-hi")], [("contains", "contains-READY")], [("regex", "regex-^h")]],
            id="early-2026-meanings-replace",
        ),
    ],
)
def test_case_graders_merge_or_replace_by_format(
    tmp_path: Path, format_line: str, expected: list[list[tuple[str, str]]]
) -> None:
    dataset = load(tmp_path, MERGING.replace("{format}", format_line))
    assert dataset.name == "merging"
    assert [graders(dataset, i) for i in range(3)] == expected


def test_an_early_file_can_ask_for_v442_meanings(tmp_path: Path) -> None:
    dataset = load(
        tmp_path,
        """\
        agentv_format: "4.42"
        execution:
          evaluators:
            - {type: contains, value: A}
        evalcases:
          - id: c1
            input: hi
            evaluators:
              - {type: contains, value: B}
        """,
    )
    assert graders(dataset, 0) == [("contains", "contains-B"), ("contains", "contains-A")]


def test_plain_strings_become_one_rubric_weighted_by_their_number(tmp_path: Path) -> None:
    dataset = load(
        tmp_path,
        """\
        tests:
          - id: c1
            input: What is 15 + 27?
            assertions:
              - type: contains
                value: "42"
              - Says the answer is 42
              - Shows the working
        """,
    )
    first, rubric = dataset.cases[0].evaluators
    assert (first.type, rubric.type, rubric.display_name, rubric.weight) == ("contains", "rubric", "rubrics", 2.0)
    assert [item.description for item in rubric.rubrics] == ["Says the answer is 42", "Shows the working"]


def test_kebab_case_graders_read_into_this_tools_types(tmp_path: Path) -> None:
    (tmp_path / "check.py").write_text("print('{}')\n")
    dataset = load(
        tmp_path,
        """\
        tests:
          - id: c1
            input: hi
            expected_output: {a: 1}
            assertions:
              - type: code-grader
                command: [python3, check.py]
                threshold: 0.5
                config: {mode: strict}
              - type: field-accuracy
                fields: [{path: a}]
              - type: rubrics
                criteria:
                  - {id: r1, outcome: Is polite, weight: 2}
              - type: is_json
        """,
    )
    code, fields, rubric, is_json = dataset.cases[0].evaluators
    assert (code.type, code.display_name, code.script, code.config, code.payload_format) == (
        "code_judge",
        "code-grader",
        ["python3", "check.py"],
        {"threshold": 0.5, "mode": "strict"},
        "4.42",
    )
    assert (fields.type, fields.display_name) == ("field_accuracy", "field-accuracy")
    assert (rubric.rubrics[0].id, rubric.rubrics[0].description, rubric.rubrics[0].weight) == ("r1", "Is polite", 2.0)
    assert (is_json.type, is_json.display_name) == ("is_json", "is-json")


@pytest.mark.parametrize(
    ("required", "expected"),
    [
        pytest.param("required: true", 0.8, id="true-takes-the-default-mark"),
        pytest.param("required: true, min_score: 0.5", 0.5, id="min-score"),
        pytest.param("required: 0.6", 0.6, id="number"),
        pytest.param("min_score: 0.5", None, id="min-score-alone-has-no-effect"),
    ],
)
def test_required_becomes_the_graders_own_pass_mark(tmp_path: Path, required: str, expected: float | None) -> None:
    text = f"""\
    tests:
      - id: c1
        input: hi
        assertions:
          - {{type: contains, value: x, {required}}}
    """
    assert load(tmp_path, text).cases[0].evaluators[0].pass_threshold == expected


def test_inputs_vars_and_suite_input(tmp_path: Path) -> None:
    (tmp_path / "sales.csv").write_text("a,b\n")
    dataset = load(
        tmp_path,
        """\
        input: Read the rules first.
        tests:
          - id: c1
            vars: {city: Paris, n: 3}
            criteria: Names {{ city }}
            input_files: [sales.csv]
            input: "Summarise {{ city }} in {{ n }} lines"
            expected_output: "{{ city }}"
          - id: c2
            input: [{role: user, content: alone}]
            execution: {skip_defaults: true}
        """,
    )
    first, second = dataset.cases[0].case, dataset.cases[1].case
    assert first.expected_outcome == "Names Paris"
    assert [m.content for m in first.input_messages][0] == "Read the rules first."
    items = first.input_messages[1].items
    assert [(item.type, item.value) for item in items] == [
        ("file", "sales.csv"),
        ("text", "Summarise Paris in 3 lines"),
    ]
    assert first.expected_value == "Paris"
    assert [m.content for m in second.input_messages] == ["alone"]


def test_default_name_is_the_file_name_less_eval_yaml(tmp_path: Path) -> None:
    assert load(tmp_path, "tests:\n  - {id: c1, input: hi}\n", name="greeting.eval.yaml").name == "greeting"


BAD: list[Any] = [
    pytest.param(
        "tests:\n  - {id: c1, input: hi}\nevalcases:\n  - {id: c2, input: hi}\n",
        [
            "dataset.eval.yaml:3: evalcases: give the cases either under 'tests' (AgentV v4.42's format) or under "
            "'evalcases' (the early-2026 format), not both"
        ],
        id="both-vocabularies",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    assertions: [{type: contains, value: a}]\n"
        "    evaluators: [{type: contains, value: b}]\n",
        [
            "dataset.eval.yaml:5: tests[0].evaluators: give the case's graders once (found assertions, evaluators)",
        ],
        id="assertions-and-evaluators",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    assertions:\n      - type: contains-any\n        value: [a]\n"
        "      - type: icontain\n        value: a\n",
        [
            "dataset.eval.yaml:7: tests[0].assertions[1].type: unknown grader type 'icontain' (did you mean "
            "'icontains'?); custom assertion types (.agentv/assertions/*.ts) need AgentV's TypeScript runtime and "
            "are not supported"
        ],
        id="unknown-kebab-type",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    assertions:\n      - type: code-grader\n        command: []\n",
        [
            "dataset.eval.yaml:6: tests[0].assertions[0].command: script must not be empty: give an argv list "
            "such as [uv, run, judge.py]"
        ],
        id="problem-located-at-the-written-key",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n  - id: c1\n    input: hi\n",
        ["dataset.eval.yaml:4: tests[1].id: duplicate id 'c1' (first used by tests[0]); ids must be unique"],
        id="duplicate-id-in-the-files-words",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    mode: conversation\n",
        ["dataset.eval.yaml:4: tests[0].mode: mode: conversation needs turns: a list of turns"],
        id="conversation-without-turns",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    mode: chat\n    turns: [{input: a}]\n",
        ["dataset.eval.yaml:4: tests[0].mode: mode is 'conversation' (a multi-turn case), got 'chat'"],
        id="unknown-mode",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    mode: conversation\n    turns: [hello]\n",
        [
            "dataset.eval.yaml:5: tests[0].turns[0]: a turn is a mapping with input, expected_output, "
            "assertions, got str"
        ],
        id="turn-not-a-mapping",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    mode: conversation\n    turns:\n      - input: a\n"
        "        asertions: [x]\n",
        [
            "dataset.eval.yaml:7: tests[0].turns[0].asertions: unknown key 'asertions' in a turn "
            "(did you mean 'assertions'?)"
        ],
        id="unknown-turn-key",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    mode: conversation\n    aggregation: avg\n"
        "    turns:\n      - input: a\n",
        ["dataset.eval.yaml:5: tests[0].aggregation: invalid value \"avg\": expected 'mean', 'min' or 'max'"],
        id="unknown-aggregation",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    mode: conversation\n    turns:\n      - input: a\n"
        "        assertions:\n          - type: contain\n            value: x\n",
        [
            "dataset.eval.yaml:8: tests[0].turns[0].assertions[0].type: unknown grader type 'contain' (did you mean "
            "'contains'?); custom assertion types (.agentv/assertions/*.ts) need AgentV's TypeScript runtime and "
            "are not supported"
        ],
        id="unknown-turn-grader",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    mode: conversation\n    turns:\n      - expected_output: x\n",
        ["dataset.eval.yaml:6: tests[0].turns[0].input: missing required key 'input'"],
        id="turn-without-input",
    ),
    pytest.param(
        'agentv_format: "5.0"\ntests:\n  - {id: c1, input: hi}\n',
        [
            'dataset.eval.yaml:1: agentv_format: agentv_format is "2026-02" (AgentV\'s early-2026 meanings) or '
            "\"4.42\" (AgentV v4.42's), got '5.0'"
        ],
        id="unknown-format",
    ),
    pytest.param(
        "tests:\n  - {id: c1, input: hi, critera: x}\n",
        ["dataset.eval.yaml:2: tests[0].critera: unknown key 'critera' (did you mean 'criteria'?)"],
        id="unknown-case-key",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_input_is_located_in_the_files_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert problems(tmp_path, text) == expected


MORE_BAD: list[Any] = [
    pytest.param(
        "prompts: ['{{ input }}']\ntests:\n  - {id: c1, input: hi}\n",
        [
            "dataset.eval.yaml:1: prompts: key 'prompts' is AgentV 5.1.0's syntax (after v4.42.4, the format read "
            "here); instead, give each test its `input:` (or the suite one `input:`)"
        ],
        id="main-branch-prompts",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: hi\n    assertions:\n      - {type: llm-rubric, value: Is kind}\n",
        [
            "dataset.eval.yaml:5: tests[0].assertions[0].type: grader type 'llm-rubric' is AgentV 5.1.0's syntax "
            "(after v4.42.4, the format read here); instead, write `type: rubrics` with `criteria:`, or the "
            "criteria as plain strings"
        ],
        id="main-branch-grader",
    ),
    pytest.param(
        "tests:\n  - id: c1\n    input: 'Hello ${{ USER }}'\n",
        [
            "dataset.eval.yaml:3: tests[0].input: ${{ NAME }} is not filled in a dataset: its values are data and "
            "never read the environment (AgentV v4.42 filled it); write the value, or keep variables in the "
            "targets file"
        ],
        id="environment-reference",
    ),
    pytest.param(
        "tets:\n  - {id: c1, input: hi}\ntests:\n  - {id: c1, input: hi}\n",
        ["dataset.eval.yaml:1: tets: unknown key 'tets' (did you mean 'tests'?)"],
        id="mistyped-top-key",
    ),
]


@pytest.mark.parametrize(("text", "expected"), MORE_BAD)
def test_main_branch_syntax_and_the_environment_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert problems(tmp_path, text) == expected


def test_an_unknown_top_level_key_unlike_any_known_is_a_warning(tmp_path: Path) -> None:
    dataset = load(tmp_path, "defaults:\n  note: &n Be brief\ntests:\n  - {id: c1, input: *n}\n")
    assert [w.message for w in dataset.warnings] == ["unknown key 'defaults', ignored (as AgentV v4.42 ignores it)"]


def test_cases_from_other_files_keep_their_own_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "more.yaml").write_text("- id: y1\n  input: hi\n- id: y2\n  input: hi\n  critera: x\n")
    (tmp_path / "more.jsonl").write_text('{"id": "j1", "input": "hi"}\n\n{"id": "j2", "input": 3}\n')
    text = "tests:\n  - {id: inline, input: hi}\n  - file://more.yaml\n  - file://more.jsonl\n"
    assert problems(tmp_path, text) == [
        "more.jsonl:3: input: expected a mapping, got number 3",
        "more.yaml:5: [1].critera: unknown key 'critera' (did you mean 'criteria'?)",
    ]


def test_a_case_file_outside_the_project_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (tmp_path / "outside.yaml").write_text("- {id: o1, input: hi}\n")
    monkeypatch.chdir(project)
    found = problems(project, "tests:\n  - file://../outside.yaml\n")
    assert len(found) == 1 and found[0].startswith("dataset.eval.yaml:2: tests[0]: case file ../outside.yaml (really ")
    assert "is outside the project" in found[0]


def test_a_directory_of_cases_names_each_by_its_folder(tmp_path: Path) -> None:
    for name in ("b-case", "a-case"):
        (tmp_path / "cases" / name).mkdir(parents=True)
        (tmp_path / "cases" / name / "case.yaml").write_text("input: hi\ncriteria: greets\n")
    dataset = load(tmp_path, "tests: ./cases/\n")
    assert [case.case.id for case in dataset.cases] == ["a-case", "b-case"]


@pytest.mark.parametrize(
    ("grader", "expected"),
    [
        pytest.param("{type: tool-trajectory, mode: in_order, expected: [{tool: search}]}", "exact", id="v442-default"),
        pytest.param(
            "{type: tool-trajectory, mode: exact, args_match: ignore, expected: [{tool: search}]}", "ignore", id="given"
        ),
        pytest.param("{type: tool-trajectory, mode: any_order, minimums: {search: 1}}", None, id="any-order-has-none"),
    ],
)
def test_tool_trajectory_compares_arguments_exactly_by_default_as_v442_did(
    tmp_path: Path, grader: str, expected: str | None
) -> None:
    dataset = load(tmp_path, f"tests:\n  - id: c1\n    input: hi\n    assertions:\n      - {grader}\n")
    assert dataset.cases[0].evaluators[0].args_match == expected


def test_the_compatibility_page_lists_every_main_branch_refusal() -> None:
    from agentv_py.loading.main_branch_targets import TARGET_KEYS
    from agentv_py.models.agentv_vocabulary import MAIN_BRANCH_CASE, MAIN_BRANCH_GRADERS, MAIN_BRANCH_TOP

    page = (Path(__file__).parent.parent / "docs" / "agentv-compat.md").read_text()
    listed = [f"| `{key}:` (top level) | {MAIN_BRANCH_TOP[key][0]} |" for key in MAIN_BRANCH_TOP]
    listed += [f"| `tests[].{key}` | {MAIN_BRANCH_CASE[key][0]} |" for key in MAIN_BRANCH_CASE]
    listed += [f"| `type: {key}` | {MAIN_BRANCH_GRADERS[key][0]} |" for key in MAIN_BRANCH_GRADERS]
    listed += [f"| a target's `{key}:` | {TARGET_KEYS[key][0]} |" for key in TARGET_KEYS]
    assert [row for row in listed if row not in page] == []


def test_a_csv_case_file_is_main_branch_syntax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.csv").write_text("id,input\nc1,hi\nc2\n")
    assert problems(tmp_path, "tests: file://cases.csv\n") == [
        "dataset.eval.yaml:1: tests: case file 'cases.csv': .csv case files are AgentV 5.1.0's syntax (after "
        "v4.42.4, the format read here); instead, write the cases as .yaml or .jsonl"
    ]


def test_a_cases_metadata_is_kept_for_slices_any_value_as_text(tmp_path: Path) -> None:
    dataset = load(
        tmp_path,
        """\
        tests:
          - id: a
            criteria: answers
            input: hello
            metadata: {doc_type: receipt, pages: 2, tags: [scan, blurry], owner: {team: ocr}, 3: odd}
          - id: b
            criteria: answers
            input: hello
        """,
    )
    assert dataset.cases[0].case.metadata == {
        "doc_type": "receipt",
        "pages": 2,
        "tags": '["scan", "blurry"]',
        "owner": '{"team": "ocr"}',
        "3": "odd",
    }
    assert dataset.cases[1].case.metadata is None
