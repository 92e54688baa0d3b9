"""`agentv validate` (and the eval, which prints the same warnings) warns about ground truth that
can never be scored (issue 11, point 11): a non-numeric expected value for `numeric_tolerance`,
an unparseable expected date, an invalid expected box or point (alone or inside a list), and a
field path that is in no case's ground truth (a typo'd `path:`). One warning per field, naming the
cases, located where the field is defined."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.loading import load_dataset

pytestmark = pytest.mark.usefixtures("both_chunkings")


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


def warnings_of(path: str = "dataset.yaml") -> list[str]:
    return [str(w) for w in load_dataset(path).warnings]


def cases(*truths: object, start: int = 1) -> str:
    return "evalcases:\n" + "".join(
        f"  - {{id: c{i}, expected_output: {json.dumps(truth)}}}\n" for i, truth in enumerate(truths, start)
    )


def test_non_numeric_expected_values_for_numeric_tolerance_one_warning_naming_the_cases(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: total, match: numeric_tolerance, tolerance: 1}\n"
        + cases({"total": 5}, {"total": "n/a"}, {"total": 7}, *[{"total": "?"}] * 6, {"total": True})
    )
    assert warnings_of() == [
        "dataset.yaml:5: execution.evaluators[0].fields[0]: field 'total': the expected value cannot be scored in "
        "cases c2, c4, c5, c6, c7 (and 3 more): expected value is not numeric: string 'n/a' (case 'c2'); "
        'those cases will be "could not score" (an evaluator error)'
    ]


def test_the_warning_predicts_the_evaluator_error(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: due, match: date, formats: [DD-MMM-YYYY]}\n" + cases({"due": "15-Foo-2025"})
    )
    assert warnings_of() == [
        "dataset.yaml:5: execution.evaluators[0].fields[0]: field 'due': the expected value cannot be scored in "
        "case c1: unparseable expected date: '15-Foo-2025'; that case will be \"could not score\" (an evaluator error)"
    ]
    loaded = load_dataset("dataset.yaml")
    prepared = loaded.cases[0]
    context = EvalContext("c1", "dataset", ws.root, '{"due": "15-Jan-2025"}', prepared.expected)
    result = run_evaluator(prepared.evaluators[0], context)
    assert result.status == "error"
    assert result.reasoning == "case 'c1', field 'due': cannot score: unparseable expected date: '15-Foo-2025'"


def test_valid_dates_in_the_field_formats_give_no_warning(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: due, match: date, formats: [DD-MMM-YYYY]}\n"
        + cases({"due": "15-Jan-2025"}, {"due": "2025-01-15"}, {"due": None})
    )
    assert warnings_of() == []


def test_a_non_string_for_fuzzy_is_unscorable_too(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: name, match: fuzzy}\n" + cases({"name": "Acme"}, {"name": 12})
    )
    assert warnings_of() == [
        "dataset.yaml:5: execution.evaluators[0].fields[0]: field 'name': the expected value cannot be scored in "
        'case c2: fuzzy match needs strings, expected value is number; the field will be "could not score" in '
        "that case, and fail it"
    ]


def test_invalid_expected_boxes_alone_and_inside_a_list(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: iou_score, path: boxes, threshold: 0.5}\n"
        + cases({"boxes": [0, 0, 10, 10]}, {"boxes": [10, 0, 0, 10]}, {"boxes": [[0, 0, 5, 5], [0, 0, 1]]})
    )
    assert warnings_of() == [
        "dataset.yaml:3: execution.evaluators[0]: field 'boxes': the expected value cannot be scored in cases c2, c3: "
        "invalid expected box: x2 < x1 in [10, 0, 0, 10] (case 'c2'); those cases will be \"could not score\" "
        "(an evaluator error)"
    ]


def test_invalid_expected_points_and_whole_answer_geometry(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: coordinate_distance, threshold: 5}\n"
        + cases([[1, 2], [3, 4]], [[1, 2], ["x", 4]])
    )
    assert warnings_of() == [
        "dataset.yaml:3: execution.evaluators[0]: field 'expected_output': the expected value cannot be scored in "
        "case c2: invalid expected point [1]: point ['x', 4] has a non-numeric or non-finite coordinate; "
        'that case will be "could not score" (an evaluator error)'
    ]


def test_a_path_in_no_case_is_a_typo_warning(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: total}\n        - {path: totl}\n        - {path: 'items[3].name', required: false}\n"
        + cases({"total": 1, "items": [{"name": "a"}]}, {"total": 2, "items": []})
    )
    assert warnings_of() == [
        "dataset.yaml:6: execution.evaluators[0].fields[1].path: field 'totl' is in no case's ground truth "
        '(a typo in the path?); it will be "not scored" in all 2 cases that use it',
        "dataset.yaml:7: execution.evaluators[0].fields[2].path: field 'items[3].name' is in no case's ground truth "
        '(a typo in the path?); it will be "not scored" in all 2 cases that use it',
    ]


def test_a_path_in_some_case_is_fine_and_a_malformed_path_warns_once(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: note, required: false}\n        - {path: 'a..b'}\n"
        + cases({"total": 1}, {"total": 2, "note": "x"})
    )
    assert warnings_of() == [
        "dataset.yaml:6: execution.evaluators[0].fields[1].path: malformed path 'a..b': segment '' is not a key "
        "optionally followed by [index] or [*] ('$' alone is the whole answer); the field will always be missing"
    ]


def test_a_typo_in_a_geometry_expected_path(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: iou_score, path: boxes, expected_path: boxs}\n"
        + cases({"boxes": [0, 0, 1, 1]})
    )
    assert warnings_of() == [
        "dataset.yaml:3: execution.evaluators[0].expected_path: field 'boxs' is in no case's ground truth "
        '(a typo in the path?); it will be "not scored" in the one case that uses it'
    ]


def test_the_same_field_in_every_case_own_evaluators_is_one_warning(ws):
    own = "evaluators: [{type: field_accuracy, fields: [{path: n, match: numeric_tolerance, tolerance: 0}]}]"
    ws.dataset(
        "evalcases:\n" + "".join(f"  - {{id: c{i}, {own}, expected_output: {{n: 'x{i}'}}}}\n" for i in range(1, 4))
    )
    assert warnings_of() == [
        "dataset.yaml:2: evalcases[0].evaluators[0].fields[0]: field 'n': the expected value cannot be scored in "
        "cases c1, c2, c3: expected value is not numeric: string 'x1' (case 'c1'); "
        'those cases will be "could not score" (an evaluator error)'
    ]


def test_cases_without_structured_ground_truth_do_not_make_typo_warnings(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: a}]}\n"
        "evalcases:\n  - id: c1\n    expected_output: plain text\n  - id: c2\n    expected_output: more text\n"
    )
    assert warnings_of() == []


def test_validate_prints_the_warnings_and_still_passes(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: totl}]}\n" + cases({"total": 1})
    )
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 0
    assert result.stdout == "ok: dataset.yaml (1 case)\n"
    assert result.stderr.splitlines() == [
        "warning: dataset.yaml:3: execution.evaluators[0].fields[0].path: field 'totl' is in no case's ground "
        'truth (a typo in the path?); it will be "not scored" in the one case that uses it',
        "note: dataset.yaml: target not checked: no targets file found",
    ]


def test_the_eval_prints_the_same_warnings_before_it_runs(ws):
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: total, match: numeric_tolerance, tolerance: 1}\n" + cases({"total": "lots"})
    )
    result = invoke("eval", "dataset.yaml", "--dry-run", "--out", "o.jsonl")
    assert result.exit_code == 4  # the case's evaluator could not score
    assert result.stderr.splitlines()[:2] == [
        "warning: dataset.yaml:5: execution.evaluators[0].fields[0]: field 'total': the expected value cannot be "
        "scored in case c1: expected value is not numeric: string 'lots'; that case will be \"could not score\" "
        "(an evaluator error)",
        "agentv: 1 case of 'dataset' against target 'dry-run' (dry run, no targets file read) (4 workers)",
    ]
    # ... and the summary repeats them at the end, where a long run's reader looks.
    tail = result.stdout.splitlines()[-2:]
    assert tail[0] == "1 warning about the dataset:"
    assert tail[1].startswith("  warning: dataset.yaml:5: execution.evaluators[0].fields[0]: field 'total'")


def test_ten_thousand_cases_are_checked_in_one_pass(ws):
    spec = "{path: total, match: numeric_tolerance, tolerance: 1}, {path: due, match: date}, {path: name}"
    truths = [{"total": i, "due": "2025-01-15", "name": f"n{i}"} for i in range(10_000)]
    truths[9_999] = {"total": "none", "due": "2025-01-15", "name": "n"}
    ws.dataset(f"execution:\n  evaluators:\n    - {{type: field_accuracy, fields: [{spec}]}}\n" + cases(*truths))
    assert warnings_of() == [
        "dataset.yaml:3: execution.evaluators[0].fields[0]: field 'total': the expected value cannot be scored in "
        "case c10000: expected value is not numeric: string 'none'; that case will be \"could not score\" "
        "(an evaluator error)"
    ]


def test_unusable_ground_truth_of_an_items_field(ws):
    """The list itself, and each expected item's sub-fields, warned about as the evaluator will fail."""
    ws.dataset(
        "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - path: line_items\n          match: items\n          key: [description]\n"
        "          fields: [{path: quantity, match: numeric_tolerance, tolerance: 0}, {path: description}]\n"
        + cases(
            {"line_items": [{"description": "a", "quantity": 1}, {"description": "b", "quantity": None}]},
            {"line_items": [{"description": "a", "quantity": 1}, {"description": "b", "quantity": "two"}]},
            {"line_items": "none"},
            {"line_items": [{"description": "a"}, 7]},
            {"line_items": None},
        )
    )
    assert warnings_of() == [
        "dataset.yaml:5: execution.evaluators[0].fields[0]: field 'line_items': the expected value cannot be scored "
        "in cases c2, c3, c4: line_items[1].quantity: expected value is not numeric: string 'two' (case 'c2'); "
        'those cases will be "could not score" (an evaluator error)'
    ]
    loaded = load_dataset("dataset.yaml")
    for index, reason in [
        (1, "field 'line_items[1].quantity': cannot score: expected value is not numeric: string 'two'"),
        (3, "field 'line_items': cannot score: expected item 1 is number, not an object"),
    ]:
        prepared = loaded.cases[index]
        context = EvalContext(prepared.case.id, "dataset", ws.root, '{"line_items": []}', prepared.expected)
        result = run_evaluator(prepared.evaluators[0], context)
        assert result.status == "error", result
        assert result.reasoning == f"case '{prepared.case.id}', {reason}"
