"""A case's `extend_evaluators:` merged into the suite's list by name (issue 27, point 4)."""

from __future__ import annotations

import pytest

from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset

SUITE = """\
execution:
  date_order: dmy
  evaluators:
    - name: fields
      type: field_accuracy
      fields:
        - {path: total, match: numeric_tolerance, tolerance: 0.01}
        - {path: vendor, match: fuzzy}
        - {path: date, match: date}
    - {name: judge, type: code_judge, script: [python3, j.py]}
evalcases:
  - id: plain
    expected_output: {total: 10, vendor: Acme, date: 03/04/2024}
  - id: changed
    expected_output: {total: 10, vendor: Acme, date: 03/04/2024, po: P1}
    extend_evaluators:
"""


def evaluators(ws, entries: str) -> list[list[tuple[str, str, list[str]]]]:
    ws.file("j.py", "print('{\"score\": 1}')\n")
    ws.dataset(SUITE + entries)
    loaded = load_dataset("dataset.yaml")
    return [
        [(e.display_name, e.type, [f.path for f in getattr(e, "fields", [])]) for e in case.evaluators]
        for case in loaded.cases
    ]


SUITE_LIST = [("fields", "field_accuracy", ["total", "vendor", "date"]), ("judge", "code_judge", [])]

# (id, entries, the changed case's evaluators)
MERGES = [
    (
        "field-replaced-in-place-and-added",
        "      - {name: fields, fields: [{path: total, match: numeric_tolerance, tolerance: 1}, {path: po}]}\n",
        [("fields", "field_accuracy", ["total", "vendor", "date", "po"]), SUITE_LIST[1]],
    ),
    (
        "field-removed",
        "      - {name: fields, remove_fields: [date, vendor]}\n",
        [("fields", "field_accuracy", ["total"]), SUITE_LIST[1]],
    ),
    (
        "evaluator-added",
        "      - {name: second, type: field_accuracy, fields: [{path: po}]}\n",
        [*SUITE_LIST, ("second", "field_accuracy", ["po"])],
    ),
    (
        "evaluator-replaced-whole",
        "      - {name: judge, type: field_accuracy, fields: [{path: po}]}\n",
        [SUITE_LIST[0], ("judge", "field_accuracy", ["po"])],
    ),
    (
        "option-changed",
        "      - {name: judge, weight: 3}\n",
        SUITE_LIST,
    ),
]


@pytest.mark.parametrize("entries, merged", [c[1:] for c in MERGES], ids=[c[0] for c in MERGES])
def test_a_case_extends_the_suite(ws, entries, merged):
    plain, changed = evaluators(ws, entries)
    assert plain == SUITE_LIST  # the suite itself is untouched
    assert changed == merged


def test_changed_options_and_fields_keep_the_rest_of_the_suites_evaluator(ws):
    ws.file("j.py", "print('{\"score\": 1}')\n")
    ws.dataset(
        SUITE
        + "      - {name: judge, weight: 3}\n"
        + "      - name: fields\n        aggregation: all_or_nothing\n"
        + "        fields: [{path: vendor, match: fuzzy, threshold: 0.5}]\n"
    )
    changed = load_dataset("dataset.yaml").cases[1].evaluators
    fields, judge = changed
    assert judge.weight == 3 and judge.script == ["python3", "j.py"]
    assert fields.aggregation == "all_or_nothing"
    assert [(f.path, f.match, f.threshold) for f in fields.fields][1] == ("vendor", "fuzzy", 0.5)
    assert fields.fields[2].date_order == "dmy"  # the dataset's date order reaches merged fields too


