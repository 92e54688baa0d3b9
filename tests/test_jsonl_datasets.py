"""JSONL datasets: one case per line, suite keys in the same-name `.yaml` sidecar, every problem
named by file and line (the case's line in the JSONL file, the key's line in the sidecar)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.errors import ConfigError
from agentv_py.loading.dataset import load_dataset

pytestmark = pytest.mark.usefixtures("both_chunkings")

THEIRS = "<library's words>"
"""In an expected message, stands for words a library writes (json, pydantic, PyYAML), which any
release of it may change: the test pins agentv's part around them, never theirs."""


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected` exactly, each THEIRS in it standing for some (non-empty) text."""
    return re.fullmatch(".+".join(map(re.escape, expected.split(THEIRS))), actual, re.DOTALL) is not None


SIDECAR = """\
description: suite defaults for the cases in data.jsonl
dataset: from-sidecar
evaluator: llm_judge
execution:
  target: t
  evaluators:
    - {type: field_accuracy, fields: [{path: a}]}
"""


def case(case_id: str, **fields: object) -> str:
    truth = {} if "expected_messages" in fields else {"expected_output": {"a": 1}}  # something to compare
    body = {"id": case_id, "input_messages": [{"role": "user", "content": "hi"}], **truth, **fields}
    return json.dumps(body)


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_dataset(path)
    return [str(p) for p in caught.value.problems]


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def test_cases_come_from_the_lines_and_suite_keys_from_the_sidecar(ws) -> None:
    ws.file("data.yaml", SIDECAR)
    ws.file("data.jsonl", "\n".join([case("a"), "", "   ", case("b", conversation_id="conv")]) + "\n")
    loaded = load_dataset(Path("data.jsonl"))
    assert loaded.name == "from-sidecar"
    assert loaded.model.description == "suite defaults for the cases in data.jsonl"
    assert loaded.model.execution.target == "t"
    assert [c.case.id for c in loaded.cases] == ["a", "b"]
    assert [len(c.evaluators) for c in loaded.cases] == [1, 1]  # the sidecar's suite evaluators
    assert loaded.cases[1].case.conversation_id == "conv"


def test_without_a_sidecar_the_name_is_the_file_stem(ws) -> None:
    evaluators = [{"type": "field_accuracy", "fields": [{"path": "a"}]}]
    ws.file("plain.jsonl", case("a", evaluators=evaluators) + "\r\n")  # CRLF line ends too
    loaded = load_dataset(Path("plain.jsonl"))
    assert loaded.name == "plain"
    assert [c.case.id for c in loaded.cases] == ["a"]


DEEP = "[" * 150 + "]" * 150


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(
            [case("a"), '{"id": "b", "input_messages": [}'],
            ["data.jsonl:2: not JSON: " + THEIRS + " at column 32"],
            id="not-json",
        ),
        pytest.param(
            [case("a"), "[1, 2]", '"text"'],
            [
                "data.jsonl:2: expected a JSON object (one case per line), got an array [1, 2]",
                'data.jsonl:3: expected a JSON object (one case per line), got a string "text"',
            ],
            id="not-an-object",
        ),
        pytest.param(
            [case("a"), '{"id": "b", "score": NaN}'], ["data.jsonl:2: not JSON: NaN is not valid JSON"], id="nan"
        ),
        pytest.param(
            [case("a"), '{"id": "b", "deep": ' + DEEP + "}"],
            ["data.jsonl:2: JSON nests deeper than 100 levels"],
            id="too-deep",
        ),
        pytest.param(
            [case("a"), "", case("b", input_messages=[{"role": "bot", "content": "x"}])],
            [
                'data.jsonl:3: evalcases[1].input_messages[0].role: invalid value "bot": '
                "expected 'system', 'user', 'assistant' or 'tool'"
            ],
            id="case-error-names-its-line",
        ),
        pytest.param(
            [case("a"), case("a")],
            ["data.jsonl:2: evalcases[1].id: duplicate id 'a' (first used by evalcases[0]); ids must be unique"],
            id="duplicate-id",
        ),
        pytest.param([], ["data.jsonl: evalcases: evalcases must be a non-empty list of cases"], id="empty"),
    ],
)
def test_line_problems(ws, lines: list[str], expected: list[str]) -> None:
    ws.file("data.yaml", SIDECAR)
    ws.file("data.jsonl", "\n".join(lines) + ("\n" if lines else ""))
    found = problems_of(Path("data.jsonl"))
    assert len(found) == len(expected) and all(map(matches, expected, found)), found


def test_invalid_utf8_names_the_line(ws) -> None:
    ws.file("data.yaml", SIDECAR)
    ws.file("data.jsonl", case("a").encode() + b'\n{"id": "caf\xe9"}\n')
    assert problems_of(Path("data.jsonl")) == ["data.jsonl:2: not valid UTF-8 (byte 0xe9 at column 12)"]


def test_bad_lines_are_the_only_problems_named_wherever_they_are(ws) -> None:
    # A line that opens an object is read when its chunk of cases is unpacked: the bad lines of
    # later chunks are found then, and still they alone are reported, as when every line was
    # read first (the first case's bad role, checked before them, is not).
    bad_role = case("a", input_messages=[{"role": "bot", "content": "x"}])
    lines = [bad_role, case("b"), case("c"), '{"id": "d", "id": "e"}', case("f"), case("g"), '{"id": NaN}']
    ws.file("data.yaml", SIDECAR)
    ws.file("data.jsonl", "\n".join(lines) + "\n")
    assert problems_of(Path("data.jsonl")) == [
        "data.jsonl:4: duplicate key 'id' (keys must be unique)",
        "data.jsonl:7: not JSON: NaN is not valid JSON",
    ]
    ws.file("data.yaml", "- not suite keys\n")  # a bad sidecar: named after the lines, as before
    assert problems_of(Path("data.jsonl")) == [
        "data.jsonl:4: duplicate key 'id' (keys must be unique)",
        "data.jsonl:7: not JSON: NaN is not valid JSON",
        "data.yaml:1: a JSONL dataset's sidecar holds suite keys (description, dataset, execution), got an array",
    ]


@pytest.mark.parametrize(
    ("sidecar", "expected"),
    [
        pytest.param(
            "dataset: x\ndescripton: typo\n",
            "data.yaml:2: descripton: unknown key 'descripton' (did you mean 'description'?). "
            "Valid keys: $schema, description, dataset, execution, evaluator, target, gates, pass_threshold, "
            "preprocessors, evalcases",
            id="unknown-key",
        ),
        pytest.param(
            "dataset: x\nevalcases: []\n",
            "data.yaml:2: evalcases: the cases of a JSONL dataset are the lines of data.jsonl; "
            "its sidecar holds suite keys only (description, dataset, execution)",
            id="cases-in-sidecar",
        ),
        pytest.param(
            "- a\n- b\n",
            "data.yaml:1: a JSONL dataset's sidecar holds suite keys (description, dataset, execution), got an array",
            id="not-a-mapping",
        ),
        pytest.param(
            "execution:\n  target: [t]\n",
            "data.yaml:2: execution.target: " + THEIRS + ', got array ["t"]',
            id="bad-value",
        ),
        pytest.param("dataset: [\n", "data.yaml:2: invalid YAML at column 1: " + THEIRS, id="invalid-yaml"),
        pytest.param(
            "dataset: x\nevaluator: code_judge\n",
            "data.yaml:2: evaluator: the legacy 'evaluator' key names the default evaluator kind, and only "
            "llm_judge can be one (got 'code_judge'); list evaluators under execution.evaluators",
            id="legacy-evaluator-kind",
        ),
    ],
)
def test_sidecar_problems_name_the_sidecar(ws, sidecar: str, expected: str) -> None:
    evaluators = [{"type": "field_accuracy", "fields": [{"path": "a"}]}]
    ws.file("data.yaml", sidecar)
    ws.file("data.jsonl", case("a", evaluators=evaluators) + "\n")
    found = problems_of(Path("data.jsonl"))
    assert len(found) == 1
    assert matches(expected, found[0]), found[0]


def test_an_empty_sidecar_gives_no_suite_keys(ws) -> None:
    ws.file("data.yaml", "# nothing yet\n")
    ws.file("data.jsonl", case("a") + "\n")
    loaded = load_dataset(Path("data.jsonl"))
    assert (loaded.name, loaded.model.description, loaded.model.execution.target) == ("data", None, None)


def test_validate_and_eval_accept_jsonl(ws) -> None:
    ws.cli_target("sh {FILES}")
    ws.file("fx/a.sh", "echo '{\"a\": 1}'\n")
    ws.file("data.yaml", SIDECAR)
    line = case(
        "a",
        input_messages=[{"role": "user", "content": [{"type": "file", "value": "fx/a.sh"}]}],
        expected_messages=[{"role": "assistant", "content": {"a": 1}}],
    )
    ws.file("data.jsonl", line + "\n")
    checked = invoke("validate", "data.jsonl")
    assert checked.exit_code == 0, checked.output
    assert "ok: data.jsonl (1 case)" in checked.output
    result = invoke("eval", "data.jsonl", "--out", "out.jsonl")
    assert result.exit_code == 0, result.output
    row = json.loads(Path("out.jsonl").read_text())
    assert (row["eval_id"], row["dataset"], row["status"], row["verdict"]) == ("a", "from-sidecar", "ok", "pass")


def test_validate_checks_a_sidecar_with_its_dataset(ws) -> None:
    """`agentv validate evals/*` meets the sidecar too: it is checked as part of its JSONL
    dataset, never reported as a dataset without `evalcases`."""
    ws.cli_target("sh {FILES}")
    ws.file("data.yaml", SIDECAR)
    ws.file("data.jsonl", case("a", expected_messages=[{"role": "assistant", "content": {"a": 1}}]) + "\n")
    checked = invoke("validate", "data.yaml")
    assert checked.exit_code == 0, checked.output
    assert "ok: data.yaml (1 case)" in checked.output
    assert "note: data.yaml: the sidecar of data.jsonl: checked as part of that dataset" in checked.output
