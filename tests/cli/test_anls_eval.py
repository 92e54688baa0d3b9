"""`match: anls` in field_accuracy (docs/metrics.md): DocVQA's ANLS per field, its cut-off
settable, a list of accepted answers, and what cannot be scored said as such."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_eval import fields_of, invoke, rows


@pytest.fixture
def answered(ws):
    ws.cli_target("cat {FILES}")
    return ws


def test_anls_scores_each_field_by_its_similarity_above_the_cut_off(answered):
    answered.cases_dataset(
        [("c1", {"a": "Acme Lt", "b": "Beta Co"}, {"a": "Acme Ltd", "b": "Acme Ltd"})],
        fields="[{path: a, match: anls}, {path: b, match: anls}]",
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    fields = fields_of(rows("out.jsonl")[0])
    assert fields["a"]["status"] == "hit" and fields["a"]["score"] == pytest.approx(7 / 8)
    assert fields["a"]["similarity"] == pytest.approx(0.875) and fields["a"]["threshold"] == 0.5
    assert fields["b"]["status"] == "miss" and fields["b"]["score"] == 0.0
    assert "ANLS similarity below 0.50" in json.dumps(fields["b"])
    assert result.exit_code == 1


def test_accepted_answers_and_a_stricter_cut_off(answered):
    answered.cases_dataset(
        [("c1", {"a": "Acme Limted", "b": "abxy"}, {"a": ["Acme Ltd", "Acme Limited"], "b": "abcd"})],
        fields="[{path: a, match: anls}, {path: b, match: anls, threshold: 0.6}]",
    )
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    fields = fields_of(rows("out.jsonl")[0])
    assert fields["a"]["score"] == pytest.approx(1 - 1 / 12)  # the best of the accepted answers
    assert fields["b"]["status"] == "miss"  # similarity 0.5 < 0.6


def test_a_ground_truth_anls_cannot_read_is_could_not_score(answered):
    answered.cases_dataset(
        [("c1", {"a": "x", "b": "y"}, {"a": {"nested": 1}, "b": "y"})],
        fields="[{path: a, match: anls}, {path: b, match: anls}]",
    )
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    fields = fields_of(rows("out.jsonl")[0])
    assert fields["a"]["status"] == "could not score"
    assert "anls match needs a text or a list of texts, expected value is object" in json.dumps(fields["a"])
    assert fields["b"]["status"] == "hit"


def test_a_fuzzy_only_option_on_anls_is_a_config_error(answered):
    answered.cases_dataset([("c1", {"a": "x"}, {"a": "x"})], fields="[{path: a, match: anls, algorithm: jaro_winkler}]")
    result = invoke("validate", "dataset.yaml")
    assert result.exit_code == 2
    assert (
        "dataset.yaml:4: execution.evaluators[0].fields[0]: option 'algorithm' does not apply to match 'anls' "
        "(options for 'anls': threshold)"
    ) in result.stderr


def test_the_anls_star_evaluator_counts_invented_and_missing_keys(answered):
    answered.dataset(
        """
        execution:
          target: t
          evaluators:
            - {type: anls_star, name: whole}
            - {type: anls_star, name: items, path: items}
        evalcases:
          - id: c1
            input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]
            expected_messages:
              - role: assistant
                content: {vendor: Acme Ltd, total: "12.50", items: [tea, coffee]}
        """
    )
    answered.file("fx/c1.json", json.dumps({"vendor": "Acme Lt", "total": "12.50", "items": ["coffee"], "tax": "2"}))
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    whole, items = rows("out.jsonl")[0]["evaluator_results"]
    # leaves: vendor 7/8, total 1, items: coffee paired 1 + tea missing 0, tax invented 0: 2.875 of 5
    assert whole["score"] == pytest.approx(2.875 / 5) and whole["details"]["anls_star"] == pytest.approx(0.575)
    assert items["score"] == pytest.approx(0.5)
    assert result.exit_code == 1


def test_anls_star_with_no_expected_value_at_its_path_is_skipped(answered):
    answered.dataset(
        """
        execution:
          target: t
          evaluators:
            - {type: anls_star, path: nowhere}
        evalcases:
          - id: c1
            input_messages: [{role: user, content: [{type: file, value: fx/c1.json}]}]
            expected_messages: [{role: assistant, content: {a: x}}]
        """
    )
    answered.file("fx/c1.json", json.dumps({"a": "x"}))
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    [result] = rows("out.jsonl")[0]["evaluator_results"]
    assert result["status"] == "skipped" and result["reasoning"] == "no expected value at nowhere"


def test_cer_and_wer_fields_score_ocr_text(answered):
    answered.cases_dataset(
        [
            (
                "c1",
                {"a": "INV0ICE NO 12345", "b": "the quick brown fax"},
                {"a": "INVOICE NO 12345", "b": "the quick brown fox"},
            )
        ],
        fields="[{path: a, match: cer}, {path: b, match: wer, threshold: 0.8}]",
    )
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    fields = fields_of(rows("out.jsonl")[0])
    assert fields["a"]["status"] == "hit" and fields["a"]["score"] == pytest.approx(1 - 1 / 16)
    assert fields["a"]["similarity"] == pytest.approx(1 - 1 / 16) and fields["a"]["threshold"] == 0.9
    assert fields["b"]["status"] == "miss" and fields["b"]["similarity"] == pytest.approx(0.75)
    assert "WER 0.25: 1 - WER < 0.80" in json.dumps(fields["b"])


def test_extra_fields_penalise_counts_invented_keys_in_the_score_and_as_false_positives(answered):
    answer = {"a": 1, "b": 2, "tax": "2.00", "note": "", "c": {"x": "invented", "y": None}, "d": None}
    truth = {"a": 1, "b": 2, "c": {"y": None}, "d": None}
    answered.cases_dataset([("c1", answer, truth)], fields="[{path: a}, {path: b}]")
    invoke("eval", "dataset.yaml", "--out", "plain.jsonl")
    assert rows("plain.jsonl")[0]["score"] == 1.0  # by default, invented keys are not looked at
    text = answered.root.joinpath("dataset.yaml").read_text()
    answered.file(
        "dataset.yaml",
        text.replace("fields: [{path: a}, {path: b}]", "fields: [{path: a}, {path: b}], extra_fields: penalise"),
    )
    result = invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    row = rows("out.jsonl")[0]
    fields = fields_of(row)
    assert [p for p, f in fields.items() if f["match"] == "extra"] == ["tax", "c.x"]  # not the empty `note`
    assert row["score"] == pytest.approx(0.5) and result.exit_code == 1
    assert fields["tax"]["reason"] == "invented: the ground truth has no such field"
    metrics = json.loads(invoke("metrics", "out.jsonl", "-f", "json").stdout)
    assert metrics["fields"]["tax"]["fp"] == 1 and metrics["fields"]["c.x"]["fp"] == 1
    assert metrics["total"]["tp"] == 2 and metrics["micro"]["precision"] == pytest.approx(0.5)


def test_calibration_of_the_extractors_confidences(answered):
    answered.cases_dataset(
        [
            ("c1", {"a": 1, "_confidence": {"a": 0.95}}, {"a": 1}),
            ("c2", {"a": 1, "_confidence": {"a": 0.9}}, {"a": 1}),
            ("c3", {"a": 2, "_confidence": {"a": 0.3}}, {"a": 1}),
            ("c4", {"a": 1, "_confidence": {"a": "high"}}, {"a": 1}),  # not a number: not used, said
        ],
        fields="[{path: a}], confidence: _confidence, extra_fields: penalise",
    )
    invoke("eval", "dataset.yaml", "--out", "out.jsonl")
    by_id = {row["eval_id"]: row for row in rows("out.jsonl")}
    fourth = fields_of(by_id["c4"])["a"]
    assert "confidence" not in fourth and fourth["note"] == "confidence 'high' is not a number: not used"
    assert by_id["c1"]["score"] == 1.0  # the confidences are no invented field
    result = invoke("metrics", "out.jsonl", "--calibration", "--precision", "0.9", "-f", "json")
    calibration = json.loads(result.stdout)["calibration"]
    a = calibration["fields"]["a"]
    assert (a["observations"], a["accuracy"], a["auroc"]) == (3, pytest.approx(2 / 3), 1.0)
    assert a["coverage"] == {
        "precision": 0.9,
        "coverage": pytest.approx(2 / 3),
        "threshold": 0.9,
        "achieved_precision": 1.0,
    }
    table = invoke("metrics", "out.jsonl", "--calibration")
    assert "Calibration of the extractor's confidence" in table.stdout
    bad = invoke("metrics", "out.jsonl", "--calibration", "--precision", "1.5")
    assert bad.exit_code == 2 and bad.stderr.splitlines()[0] == "error: --precision 1.5 is not in (0, 1]"