def test_the_merged_list_is_scored(ws):
    from tests.cli.test_eval import invoke

    ws.file("j.py", "print('{\"score\": 1}')\n")
    ws.dataset(SUITE + "      - {name: fields, remove_fields: [date]}\n")
    result = invoke("eval", "dataset.yaml", "--dry-run", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    rows = [__import__("json").loads(line) for line in (ws.root / "o.jsonl").read_text().splitlines()]
    paths = {r["eval_id"]: [f["path"] for f in r["evaluator_results"][0]["details"]["fields"]] for r in rows}
    assert paths == {"plain": ["total", "vendor", "date"], "changed": ["total", "vendor"]}


# (id, entries, problems)
BAD = [
    (
        "unknown-name",
        "      - {name: nope, weight: 2}\n",
        [
            "dataset.yaml:17: evalcases[1].extend_evaluators[0].name: names no evaluator of the suite "
            "(fields, judge); give 'type' to add an evaluator"
        ],
    ),
    (
        "no-name-no-type",
        "      - {weight: 2}\n",
        [
            "dataset.yaml:16: evalcases[1].extend_evaluators: an entry without 'type' changes a suite evaluator "
            "and needs its 'name' (give 'type' to add an evaluator)"
        ],
    ),
    (
        "remove-a-field-it-lacks",
        "      - {name: fields, remove_fields: [po]}\n",
        ["dataset.yaml:17: evalcases[1].extend_evaluators[0].remove_fields[0]: 'po' is not a field of 'fields'"],
    ),
    (
        "fields-on-a-judge",
        "      - {name: judge, fields: [{path: po}]}\n",
        [
            "dataset.yaml:17: evalcases[1].extend_evaluators[0]: 'fields' and 'remove_fields' change a "
            "field_accuracy evaluator, not code_judge"
        ],
    ),
    (
        "bad-field",
        "      - {name: fields, fields: [{path: po, match: fuzy}]}\n",
        [
            "dataset.yaml:17: evalcases[1].extend_evaluators[0].fields[0].match: Invalid match type: fuzy. "
            "Valid types: exact, fuzzy, numeric_tolerance, date, items, set, any, count, anls, cer, wer, table"
        ],
    ),
    (
        "bad-option",
        "      - {name: fields, weight: -1}\n",
        ["dataset.yaml:17: evalcases[1].extend_evaluators[0].weight: weight must be a number >= 0, got -1.0"],
    ),
    (
        "unknown-option",
        "      - {name: fields, bogus: 1}\n",
        [
            "dataset.yaml:17: evalcases[1].extend_evaluators[0].bogus: unknown key 'bogus'. "
            "Valid keys: name, weight, pass_threshold, negate, id, type, fields, aggregation, extra_fields, "
            "confidence"
        ],
    ),
]


@pytest.mark.parametrize("entries, problems", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_entries_are_load_errors(ws, entries, problems):
    ws.file("j.py", "print('{\"score\": 1}')\n")
    ws.dataset(SUITE + entries)
    with pytest.raises(ConfigError) as raised:
        load_dataset("dataset.yaml")
    assert [str(p) for p in raised.value.problems] == problems


def test_evaluators_and_extend_evaluators_together_are_refused(ws):
    ws.dataset(
        SUITE + "      - {name: judge, weight: 3}\n    evaluators: [{type: field_accuracy, fields: [{path: po}]}]\n"
    )
    with pytest.raises(ConfigError) as raised:
        load_dataset("dataset.yaml")
    assert [str(p) for p in raised.value.problems] == [
        "dataset.yaml:16: evalcases[1].extend_evaluators: give either 'evaluators' (replaces the suite's list) or "
        "'extend_evaluators' (adds to it and changes its evaluators by name), not both"
    ]


TWO_ON_ROOT = """\
execution:
  evaluators:
    - name: invoices
      type: field_accuracy
      fields:
        - {path: $, match: count, critical: true}
        - {path: $, match: items, key: [number], fields: [{path: total}]}
evalcases:
  - id: c1
    expected_output: [{number: 1, total: 2}]
    extend_evaluators:
"""


def test_of_several_fields_on_one_path_the_one_with_the_same_match_is_replaced(ws):
    ws.dataset(
        TWO_ON_ROOT
        + "      - {name: invoices, fields: [{path: $, match: items, key: [number], fields: [{path: number}]}]}\n"
    )
    fields = load_dataset("dataset.yaml").cases[0].evaluators[0].fields
    assert [(f.path, f.match, f.critical) for f in fields] == [("$", "count", True), ("$", "items", False)]
    assert [sub.path for sub in fields[1].fields or []] == ["number"]


@pytest.mark.parametrize(
    "entry, problem",
    [
        (
            "{name: invoices, fields: [{path: $, match: set}]}",
            "dataset.yaml:12: evalcases[0].extend_evaluators[0].fields[0]: 'invoices' has several fields with path "
            "'$' (count, items): a field replaces the one with its path and match; give the match of the one to "
            "replace",
        ),
        (
            "{name: invoices, remove_fields: [$]}",
            "dataset.yaml:12: evalcases[0].extend_evaluators[0].remove_fields: this removes every field of 'invoices'",
        ),
    ],
    ids=["ambiguous", "nothing-left"],
)
def test_several_fields_on_one_path_refuse_what_is_ambiguous(ws, entry, problem):
    ws.dataset(TWO_ON_ROOT + f"      - {entry}\n")
    with pytest.raises(ConfigError) as raised:
        load_dataset("dataset.yaml")
    assert [str(p) for p in raised.value.problems] == [problem]
