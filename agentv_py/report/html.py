"""`agentv report`: one self-contained HTML file from a results file.

No server, no network, nothing fetched: CSS, JavaScript, charts (SVG made here) and images (data
URIs) are inline, and a Content-Security-Policy lets the page run only its own script (by hash)
and load nothing. Every value from a run is data: the HTML parts go through Jinja2's autoescape,
the embedded data is JSON inside `<script type="application/json">` with `<`, `>` and `&`
escaped, and the page's script puts it on the page with `textContent`, never as markup.

What is embedded: a compact index of the cases (what the table, its filters and sort need) as
JSON, and the per-case details (field diffs, line items, judge replies, shapes) as gzip-compressed
JSON that the page unpacks (`DecompressionStream`) the first time a case is opened. Long values
are cut to `VALUE_CHARS` characters in the details (the page says how long they were; `agentv
explain` shows them whole).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.models.manifest import RunManifest
from agentv_py.models.results import ResultRow
from agentv_py.report.detection import table_rows
from agentv_py.report.jsonl import not_results, read_rows
from agentv_py.report.page_cases import VALUE_CHARS, Interned, Totals, case_parts, json_for_script
from agentv_py.report.page_header import page_header
from agentv_py.report.page_repeats import PageRepeats, page_section
from agentv_py.report.page_slices import slice_section
from agentv_py.report.spill import CaseStore
from agentv_py.scoring.intervals import headline
from agentv_py.scoring.metrics import Counts, field_labels
from agentv_py.scoring.repeats import MIXED_HINT, MixedRows
from agentv_py.scoring.taxonomy import CATEGORIES, LABELS

IMAGE_BYTES = 5 * 1024 * 1024  # an image larger than this is not embedded
IMAGE_BUDGET = 64 * 1024 * 1024  # all embedded images together
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}
IMAGE_TYPES |= {".webp": "image/webp", ".bmp": "image/bmp"}
SKIPPED_LISTED = 20  # lines that are not rows, listed on the page (all are counted)
MARKED_LISTED = 1_000  # xfail cases listed in the page (the rows show every one)
HISTOGRAM_BINS = 10
FIELDS_CHARTED = 40  # fields in the P/R/F1 chart (the worst F1 first)


class ReportError(Exception):
    """The report cannot be made (the results file is missing or holds no row)."""


@dataclass
class ReportStats:
    """What was written, for the command's one-line summary."""

    cases: int
    bytes: int
    images: int
    skipped_lines: int
    datasets: list[str]


@dataclass
class _Build:
    cases: CaseStore = field(default_factory=CaseStore)  # each case's parts, on disk until the page is written
    interned: Interned = field(default_factory=Interned)
    targets: set[str] = field(default_factory=set)  # of the rows read (a resumed case's earlier row too)
    skipped: list[str] = field(default_factory=list)  # "line N: why", the first SKIPPED_LISTED
    skipped_count: int = 0
    marked: dict[str, tuple[str, str]] = field(default_factory=dict)  # xfail cases: id -> (XFAIL | XPASS, reason)
    repeats: PageRepeats = field(default_factory=PageRepeats)  # a repeated run's runs (report/page_repeats.py)

    def add(self, line: int, row: ResultRow) -> None:
        parts = case_parts(row, self.interned)
        try:
            self.repeats.add(line, row)
        except MixedRows as exc:
            raise ReportError(f"{exc} ({MIXED_HINT})") from None
        self.cases.put(row.run_label, parts.entry, parts.details, parts.totals, parts.geometry)
        self.targets.add(row.target)
        outcome = row.expected_outcome
        if outcome is not None and (row.eval_id in self.marked or len(self.marked) < MARKED_LISTED):
            self.marked[row.eval_id] = (outcome.upper(), row.xfail or "")
        else:
            self.marked.pop(row.eval_id, None)  # a later row of the case is not marked

    def skip(self, line: int, why: str) -> None:
        self.skipped_count += 1
        if len(self.skipped) < SKIPPED_LISTED:
            self.skipped.append(f"line {line}: {why}")


