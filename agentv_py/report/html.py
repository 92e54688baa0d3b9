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
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.models.manifest import RunManifest
from agentv_py.models.results import EvaluatorResult, ResultRow
from agentv_py.report.jsonl import not_results, read_rows
from agentv_py.report.misses import misses_with_values
from agentv_py.report.spill import Spill
from agentv_py.report.summary import RunSummary
from agentv_py.scoring.metrics import Counts, FieldKey, field_labels, row_field_counts, walk_results
from agentv_py.scoring.taxonomy import CATEGORIES, LABELS, add_taxonomy, row_taxonomy

VALUE_CHARS = 2_000  # a value longer than this is cut in the embedded details
LIST_ITEMS = 200  # hits, misses, items listed per evaluator in the details
IMAGE_BYTES = 5 * 1024 * 1024  # an image larger than this is not embedded
IMAGE_BUDGET = 64 * 1024 * 1024  # all embedded images together
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}
IMAGE_TYPES |= {".webp": "image/webp", ".bmp": "image/bmp"}
GEOMETRY = ("iou_score", "coordinate_distance")
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
    summary: RunSummary = field(default_factory=RunSummary)
    index: dict[str, int] = field(default_factory=dict)  # case id -> its slot (the last row of a case wins)
    rows: list[list[Any]] = field(default_factory=list)
    details: Spill = field(default_factory=Spill)  # each case's details, on disk until the page is written
    names: dict[str, int] = field(default_factory=dict)  # evaluator names, interned
    fields: dict[str, int] = field(default_factory=dict)  # field paths, interned
    datasets: dict[str, int] = field(default_factory=dict)
    targets: set[str] = field(default_factory=set)  # of the rows read (a resumed case's earlier row too)
    counts: dict[FieldKey, Counts] = field(default_factory=dict)
    taxonomy: dict[FieldKey, dict[str, int]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # "line N: why"
    geometry_cases: list[str] = field(default_factory=list)


def _intern(table: dict[str, int], key: str) -> int:
    return table.setdefault(key, len(table))


def cut(value: Any) -> Any:
    """A value for the embedded details: strings over VALUE_CHARS cut (with their length said),
    containers walked (at most LIST_ITEMS entries each), numbers that JSON cannot hold as text."""
    if isinstance(value, str):
        if len(value) <= VALUE_CHARS:
            return value
        return {"$cut": value[:VALUE_CHARS], "$length": len(value)}
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {str(k): cut(v) for k, v in items[:LIST_ITEMS]}
        if len(items) > LIST_ITEMS:
            out["$more"] = len(items) - LIST_ITEMS
        return out
    if isinstance(value, (list, tuple)):
        shown = [cut(v) for v in value[:LIST_ITEMS]]
        if len(value) > LIST_ITEMS:
            shown.append({"$more": len(value) - LIST_ITEMS})
        return shown
    return cut(str(value))


def _evaluator_details(result: EvaluatorResult) -> dict[str, Any]:
    """One evaluator's part of a case's details: score and texts, field_accuracy's fields (with
    line-item alignments), geometry's shapes, a judge's other details, nested results."""
    details = dict(result.details)
    out: dict[str, Any] = {
        "name": result.name,
        "type": result.type,
        "status": result.status,
        "score": result.score,
        "weight": result.weight,
        "verdict": result.verdict,
        "reasoning": cut(result.reasoning),
        "hits": cut(result.hits),
        "misses": cut(misses_with_values(result.misses, [result])),
    }
    if result.type == "field_accuracy" and isinstance(details.get("fields"), list):
        out["fields"] = cut(details.pop("fields"))
    if result.type in GEOMETRY and isinstance(details.get("drawn"), dict):
        out["drawn"] = cut(details.pop("drawn"))
    nested = details.pop("evaluator_results", None)
    if details:
        out["details"] = cut(details)
    children = [_evaluator_details(child) for child in result.evaluator_results]
    if isinstance(nested, list):
        children += [
            _evaluator_details(EvaluatorResult.model_validate(child))
            for child in nested
            if isinstance(child, dict) and _valid_result(child)
        ]
    if children:
        out["children"] = children
    return out


def _valid_result(data: dict[str, Any]) -> bool:
    try:
        EvaluatorResult.model_validate(data)
    except ValueError:
        return False
    return True


def _missed_fields(results: Iterable[Any]) -> list[str]:
    """Field paths a field_accuracy result (nested ones included) scored as a miss."""
    missed: dict[str, None] = {}
    for _, kind, details in walk_results(results):
        entries = details.get("fields")
        if kind == "field_accuracy" and isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, dict) and entry.get("status") == "miss" and isinstance(entry.get("path"), str):
                    missed.setdefault(entry["path"], None)
    return list(missed)


