"""`agentv metrics RESULTS.jsonl`: dataset-level per-field precision, recall and F1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from agentv_py.cli.base import EXIT_GATE_FAILED, EXIT_OK, MetricsCommand, app, boundary


@app.command(cls=MetricsCommand, short_help="Per-field precision, recall and F1 over a results file.")
@boundary
def metrics(
    results: Path = typer.Argument(
        ...,
        metavar="RESULTS",
        help="A JSONL results file written by `agentv eval`, or an AgentV run folder or its index.jsonl.",
        show_default=False,
    ),
    evaluator: str | None = typer.Option(
        None, "--evaluator", "-e", metavar="NAME", help="Only metrics from evaluators with this name."
    ),
    output_format: str = typer.Option("table", "--format", "-f", metavar="FORMAT", help="table, csv or json."),
    taxonomy: bool = typer.Option(
        False,
        "--taxonomy",
        help="Also show misses by kind per field: missing, hallucinated, wrong value, format only, near miss "
        "(--format json always has them).",
    ),
    confidence: float = typer.Option(
        0.95, "--confidence", metavar="LEVEL", help="Level of the confidence intervals, between 0 and 1."
    ),
    seed: int = typer.Option(
        20_260_227, "--seed", metavar="N", help="Seed of the document bootstrap (recorded with the intervals)."
    ),
    intervals: bool = typer.Option(
        True, "--intervals/--no-intervals", help="Confidence intervals on every rate (docs/statistics.md)."
    ),
    calibration: bool = typer.Option(
        False,
        "--calibration",
        help="Also how well the extractor's own confidence predicts each field's hit: ECE, AUROC, and the "
        "share of documents accepted without review at --precision (field_accuracy's confidence: option).",
    ),
    precision: float = typer.Option(
        0.95, "--precision", metavar="P", help="With --calibration: the precision the accepted fields must reach."
    ),
    by: str | None = typer.Option(
        None,
        "--by",
        metavar="KEY",
        help="Also every number per value of this metadata key of the cases (`metadata: {doc_type: receipt}`); "
        "cases without it form the slice (none).",
    ),
) -> int:
    """Sum per-field TP/TN/FP/FN (field_accuracy, iou_score, judges) into precision, recall, F1, micro and macro."""
    from agentv_py.errors import AgentvError
    from agentv_py.report.metrics import HOW_TO_EMIT, aggregate, render_csv, render_table, render_taxonomy
    from agentv_py.report.render import stdout_console
    from agentv_py.report.text import visible

    if output_format not in ("table", "csv", "json"):
        raise AgentvError(f"invalid --format {output_format!r}: choose table, csv or json")
    if not 0 < precision <= 1:
        raise AgentvError(f"--precision {precision:g} is not in (0, 1]", hint="e.g. --precision 0.95")
    if calibration and output_format == "csv":
        raise AgentvError("--calibration goes with --format table or json")
    if by is not None and output_format == "csv":
        raise AgentvError("--by goes with --format table or json")
    if by is not None and not by.strip():
        raise AgentvError("--by needs a metadata key, e.g. --by doc_type")
    if taxonomy and output_format == "csv":
        raise AgentvError("--taxonomy goes with --format table (--format json always has the taxonomy)")
    if not 0 < confidence < 1:
        raise AgentvError(f"--confidence {confidence:g} is not between 0 and 1", hint="e.g. --confidence 0.9")
    from agentv_py.report.agentv_rows import readable_results
    from agentv_py.report.calibration import Calibration
    from agentv_py.report.jsonl import UnusableInput, not_results
    from agentv_py.scoring.repeats import MIXED_HINT, MixedRows

    calibrated = Calibration(precision) if calibration else None

    try:
        with readable_results(results) as source:
            if (why := not_results(source)) is not None:
                raise AgentvError(
                    f"results file {why}: {results}", hint="pass the JSONL file `agentv eval` wrote (--out)"
                )
            report = aggregate(  # the taxonomy only where it is shown
                source,
                evaluator,
                taxonomy=taxonomy or output_format == "json",
                documents=intervals,
                by=by,
                calibration=calibrated,
            )
    except UnusableInput as exc:
        raise AgentvError(exc.message, hint=exc.hint) from None  # exit 2
    except MixedRows as exc:
        raise AgentvError(f"{results}: {exc}", hint=MIXED_HINT) from None
    report.path = str(results)  # as given, not an AgentV run's converted file
    where = visible(str(results))
    for line, reason in report.problems:
        print(f"{where}:{line}: skipped: {visible(reason)}", file=sys.stderr)
    if report.problems_not_listed:
        print(f"{where}: {report.problems_not_listed} more skipped (not listed)", file=sys.stderr)
    if not report.per_field:
        if evaluator and report.evaluators_with_metrics:
            names = visible(", ".join(sorted(report.evaluators_with_metrics)))
            print(
                f"no metrics from an evaluator named '{visible(evaluator)}'; evaluators with metrics: {names}",
                file=sys.stderr,
            )
        else:
            print(f"no per-field counts in {report.rows} rows of {where}: {HOW_TO_EMIT}", file=sys.stderr)
        return EXIT_GATE_FAILED
    from agentv_py.report.metric_intervals import metric_intervals

    if intervals:
        report.intervals = metric_intervals(report, confidence, seed)
    report.repeats = report.tally.report(confidence, seed)
    slices = report.slices.ordered() if report.slices is not None else []
    for label, part in slices:
        part.path = f"{results} [{by} = {label}]"
        if intervals and part.counts:
            part.intervals = metric_intervals(part, confidence, seed)
    if by is not None and all(label == "(none)" for label, _ in slices):
        print(f"warning: no case of {visible(str(results))} has the metadata key '{visible(by)}'", file=sys.stderr)
    if output_format == "json":
        data = report.to_json()
        if calibrated is not None:
            data["calibration"] = {"precision": precision, "fields": calibrated.fields()}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif output_format == "csv":
        sys.stdout.write(render_csv(report))
    else:
        render_table(stdout_console(), report)
        from agentv_py.report.detection import render as render_detection

        render_detection(stdout_console(), report.detection)
        if report.repeats is not None:
            from agentv_py.report.repeats import render_flips

            render_flips(stdout_console(), report.repeats)
        for _, part in slices:
            if part.counts:
                render_table(stdout_console(), part)
                render_detection(stdout_console(), part.detection)
            else:
                print(f"{visible(part.path)}: no per-field counts in its {part.rows} rows")
        if calibrated is not None:
            from agentv_py.report.calibration import render as render_calibration

            render_calibration(stdout_console(), calibrated)
        if taxonomy:
            render_taxonomy(stdout_console(), report)
    return EXIT_OK
