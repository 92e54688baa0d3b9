"""Guideline files (agentv-reference §1.4, §1.5, §2.3, §3.2): `.agentv/config.yaml` found and
checked, `guideline_patterns` matched as micromatch matched them, matching input files split from
the others, and where they go: `{GUIDELINES}` and `{FILES}` of a real cli target, `{ATTEMPT}`,
a code judge's `guideline_files`, a model's `[[ ## Guidelines ## ]]` system block."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.chat import ChatMessage
from agentv_py.cli import app
from agentv_py.errors import ConfigError
from agentv_py.loading.config import matches_any
from agentv_py.loading.dataset import load_dataset
from agentv_py.runner.chat_messages import case_messages
from agentv_py.runner.local_target import MAX_ARG_BYTES, command_line_problem
from tests.conftest import Workspace, script

CONFIG = '$schema: agentv-config-v2\nguideline_patterns: ["**/*.instructions.md", "**/SKILL.md"]\n'
ARGV_JSON = script("argv_json.py")


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def rows(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


# ----------------------------------------------------------------------------- patterns

PATTERNS = [
    ("root-level-file", "**/*.instructions.md", "python.instructions.md", True),
    ("nested-file", "**/*.instructions.md", "evals/sub/python.instructions.md", True),
    ("skill-at-root", "**/SKILL.md", "SKILL.md", True),
    ("skill-nested", "**/SKILL.md", "skills/pdf/SKILL.md", True),
    ("case-sensitive", "**/SKILL.md", "skills/pdf/skill.md", False),
    ("prompt-suffix-only", "**/*.prompt.md", "prompt.md", False),
    ("no-dot-directories", "**/*.instructions.md", ".github/copilot.instructions.md", False),
    ("dot-directory-named", ".github/**/*.instructions.md", ".github/instructions/a.instructions.md", True),
    ("star-stays-in-one-directory", "*.md", "docs/a.md", False),
    ("star-at-root", "*.md", "a.md", True),
    ("prefix-directory", "docs/**", "docs/a/b.md", True),
    ("braces", "docs/{style,tone}.md", "docs/tone.md", True),
    ("extglob", "@(a|b).md", "b.md", True),
    ("negation", "!**/*.md", "notes.txt", True),
    ("negation-excludes", "!**/*.md", "notes.md", False),
    ("leading-dot-slash", "./rules.md", "rules.md", True),
    ("outside-the-root", "**/*.md", "../elsewhere/a.md", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), [p[1:] for p in PATTERNS], ids=[p[0] for p in PATTERNS])
def test_patterns_match_as_micromatch(pattern: str, path: str, expected: bool) -> None:
    assert matches_any(path, [pattern]) is expected


def test_any_pattern_of_the_list_matches() -> None:
    assert matches_any("a/SKILL.md", ["**/*.instructions.md", "**/SKILL.md"])
    assert not matches_any("a/README.md", ["**/*.instructions.md", "**/SKILL.md"])
    assert not matches_any("a/SKILL.md", [])


# ----------------------------------------------------------------------------- discovery and checks


JUDGE = (  # a code judge that reports the payload's file lists as its reasoning
    "import json, sys\n"
    "p = json.load(sys.stdin)\n"
    "keys = ('guideline_files', 'input_files')\n"
    "print(json.dumps({'score': 1, 'reasoning': json.dumps({k: p[k] for k in keys})}))\n"
)


def guideline_dataset(ws: Workspace, name: str = "evals/dataset.yaml") -> Path:
    """A dataset (target `t`, a code judge) whose one case names two ordinary files and two
    guideline files, interleaved."""
    ws.file("evals/a.txt", "A")
    ws.file("evals/python.instructions.md", "Use type hints.\r\n")
    ws.file("evals/b.txt", "B")
    ws.file("skills/pdf/SKILL.md", "  Read PDFs.  \n")
    ws.file("evals/judge.py", JUDGE)
    return ws.dataset(
        f"""
        execution:
          target: t
          evaluators:
            - {{name: j, type: code_judge, script: [{sys.executable}, judge.py]}}
        evalcases:
          - id: c1
            expected_outcome: anything
            input_messages:
              - role: system
                content:
                  - {{type: file, value: python.instructions.md}}
              - role: user
                content:
                  - {{type: text, value: go}}
                  - {{type: file, value: a.txt}}
                  - {{type: file, value: ../skills/pdf/SKILL.md}}
                  - {{type: file, value: b.txt}}
            expected_messages: [{{role: assistant, content: ok}}]
        """,
        name,
    )


def test_guideline_files_are_split_from_the_others_in_order(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    dataset = load_dataset(guideline_dataset(ws))
    case = dataset.cases[0]
    root = ws.root.resolve()
    assert case.files == [str(root / "evals/a.txt"), str(root / "evals/b.txt")]
    assert case.guideline_files == [str(root / "evals/python.instructions.md"), str(root / "skills/pdf/SKILL.md")]
    assert case.file_paths == [*case.guideline_files, *case.files]
    assert case.guideline_items == frozenset({0, 2})
    assert dataset.warnings == []


def test_guidelines_text_is_agentvs(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    case = load_dataset(guideline_dataset(ws)).cases[0]
    assert case.guidelines() == (
        '<file path="python.instructions.md">\nUse type hints.\n</file>\n\n<file path="SKILL.md">\nRead PDFs.\n</file>'
    )


def test_without_a_config_no_file_is_a_guideline_file(ws: Workspace) -> None:
    """AgentV (cdf415031) had no default patterns: `agentv init` wrote them into the config."""
    case = load_dataset(guideline_dataset(ws)).cases[0]
    assert case.guideline_files == []
    assert [Path(p).name for p in case.files] == ["python.instructions.md", "a.txt", "SKILL.md", "b.txt"]
    assert case.guidelines() == ""


def test_the_nearest_config_wins(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    ws.file("evals/.agentv/config.yaml", '$schema: agentv-config-v2\nguideline_patterns: ["**/*.txt"]\n')
    case = load_dataset(guideline_dataset(ws)).cases[0]
    assert [Path(p).name for p in case.guideline_files] == ["a.txt", "b.txt"]


def test_a_config_outside_the_repository_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv/config.yaml").write_text(CONFIG)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    case = load_dataset(guideline_dataset(Workspace(repo))).cases[0]
    assert case.guideline_files == []


def test_patterns_match_paths_relative_to_the_repository_root(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", '$schema: agentv-config-v2\nguideline_patterns: ["skills/**/SKILL.md"]\n')
    case = load_dataset(guideline_dataset(ws)).cases[0]
    assert [Path(p).name for p in case.guideline_files] == ["SKILL.md"]


WARNINGS = [
    (
        "not-a-mapping",
        "- '**/*.txt'\n",
        ".agentv/config.yaml:1: must be a mapping with '$schema: agentv-config-v2' and guideline_patterns, got a "
        "list; this config is ignored",
    ),
]


@pytest.mark.parametrize(("text", "warning"), [w[1:] for w in WARNINGS], ids=[w[0] for w in WARNINGS])
def test_a_config_that_is_not_a_mapping_is_ignored_with_a_warning(ws: Workspace, text: str, warning: str) -> None:
    ws.file("evals/.agentv/config.yaml", text)
    dataset = load_dataset(guideline_dataset(ws))
    assert [str(w) for w in dataset.warnings] == ["evals/" + warning]
    assert dataset.cases[0].guideline_files == []


def test_an_ignored_config_lets_the_next_one_up_apply(ws: Workspace) -> None:
    """As AgentV's loader: an ignored config is skipped and the walk goes on upwards."""
    ws.file("evals/.agentv/config.yaml", "- '**/*.txt'\n")
    ws.file(".agentv/config.yaml", CONFIG)
    dataset = load_dataset(guideline_dataset(ws))
    assert len(dataset.warnings) == 1
    assert [Path(p).name for p in dataset.cases[0].guideline_files] == ["python.instructions.md", "SKILL.md"]