def _scored_fields(results: Iterable[Any]) -> list[str]:
    found: dict[str, None] = {}
    for _, kind, details in walk_results(results):
        entries = details.get("fields")
        if kind == "field_accuracy" and isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    found.setdefault(entry["path"], None)
    return list(found)


def _add(build: _Build, row: ResultRow) -> None:
    build.summary.add(row)
    for key, counts in row_field_counts(row.evaluator_results).items():
        build.counts.setdefault(key, Counts())
        build.counts[key] += counts
    add_taxonomy(build.taxonomy, row_taxonomy(row.evaluator_results))
    evaluators = sorted({_intern(build.names, result.name) for result in row.evaluator_results})
    missed = [_intern(build.fields, path) for path in _missed_fields(row.evaluator_results)]
    scored = [_intern(build.fields, path) for path in _scored_fields(row.evaluator_results)]
    verdict = "error" if row.status == "error" else row.verdict
    entry = [row.eval_id, row.score, verdict, evaluators, missed, scored, _intern(build.datasets, row.dataset)]
    geometry = any(result.type in GEOMETRY for result in row.evaluator_results)
    details = {
        "id": row.eval_id,
        "dataset": row.dataset,
        "target": row.target,
        "status": row.status,
        "verdict": row.verdict,
        "score": row.score,
        "duration_ms": row.duration_ms,
        "attempts": row.attempts,
        "error": cut(row.error),
        "answer": cut(row.candidate_answer),
        "evaluators": [_evaluator_details(result) for result in row.evaluator_results],
        "geometry": geometry,
    }
    data = _json_for_script(details).encode("utf-8")
    build.targets.add(row.target)
    slot = build.index.get(row.eval_id)
    if slot is None:
        build.index[row.eval_id] = len(build.rows)
        build.details.put(len(build.rows), data)
        build.rows.append(entry)
        if geometry:
            build.geometry_cases.append(row.eval_id)
    else:  # a resumed run: the last row of a case is the one shown
        build.rows[slot] = entry
        build.details.put(slot, data)


