"""`agentv report RESULTS`: one self-contained HTML file to open from a CI artifact."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentv_py.cli.base import EXIT_OK, ReportCommand, app, boundary

if TYPE_CHECKING:
    from agentv_py.report.html import ReportStats


@app.command(cls=ReportCommand, short_help="Write a self-contained HTML report of a results file.")
@boundary
def report(
    results: Path = typer.Argument(
        ..., metavar="RESULTS", help="A JSONL results file written by `agentv eval`.", show_default=False
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", metavar="FILE", help="The HTML file.  [default: RESULTS with .html]"
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        "-d",
        metavar="DATASET",
        help="Dataset whose case images the shapes are drawn over.  [default: the one RESULTS' manifest names]",
    ),
) -> int:
    """One HTML file, no server and no network: run header and gates, score histogram, per-field
    precision/recall/F1, misses by kind, and a case table to filter, sort and open (field diffs,
    line items, judge replies, boxes over the image)."""
    from agentv_py.cli.base import refuse_clash
    from agentv_py.report.manifest import manifest_path
    from agentv_py.report.render import visible

    target = out if out is not None else results.with_suffix(".html")
    read = [
        ("the results file", results),
        ("the manifest of the results file", manifest_path(results)),
        ("--dataset", dataset) if dataset is not None else ("the dataset its manifest names", _named_dataset(results)),
    ]
    refuse_clash([("--out", target)], read, "see agentv report --help")
    written = write_html(results, target, dataset)
    print(visible(str(target)))
    print(
        f"agentv: report of {written.cases} case{'s' if written.cases != 1 else ''}, "
        f"{written.bytes / 1024:.0f} KiB, {written.images} image{'s' if written.images != 1 else ''} embedded",
        file=sys.stderr,
    )
    return EXIT_OK


def _refuse_image_clash(target: Path, images: dict[str, list[str]]) -> None:
    """The case images a report embeds are inputs too: the page never replaces one (exit 2, before
    anything is written)."""
    from agentv_py.cli.base import refuse_clash
    from agentv_py.locate import inputs_among

    files = (
        (f"an image of case '{case_id}'", Path(image))
        for case_id, found in images.items()
        for image in found
        if not image.startswith("data:")
    )
    clash = inputs_among([("--out", target)], files)
    refuse_clash([("--out", target)], clash, "see agentv report --help")


def _named_dataset(results: Path) -> Path | None:
    """The dataset the results file's manifest names (read for the case images): an input too."""
    from agentv_py.report.manifest import ManifestError, read_manifest

    try:
        return Path(read_manifest(results).dataset.path) if results.is_file() else None
    except ManifestError:
        return None


def write_html(
    results: Path, target: Path, dataset: Path | None, images: dict[str, list[str]] | None = None
) -> ReportStats:
    """Build the report; a usage error (exit 2) for a results file with nothing to show,
    OutputError (exit 5) when the file cannot be written. The case images (for cases with
    geometry results only) come from `images`, else from `dataset` or the manifest's."""
    from agentv_py.errors import AgentvError, OutputError
    from agentv_py.report.html import ReportError, build_report
    from agentv_py.report.manifest import ManifestError, read_manifest, utc_now
    from agentv_py.report.render import visible
    from agentv_py.session import report_images

    try:
        manifest = read_manifest(results) if results.is_file() else None
    except ManifestError:
        manifest = None

    def load_images() -> dict[str, list[str]]:
        found = images
        if found is None:
            found, why = report_images(results, dataset)
            if why is not None:
                print(f"note: {visible(why)}", file=sys.stderr)
        _refuse_image_clash(target, found)
        return found

    try:
        return build_report(results, target, manifest=manifest, images=load_images, generated_at=utc_now())
    except ReportError as exc:
        raise AgentvError(str(exc), hint="pass a JSONL file `agentv eval` wrote (--out)") from None
    except OSError as exc:
        raise OutputError(f"cannot write the HTML report {target}: {exc.strerror or exc}") from None
