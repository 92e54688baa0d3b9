from __future__ import annotations

import pytest

from agentv_py.scoring.paths import MISSING, parse_path, path_problem, resolve

DATA = {"invoice": {"line_items": [{"amount": 10}, {"amount": None}], "total": 0}, "list": [[1, 2]]}

RESOLVE = [
    ("nested", "invoice.total", 0),
    ("indexed", "invoice.line_items[0].amount", 10),
    ("null-is-a-value", "invoice.line_items[1].amount", None),
    ("index-out-of-range", "invoice.line_items[5].amount", MISSING),
    ("missing-key", "invoice.currency", MISSING),
    ("through-a-scalar", "invoice.total.value", MISSING),
    ("index-into-object", "invoice[0]", MISSING),
    ("key-into-list", "list.x", MISSING),
    ("double-index", "list[0][1]", 2),
    ("malformed-double-dot", "invoice..total", MISSING),
    ("malformed-open-bracket", "invoice[", MISSING),
    ("malformed-non-numeric-index", "invoice.line_items[x]", MISSING),
]


@pytest.mark.parametrize("path, expected", [c[1:] for c in RESOLVE], ids=[c[0] for c in RESOLVE])
def test_resolve(path, expected):
    assert resolve(DATA, path) is expected or resolve(DATA, path) == expected


def test_resolve_top_level_list():
    assert resolve([{"a": 1}], "[0].a") == 1


@pytest.mark.parametrize("path", ["a..b", "a[", "a[x]", "", ".a", "a.", " a"])
def test_malformed_paths_are_reported(path):
    assert path_problem(path) is not None


def test_parse_path():
    assert parse_path("invoice.line_items[0].amount") == ("invoice", "line_items", 0, "amount")
    assert path_problem("invoice.line_items[0].amount") is None
