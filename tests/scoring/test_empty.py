"""One definition of empty (SPEC §5, `scoring.paths.is_empty`): absent ≡ null ≡ a blank string ≡
[] ≡ {}. The table of docs/metrics.md ("Empty values"), checked through all three readers of a
field: the case score (`score_fields`), the per-field metrics (`field_accuracy_counts`) and the
failure taxonomy (`classify_entry`), for every form of empty on either side."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_py.evaluators.field_accuracy import score_fields
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.scoring.metrics import field_accuracy_counts
from agentv_py.scoring.paths import MISSING, is_empty
from agentv_py.scoring.taxonomy import classify_entry

EMPTY = {"absent": MISSING, "null": None, "blank": "", "spaces": " \t", "[]": [], "{}": {}}
VALUE, OTHER = "INV-1", "INV-2"

# (expected, answer, required) -> (status, reason, counts tp/tn/fp/fn, taxonomy). `empty` stands for
# each form of EMPTY; `absent` on the expected side is the one form that is not scored (SPEC §3.1
# rule 1: no ground truth for the field), though the metrics still count what was answered.
TABLE: list[tuple[str, str, bool, str, str | None, tuple[int, int, int, int], dict[str, int]]] = [
    ("absent", "empty", True, "not scored", "no expected value", (0, 1, 0, 0), {}),
    ("absent", "value", True, "not scored", "no expected value", (0, 0, 1, 0), {"hallucinated": 1}),
    ("empty", "empty", True, "hit", None, (0, 1, 0, 0), {}),
    ("empty", "value", True, "miss", "*", (0, 0, 1, 0), {"hallucinated": 1}),
    ("value", "absent", True, "miss", "required, missing", (0, 0, 0, 1), {"missing": 1}),
    ("value", "null", True, "miss", "null value", (0, 0, 0, 1), {"missing": 1}),
    ("value", "blank|spaces|[]|{}", True, "miss", "empty value", (0, 0, 0, 1), {"missing": 1}),
    ("value", "absent", False, "not scored", "optional, missing", (0, 0, 0, 1), {"missing": 1}),
    ("value", "null", False, "not scored", "optional, null value", (0, 0, 0, 1), {"missing": 1}),
    ("value", "blank|spaces|[]|{}", False, "not scored", "optional, empty value", (0, 0, 0, 1), {"missing": 1}),
    ("value", "value", True, "hit", None, (1, 0, 0, 0), {}),
    ("value", "other", True, "miss", "value mismatch", (0, 0, 1, 1), {"wrong_value": 1}),
]


def forms(label: str, side: str) -> list[tuple[str, Any]]:
    if label == "empty":
        return [(name, v) for name, v in EMPTY.items() if side == "answer" or name != "absent"]
    if label in ("value", "other"):
        return [(label, VALUE if label == "value" else OTHER)]
    return [(name, EMPTY[name]) for name in label.split("|")]


CASES = [
    pytest.param(
        want, got, required, *outcome, id=f"expected-{wn}-answer-{gn}-{'required' if required else 'optional'}"
    )
    for e_label, a_label, required, *outcome in TABLE
    for wn, want in forms(e_label, "expected")
    for gn, got in forms(a_label, "answer")
]


@pytest.mark.parametrize("want, got, required, status, reason, counts, kinds", CASES)
def test_one_definition_of_empty_through_score_metrics_and_taxonomy(want, got, required, status, reason, counts, kinds):
    config = FieldAccuracyConfig.model_validate(
        {"type": "field_accuracy", "fields": [{"path": "f", "required": required}]}
    )
    doc = lambda v: {} if v is MISSING else {"f": v}  # noqa: E731
    (entry,) = score_fields(config, doc(got), doc(want))["fields"]
    assert entry.status == status
    if reason != "*":
        assert entry.reason == reason
    assert entry.score == {"hit": 1.0, "miss": 0.0}.get(status)
    (tallied,) = field_accuracy_counts({"fields": [entry]}).values() or [None]
    assert (tallied.tp, tallied.tn, tallied.fp, tallied.fn) == counts
    assert classify_entry(entry) == kinds


def test_the_table_covers_every_pair_of_forms_once():
    required = [c.id.removesuffix("-required") for c in CASES if c.id.endswith("-required")]
    expected = ["null", "blank", "spaces", "[]", "{}", "value", "absent"]
    answers = [*EMPTY, "value", "other"]
    every = [f"expected-{e}-answer-{a}" for e in expected for a in answers if e == "value" or a != "other"]
    assert sorted(required) == sorted(every)


@pytest.mark.parametrize(
    "value, empty",
    [(MISSING, True), (None, True), ("", True), (" \n\u3000", True), ([], True), ({}, True)]
    + [(0, False), (False, False), ("0", False), ([None], False), ({"a": None}, False), ([[]], False)],
    ids=["absent", "null", "blank", "unicode-spaces", "[]", "{}", "0", "false", "'0'", "[null]", "{a: null}", "[[]]"],
)
def test_is_empty(value, empty):
    assert is_empty(value) is empty


def test_an_items_field_empty_on_both_sides_is_a_hit_and_an_empty_answer_misses_every_item():
    spec = {"path": "items", "match": "items", "key": ["d"], "fields": [{"path": "d"}]}
    config = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": [spec]})
    (both,) = score_fields(config, {"items": None}, {"items": []})["fields"]
    assert (both.status, both.score) == ("hit", 1.0)
    assert [
        vars(c) if False else (c.tp, c.tn, c.fp, c.fn) for c in field_accuracy_counts({"fields": [both]}).values()
    ] == [(0, 1, 0, 0)]
    (lost,) = score_fields(config, {"items": []}, {"items": [{"d": "a"}, {"d": "b"}]})["fields"]
    assert (lost.status, lost.reason) == ("miss", "0 of 2 items matched; 2 missing, 0 extra")
    assert [(c.tp, c.tn, c.fp, c.fn) for c in field_accuracy_counts({"fields": [lost]}).values()] == [(0, 0, 0, 2)]
    assert classify_entry(lost) == {"missing": 2}


def test_an_empty_expected_value_is_never_bad_ground_truth():
    """`numeric_tolerance` and `date` read an expected "" as nothing expected, not as an unusable value."""
    fields = [{"path": "n", "match": "numeric_tolerance", "tolerance": 0}, {"path": "d", "match": "date"}]
    config = FieldAccuracyConfig.model_validate({"type": "field_accuracy", "fields": fields})
    outcome = score_fields(config, {"n": None, "d": 5}, {"n": "", "d": " "})
    assert outcome["unscorable"] == []
    assert [(f.status, f.reason) for f in outcome["fields"]] == [
        ("hit", None),
        ("miss", "type mismatch: got number, expected string"),
    ]
