"""Dates are never silently misread: a date whose day and month could be swapped is a warning at
load (ground truth) and a note at scoring unless the field says `date_order` (or `formats`);
`date_order: dmy | mdy | ymd` settles it; the taxonomy goes by the field's own reading."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.evaluators.field_accuracy import score_fields
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.taxonomy import classify_entry


def config(**options: object) -> FieldAccuracyConfig:
    return FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "fields": [{"path": "d", "match": "date", **options}]}
    )


@pytest.mark.parametrize(
    "options, answer, status",
    [
        ({"date_order": "dmy"}, "2014-08-03", "hit"),
        ({"date_order": "dmy"}, "03.08.2014", "hit"),
        ({"date_order": "dmy"}, "2014-03-08", "miss"),
        ({"date_order": "mdy"}, "2014-03-08", "hit"),
        ({}, "2014-03-08", "hit"),  # unsettled: month first, with a note
        ({"formats": ["DD/MM/YYYY"]}, "2014-08-03", "hit"),
    ],
    ids=["dmy-iso", "dmy-dotted", "dmy-other-day", "mdy", "unsettled", "formats"],
)
def test_date_order_settles_a_day_month_date(options, answer, status):
    (field,) = score_fields(config(**options), {"d": answer}, {"d": "03/08/2014"})["fields"]
    assert field.status == status
    if options:
        assert field.note is None
    else:
        assert field.note == (
            "ambiguous date '03/08/2014': read as 2014-03-08 (MM/DD/YYYY), could be 2014-08-03 (DD/MM/YYYY); "
            "set date_order: dmy or mdy on the field"
        )


def test_the_taxonomy_goes_by_the_fields_own_reading():
    """Expected 03/08/2014 read day first; the answer 2014-03-08 is another day, not the same date
    written differently (the default formats would have called it format only)."""
    (field,) = score_fields(config(date_order="dmy"), {"d": "2014-03-08"}, {"d": "03/08/2014"})["fields"]
    assert field.status == "miss" and classify_entry(field) == {"wrong_value": 1}


def test_an_unambiguous_date_has_no_note():
    (field,) = score_fields(config(), {"d": "12/25/2014"}, {"d": "2014-12-25"})["fields"]
    assert field.status == "hit" and field.note is None


DATASET = (
    "execution:\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
    "        - {{path: d, match: date{options}}}\n"
    "evalcases:\n"
    "  - {{id: c1, expected_output: {{d: 03/08/2014}}}}\n"
    "  - {{id: c2, expected_output: {{d: 04/09/2014}}}}\n"
    "  - {{id: c3, expected_output: {{d: 25/12/2014}}}}\n"
)


def validate(ws, options: str = ""):
    ws.dataset(DATASET.format(options=options))
    return CliRunner().invoke(app, ["validate", "dataset.yaml"])


def test_ambiguous_expected_dates_are_one_warning_at_the_field(ws):
    result = validate(ws)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        "warning: dataset.yaml:5: execution.evaluators[0].fields[0]: ambiguous date '03/08/2014': read as "
        "2014-03-08 (MM/DD/YYYY), could be 2014-08-03 (DD/MM/YYYY); set date_order: dmy or mdy on the field "
        "(and 1 more expected dates like it)"
    )


@pytest.mark.parametrize("options", [", date_order: dmy", ", formats: [DD/MM/YYYY]"], ids=["order", "formats"])
def test_a_settled_field_has_no_warning(ws, options):
    result = validate(ws, options)
    assert result.exit_code == 0, result.output
    assert not any("ambiguous" in line for line in result.stderr.splitlines())


def test_an_unknown_date_order_is_a_load_error_at_its_line(ws):
    result = validate(ws, ", date_order: xyz")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        "dataset.yaml:5: execution.evaluators[0].fields[0].date_order: invalid value \"xyz\": expected 'dmy', "
        "'mdy' or 'ymd'"
    )


def test_date_order_on_a_field_that_is_no_date_is_a_load_error(ws):
    ws.dataset(DATASET.replace("match: date{options}", "match: exact, date_order: dmy").format())
    result = CliRunner().invoke(app, ["validate", "dataset.yaml"])
    assert result.exit_code == 2
    assert "date_order" in result.stderr.splitlines()[0]


def test_a_dataset_level_date_order_reaches_every_date_field_without_its_own(ws):
    from agentv_py.loading import load_dataset

    ws.dataset(
        "execution:\n  date_order: dmy\n  evaluators:\n    - type: field_accuracy\n      fields:\n"
        "        - {path: d, match: date}\n        - {path: e, match: date, date_order: mdy}\n"
        "        - {path: f, match: date, formats: [YYYY.MM.DD]}\n"
        "        - {path: lines, match: items, fields: [{path: description}, {path: day, match: date}]}\n"
        "evalcases:\n  - {id: c1, expected_output: {d: 03/08/2014, lines: [{description: a, day: 03/08/2014}]}}\n"
        "  - id: c2\n    expected_output: {d: 03/08/2014}\n"
        "    evaluators: [{type: field_accuracy, fields: [{path: d, match: date}]}]\n"
    )
    result = CliRunner().invoke(app, ["validate", "dataset.yaml"])
    assert result.exit_code == 0, result.output
    assert "ambiguous" not in result.stderr
    first, second = load_dataset("dataset.yaml").cases
    d, e, f, lines = first.evaluators[0].fields
    assert (d.date_order, e.date_order, f.date_order, lines.fields[1].date_order) == ("dmy", "mdy", None, "dmy")
    assert second.evaluators[0].fields[0].date_order == "dmy"
    (field,) = score_fields(second.evaluators[0], {"d": "2014-08-03"}, {"d": "03/08/2014"})["fields"]
    assert field.status == "hit" and field.note is None
