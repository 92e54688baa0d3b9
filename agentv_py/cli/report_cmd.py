"""`agentv report RESULTS`: one self-contained HTML file to open from a CI artifact."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentv_py.cli.base import EXIT_OK, ReportCommand, app, boundary


@app.command(cls=ReportCommand, short_help="Write a self-contained HTML report of a results file.")
@boundary
def report(
    results: Path = typer.Argument(
        ...,
        metavar="RESULTS",
        help="A JSONL results file written by `agentv eval`, or an AgentV run folder or its index.jsonl.",
        show_default=False,
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="FILE",
        help="The HTML file.  [default: RESULTS with .html; report.html in an AgentV run folder]",
    ),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        "-d",
        metavar="DATASET",
        help="Dataset whose case images the shapes are drawn over.  [default: the one RESULTS' manifest names]",
    ),
    by: str | None = typer.Option(
        None,
        "--by",
        metavar="KEY",
        help="Also a section of every number per value of this metadata key of the cases (`metadata: "
        "{doc_type: receipt}`); cases without it form the slice (none).",
    ),
) -> int:
    """One HTML file, no server and no network: run header and gates, score histogram, per-field
    precision/recall/F1, misses by kind, and a case table to filter, sort and open (field diffs,
    line items, judge replies, boxes over the image)."""
    from agentv_py.errors import AgentvError
    from agentv_py.report.agentv_rows import agentv_index, readable_results
    from agentv_py.report.jsonl import UnusableInput
    from agentv_py.report.manifest import manifest_path
    from agentv_py.report.text import visible
    from agentv_py.run_reports import named_dataset, refuse_clash, refuse_directory, write_html

    if by is not None and not by.strip():
        raise AgentvError("--by needs a metadata key, e.g. --by doc_type")
    index = agentv_index(results)  # an AgentV run folder, or its index.jsonl
    if index is None:
        refuse_directory(results, hint="pass a JSONL file `agentv eval` wrote (--out), or an AgentV run folder")
    if out is not None:
        refuse_directory(out, "--out", "pass the HTML file to write")
    default = index.parent / "report.html" if index is not None else results.with_suffix(".html")  # as AgentV's
    target = out if out is not None else default
    read = [
        ("the results file", index or results),
        ("the manifest of the results file", manifest_path(results)),
        ("--dataset", dataset) if dataset is not None else ("the dataset its manifest names", named_dataset(results)),
    ]
    refuse_clash([("--out", target)], read, "see agentv report --help")
    try:
        with readable_results(results) as source:
            written = write_html(source, target, dataset, shown=results, by=by)
    except UnusableInput as exc:
        raise AgentvError(exc.message, hint=exc.hint) from None  # exit 2
    print(visible(str(target)))
    print(
        f"agentv: report of {written.cases} case{'s' if written.cases != 1 else ''}, "
        f"{written.bytes / 1024:.0f} KiB, {written.images} image{'s' if written.images != 1 else ''} embedded",
        file=sys.stderr,
    )
    return EXIT_OK