@pytest.mark.parametrize(
    "schema", ["", "$schema: agentv-config-v2\n", "$schema: agentv-config-v1\n"], ids=["none", "v2", "other"]
)
def test_the_schema_line_is_not_required(ws: Workspace, schema: str) -> None:
    """AgentV v2.7.0 (cdf415031) no longer checked `$schema` in config.yaml (2c986442f)."""
    ws.file(".agentv/config.yaml", schema + 'guideline_patterns: ["**/*.instructions.md", "**/SKILL.md"]\n')
    dataset = load_dataset(guideline_dataset(ws))
    assert dataset.warnings == []
    assert [Path(p).name for p in dataset.cases[0].guideline_files] == ["python.instructions.md", "SKILL.md"]


def test_unknown_keys_and_an_empty_list_are_warnings(ws: Workspace) -> None:
    ws.file(
        ".agentv/config.yaml", "$schema: agentv-config-v2\nguideline_pattern: ['**/*.md']\nguideline_patterns: []\n"
    )
    dataset = load_dataset(guideline_dataset(ws))
    assert [str(w) for w in dataset.warnings] == [
        ".agentv/config.yaml:2: guideline_pattern: unknown key, ignored (did you mean 'guideline_patterns'?); "
        "valid keys: $schema, guideline_patterns",
        ".agentv/config.yaml:3: guideline_patterns: is empty: no input file is a guideline file; add patterns "
        "or remove it",
    ]
    assert dataset.cases[0].guideline_files == []


