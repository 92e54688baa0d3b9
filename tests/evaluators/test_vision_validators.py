"""The four vision code validators (evals/vision/validators), run as real code judges, with the
seed's numbers; and the vision example end to end (validators offline, judges on a local server)."""

from __future__ import annotations

import json
import re

import pytest

from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.models.evaluators import CodeJudgeConfig
from tests.chat_server import text
from tests.cli.test_eval import invoke
from tests.conftest import REPO_ROOT

VALIDATORS = REPO_ROOT / "evals" / "vision" / "validators"


def validate(name: str, answer: str, expected, runner: str = "python3", **config):
    script = [runner, "run", "--quiet", str(VALIDATORS / name)] if runner == "uv" else [runner, str(VALIDATORS / name)]
    cfg = CodeJudgeConfig.model_validate({"type": "code_judge", "name": name, "script": script, **config})
    return run_evaluator(cfg, EvalContext("c1", "d", VALIDATORS, answer, expected))


@pytest.mark.parametrize(
    "answer, expected, score",
    [
        ("5 bottles, 8 cans", "5 bottles, 3 cans", 0.5),
        ("There are five bottles and 3 cans.", "5 bottles, 3 cans", 1.0),
        ("3 cans and 5 bottles", "5 bottles, 3 cans", 1.0),
        ("3 bottles, 5 cans", "5 bottles, 3 cans", 0.0),
        ("I see 4 boxes", "4 boxes", 1.0),
        ("Seven", "7", 1.0),
    ],
    ids=["seed", "number-words", "order-free", "swapped", "plural-es", "bare-number"],
)
def test_count_validator(answer, expected, score):
    result = validate("count_validator.py", answer, expected)
    assert result.status == "processed", result.misses
    assert result.score == score and result.passed is (score == 1.0)


def test_count_validator_details_and_misses():
    result = validate("count_validator.py", "5 bottles, 8 cans", "5 bottles, 3 cans")
    assert result.hits == ["5 bottles: found"] and result.misses == ["3 cans: answer has 8"]
    assert result.details["counts"][1] == {"label": "can", "expected": 3, "found": 8, "match": False}


def test_count_validator_skips_without_expected_counts():
    assert validate("count_validator.py", "5", "no numbers here").status == "skipped"


@pytest.mark.parametrize(
    "answer, low, high",
    [
        ("Project Proposal Q1 2026", 1.0, 1.0),
        ("PROJECT  PROPOSAL q1 2026", 1.0, 1.0),
        ("Project Propsal Q1 2026", 0.7, 0.9),
        ("Quarterly report", 0.0, 0.4),
    ],
    ids=["exact", "case-and-space", "one-typo", "wrong"],
)
def test_ocr_validator(answer, low, high):
    result = validate("ocr_validator.py", answer, "Project Proposal Q1 2026")
    assert low <= result.score <= high, result
    assert result.passed is (result.score >= 0.9)


def test_ocr_exact_transcription_scores_above_0_9():
    result = validate("ocr_validator.py", "Project Proposal Q1 2026", "Project Proposal Q1 2026")
    assert result.score > 0.9 and result.details["keywords_missing"] == []


def test_ocr_configured_keywords():
    result = validate("ocr_validator.py", "Proposal for Q1", "Project Proposal Q1 2026", keywords=["Proposal", "2026"])
    assert result.details["keywords_found"] == ["Proposal"] and result.details["keywords_missing"] == ["2026"]
    assert result.misses == ["keyword '2026' missing"]


def schema_error(where: str) -> str:
    """A pattern for one of the validator's `errors`: its location ("total: "), then jsonschema's
    own sentence, which may be any non-empty text (its wording is not agentv's)."""
    return re.escape(f"{where}: ") + ".+"


EXPECTED_FORM = {"invoice_number": "1042", "date": "2026-03-15", "items": [{"name": "a", "price": 2}], "total": 1250.0}


def test_json_structure_missing_keys_and_types():
    answer = json.dumps({"invoice_number": "1042", "items": [{"name": "a"}], "total": "1250"})
    result = validate("json_structure_validator.py", answer, EXPECTED_FORM)
    assert result.details["missing_keys"] == ["date", "items[0].price"]
    [error] = result.details["errors"]
    assert re.fullmatch(schema_error("total"), error), result.details["errors"]
    assert result.score == pytest.approx(1 - 3 / 6) and result.passed is False


def test_json_structure_perfect_and_not_json():
    perfect = validate("json_structure_validator.py", json.dumps({**EXPECTED_FORM, "total": 1250}), EXPECTED_FORM)
    assert (perfect.score, perfect.passed, perfect.details["missing_keys"]) == (1.0, True, [])
    broken = validate("json_structure_validator.py", "total: 1250", EXPECTED_FORM)
    assert (broken.score, broken.misses, broken.details["valid_json"]) == (0.0, ["the answer is not valid JSON"], False)


def test_json_structure_with_a_given_schema():
    schema = {
        "type": "object",
        "required": ["id", "tags"],
        "properties": {"id": {"type": "integer"}, "tags": {"type": "array"}},
    }
    result = validate("json_structure_validator.py", '{"id": "x"}', None, schema=schema)
    assert result.details["schema_source"] == "config"
    assert result.details["missing_keys"] == ["tags"]
    [error] = result.details["errors"]
    assert re.fullmatch(schema_error("id"), error), result.details["errors"]


EXPECTED_CHART = "Q1 $1.2M, Q2 $1.1M, Q3 $1.5M, Q4 $1.8M; Q4 up 20%"


