#!/usr/bin/env python3
"""HTML report benchmark (issue 15): size, build time and time to interactive at 100 and 10,000 cases.

Writes results files of N rows (the 9-field `field_accuracy` rows of bench_compare.py, 10% of
fields missed, every row's values made its own so compression gets no help from repeats), runs
`agentv report` on each (wall time, peak RSS, file size), then opens each
report in headless Chromium (Debian's /usr/bin/chromium, or $AGENTV_CHROMIUM, driven by
Playwright) from file:// and reads, from the page itself, when its case table was drawn
(`window.__agentvReadyAt`: ms since navigation start) and how long opening the first case took
(the details are unpacked on that first open). Median of `--repeat` page loads.

Usage: python scripts/bench_report.py [--cases 100 10000] [--repeat 5] [--build-only]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import print_calibration, timed_child  # noqa: E402
from bench_compare import BASE_MISS_RATE, FIELDS, make_row  # noqa: E402

from tests.report.test_html_browser import CHROMIUM_ARGS, chromium  # noqa: E402


def _varied(row: dict[str, object], rng: random.Random) -> dict[str, object]:
    """Every row's values its own (ids, amounts, names), as in a real run: the report's
    compression gets no help from rows that repeat each other."""
    results = row["evaluator_results"]
    assert isinstance(results, list)
    fields = [dict(entry) for entry in results[0]["details"]["fields"]]
    for entry in fields:
        value = entry["expected"]
        if isinstance(value, (int, float)):
            fresh: object = round(rng.uniform(10, 99_999), 2)
        else:
            fresh = f"{value}-{rng.getrandbits(40):010x}"
        entry["expected"] = fresh
        entry["actual"] = fresh if entry["status"] == "hit" else f"{fresh}x"
    results[0] = {**results[0], "details": {**results[0]["details"], "fields": fields}}
    row["candidate_answer"] = orjson.dumps({entry["path"]: entry["actual"] for entry in fields}).decode()
    return row


def write_results(path: Path, rows: int, seed: int = 15) -> None:
    rng = random.Random(seed)
    with open(path, "wb") as out:
        for i in range(rows):
            row = make_row(i, [rng.random() >= BASE_MISS_RATE for _ in FIELDS])
            out.write(orjson.dumps(_varied(row, rng)) + b"\n")


def page_times(report: Path, repeat: int) -> tuple[float, float]:
    """Median ms to interactive (the table drawn) and to the first case opened, in Chromium."""

    from playwright.sync_api import sync_playwright

    executable = chromium()
    if executable is None:
        raise SystemExit("Chromium not found: sh scripts/chromium.sh, or set AGENTV_CHROMIUM")
    ready, opened = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        for _ in range(repeat):
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
            page.goto(report.resolve().as_uri())
            page.wait_for_selector("html[data-ready='1']", timeout=60_000)
            ready.append(float(page.evaluate("window.__agentvReadyAt")))
            started = time.perf_counter()
            page.locator("tr.case").first.click()
            page.wait_for_selector("tr.detail table.diff", timeout=60_000)
            opened.append((time.perf_counter() - started) * 1000)
            if errors:
                raise SystemExit(f"page errors: {errors}")
            page.close()
        browser.close()
    return statistics.median(ready), statistics.median(opened)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[100, 10_000])
    parser.add_argument("--repeat", type=int, default=5, help="page loads per report (median)")
    parser.add_argument("--build-only", action="store_true", help="no browser: build time and memory only")
    args = parser.parse_args()
    print_calibration()
    peaks: list[float] = []
    agentv = [sys.executable, "-m", "agentv_py"]
    print(f"results: 1 field_accuracy result per row, {len(FIELDS)} fields, {BASE_MISS_RATE:.0%} missed")
    with tempfile.TemporaryDirectory(prefix="agentv-bench-report-") as tmp:
        for cases in args.cases:
            results = Path(tmp) / f"run-{cases}.jsonl"
            report = results.with_suffix(".html")
            write_results(results, cases)
            wall, peak, code = timed_child([*agentv, "report", str(results), "-o", str(report)], cwd=REPO)
            if code != 0:
                raise SystemExit(f"agentv report exited {code}")
            peaks.append(peak)
            line = (
                f"  {cases:>6} cases: results {results.stat().st_size / 2**20:6.1f} MiB -> report "
                f"{report.stat().st_size / 2**20:5.2f} MiB; build {wall:5.2f} s, peak RSS {peak:6.1f} MiB"
            )
            if not args.build_only:
                ready, opened = page_times(report, args.repeat)
                line += f"; interactive {ready:6.0f} ms, first case opened {opened:5.0f} ms (median of {args.repeat})"
            print(line, flush=True)
            results.unlink()
            report.unlink()
    if len(peaks) > 1:
        print(f"peak RSS, most cases / fewest: {peaks[-1] / peaks[0]:.2f}x (bar: 1.5x, issue 25)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