def test_agentv_442_config_keys_are_accepted_quietly(ws: Workspace) -> None:
    """AgentV v4.42's own keys (interactive mode, CLI defaults, results store, hooks) bear on nothing run here."""
    ws.file(
        ".agentv/config.yaml",
        "$schema: agentv-config-v2\neval_patterns: ['**/evals/**/dataset*.yaml']\nexecution: {verbose: false}\n"
        "required_version: '>=4.0'\nresults: {repo: x}\nhooks: {before_session: 'echo'}\n"
        "guideline_patterns: ['**/*.instructions.md']\n",
    )
    dataset = load_dataset(guideline_dataset(ws))
    assert dataset.warnings == []


ERRORS = [
    (
        "not-a-list",
        "guideline_patterns: '**/*.md'\n",
        [".agentv/config.yaml:2: guideline_patterns: must be a list of glob patterns (strings), got a string"],
    ),
    (
        "entries-not-strings",
        "guideline_patterns:\n  - '**/*.md'\n  - 3\n  - {a: 1}\n",
        [
            ".agentv/config.yaml:4: guideline_patterns[1]: must be a glob pattern (a string), got a number",
            ".agentv/config.yaml:5: guideline_patterns[2]: must be a glob pattern (a string), got a mapping",
        ],
    ),
    (
        "empty-pattern",
        "guideline_patterns: ['  ']\n",
        [".agentv/config.yaml:2: guideline_patterns[0]: must not be empty"],
    ),
    (
        "invalid-yaml",
        "guideline_patterns: [\n",
        # ours: file, line, column and the framing; what is wrong, and where, in PyYAML's words
        [re.compile(re.escape(".agentv/config.yaml:3: invalid YAML at column 1: ") + r".+ \(.+\)")],
    ),
]


