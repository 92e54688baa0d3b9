"""The HTML report in a real browser: headless Chromium (Debian's package, driven by Playwright)
opens the file from file://, with no console error; filters hide rows, sorting sorts, a case
opens to its field diff, line items and boxes over the image; an opened case never widens the
page and only the case table's header sticks; an xfail case reads xfail; hostile values stay
text."""

from __future__ import annotations

import json
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentv_py.cli import app

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str | None:
    for candidate in (os.environ.get("AGENTV_CHROMIUM"), "chromium", "chromium-browser", "/usr/bin/chromium"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium()
    if executable is None:
        message = "Chromium not found (Debian: apt-get install chromium; or set AGENTV_CHROMIUM)"
        if os.environ.get("CI"):
            pytest.fail(message + ": .ci/run installs it")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Page:
    """A report opened in a fresh page, with its console errors and uncaught exceptions kept."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("dialog", lambda dialog: (self.errors.append("dialog: " + dialog.message), dialog.dismiss()))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("html[data-ready='1']")

    def rows(self) -> list[str]:
        return self.page.locator("#case-table tbody tr.case td:first-child").all_text_contents()


def png(width: int, height: int) -> bytes:
    """A grey PNG of the given size, made by hand (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def invoke(*args: str) -> Any:
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


EXPECTED = {
    "invoice_number": "INV-1",
    "total": 120.5,
    "box": [10, 10, 60, 40],
    "line_items": [{"description": "Widget", "quantity": 2}, {"description": "Gadget", "quantity": 1}],
}


@pytest.fixture
def real_run(ws) -> Path:
    """A real eval (cli target printing each case's answer file) with field_accuracy (items too,
    a field not scored and an item column null on both sides) and iou_score over a case image,
    written with --html."""
    ws.file("page.png", png(100, 60))
    answers = {
        "good": EXPECTED,
        "wrong-total": {**EXPECTED, "total": 99, "box": [12, 12, 58, 42]},
        "bad-items": {**EXPECTED, "line_items": [{"description": "Gadget", "quantity": 3}, {"description": "Bolt"}]},
        "no-box": {"invoice_number": "inv-1", "total": 120.5, "line_items": []},
    }
    cases = []
    for case_id, answer in answers.items():
        ws.file(f"fx/{case_id}.json", json.dumps(answer))
        cases.append(
            f"  - id: {case_id}\n"
            f"    input_messages: [{{role: user, content: [{{type: file, value: fx/{case_id}.json}}, "
            f"{{type: image, value: page.png}}]}}]\n"
            f"    expected_messages: [{{role: assistant, content: {json.dumps(EXPECTED)}}}]\n"
        )
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n"
        "    - type: field_accuracy\n      fields:\n"
        "        - {path: invoice_number}\n        - {path: total, match: numeric_tolerance, tolerance: 0.01}\n"
        "        - {path: po_number}\n"  # in no ground truth: not scored, folded
        "        - {path: line_items, match: items, key: [description],"
        " fields: [{path: quantity, match: numeric_tolerance, tolerance: 0}, {path: sku}]}\n"  # sku: null both sides
        "    - {type: iou_score, name: box, path: box, threshold: 0.5}\n"
        "evalcases:\n" + "".join(cases)
    )
    ws.cli_target("cat {FILES}")
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--html", "report.html")
    assert result.exit_code == 1, result.output  # three cases do not pass
    return ws.root / "report.html"


def test_a_real_run_in_a_real_browser(browser, real_run, tmp_path):
    view = Page(browser, real_run)
    page = view.page
    assert view.rows() == ["good", "wrong-total", "bad-items", "no-box"]  # dataset order, from the manifest
    assert page.locator("#count").text_content() == "4 of 4 cases"
    # the header and the gate came from the manifest
    assert "agentv report: dataset" in page.locator("h1").text_content()
    assert page.locator("#gate-line").text_content().startswith("gate failed — rule: every case passes — ")

    order = ["good", "wrong-total", "bad-items", "no-box"]
    verdicts = {row["eval_id"]: row["verdict"] for row in map(json.loads, real_run.with_name("run.jsonl").open())}
    assert verdicts["good"] == "pass" and verdicts["no-box"] == "fail"
    for verdict in ("pass", "partial", "fail"):
        page.select_option("#f-verdict", verdict)
        assert view.rows() == [case for case in order if verdicts[case] == verdict]
    page.select_option("#f-verdict", "")
    page.select_option("#f-field", label="total")
    assert view.rows() == ["wrong-total"]
    page.select_option("#f-field", "")
    page.fill("#q", "BAD")  # case ids, case-insensitive
    assert view.rows() == ["bad-items"]
    page.fill("#q", "line_items")  # and missed fields
    assert view.rows() == ["bad-items", "no-box"]
    page.fill("#q", "")
    page.click("#case-table th[data-sort='score']")
    scores = [float(s) for s in page.locator("#case-table tbody tr.case td:nth-child(2)").all_text_contents()]
    assert scores == sorted(scores) and len(scores) == 4

    # a case opens to its field diff: expected and got side by side, coloured by outcome
    page.locator("tr.case", has_text="wrong-total").click()
    page.wait_for_selector("tr.detail table.diff")
    miss = page.locator("tr.detail table.diff tr.miss").first
    assert miss.locator("td").nth(0).text_content() == "total"
    assert miss.locator("td.exp").text_content() == "120.5" and miss.locator("td.got").text_content() == "99"
    assert "outside tolerance" in miss.locator("td").nth(6).text_content()
    # the field not scored is folded behind "show all", closed until clicked
    detail = page.locator("tr.detail", has_text="wrong-total")
    assert "po_number" not in detail.locator(".fields > .scroll > table.diff").text_content()
    fold = detail.locator(".fields > details.fold")
    assert fold.locator("summary").text_content() == "show all (1 hidden) · fields not scored"
    hidden = fold.locator("table.diff tbody tr")
    assert fold.evaluate("node => node.open") is False and not hidden.is_visible()
    fold.locator("summary").click()
    assert fold.evaluate("node => node.open") is True and hidden.is_visible()
    assert hidden.locator("td").all_text_contents()[:2] == ["po_number", "exact"]
    assert hidden.locator("td").nth(4).text_content() == "not scored"
    # boxes drawn over the case image (a data URI), expected and answer
    image = page.locator("tr.detail .shapes img")
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    page.wait_for_function("document.querySelectorAll('tr.detail .shapes svg rect').length === 2")

    # line items in matching order, per-cell colours, unmatched items listed
    page.locator("tr.case", has_text="bad-items").click()
    items = page.locator("tr.detail", has_text="bad-items").locator(".items")
    items.wait_for()
    table = items.locator(":scope > .scroll > table.items-table")
    assert table.locator("tbody tr").count() == 1  # Gadget ~ Gadget
    assert table.locator("thead th").all_text_contents() == ["expected → got", "similarity", "quantity"]
    assert table.locator("td.cell-miss").count() == 1  # quantity 1 vs 3
    # sku, null on both sides in every row, is folded; a click shows its column
    columns = items.locator(":scope > details.fold")
    summary = "show all (1 hidden) · column null on both sides in every row"
    assert columns.locator("summary").text_content() == summary
    sku = columns.locator("table.items-table thead th", has_text="sku")
    assert columns.evaluate("node => node.open") is False and not sku.is_visible()
    columns.locator("summary").click()
    assert sku.is_visible() and columns.locator("table.items-table tbody tr").count() == 1
    text = items.text_content()
    assert "missing (expected, not found): 1" in text and "extra (found, not expected): 1" in text
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    if os.environ.get("AGENTV_SCREENSHOTS"):
        shutil.copy(tmp_path / "report.png", Path(os.environ["AGENTV_SCREENSHOTS"]) / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert view.errors == []
    assert all(url.startswith(("file:", "data:")) for url in view.requests), view.requests
    page.close()


HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    '"><svg onload="window.__pwned = 3">',
    "</script><script>window.__pwned = 4</script>",
    "{{ 7*7 }} ${7*7}",
]


def test_hostile_values_stay_text(browser, tmp_path):
    from agentv_py.evaluators.base import processed_result
    from tests.conftest import make_row

    rows = []
    for i, value in enumerate(HOSTILE):
        fields = [
            {"path": value, "match": "exact", "expected": value, "actual": value + "!", "status": "miss"},
            {"path": value, "match": "exact", "actual": f"\"{value}\" '{i}'", "status": "not scored"},  # folded
        ]
        results = [
            processed_result(name="fields", type="field_accuracy", score=0.0, details={"fields": fields}),
            processed_result(name=value, type="code_judge", score=0.0, reasoning=value, details={"why": value}),
        ]
        rows.append(
            make_row(
                eval_id=f"{value}#{i}",
                score=0.0,
                verdict="fail",
                candidate_answer=value,
                misses=[value],
                evaluator_results=results,
            )
        )
    error = make_row(
        eval_id="error-row", status="error", score=0.0, verdict="fail", error=HOSTILE[0], candidate_answer=None
    )
    rows.append(error)  # a row without evaluator results
    (tmp_path / "run.jsonl").write_bytes(b"".join(json.dumps(r.to_json_dict()).encode() + b"\n" for r in rows))
    result = invoke("report", str(tmp_path / "run.jsonl"), "-o", str(tmp_path / "report.html"))
    assert result.exit_code == 0, result.output
    view = Page(browser, tmp_path / "report.html")
    page = view.page
    assert view.rows() == [*(f"{value}#{i}" for i, value in enumerate(HOSTILE)), "error-row"]
    for i in range(len(HOSTILE) + 1):
        page.locator("tr.case").nth(i).click()
    page.wait_for_function(f"document.querySelectorAll('tr.detail .evaluator').length === {2 * len(HOSTILE)}")
    assert "error: " + HOSTILE[0] in page.locator("tr.detail").last.text_content()
    assert page.locator("tr.detail details.fold").count() == len(HOSTILE)
    for details in page.locator("tr.detail details").all():
        details.evaluate("node => { node.open = true }")
    shown = page.locator("#cases").text_content()
    for i, value in enumerate(HOSTILE):
        assert value in shown and json.dumps(f"\"{value}\" '{i}'") in shown  # the folded value, as JSON
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("#cases script, #cases img:not([alt='case image']), #cases svg[onload]").count() == 0
    assert view.errors == []
    page.close()


COLUMNS = [f"column_{n:02d}" for n in range(14)]  # more sub-fields than a 1280-pixel page holds side by side
ITEM = {column: ("2017-12-31" if n % 3 == 0 else f"Invoice from OYO room {n}") for n, column in enumerate(COLUMNS)}


@pytest.fixture
def wide_run(ws) -> Path:
    """A real eval, written with --html: a case that fails, its line items 14 columns of dates and
    words (one cell wrong), a case that passes, and an `xfail:` case that fails."""
    expected = {"invoice_number": "INV-1", "line_items": [{"description": "Widget", **ITEM}]}
    answers = {
        "wide": {"invoice_number": "INV-9", "line_items": [{"description": "Widget", **ITEM, "column_01": "Invoice"}]},
        "fine": expected,
        "known-bug": {**expected, "invoice_number": "INV-2"},
    }
    cases = []
    for case_id, answer in answers.items():
        ws.file(f"fx/{case_id}.json", json.dumps(answer))
        mark = "    xfail: parser drops the suffix\n" if case_id == "known-bug" else ""
        cases.append(
            f"  - id: {case_id}\n"
            f"    input_messages: [{{role: user, content: [{{type: file, value: fx/{case_id}.json}}]}}]\n"
            f"    expected_messages: [{{role: assistant, content: {json.dumps(expected)}}}]\n" + mark
        )
    sub_fields = ", ".join(f"{{path: {column}}}" for column in COLUMNS)
    ws.dataset(
        "execution:\n  target: t\n  evaluators:\n"
        "    - type: field_accuracy\n      fields:\n"
        "        - {path: invoice_number}\n"
        f"        - {{path: line_items, match: items, key: [description], fields: [{sub_fields}]}}\n"
        "evalcases:\n" + "".join(cases)
    )
    ws.cli_target("cat {FILES}")
    result = invoke("eval", "dataset.yaml", "--out", "run.jsonl", "--html", "report.html")
    assert result.exit_code == 1, result.output  # `wide` does not pass
    return ws.root / "report.html"


def lines_of(locator: Any) -> int:
    """How many lines a value's text takes on the page."""
    return int(
        locator.evaluate(
            "node => Math.round(node.getBoundingClientRect().height / parseFloat(getComputedStyle(node).lineHeight))"
        )
    )


def test_details_stay_within_the_page_and_only_the_case_table_header_sticks(browser, wide_run):
    view = Page(browser, wide_run)
    page = view.page
    assert (
        page.locator("#gate-line").text_content() == "gate failed — rule: every case passes — 1 of 2 cases did not pass"
    )
    width = page.evaluate("window.innerWidth")
    page.locator("tr.case", has_text="wide").click()
    items = page.locator("tr.detail .items")
    items.wait_for()
    # the page does not widen: the item table scrolls sideways in its own box
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    box = items.locator(":scope > .scroll")
    assert box.evaluate("node => getComputedStyle(node).overflowX") == "auto"
    assert box.evaluate("node => node.scrollWidth > node.clientWidth")
    table = box.locator("table.items-table")
    assert table.locator("thead th").all_text_contents() == ["expected → got", "similarity", *COLUMNS]
    # values break between words, never inside a short one
    cells = table.locator("tbody td")
    assert lines_of(cells.nth(2).locator(".val")) == 1  # "2017-12-31"
    assert lines_of(cells.nth(3).locator(".val").first) == 1  # "Invoice from OYO room 1"
    # only the case table's header sticks, on a background; the details' tables scroll under it
    main = page.locator("#case-table > thead th").first
    assert main.evaluate("node => getComputedStyle(node).position") == "sticky"
    assert main.evaluate("node => getComputedStyle(node).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    nested = page.locator("tr.detail thead th")
    assert nested.count() > 0
    assert set(nested.evaluate_all("nodes => nodes.map((n) => getComputedStyle(n).position)")) == {"static"}
    # scrolled to where the field table's header would stick: the case table's header is on top
    page.set_viewport_size({"width": width, "height": 300})  # room to scroll past a short page's details
    page.evaluate("window.scrollBy(0, document.querySelector('tr.detail table.diff').getBoundingClientRect().top + 20)")
    assert page.evaluate("document.querySelector('tr.detail table.diff').getBoundingClientRect().top") < 0
    on_top = "document.elementFromPoint(200, 5).closest('thead') === document.querySelector('#case-table > thead')"
    assert page.evaluate(on_top)
    page.evaluate("window.scrollTo(0, 0)")
    # the xfail case reads xfail, in a neutral colour, and the verdict filter finds it
    badge = page.locator("tr.case", has_text="known-bug").locator(".badge")
    assert badge.text_content() == "xfail"
    fail_colour = (
        page.locator("tr.case", has_text="wide").locator(".badge").evaluate("node => getComputedStyle(node).color")
    )
    assert badge.evaluate("node => getComputedStyle(node).color") != fail_colour
    page.select_option("#f-verdict", "xfail")
    assert view.rows() == ["known-bug"]
    page.select_option("#f-verdict", "fail")
    assert view.rows() == ["wide"]
    page.select_option("#f-verdict", "pass")
    assert view.rows() == ["fine"]
    assert view.errors == []
    page.close()
