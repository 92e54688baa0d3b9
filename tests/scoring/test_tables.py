"""Tables (`match: table`): TEDS against PubTabNet's published value and the packaged reference
(`table-recognition-metric`, PubTabNet's code on APTED), GriTS against the authors' `grits-metric`
on their README's examples and hundreds of generated tables; the three table forms; bad tables."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.scoring.grits import grits
from agentv_py.scoring.table_read import MAX_GRID, TableError, read_table
from agentv_py.scoring.tables import match_table
from agentv_py.scoring.teds import teds, tree_edit_distance

# PubTabNet's demo (src/demo.ipynb, Apache-2.0): its published TEDS for this pair is 0.9781765018607124
DEMO_PRED = (
    "<html><body><table><thead><tr><td><b>Name of algori</b></td><td><b>Notablefeatures</b></td></tr></thead>"
    "<tbody><tr><td>MACS [23]</td><td>Uses both a control library and local statistics to minimize bias</td></tr>"
    "<tr><td>SICER [15]</td><td>Designed for detecting diffusely enriched regions; for example, histone "
    "modification</td></tr><tr><td>PeakSEQ [24]</td><td>Corrects for reference genome mappability and local "
    "statistics</td></tr><tr><td>SISSRs [25]</td><td>High resolution, precise identification of binding-site "
    "location</td></tr><tr><td>F-seq [26]</td><td>Uses kernel density estimation</td></tr></tbody></table>"
    "</body></html>"
)
DEMO_TRUE = (
    DEMO_PRED.replace("Name of algori", "Name of algorithm")
    .replace("Notablefeatures", "Notable features")
    .replace("SICER [15]", "SICER [14]")
    .replace("PeakSEQ", "PeakSeq")
)


def test_teds_of_pubtabnets_demo_pair_is_its_published_value():
    assert teds(read_table(DEMO_PRED), read_table(DEMO_TRUE)) == pytest.approx(0.9781765018607124, abs=1e-12)


WORDS = ["a", "ab", "abc", "x", "日本", "9.5", "", "total", "tax due", "Ⅻ"]


def _random_html(rng: random.Random, inner_tags: bool = False) -> str:
    rows, cols = rng.randint(1, 6), rng.randint(1, 5)
    taken: set[tuple[int, int]] = set()
    head = rng.random() < 0.5
    out = ["<table>", "<thead>" if head else "<tbody>"]
    for i in range(rows):
        out.append("<tr>")
        j = 0
        for _ in range(cols):
            while (i, j) in taken:
                j += 1
            if j >= cols:
                break
            rowspan = rng.choice([1, 1, 1, 2]) if i < rows - 1 else 1
            colspan = min(rng.choice([1, 1, 1, 2]), cols - j)
            if any((a, b) in taken for a in range(i, i + rowspan) for b in range(j, j + colspan)):
                rowspan = colspan = 1
            taken.update((a, b) for a in range(i, i + rowspan) for b in range(j, j + colspan))
            attrs = (f' rowspan="{rowspan}"' if rowspan > 1 else "") + (f' colspan="{colspan}"' if colspan > 1 else "")
            text = rng.choice(WORDS)
            if inner_tags and rng.random() < 0.3:
                text = f"<b>{text}</b>"
            out.append(f"<td{attrs}>{text}</td>")
            j += colspan
        out.append("</tr>")
        if i == 0 and head:
            out.append("</thead><tbody>")
    out.append("</tbody></table>")
    return "".join(out)


def _variant(html: str, rng: random.Random) -> str:
    """A prediction near `html`: a cell's text changed, a cell dropped, a row dropped, a span lost."""
    edits = [
        lambda h: h.replace("abc", "abd", 1),
        lambda h: h.replace("<td>x</td>", "", 1),
        lambda h: h.replace(' colspan="2"', "", 1),
        lambda h: re.sub(r"<tbody><tr>.*?</tr>", "<tbody>", h, count=1),
        lambda h: h.replace("total", "tota1"),
    ]
    for edit in rng.sample(edits, rng.randint(1, 3)):
        html = edit(html)
    return html


