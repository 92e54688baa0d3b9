"""The `agentv` Typer app, the one error boundary, and the exit codes (each defined once here).

Command modules import from this module and register themselves on `app`; `agentv_py.cli`
imports them. Nothing heavy is imported here: `agentv --help` stays fast.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from agentv_py import __version__
from agentv_py.cli.help import HelpGroup, with_exit_codes

if TYPE_CHECKING:
    from agentv_py.models.dataset import Gates
    from agentv_py.report.gates import Baseline
    from agentv_py.report.summary import RunSummary

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_CONFIG = 2
EXIT_INTERNAL = 3
EXIT_CASE_ERRORS = 4
EXIT_OUTPUT = 5
EXIT_INTERRUPTED = 130

_INTERNAL = (EXIT_INTERNAL, "internal error (a bug: traceback shown)")

EVAL_EXIT_CODES = (
    (EXIT_OK, "gate passed"),
    (
        EXIT_GATE_FAILED,
        "gate failed: some case did not pass, or (with --threshold, the dataset's gates: or --baseline) a gate failed",
    ),
    (
        EXIT_CONFIG,
        "usage or dataset/target configuration error, or a results file that cannot be written or "
        "that another agentv run is writing (nothing was run)",
    ),
    _INTERNAL,
    (
        EXIT_CASE_ERRORS,
        "a case had a target error (the target call failed) or an evaluator error (an evaluator "
        "could not run); takes precedence over 1",
    ),
    (
        EXIT_OUTPUT,
        "results, manifest, summary or a report (--junit, --summary-md) could not be written once "
        "the run had started (disk full, closed pipe): the run was stopped, its processes killed, "
        "rows written so far kept",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C or SIGTERM); rows of finished cases are kept"),
)
VALIDATE_EXIT_CODES = (
    (EXIT_OK, "every file is valid"),
    (EXIT_CONFIG, "problems found (each one is listed on stderr), or a usage error"),
    _INTERNAL,
)
METRICS_EXIT_CODES = (
    (EXIT_OK, "metrics reported"),
    (EXIT_GATE_FAILED, "the file holds no per-field counts (for the chosen evaluator)"),
    (EXIT_CONFIG, "usage error, or the results file does not exist"),
    _INTERNAL,
)
COMPARE_EXIT_CODES = (
    (EXIT_OK, "no regression"),
    (
        EXIT_GATE_FAILED,
        "regression: a case went from pass to not pass (more than --allow-flips), a case has a new error, "
        "or the mean score or a field's F1 fell (by more than --max-drop); with --significant-only, what "
        "the paired tests call significant at --alpha, and new errors",
    ),
    (
        EXIT_CONFIG,
        "usage error (a negative --allow-flips, --max-drop outside 0-1), or files that cannot be compared: "
        "missing, not results files (a bad or cut-short line), the same file twice, runs of different "
        "datasets (without --force), or one run with per-field results and the other without",
    ),
    _INTERNAL,
)
REPORT_EXIT_CODES = (
    (EXIT_OK, "report written"),
    (
        EXIT_CONFIG,
        "usage error: the results file is missing or holds no row, or --out names one of the command's "
        "inputs (the results file, its manifest, --dataset)",
    ),
    _INTERNAL,
    (EXIT_OUTPUT, "the report could not be written (no such directory, no permission, disk full)"),
)
EXPLAIN_EXIT_CODES = (
    (EXIT_OK, "explained"),
    (
        EXIT_CONFIG,
        "usage error: the results file is missing or cut short, no such case (near ids named) or a skipped one, "
        "or no such field (the case's fields listed)",
    ),
    _INTERNAL,
)
MERGE_EXIT_CODES = (
    (
        EXIT_OK,
        "merged, and the merged rows pass the gate (as agentv eval gates: every case passed, or "
        "--threshold, or the dataset's gates:)",
    ),
    (
        EXIT_GATE_FAILED,
        "merged, but the gate failed, or some cases of the dataset have no row in any run (without --allow-missing)",
    ),
    (
        EXIT_CONFIG,
        "usage error, or runs that cannot be merged (nothing written): a missing file or manifest, a bad line, "
        "runs of another dataset, evaluators, target or judge files, a shard given twice, a case with rows in two runs",
    ),
    _INTERNAL,
    (EXIT_CASE_ERRORS, "merged, and some row is a target or evaluator error; takes precedence over 1"),
)
PLAN_SIZE_EXIT_CODES = (
    (EXIT_OK, "the run's documents are enough to detect the drop, for every metric planned"),
    (EXIT_GATE_FAILED, "some metric needs more documents than the run has (each is listed)"),
    (EXIT_CONFIG, "usage error: a missing file, fewer than 2 scored cases, an option out of range"),
    _INTERNAL,
)
SCHEMA_EXIT_CODES = (
    (EXIT_OK, "schema printed"),
    (EXIT_CONFIG, "usage error: no file format, or not one of dataset, targets"),
    _INTERNAL,
)

EvalCommand = with_exit_codes("EvalCommand", EVAL_EXIT_CODES)
ValidateCommand = with_exit_codes("ValidateCommand", VALIDATE_EXIT_CODES)
MetricsCommand = with_exit_codes("MetricsCommand", METRICS_EXIT_CODES)
CompareCommand = with_exit_codes("CompareCommand", COMPARE_EXIT_CODES)
SchemaCommand = with_exit_codes("SchemaCommand", SCHEMA_EXIT_CODES)
ReportCommand = with_exit_codes("ReportCommand", REPORT_EXIT_CODES)
ExplainCommand = with_exit_codes("ExplainCommand", EXPLAIN_EXIT_CODES)
MergeCommand = with_exit_codes("MergeCommand", MERGE_EXIT_CODES)
PlanSizeCommand = with_exit_codes("PlanSizeCommand", PLAN_SIZE_EXIT_CODES)


class AgentvGroup(HelpGroup):
    exit_codes_heading = "Exit codes of agentv eval"
    exit_codes = EVAL_EXIT_CODES
    exit_codes_note = (
        "rescore, validate, metrics, compare, plan-size, merge, schema and cache exit with their own codes: "
        "see agentv COMMAND --help."
    )


app = typer.Typer(
    name="agentv",
    cls=AgentvGroup,
    help="Eval runner for structured outputs: run your extractor per case, score every field, gate CI.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click-style help: no boxes, no type tags; reads the same in a pipe
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])


def boundary(func: F) -> F:
    """The one place domain errors become messages and exit codes."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from agentv_py.errors import AgentvError

        try:
            code = func(*args, **kwargs)
        except AgentvError as exc:
            if exc.exit_code == EXIT_OUTPUT:
                _silence_stdout()
            print(f"error: {visible_lines(exc.message)}", file=sys.stderr)
            if exc.hint:
                print(f"hint: {visible_lines(exc.hint)}", file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:  # stdout closed while printing (`agentv ... | head`)
            _silence_stdout()
            print("error: stdout was closed before the output was complete", file=sys.stderr)
            raise typer.Exit(EXIT_OUTPUT) from None
        except typer.Exit:
            raise
        except Exception:  # noqa: BLE001 - anything else is a bug: show it
            traceback.print_exc()
            print("agentv: internal error (this is a bug; please report it with the traceback above)", file=sys.stderr)
            raise typer.Exit(EXIT_INTERNAL) from None
        raise typer.Exit(code or 0)

    return wrapper  # type: ignore[return-value]


def visible_lines(text: str) -> str:
    """A message's lines, each with its control characters made visible (`report.text.visible`):
    messages quote data (case ids, file names), and data never drives the terminal."""
    from agentv_py.report.text import visible

    return "\n".join(visible(line) for line in text.split("\n"))


def _silence_stdout() -> None:
    """After stdout failed, point it at /dev/null: the interpreter's final flush must not fail
    again (and print a second error) on a pipe nobody reads."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _version(value: bool) -> None:
    if value:
        print(f"agentv {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Eval runner for structured outputs."""


__all__ = [
    "COMPARE_EXIT_CODES",
    "EVAL_EXIT_CODES",
    "EXIT_CASE_ERRORS",
    "EXIT_CONFIG",
    "EXIT_GATE_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXPLAIN_EXIT_CODES",
    "METRICS_EXIT_CODES",
    "REPORT_EXIT_CODES",
    "SCHEMA_EXIT_CODES",
    "VALIDATE_EXIT_CODES",
    "CompareCommand",
    "EvalCommand",
    "ExplainCommand",
    "MetricsCommand",
    "ReportCommand",
    "SchemaCommand",
    "ValidateCommand",
    "app",
    "boundary",
]


def gate_exit(
    summary: RunSummary, threshold: float | None, gates: Gates | None = None, baseline: Baseline | None = None
) -> int:
    """The exit code of a run that scored cases (`eval`, `rescore`): the gate's outcome
    (`report.summary.gate`), its reason on stderr when it did not pass. With gates (--threshold,
    the dataset's `gates:`, --baseline) each one is printed on stderr with its value, then
    "gate passed" or why it failed."""
    from agentv_py.report.summary import gate

    result = gate(summary, threshold, gates, baseline)
    if result.outcome != "interrupted":
        from agentv_py.report.text import visible

        for check in result.checks:  # field paths, evaluator names and case ids are data
            print(visible(check.line), file=sys.stderr)
        if result.checks and result.passed:
            print("gate passed", file=sys.stderr)
    if result.message and result.outcome != "interrupted":
        print(result.message, file=sys.stderr)
    return {
        "ok": EXIT_OK,
        "gate_failed": EXIT_GATE_FAILED,
        "errors": EXIT_CASE_ERRORS,
        "interrupted": EXIT_INTERRUPTED,
    }[result.outcome]


# The report options of the commands that score a run (`eval`, `rescore`): declared once.
JUNIT_OPTION: Any = typer.Option(
    None,
    "--junit",
    metavar="FILE",
    help="Also write JUnit XML for CI (one testcase per case; misses and errors as failures and errors).",
)
JUNIT_PER_FIELD_OPTION: Any = typer.Option(
    False,
    "--junit-per-field",
    help="With --junit: one more testsuite per field_accuracy field, one testcase per case.",
)
BASELINE_OPTION: Any = typer.Option(
    None,
    "--baseline",
    metavar="BASE.jsonl",
    help="Gate against a previous run of the same dataset, as `agentv compare` does: fail when a case "
    "it passed does not pass (more than --allow-flips), or the mean score or a field's F1 drops by "
    "more than --max-drop (a field it scored and this run does not, or gets wrong every time, is a "
    "full drop). Errors fail the run anyway (exit 4).",
)
ALLOW_FLIPS_OPTION: Any = typer.Option(
    None,
    "--allow-flips",
    metavar="N",
    help="With --baseline: how many cases it passed may not pass now.  [default: 0]",
)
THRESHOLD_OPTION: Any = typer.Option(
    None,
    "--threshold",
    min=0.0,
    max=1.0,
    metavar="X",
    help="Gate on mean score >= X instead of 'every case passed'.",
)
MAX_DROP_OPTION: Any = typer.Option(
    None,
    "--max-drop",
    min=0.0,
    max=1.0,
    metavar="X",
    help="With --baseline: the largest drop allowed.  [default: 0]",
)
HTML_OPTION: Any = typer.Option(
    None,
    "--html",
    metavar="FILE",
    help="Also write the HTML report (as `agentv report` makes it) at the end of the run.",
)
SUMMARY_MD_OPTION: Any = typer.Option(
    None,
    "--summary-md",
    metavar="FILE",
    help="Also write a Markdown summary (totals, gate, worst fields, failed cases).  "
    "[default: appended to $GITHUB_STEP_SUMMARY when that is set]",
)