@pytest.mark.parametrize(
    "answer, score",
    [
        ("Q1 $1.2M, Q2 $1.1M, Q3 $1.5M, Q4 $1.8M; Q4 up 20%", 1.0),
        ("Q1 $1,200,000, Q2 $1.05M, Q3 1.6 million, Q4 $1.9M, growth 20%", 1.0),
        ("Q1 $1.2M, Q2 $1.1M, Q3 $1.5M, Q4 $2.2M; Q4 up 20%", 8 / 9),
        ("Q1 $1.2M, Q2 $1.1M, Q3 $1.5M, Q4 $1.8M; Q4 up 21%", 8 / 9),
        ("Q1 $1.2M, Q2 $1.1M, Q3 $1.5M; Q4 up 20%", 8 / 9),
        ("Q1 $1.2M, Q2 $1.1M, Q3 $1.5M; up 20%", 7 / 9),
        ("Revenue $1.2K", 0.0),
    ],
    ids=["exact", "within-15%", "currency-off", "percent-not-exact", "value-missing", "quarter-missing", "wrong-scale"],
)
def test_chart_data_validator(answer, score):
    result = validate("chart_data_validator.py", answer, EXPECTED_CHART)
    assert result.score == pytest.approx(score), result.misses


def test_chart_data_tolerance_is_relative_and_configurable():
    tight = validate("chart_data_validator.py", "$1.3M", "$1.2M", tolerance=0.05)
    loose = validate("chart_data_validator.py", "$1.3M", "$1.2M")
    assert (tight.score, loose.score) == (0.0, 1.0)
    assert loose.details["currency"] == [
        {"expected": 1200000.0, "found": 1300000.0, "relative_error": 0.0833, "match": True}
    ]


@pytest.mark.parametrize(
    "name, answer, expected",
    [
        ("count_validator.py", "5 bottles, 8 cans", "5 bottles, 3 cans"),
        ("ocr_validator.py", "Project Proposal Q1 2026", "Project Proposal Q1 2026"),
        ("chart_data_validator.py", "$1.2M", "$1.2M"),
    ],
    ids=["count", "ocr", "chart"],
)
def test_validators_run_under_uv_offline(name, answer, expected, monkeypatch):
    monkeypatch.setenv("UV_OFFLINE", "1")  # their PEP 723 headers need nothing from an index
    via_uv = validate(name, answer, expected, runner="uv")
    assert via_uv.status == "processed", via_uv.misses
    assert via_uv.model_dump() == validate(name, answer, expected).model_dump()


def test_exit_code_convention():
    passed = validate("ocr_validator.py", "Project Proposal Q1 2026", "Project Proposal Q1 2026")
    failed = validate("count_validator.py", "5 bottles, 8 cans", "5 bottles, 3 cans")
    assert (passed.passed, failed.passed) == (True, False)  # exit 0 and exit 1 with a valid result


def test_vision_validators_example(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    result = invoke("eval", "evals/vision/validators.yaml", "--out", "-")
    assert result.exit_code == 1  # the shelf count and the form are wrong on purpose
    by_id = {json.loads(line)["eval_id"]: json.loads(line) for line in result.stdout.splitlines()}
    assert {k: round(v["score"], 3) for k, v in by_id.items()} == {
        "shelf-count": 0.5,
        "sign-ocr": 1.0,
        "form-json": 0.75,
        "chart-data": 1.0,
    }
    assert by_id["form-json"]["evaluator_results"][0]["details"]["missing_keys"] == ["date"]


def test_vision_judges_example_against_a_local_server(ws, chat_server, monkeypatch):
    """The example's seven judge cases, with openai_judge pointed at the scripted server: every
    template renders, every case's images reach the judge, and the dimension scores combine."""
    monkeypatch.chdir(REPO_ROOT)
    example = (REPO_ROOT / "evals" / "vision" / ".agentv" / "targets.yaml").read_text()
    targets = ws.file(
        "targets.yaml",
        example.replace(
            "    api_key: ${{ OPENAI_API_KEY }}\n",
            f"    api_key: sk-local-test-key\n    base_url: {chat_server.base_url}\n",
        ),
    )

    def answer(request_body):
        system = request_body["messages"][0]["content"]
        schema = json.loads(system.split("JSON Schema:\n", 1)[1])
        if "checks" in schema["properties"]:
            ids = schema["properties"]["checks"]["items"]["properties"]["id"]["enum"]
            return {"checks": [{"id": i, "satisfied": i != "plant", "reasoning": "seen"} for i in ids]}
        names = schema["properties"]["dimensions"]["required"]
        return {"dimensions": dict.fromkeys(names, 1.0), "details": {"hallucinations": []}}

    chat_server.responder = lambda body: text(json.dumps(answer(body)))
    result = invoke("eval", "evals/vision/judges.yaml", "--targets", str(targets), "--out", "-")
    assert result.exit_code == 1, result.output  # the rubric's required 'plant' is not met
    by_id = {json.loads(line)["eval_id"]: json.loads(line) for line in result.stdout.splitlines()}
    assert len(by_id) == 7
    assert by_id["office-rubric"]["verdict"] == "fail" and by_id["office-rubric"]["score"] == pytest.approx(3 / 4)
    for case_id in ("office-description", "activity", "scene-comparison", "pattern-reasoning", "landscape-quality"):
        assert by_id[case_id]["score"] == 1.0, by_id[case_id]["misses"]
    images_per_request = sorted(
        sum(1 for part in r.body["messages"][1]["content"] if part.get("type") == "image_url")
        for r in chat_server.requests
    )
    assert images_per_request == [1, 1, 1, 1, 1, 1, 2]
    assert all("{{" not in r.body["messages"][1]["content"][0]["text"] for r in chat_server.requests)