# ----------------------------------------------------------------------------- charts (inline SVG)


def histogram_svg(scores: Iterable[float], bins: int = HISTOGRAM_BINS) -> str:
    """Case scores in `bins` bins over [0, 1] as an SVG bar chart (counts over each bar)."""
    counts = [0] * bins
    for score in scores:
        counts[min(max(int(score * bins), 0), bins - 1)] += 1
    width, height, pad, bottom = 520, 180, 30, 24
    top = max(counts) or 1
    bar = (width - 2 * pad) / bins
    parts = [
        f'<svg class="chart" role="img" aria-label="score histogram" viewBox="0 0 {width} {height + bottom}" '
        f'width="{width}" height="{height + bottom}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, count in enumerate(counts):
        h = (height - 30) * count / top
        x, y = pad + i * bar, height - h
        parts.append(
            f'<rect class="bar" x="{x + 2:.1f}" y="{y:.1f}" width="{bar - 4:.1f}" height="{h:.1f}">'
            f"<title>{i / bins:.1f}-{(i + 1) / bins:.1f}: {count}</title></rect>"
        )
        parts.append(f'<text x="{x + bar / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">{count}</text>')
    for i in range(0, bins + 1, 2):
        parts.append(f'<text x="{pad + i * bar:.1f}" y="{height + 16}" text-anchor="middle">{i / bins:.1f}</text>')
    parts.append(f'<line x1="{pad}" y1="{height}" x2="{width - pad}" y2="{height}" class="axis"/></svg>')
    return "".join(parts)


def fields_svg(per_field: Mapping[str, Counts]) -> str:
    """Precision, recall and F1 per field as grouped horizontal bars, the worst F1 first (at most
    FIELDS_CHARTED fields); an undefined rate is drawn as no bar and labelled `-`."""
    rows = sorted(per_field.items(), key=lambda item: (item[1].f1 if item[1].f1 is not None else -1, item[0]))
    rows = rows[:FIELDS_CHARTED]
    label_w, bar_w, row_h, width = 220, 300, 40, 620
    height = row_h * len(rows) + 30
    parts = [
        f'<svg class="chart" role="img" aria-label="per-field precision, recall and F1" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (name, counts) in enumerate(rows):
        y = 10 + i * row_h
        shown = name if len(name) <= 32 else name[:31] + "…"
        parts.append(f'<text x="{label_w - 8}" y="{y + 20}" text-anchor="end">{html.escape(shown)}</text>')
        for j, (metric, value) in enumerate(
            (("precision", counts.precision), ("recall", counts.recall), ("f1", counts.f1))
        ):
            w = bar_w * (value or 0.0)
            parts.append(
                f'<rect class="{metric}" x="{label_w}" y="{y + j * 11}" width="{w:.1f}" height="10">'
                f"<title>{html.escape(name)} {metric}: {'-' if value is None else f'{value:.3f}'}</title></rect>"
            )
        f1 = "-" if counts.f1 is None else f"{counts.f1:.2f}"
        parts.append(f'<text x="{label_w + bar_w + 8}" y="{y + 20}">F1 {f1}</text>')
    legend_y = height - 8
    for k, metric in enumerate(("precision", "recall", "f1")):
        x = label_w + k * 100
        parts.append(f'<rect class="{metric}" x="{x}" y="{legend_y - 9}" width="10" height="10"/>')
        parts.append(f'<text x="{x + 14}" y="{legend_y}">{metric}</text>')
    parts.append("</svg>")
    return "".join(parts)


# ----------------------------------------------------------------------------- images


def _images(cases: Iterable[str], images: Mapping[str, list[str]]) -> tuple[dict[str, list[str]], list[str]]:
    """Data URIs of the images of the cases with geometry results (local files read here, data
    URIs as they are), within the size limits, and what was left out and why."""
    embedded: dict[str, list[str]] = {}
    notes: list[str] = []
    budget = IMAGE_BUDGET
    for case_id in cases:
        for image in images.get(case_id, []):
            uri, why = _data_uri(image, min(IMAGE_BYTES, budget))
            if uri is None:
                notes.append(f"{case_id}: {why}")
                continue
            budget -= len(uri)
            embedded.setdefault(case_id, []).append(uri)
    return embedded, notes


def _data_uri(image: str, limit: int) -> tuple[str | None, str]:
    """An image as a data URI of at most about `limit` bytes, or (None, why not)."""
    if image.startswith("data:"):
        declared = image[5:].split(";", 1)[0].split(",", 1)[0].lower()
        if declared not in IMAGE_TYPES.values():
            return None, f"a data URI of type {declared or 'unknown'}: not an image a browser shows"
        if len(image) > limit * 4 // 3 + 64:
            return None, f"a data URI of {len(image)} characters: over the {limit}-byte limit"
        return image, ""
    path = Path(image)
    kind: str | None = IMAGE_TYPES.get(path.suffix.lower())
    if kind is None:
        return None, f"{path.name}: not an image type a browser shows"
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return None, f"{path.name}: {exc.strerror or exc}"
    if len(data) > limit:
        return None, f"{path.name}: over the {limit}-byte limit"
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}", ""


# ----------------------------------------------------------------------------- the page


def _template() -> Any:
    from importlib.resources import files

    import jinja2

    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    source = files("agentv_py.report").joinpath("templates/report.html.j2").read_text(encoding="utf-8")
    return environment.from_string(source)


def _script() -> str:
    from importlib.resources import files

    return files("agentv_py.report").joinpath("templates/report.js").read_text(encoding="utf-8")


def build_report(
    results: Path,
    out: Path,
    *,
    manifest: RunManifest | None = None,
    images: Callable[[], Mapping[str, list[str]]] | None = None,
    generated_at: str = "",
    shown: Path | None = None,
    by: str | None = None,
) -> ReportStats:
    """Read `results` (streamed; the last row of a case wins) and write the report to `out`.
    `images()` gives the case images, asked only when some case has a geometry result.
    ReportError when there is nothing to show. `shown`: the results as the page and the errors
    name them (default `results`). `by`: a section of every number per value of that metadata key."""
    if (why := not_results(results)) is not None:
        raise ReportError(f"results file {why}: {shown or results}")
    build = _Build()
    try:
        return _build_report(build, results, out, manifest, images, generated_at, shown or results, by)
    finally:
        build.cases.close()


def _build_report(
    build: _Build,
    results: Path,
    out: Path,
    manifest: RunManifest | None,
    images: Callable[[], Mapping[str, list[str]]] | None,
    generated_at: str,
    shown: Path,
    by: str | None,
) -> ReportStats:
    for line, row in read_rows(results):
        if isinstance(row, str):
            build.skip(line, row)
        else:
            build.add(line, row)
    cases = build.cases
    if not len(cases):
        why = f" ({build.skipped[0]})" if build.skipped else ""
        raise ReportError(f"no result rows in {shown}{why}")
    repeats = build.repeats.report()
    if manifest is not None and manifest.dataset.case_ids:  # dataset order, not the order cases finished in
        ids = manifest.dataset.case_ids
        cases.set_order(build.repeats.order(ids, repeats) if repeats is not None else ids)
    totals = Totals(by=by)
    for _, data in cases.column("totals"):
        totals.add(data)

    labels = field_labels(totals.counts)
    per_field: dict[str, Counts] = {labels[key]: counts for key, counts in totals.counts.items()}
    from agentv_py.report.metric_intervals import shown_field_intervals

    field_intervals = shown_field_intervals(totals.counts, totals.signatures)
    taxonomy_labels = field_labels(totals.counts.keys() | totals.taxonomy.keys())  # named as in the field table
    taxonomy = sorted(
        ((taxonomy_labels[key], kinds) for key, kinds in totals.taxonomy.items() if sum(kinds.values())),
        key=lambda item: (-sum(item[1].values()), item[0]),
    )
    geometry = cases.geometry_cases()
    wanted = images() if images is not None and next(geometry, None) is not None else {}
    of_case = build.repeats.case_of  # a repeated run's images are its case's
    shapes = dict.fromkeys(of_case.get(label, label) for label in cases.geometry_cases())
    embedded, image_notes = _images(iter(shapes), wanted) if wanted else ({}, [])

    def with_images(case_id: str, data: bytes) -> bytes:  # each case's details end with "}": its images go last
        found = json_for_script(embedded.get(of_case.get(case_id, case_id), [])).encode("utf-8")
        return data[:-1] + b',"images":' + found + b"}"

    script = _script()
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    interned = build.interned
    page = _template().render(
        header=page_header(manifest, build.interned.datasets, build.targets, shown),
        generated_at=generated_at,
        totals={
            "cases": totals.cases,
            "passed": totals.verdicts["pass"],
            "partial": totals.verdicts["partial"],
            "failed": totals.verdicts["fail"],
            "errors": totals.verdicts["error"],
            "mean": totals.mean,
            "intervals": headline(totals.verdicts["pass"], totals.scores)
            if repeats is None
            else build.repeats.headline(),
        },
        repeats=page_section(repeats) if repeats is not None else None,
        histogram=histogram_svg(totals.scores),
        fields_chart=fields_svg(per_field) if per_field else "",
        per_field=sorted(per_field.items(), key=lambda item: item[0]),
        taxonomy=taxonomy,
        categories=[(name, LABELS[name]) for name in CATEGORIES],
        evaluator_means=totals.evaluator_means(),
        detection=[cells for name, ap in totals.detection.results().items() for cells in table_rows(name, ap)],
        unreadable_ap=totals.unreadable_ap,
        slices=slice_section(by, totals.slices) if by is not None else None,
        field_intervals=field_intervals,
        skipped=build.skipped,
        skipped_count=build.skipped_count,
        marked=[(label, case_id, reason) for case_id, (label, reason) in sorted(build.marked.items())]
        + [("SKIPPED", case_id, reason) for case_id, reason in (manifest.skipped.items() if manifest else [])],
        image_notes=image_notes[:20],
        index_json=json_for_script(
            {
                "rows": _ROWS_HERE,
                "evaluators": list(interned.names),
                "fields": list(interned.fields),
                "datasets": list(interned.datasets),
                "value_chars": VALUE_CHARS,
            }
        ),
        details_b64=_DETAILS_HERE,
        script=script,
        script_hash=script_hash,
    )
    # the case table's rows and the details go there, streamed: never the whole page in memory
    head, rest = page.split(json.dumps(_ROWS_HERE))
    middle, tail = rest.split(_DETAILS_HERE)
    parts = itertools.chain(
        [head.encode("utf-8"), b"["],
        _joined(entry for _, entry in cases.column("entry")),
        [b"]", middle.encode("utf-8")],
        cases.base64_gzip(with_images),
        [tail.encode("utf-8")],
    )
    written = _write_atomic(out, parts)
    return ReportStats(
        totals.cases, written, sum(map(len, embedded.values())), build.skipped_count, list(interned.datasets)
    )


def _joined(items: Iterable[bytes]) -> Iterator[bytes]:
    """`items` separated by commas, a batch at a time."""
    batch: list[bytes] = []
    for n, item in enumerate(items):
        batch.append(b"," + item if n else item)
        if len(batch) >= 1000:
            yield b"".join(batch)
            batch = []
    yield b"".join(batch)


_ROWS_HERE = "AGENTVROWSGOHERE"  # where the case table's rows are streamed in
_DETAILS_HERE = "AGENTVDETAILSGOHERE"  # where the page's base64 details are streamed in


def _write_atomic(path: Path, parts: Iterable[bytes]) -> int:
    """The whole file or nothing: written beside `path` (mode 0666 less the umask), part by part,
    then renamed over it. Returns the bytes written."""
    import os
    import secrets

    temporary = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    written = 0
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                out.write(part)
                written += len(part)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return written
