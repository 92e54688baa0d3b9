"""`match: table` in field_accuracy (docs/metrics.md#tables): TEDS or GriTS per field, the metric
and threshold settable, a table the ground truth cannot give said as "could not score"."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_eval import fields_of, invoke, rows

TRUTH = "<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Pen</td><td>2</td></tr></table>"


@pytest.fixture
def answered(ws):
    ws.cli_target("cat {FILES}")
    return ws


def test_a_table_field_scores_its_teds_and_a_rows_answer_reads_like_html(answered):
    answer = {"exact": [["Item", "Qty"], ["Pen", 2]], "typo": [["Item", "Qty"], ["Pan", 2]]}
    answered.cases_dataset(
        [("c1", answer, {"exact": TRUTH, "typo": TRUTH})],
        fields="[{path: exact, match: table}, {path: typo, match: table, metric: grits_con, threshold: 0.95}]",
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    fields = fields_of(rows("out.jsonl")[0])
    assert fields["exact"]["status"] == "hit" and fields["exact"]["score"] == 1.0
    assert fields["exact"]["algorithm"] == "teds" and fields["exact"]["threshold"] == 0.9
    # GriTS-Con: 3 of 4 cells equal, "Pan" vs "Pen" 2 * 2 / 6
    assert fields["typo"]["status"] == "miss" and fields["typo"]["score"] == pytest.approx((3 + 2 / 3) / 4)
    assert fields["typo"]["reason"] == "GriTS-Con 0.917 < 0.95"
    assert result.exit_code == 0  # the case's score (0.96) is above its threshold: a miss alone does not fail it


def test_a_ground_truth_that_is_not_a_table_cannot_be_scored(answered):
    answered.cases_dataset(
        [("c1", {"t": [["a"]], "u": "x"}, {"t": [{"row": 0, "col": 0, "colspan": 2}, {"row": 0, "col": 1}], "u": "x"})],
        fields="[{path: t, match: table}, {path: u}]",
    )
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    fields = fields_of(rows("out.jsonl")[0])
    assert fields["t"]["status"] == "could not score"
    assert "expected value is not a table: cell 2 overlaps cell 1 at row 1, column 2" in json.dumps(fields["t"])
    assert fields["u"]["status"] == "hit"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "{path: t, match: table, metric: tedz}",
            "fields[0].metric: Invalid metric: tedz. Valid metrics: teds, teds_struct, grits_top, grits_con, grits_loc",
        ),
        ("{path: t, match: fuzzy, metric: teds}", "option 'metric' does not apply to match 'fuzzy'"),
        (
            "{path: t, match: table, case_sensitive: true}",
            "option 'case_sensitive' does not apply to match 'table' (options for 'table': metric, threshold)",
        ),
    ],
    ids=["unknown-metric", "metric-on-fuzzy", "foreign-option"],
)
def test_table_options_are_checked_when_the_dataset_loads(answered, spec, message):
    answered.cases_dataset([("c1", {"t": TRUTH}, {"t": TRUTH})], fields=f"[{spec}]")
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert message in result.stderr