def _pairs(count: int, seed: int, inner_tags: bool = False) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        true = _random_html(rng, inner_tags)
        pred = _random_html(rng, inner_tags) if rng.random() < 0.4 else _variant(true, rng)
        pairs.append((pred, true))
    return pairs


def test_tree_edit_distance_equals_the_reference_apted_distance_on_generated_tables():
    """PubTabNet's TEDS = 1 - APTED(pred, true) / max(elements under each <table>), with its rename
    costs; the packaged reference builds those trees and runs APTED: the distances agree, and so
    does TEDS computed from them with PubTabNet's denominator."""
    apted = pytest.importorskip("apted")
    trm = pytest.importorskip("table_recognition_metric")
    from lxml import html as lxml_html
    from table_recognition_metric.utils import CustomConfig

    checked = 0
    for structure_only in (False, True):
        reference = trm.TEDS(structure_only=structure_only)
        for pred, true in _pairs(120, seed=7 + structure_only, inner_tags=True):
            trees = []
            counts = []
            for markup in (pred, true):
                element = lxml_html.fromstring(markup).xpath("//table")[0]
                trees.append(reference.load_html_tree(element))
                counts.append(len(element.xpath(".//*")))
            expected_distance = apted.APTED(trees[0], trees[1], CustomConfig()).compute_edit_distance()
            ours = teds(read_table(pred), read_table(true), structure_only)
            assert ours == pytest.approx(1 - expected_distance / max(counts), abs=1e-9), (pred, true)
            checked += 1
    assert checked == 240


def _same_shape(html: str, rng: random.Random) -> str:
    """`html` with only cell contents changed: typos, or a row's contents shifted by one cell (where
    renaming each cell into its counterpart is not the cheapest edit)."""
    cells = re.findall(r"(<td[^>]*>)(.*?)(</td>)", html)
    texts = [text for _, text, _ in cells]
    if rng.random() < 0.5 and len(texts) > 2:
        start = rng.randrange(len(texts) - 2)
        texts[start:] = [*texts[start + 1 :], "zz"]  # shifted: each cell holds its right neighbour's text
    else:
        texts = [text + "q" if rng.random() < 0.3 else text for text in texts]
    pieces = iter(texts)
    return re.sub(r"(<td[^>]*>)(.*?)(</td>)", lambda m: m.group(1) + next(pieces) + m.group(3), html)


def test_tables_of_one_shape_take_the_bounded_path_and_still_equal_apted():
    """Same structure, contents changed: the upper and lower bounds settle most pairs; a shifted row
    is where they do not, and Zhang-Shasha decides. Both agree with APTED."""
    apted = pytest.importorskip("apted")
    trm = pytest.importorskip("table_recognition_metric")
    from lxml import html as lxml_html
    from table_recognition_metric.utils import CustomConfig

    rng = random.Random(13)
    reference = trm.TEDS()
    for _ in range(150):
        true = _random_html(rng)
        pred = _same_shape(true, rng)
        elements = [lxml_html.fromstring(markup).xpath("//table")[0] for markup in (pred, true)]
        trees = [reference.load_html_tree(element) for element in elements]
        expected = apted.APTED(trees[0], trees[1], CustomConfig()).compute_edit_distance()
        ours = tree_edit_distance(read_table(pred).tree, read_table(true).tree)
        assert ours == pytest.approx(expected, abs=1e-9), (pred, true)


def test_tree_edit_distance_is_zero_for_a_tree_and_itself_and_symmetric():
    a, b = read_table(DEMO_PRED).tree, read_table(DEMO_TRUE).tree
    assert tree_edit_distance(a, a) == 0
    assert tree_edit_distance(a, b) == pytest.approx(tree_edit_distance(b, a))


def test_grits_agrees_with_grits_metric_on_its_readme_examples():
    true = "<table><tr><td>Name</td><td>Score</td></tr><tr><td>Alice</td><td>95</td></tr></table>"
    pred = "<table><tr><td>Name</td><td>Score</td></tr><tr><td>Alice</td><td>90</td></tr></table>"
    assert grits(read_table(pred), read_table(true), "top").f1 == 1.0  # README: GriTS_Top: 1.0000
    assert grits(read_table(pred), read_table(true), "con").f1 == pytest.approx(0.875)  # GriTS_Con: 0.8750