def _json_for_script(value: Any) -> str:
    """JSON that can sit inside `<script type="application/json">`: nothing in it can close the
    element or start markup (`<`, `>`, `&` escaped), and no line separator breaks it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028")):
        text = text.replace(raw, escaped)
    return text.replace("\u2029", "\\u2029")


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


def _images(build: _Build, images: Mapping[str, list[str]]) -> tuple[dict[str, list[str]], list[str]]:
    """Data URIs of the images of the cases with geometry results (local files read here, data
    URIs as they are), within the size limits, and what was left out and why."""
    embedded: dict[str, list[str]] = {}
    notes: list[str] = []
    budget = IMAGE_BUDGET
    for case_id in build.geometry_cases:
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


def _header(manifest: RunManifest | None, build: _Build, results: Path) -> dict[str, Any]:
    """The run header: from the manifest when there is one, else from the rows."""
    datasets = list(build.datasets)
    header: dict[str, Any] = {
        "results": str(results),
        "dataset": ", ".join(datasets) if datasets else "-",
        "several_datasets": len(datasets) > 1,
        "target": ", ".join(sorted(build.targets)) or "-",
        "tool": None,
        "run_id": None,
        "started_at": None,
        "ended_at": None,
        "status": None,
        "dataset_path": None,
        "gate": None,
    }
    if manifest is not None:
        header.update(
            tool=f"{manifest.tool.get('name', 'agentv')} {manifest.tool.get('version', '')}".strip(),
            run_id=manifest.run_id,
            started_at=manifest.started_at,
            ended_at=manifest.ended_at,
            status=manifest.status,
            dataset_path=manifest.dataset.path,
            dataset=manifest.dataset.name if not header["several_datasets"] else header["dataset"],
            target=f"{manifest.target.name} ({manifest.target.provider})",
            gate=manifest.gate,
        )
    return header


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
) -> ReportStats:
    """Read `results` (streamed; the last row of a case wins) and write the report to `out`.
    `images()` gives the case images, asked only when some case has a geometry result.
    ReportError when there is nothing to show."""
    if (why := not_results(results)) is not None:
        raise ReportError(f"results file {why}: {results}")
    build = _Build()
    try:
        return _build_report(build, results, out, manifest, images, generated_at)
    finally:
        build.details.close()


def _build_report(
    build: _Build,
    results: Path,
    out: Path,
    manifest: RunManifest | None,
    images: Callable[[], Mapping[str, list[str]]] | None,
    generated_at: str,
) -> ReportStats:
    for line, row in read_rows(results):
        if isinstance(row, str):
            build.skipped.append(f"line {line}: {row}")
        else:
            _add(build, row)
    if not build.rows:
        why = f" ({build.skipped[0]})" if build.skipped else ""
        raise ReportError(f"no result rows in {results}{why}")
    slots = list(range(len(build.rows)))
    if manifest is not None and manifest.dataset.case_ids:  # dataset order, not the order cases finished in
        order = {case_id: i for i, case_id in enumerate(manifest.dataset.case_ids)}
        slots.sort(key=lambda i: (order.get(build.rows[i][0], len(order)), i))
        build.rows = [build.rows[i] for i in slots]

    labels = field_labels(build.counts)
    per_field: dict[str, Counts] = {labels[key]: counts for key, counts in build.counts.items()}
    taxonomy_labels = field_labels(build.counts.keys() | build.taxonomy.keys())  # named as in the field table
    taxonomy = sorted(
        ((taxonomy_labels[key], kinds) for key, kinds in build.taxonomy.items() if sum(kinds.values())),
        key=lambda item: (-sum(item[1].values()), item[0]),
    )
    wanted = images() if images is not None and build.geometry_cases else {}
    embedded, image_notes = _images(build, wanted)
    ids = {slot: build.rows[n][0] for n, slot in enumerate(slots)}

    def with_images(slot: int, data: bytes) -> bytes:  # each case's details end with "}": its images go last
        found = _json_for_script(embedded.get(ids[slot], [])).encode("utf-8")
        return data[:-1] + b',"images":' + found + b"}"

    script = _script()
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    summary = build.summary
    stats = summary.stats()
    page = _template().render(
        header=_header(manifest, build, results),
        generated_at=generated_at,
        totals={
            "cases": len(build.rows),
            "passed": sum(1 for r in build.rows if r[2] == "pass"),
            "partial": sum(1 for r in build.rows if r[2] == "partial"),
            "failed": sum(1 for r in build.rows if r[2] == "fail"),
            "errors": sum(1 for r in build.rows if r[2] == "error"),
            "mean": None if stats is None else stats.mean,
        },
        histogram=histogram_svg(summary.scores),
        fields_chart=fields_svg(per_field) if per_field else "",
        per_field=sorted(per_field.items(), key=lambda item: item[0]),
        taxonomy=taxonomy,
        categories=[(name, LABELS[name]) for name in CATEGORIES],
        evaluator_means=summary.evaluator_means(),
        skipped=build.skipped[:20],
        skipped_count=len(build.skipped),
        image_notes=image_notes[:20],
        index_json=_json_for_script(
            {
                "rows": build.rows,
                "evaluators": list(build.names),
                "fields": list(build.fields),
                "datasets": list(build.datasets),
                "value_chars": VALUE_CHARS,
            }
        ),
        details_b64=_DETAILS_HERE,
        script=script,
        script_hash=script_hash,
    )
    head, tail = page.split(_DETAILS_HERE)  # the details go there, streamed: never the whole page in memory
    details = build.details.base64_gzip(slots, with_images)
    written = _write_atomic(out, itertools.chain([head.encode("utf-8")], details, [tail.encode("utf-8")]))
    return ReportStats(
        len(build.rows), written, sum(map(len, embedded.values())), len(build.skipped), list(build.datasets)
    )


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
