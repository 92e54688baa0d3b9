"""Ground truth from files: a case's expected answer may be one `type: file` item naming a JSON or
YAML file, found and trusted as input files are, read with the limits of inline ground truth; a
file that cannot be used is a load error at the item's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset, truth_files

SUITE = "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: total}]}\n"


def dataset(ws, value: str, key: str = "expected_messages") -> Path:
    if key == "expected_messages":
        truth = f"    expected_messages:\n      - role: assistant\n        content: [{{type: file, value: {value}}}]\n"
    else:
        truth = f"    expected_output: [{{type: file, value: {value}}}]\n"
    return ws.dataset(SUITE + "evalcases:\n  - id: c1\n    input: extract\n" + truth)


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_dataset(path)
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.parametrize(
    "name, text",
    [("gt.json", '{"total": 12.5, "lines": [1, 2]}'), ("gt.yaml", "total: 12.5\nlines: [1, 2]\n")],
    ids=["json", "yaml"],
)
@pytest.mark.parametrize("key", ["expected_messages", "expected_output"])
def test_a_file_holds_the_ground_truth(ws, name, text, key):
    ws.file(f"truth/{name}", text)
    loaded = load_dataset(dataset(ws, f"truth/{name}", key))
    assert loaded.cases[0].expected == {"total": 12.5, "lines": [1, 2]}


def test_the_file_is_found_as_input_files_are_beside_the_dataset_or_above(ws):
    ws.file("gt.json", '{"total": 1}')
    ws.dataset(
        SUITE + "evalcases:\n  - id: c1\n    input: x\n    expected_output: [{type: file, value: gt.json}]\n",
        "evals/deep/dataset.yaml",
    )
    assert load_dataset("evals/deep/dataset.yaml").cases[0].expected == {"total": 1}


@pytest.mark.parametrize(
    "setup, value, message",
    [
        (None, "nope.json", "ground truth file not found: nope.json (case 'c1'); tried: {root}/nope.json"),
        (("gt.txt", "{}"), "gt.txt", "ground truth file gt.txt must be .json, .yaml or .yml (case 'c1')"),
        (("gt.json", "total: 1"), "gt.json", "ground truth file gt.json is not JSON (case 'c1')"),
        (("gt.json", '{"total": NaN}'), "gt.json", "NaN"),
        (("gt.yaml", "a: [1, 2\n"), "gt.yaml", "ground truth file gt.yaml: gt.yaml:"),
    ],
    ids=["missing", "other-suffix", "not-json", "nan", "bad-yaml"],
)
def test_a_file_that_cannot_be_ground_truth_is_a_load_error_at_its_line(ws, setup, value, message):
    if setup is not None:
        ws.file(*setup)
    found = problems(dataset(ws, value))
    assert len(found) == 1
    assert found[0].startswith("dataset.yaml:9: evalcases[0].expected_messages[0].content[0].value: ")
    assert message.format(root=ws.root.resolve()) in found[0]


def test_a_file_outside_the_project_is_refused(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "gt.json"
    outside.write_text('{"total": 1}')
    (found,) = problems(dataset(ws, str(outside)))
    assert "is outside the project" in found and "a dataset may only name files inside it (case 'c1')" in found


def test_a_file_over_the_cap_is_refused(ws, monkeypatch):
    monkeypatch.setattr(truth_files, "MAX_TRUTH_BYTES", 1024 * 1024)
    ws.file("gt.json", '{"total": "' + "x" * (2 * 1024 * 1024) + '"}')
    (found,) = problems(dataset(ws, "gt.json"))
    assert found.endswith("ground truth file gt.json is 2 MiB, over the 1 MiB cap (case 'c1')")