def test_grits_top_and_con_agree_with_grits_metric_on_generated_tables():
    reference = pytest.importorskip("grits")
    checked = 0
    for pred, true in _pairs(400, seed=11):
        true_grids, pred_grids = reference.html_to_grids(true), reference.html_to_grids(pred)
        for kind, function in (("top", reference.grits_top), ("con", reference.grits_con)):
            expected = function(true_grids[kind], pred_grids[kind])
            ours = grits(read_table(pred), read_table(true), kind)
            assert (ours.f1, ours.precision, ours.recall) == pytest.approx(expected, abs=1e-9), (kind, pred, true)
            checked += 1
    assert checked == 800


def _boxed_cells(rng: random.Random) -> list[dict]:
    rows, cols = rng.randint(1, 5), rng.randint(1, 4)
    cells = []
    for i in range(rows):
        for j in range(cols):
            x, y = 10.0 * j + rng.uniform(-2, 2), 5.0 * i + rng.uniform(-1, 1)
            cells.append({"row": i, "col": j, "text": rng.choice(WORDS), "bbox": [x, y, x + 9, y + 4]})
    return cells


def test_grits_loc_agrees_with_grits_metric_on_generated_boxed_tables():
    reference = pytest.importorskip("grits")
    rng = random.Random(5)
    for _ in range(150):
        true, pred = _boxed_cells(rng), _boxed_cells(rng)
        grids = []
        for cells in (true, pred):
            listed = [
                reference.conversion.TableCell(row_nums=[c["row"]], column_nums=[c["col"]], bbox=c["bbox"])
                for c in cells
            ]
            grids.append(reference.conversion.cell_list_to_grid_loc(listed))
        expected = reference.grits_loc(grids[0], grids[1])
        ours = grits(read_table(pred), read_table(true), "loc")
        assert (ours.f1, ours.precision, ours.recall) == pytest.approx(expected, abs=1e-9)


HTML = (
    "<table><thead><tr><th>Item</th><th>Qty</th></tr></thead>"
    "<tbody><tr><td rowspan='2'>Pen</td><td>2</td></tr><tr><td>3</td></tr></tbody></table>"
)
ROWS = [[{"text": "Item", "header": True}, {"text": "Qty", "header": True}], [{"text": "Pen", "rowspan": 2}, 2], [3]]
CELLS = [
    {"row": 0, "col": 0, "text": "Item", "header": True},
    {"row": 0, "col": 1, "text": "Qty", "header": True},
    {"row": 1, "col": 0, "text": "Pen", "rowspan": 2},
    {"row": 1, "col": 1, "text": "2"},
    {"row": 2, "col": 1, "text": 3},
]
PUBTABLES = [
    {"row_nums": [0], "column_nums": [0], "cell_text": "Item", "is_column_header": True},
    {"row_nums": [0], "column_nums": [1], "cell_text": "Qty", "is_column_header": True},
    {"row_nums": [1, 2], "column_nums": [0], "cell_text": "Pen"},
    {"row_nums": [1], "column_nums": [1], "cell_text": "2"},
    {"row_nums": [2], "column_nums": [1], "cell_text": "3"},
]


@pytest.mark.parametrize("form", [HTML, ROWS, CELLS, PUBTABLES], ids=["html", "rows", "cells", "pubtables"])
@pytest.mark.parametrize("metric", ["teds", "teds_struct", "grits_top", "grits_con"])
def test_the_same_table_in_any_form_scores_one_against_the_others(form, metric):
    for other in (HTML, ROWS, CELLS, PUBTABLES):
        result = match_table(form, other, metric)
        assert result.passed and result.score == pytest.approx(1.0), (metric, form, other)