@pytest.mark.parametrize(("text", "problems"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_patterns_of_the_wrong_type_are_located_errors(
    ws: Workspace, text: str, problems: list[str | re.Pattern[str]]
) -> None:
    ws.file(".agentv/config.yaml", "$schema: agentv-config-v2\n" + text)
    with pytest.raises(ConfigError) as caught:
        load_dataset(guideline_dataset(ws))
    actual = [str(p) for p in caught.value.problems]
    assert len(actual) == len(problems), actual
    for got, want in zip(actual, problems, strict=True):
        assert want.fullmatch(got) if isinstance(want, re.Pattern) else got == want, got


def test_validate_prints_the_config_warnings(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", "- '**/*.md'\n")
    ws.cli_target(f"{sys.executable} {ARGV_JSON} {{FILES}}")
    guideline_dataset(ws)
    result = invoke("validate", "evals/dataset.yaml")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        "warning: .agentv/config.yaml:1: must be a mapping with '$schema: agentv-config-v2' and "
        "guideline_patterns, got a list; this config is ignored"
    )


# ----------------------------------------------------------------------------- cli placeholders


def argv_of(row: dict) -> list[str]:
    return json.loads(row["candidate_answer"])["argv"]


def test_guidelines_attempt_and_files_reach_a_cli_target(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    guideline_dataset(ws)
    ws.cli_target(
        f"{sys.executable} {ARGV_JSON} {{GUIDELINES}} {{ATTEMPT}} {{FILES}}", extra="files_format: --file {path}"
    )
    result = invoke("eval", "evals/dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    root = ws.root.resolve()
    assert argv_of(rows("out.jsonl")[0]) == [
        '<file path="python.instructions.md">\nUse type hints.\n</file>\n\n<file path="SKILL.md">\nRead PDFs.\n</file>',
        "0",
        *("--file", str(root / "evals/python.instructions.md")),
        *("--file", str(root / "skills/pdf/SKILL.md")),
        *("--file", str(root / "evals/a.txt")),
        *("--file", str(root / "evals/b.txt")),
    ]


def test_a_code_judge_gets_guideline_files_apart_from_input_files(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    guideline_dataset(ws)
    ws.cli_target(f"{sys.executable} {ARGV_JSON}")
    result = invoke("eval", "evals/dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    root = ws.root.resolve()
    assert json.loads(rows("out.jsonl")[0]["evaluator_results"][0]["reasoning"]) == {
        "guideline_files": [str(root / "evals/python.instructions.md"), str(root / "skills/pdf/SKILL.md")],
        "input_files": [str(root / "evals/a.txt"), str(root / "evals/b.txt")],
    }


def test_attempt_counts_from_zero_on_a_retry(ws: Workspace) -> None:
    """AgentV's {ATTEMPT} was 0 on the first call; agentv's `attempts` counts calls from 1."""
    ws.file(
        "fail_first.py",
        "import json, sys\nif sys.argv[1] == '0':\n    sys.exit('first attempt fails')\n"
        "print(json.dumps({'attempt': sys.argv[1]}))\n",
    )
    guideline_dataset(ws)
    ws.cli_target(f"{sys.executable} ../fail_first.py {{ATTEMPT}}")
    result = invoke("eval", "evals/dataset.yaml", "--out", "out.jsonl", "--max-retries", "1")
    assert result.exit_code == 0, result.output
    row = rows("out.jsonl")[0]
    assert (row["attempts"], json.loads(row["candidate_answer"])) == (2, {"attempt": "1"})


def test_guidelines_text_stays_literal_under_a_shell(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    guideline_dataset(ws)
    hostile = 'it\'s $(touch pwned) `touch pwned2` "q" $HOME; rm -rf x &\n'
    ws.file("evals/python.instructions.md", hostile)
    ws.file("skills/pdf/SKILL.md", "s")
    ws.cli_target(f"{sys.executable} {ARGV_JSON} {{GUIDELINES}} | cat")
    result = invoke("eval", "evals/dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert argv_of(rows("out.jsonl")[0]) == [
        f'<file path="python.instructions.md">\n{hostile.strip()}\n</file>\n\n<file path="SKILL.md">\ns\n</file>'
    ]
    assert not list(ws.root.rglob("pwned*"))


def test_a_huge_guideline_file_is_a_clear_error_not_a_failed_start(ws: Workspace) -> None:
    assert MAX_ARG_BYTES is not None  # Linux
    ws.file(".agentv/config.yaml", CONFIG)
    guideline_dataset(ws)
    ws.file("evals/python.instructions.md", "x" * 300_000)
    ws.cli_target(f"{sys.executable} {ARGV_JSON} {{GUIDELINES}}")
    result = invoke("eval", "evals/dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 4, result.output  # a target error
    row = rows("out.jsonl")[0]
    size = (
        len('<file path="python.instructions.md">\n\n</file>\n\n<file path="SKILL.md">\nRead PDFs.\n</file>') + 300_000
    )
    assert (row["status"], row["error"], row["attempts"]) == (
        "error",
        f"target 't' cannot start: {{GUIDELINES}} is {size} bytes and an argument can hold at most 131071 bytes "
        "(Linux MAX_ARG_STRLEN): read the guideline files from {FILES} instead",
        1,
    )


def test_a_huge_guideline_file_passes_as_a_path(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    guideline_dataset(ws)
    ws.file("evals/python.instructions.md", "x" * 300_000)
    ws.cli_target(f"{sys.executable} {ARGV_JSON} {{FILES}}")
    result = invoke("eval", "evals/dataset.yaml", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert len(argv_of(rows("out.jsonl")[0])) == 4


def test_a_command_line_over_arg_max_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sysconf", lambda name: 4096)
    values = {"PROMPT": ["p" * 5000], "FILES": ["/a"]}
    problem = command_line_problem(["prog", "p" * 5000, "/a"], {"HOME": "/root"}, values)
    total = (5 + 5001 + 3) + (4 + 5 + 2) + 8 * (3 + 1 + 2)  # argv and env with their NULs, and pointers
    assert problem == (
        f"{{PROMPT}} is 5000 bytes and the arguments and environment come to {total} bytes, over the 4096 the "
        "system allows (ARG_MAX): pass long text in a file ({FILES})"
    )
    assert command_line_problem(["prog", "p" * 100], {}, {"PROMPT": ["p" * 100]}) is None


# ----------------------------------------------------------------------------- model targets


def texts(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in messages]


def test_a_model_gets_the_guidelines_in_one_system_block(ws: Workspace) -> None:
    """AgentV's local-cli example: a system message holding only a guideline file."""
    ws.file(".agentv/config.yaml", CONFIG)
    case = load_dataset(guideline_dataset(ws)).cases[0]
    guidelines = case.guidelines()
    assert texts(case_messages(case)) == [
        ("system", f"[[ ## Guidelines ## ]]\n\n{guidelines}"),
        ("user", 'go\n\n<file name="a.txt">\nA\n</file>\n\n<file name="b.txt">\nB\n</file>'),
    ]


def test_the_guidelines_block_opens_the_first_system_message(ws: Workspace) -> None:
    ws.file(".agentv/config.yaml", CONFIG)
    ws.file("rules.instructions.md", "Be brief.")
    ws.dataset(
        """
        evalcases:
          - id: c1
            expected_outcome: anything
            input_messages:
              - {role: system, content: You extract invoices.}
              - role: user
                content: [{type: text, value: go}, {type: file, value: rules.instructions.md}]
            expected_messages: [{role: assistant, content: ok}]
          - id: c2
            expected_outcome: anything
            input_messages:
              - role: user
                content: [{type: file, value: rules.instructions.md}, {type: text, value: go}]
            expected_messages: [{role: assistant, content: ok}]
        """
    )
    first, second = load_dataset(ws.root / "dataset.yaml").cases
    block = '[[ ## Guidelines ## ]]\n\n<file path="rules.instructions.md">\nBe brief.\n</file>'
    assert texts(case_messages(first)) == [("system", f"{block}\n\nYou extract invoices."), ("user", "go")]
    assert texts(case_messages(second)) == [("system", block), ("user", "go")]