def test_one_wrong_cell_lowers_each_metric_as_its_definition_says():
    wrong = [*ROWS[:2], [4]]
    # TEDS: one cell of 1 character renamed (cost 1) over 10 elements (thead, tbody, 3 tr, 5 td): 9/10
    assert match_table(wrong, HTML, "teds").score == pytest.approx(9 / 10)
    assert match_table(wrong, HTML, "teds_struct").score == 1.0
    # GriTS-Con: 5 of 6 positions equal (the spanning "Pen" covers 2), the sixth "3" vs "4" is 0
    assert match_table(wrong, HTML, "grits_con").score == pytest.approx(5 / 6)
    assert match_table(wrong, HTML, "teds").passed  # at the default threshold, 0.9
    result = match_table(wrong, HTML, "teds", threshold=0.95)
    assert not result.passed and result.reason == "TEDS 0.900 < 0.95"
    assert result.info == {"similarity": 0.9, "threshold": 0.95, "algorithm": "teds"}


READ_ERRORS = [
    ("not-a-table", 12, "a table is HTML text, a list of rows or a list of cells, not number"),
    ("no-table-tag", "<p>hello</p>", "no <table> in the text"),
    ("mixed-list", [["a"], {"row": 0}], "a table is a list of rows (lists) or of cells (objects), not a mix"),
    (
        "overlapping-cells",
        [{"row": 0, "col": 0, "colspan": 2, "text": "a"}, {"row": 0, "col": 1, "text": "b"}],
        "cell 2 overlaps cell 1 at row 1, column 2",
    ),
    (
        "overlapping-spans-in-rows",
        [["a", {"text": "b", "rowspan": 2}], [{"text": "c", "colspan": 2}]],
        "row 2, cell 1 overlaps row 1, cell 2 at row 2, column 2",
    ),
    ("unknown-key", [[{"txt": "a"}]], "row 1, cell 1: unknown key 'txt' (valid: text, colspan, rowspan, bbox, header)"),
    ("bad-span", [[{"text": "a", "colspan": 0}]], "row 1, cell 1: colspan is a whole number from 1 to 1,000, got 0"),
    ("bool-span", [[{"text": "a", "rowspan": True}]], "rowspan is a whole number from 1 to 65,534, got True"),
    ("bad-bbox", [{"row": 0, "col": 0, "bbox": [5, 0, 1, 1]}], "cell 1: bbox is [x0, y0, x1, y1] with x0 <= x1"),
    ("nan-bbox", [{"row": 0, "col": 0, "bbox": [0, 0, float("nan"), 1]}], "cell 1: bbox is [x0, y0, x1, y1]"),
    ("object-text", [[{"text": {"a": 1}}]], "row 1, cell 1: a cell's text is a scalar, not object"),
    ("negative-row", [{"row": -1, "col": 0}], "cell 1: row is a whole number from 0 (the first), got -1"),
    ("gap-in-row-nums", [{"row_nums": [0, 2], "column_nums": [0]}], "row_nums is a list of consecutive indices"),
    (
        "huge-grid",
        [[{"text": "a", "rowspan": 5000, "colspan": 3}]],
        f"row 1, cell 1 makes the table 5,000 rows x 3 columns; tables up to {MAX_GRID:,} positions are scored",
    ),
    ("too-deep", "<table><tr><td>" + "<div>" * 300 + "x", "HTML refused: elements nested more than 200 deep"),
]


@pytest.mark.parametrize(("value", "message"), [c[1:] for c in READ_ERRORS], ids=[c[0] for c in READ_ERRORS])
def test_a_value_that_is_not_a_readable_table_says_why(value, message):
    with pytest.raises(TableError) as raised:
        read_table(value)
    assert message in str(raised.value)


def test_a_bad_expected_table_cannot_be_scored_and_a_bad_answer_misses():
    overlapping = [{"row": 0, "col": 0, "colspan": 2}, {"row": 0, "col": 1}]
    refused = match_table("<table><tr><td>a</td></tr></table>", overlapping)
    assert refused.bad_expected and refused.reason == (
        "expected value is not a table: cell 2 overlaps cell 1 at row 1, column 2"
    )
    missed = match_table(overlapping, [["a"]])
    assert not missed.passed and not missed.bad_expected and missed.score == 0.0
    assert missed.reason == "answer is not a table: cell 2 overlaps cell 1 at row 1, column 2"
    assert match_table({"a": 1}, [["a"]]).reason == "answer is object, not a table"


def test_ragged_tables_are_scored_as_the_references_score_them_and_noted():
    ragged = [["a", "b", "c"], ["d"]]
    result = match_table(ragged, [["a", "b", "c"], ["d", "e", "f"]], "grits_con")
    assert result.score == pytest.approx(4 / 6)  # the holes read as empty cells
    assert result.info["note"] == "answer table is ragged: no cell at row 2, column 2 and 1 more (read as empty)"
    noted = match_table([["a", "b"]], [["a", "b"], ["c"]], "teds")
    assert noted.info["note"].startswith("expected table is ragged: no cell at row 2, column 2")


def test_grits_loc_needs_a_box_on_every_expected_cell():
    result = match_table([{"row": 0, "col": 0, "bbox": [0, 0, 1, 1]}], [{"row": 0, "col": 0}], "grits_loc")
    assert result.bad_expected
    assert result.reason == ("expected table has a cell without a bbox (cell 1, row 1): grits_loc compares boxes")


def test_overlapping_html_cells_are_scored_as_browsers_and_the_references_place_them_and_noted():
    html = "<table><tr><td>a</td><td rowspan='2'>b</td></tr><tr><td colspan='2'>c</td></tr></table>"
    table = read_table(html)
    assert table.overlaps == ("row 2, cell 1 overlaps row 1, cell 2 at row 2, column 2",)
    result = match_table(html, html, "grits_con")
    assert result.score == 1.0
    assert result.info["note"] == (
        "expected table's cells overlap: row 2, cell 1 overlaps row 1, cell 2 at row 2, column 2 (the later cell "
        "counts); answer table's cells overlap: row 2, cell 1 overlaps row 1, cell 2 at row 2, column 2 (the later "
        "cell counts)"
    )


def test_rows_directly_in_a_table_sit_in_an_implied_tbody_as_in_a_browser():
    bare = read_table("<table><tr><td>a</td></tr></table>")
    assert bare == read_table("<table><tbody><tr><td>a</td></tr></tbody></table>")
    assert bare.counted == 3  # tbody, tr, td
    assert read_table("<table><tbody><td>a</td><td>b</td></tbody></table>").n_cols == 2  # an implied <tr>
    assert match_table([["a"]], "<table><tr><td>a</td></tr></table>").score == 1.0


def test_html_spans_are_read_as_a_browser_reads_them():
    table = read_table("<table><tr><td colspan='2px'>a</td><td rowspan='0'>b</td><td colspan='x'>c</td></tr></table>")
    assert [(cell.cols, cell.rows) for cell in table.cells] == [((0, 1), (0,)), ((2,), (0,)), ((3,), (0,))]


def test_html_cells_whose_end_tags_are_left_out_close_as_a_browser_closes_them():
    loose = "<table><tr><td>a<td>b<tr><td>c<td>d</table>"
    assert [cell.text for cell in read_table(loose).cells] == ["a", "b", "c", "d"]
    assert read_table(loose).n_rows == 2


def test_a_table_too_large_for_teds_is_said_not_computed():
    big = [[str(i * 40 + j) for j in range(40)] for i in range(80)]  # 3,200 cells: over MAX_NODES (600)
    result = match_table(big, big, "teds")
    assert result.bad_expected and "TEDS scores tables up to 600" in (result.reason or "")
    assert match_table(big, [["a"]], "teds").reason == "answer table has 3,282 nodes; TEDS scores tables up to 600"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
MARKUP = st.lists(
    st.sampled_from(
        [
            "<table>",
            "</table>",
            "<tr>",
            "</tr>",
            "<td>",
            "</td>",
            "<th colspan=3>",
            "<td rowspan='9'>",
            "<thead>",
            "</tbody>",
            "x",
            "&amp;",
            "<b>",
            "</b>",
            "<!-- c -->",
            "<br>",
            "<td colspan=-1>",
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    answer=JSON | MARKUP,
    expected=JSON | MARKUP,
    metric=st.sampled_from(["teds", "teds_struct", "grits_top", "grits_con", "grits_loc"]),
)
def test_match_table_never_raises(answer, expected, metric):
    result = match_table(answer, expected, metric)
    assert 0.0 <= result.score <= 1.0
