"""The reports a run writes besides its results (`--junit`, `--summary-md`,
`$GITHUB_STEP_SUMMARY`, `--html`) and the HTML report of any results file (`agentv report`): one
home for `agentv eval`, `agentv rescore`, `agentv report` and library users of `run_eval`. The
option checks that go with them (which reports go together, every output's path and role) are
here too, so each command checks them the same way."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentv_py.errors import AgentvError, ConfigError
from agentv_py.loading import load_dataset
from agentv_py.prepared import IMAGES, LoadedDataset, cases_where
from agentv_py.report.manifest import ManifestError, read_manifest

if TYPE_CHECKING:
    from agentv_py.locate import Role
    from agentv_py.models.dataset import Gates
    from agentv_py.models.results import ResultRow
    from agentv_py.report.gates import Baseline
    from agentv_py.report.html import ReportStats
    from agentv_py.report.summary import RunSummary


def refuse_clash(outputs: list[Role], inputs: list[Role], hint: str) -> None:
    """Exit 2 (before anything runs or is written) when an output would replace an input or
    another output: no mistyped path may destroy a dataset, a targets file or a run."""
    from agentv_py.errors import AgentvError
    from agentv_py.locate import output_clash

    problem = output_clash(outputs, inputs)
    if problem is not None:
        raise AgentvError(problem, hint=hint)


RESULTS_HINT = "pass a JSONL file `agentv eval` wrote (--out)"


def refuse_directory(path: Path, role: str = "results file", hint: str = RESULTS_HINT) -> None:
    """A results file (or an output) given as a directory — `.`, an empty argument, any folder —
    is a usage error (exit 2) before any path is derived from it."""
    from agentv_py.errors import AgentvError

    if path.is_dir() or not path.name:
        shown = f"{path} (the current directory)" if str(path) == "." else str(path)
        raise AgentvError(f"{role} is a directory, not a file: {shown}", hint=hint)


@dataclass(frozen=True)
class Reports:
    """The report files a run writes at its end, besides the results (`--junit`, `--summary-md`,
    `$GITHUB_STEP_SUMMARY`)."""

    junit: Path | None = None
    junit_per_field: bool = False
    summary_md: Path | None = None
    step_summary: Path | None = None  # appended to, as GitHub Actions expects
    html: Path | None = None
    agentv_run: Path | None = None  # an AgentV v4.42 run folder (report/agentv_run.py)


def report_options(
    junit: Path | None,
    junit_per_field: bool,
    summary_md: Path | None,
    out: str | None,
    html: Path | None = None,
    agentv_run: Path | None = None,
) -> Reports:
    """The reports asked for; a usage error (exit 2, before anything runs) for options that cannot go together."""
    from agentv_py.errors import AgentvError
    from agentv_py.report.agentv_run import folder_problem

    usage = "see agentv eval --help"
    if junit_per_field and junit is None:
        raise AgentvError("--junit-per-field goes with --junit FILE", hint=usage)
    if agentv_run is not None and (problem := folder_problem(agentv_run)) is not None:
        raise AgentvError(
            f"--agentv-run {problem}", hint="pass a new or empty folder, or a run folder --agentv-run wrote before"
        )
    for flag, path in (("--junit", junit), ("--html", html), ("--agentv-run", agentv_run)):
        if path is not None and out == "-":
            raise AgentvError(
                f"{flag} needs the results in a file: it reads them back at the end of the run, not with --out -",
                hint="pass --out FILE, or leave --out out",
            )
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY") or None
    reports = Reports(
        junit, junit_per_field, summary_md, Path(step_summary) if step_summary else None, html, agentv_run
    )
    refuse_clash(output_roles(out, reports), [], usage)  # two outputs on one path: before anything is opened
    return reports


def output_roles(out: str | None, reports: Reports) -> list[Role]:
    """Every file the run writes, with its option: --out and its manifest, the reports."""
    from agentv_py.report.manifest import manifest_path

    results = Path(out) if out is not None and out != "-" else None
    roles: list[Role] = [("--out", results), ("the --out manifest", manifest_path(results) if results else None)]
    folder = reports.agentv_run
    run_files: list[Role] = [
        (f"--agentv-run's {name}", folder / name if folder is not None else None)
        for name in ("index.jsonl", "timing.json", "benchmark.json")
    ]
    return roles + [
        ("--junit", reports.junit),
        ("--summary-md", reports.summary_md),
        ("--html", reports.html),
        ("$GITHUB_STEP_SUMMARY", reports.step_summary),
        *run_files,
    ]


def baseline_options(baseline: Path | None, max_drop: float | None, allow_flips: int | None = None) -> None:
    """--max-drop or --allow-flips without --baseline, and a negative --allow-flips, are usage
    errors (exit 2, before anything runs)."""
    from agentv_py.errors import AgentvError

    for flag, value in (("--max-drop", max_drop), ("--allow-flips", allow_flips)):
        if value is not None and baseline is None:
            raise AgentvError(f"{flag} goes with --baseline BASE.jsonl", hint="see agentv eval --help")
    if allow_flips is not None and allow_flips < 0:
        raise AgentvError(f"invalid --allow-flips {allow_flips}: a number of cases, 0 or more")


def write_reports(
    reports: Reports,
    summary: RunSummary,
    threshold: float | None,
    *,
    dataset: str,
    target: str,
    gates: Gates | None = None,
    baseline: Baseline | None = None,
    images: dict[str, list[str]] | None = None,
    eval_file: str = "",
) -> list[tuple[str, Path]]:
    """Write the reports once the results are safe on disk; a file that cannot be written is
    OutputError (exit 5). The rows are read back from the results file, one pass per need, so
    memory does not grow with the run; with the results on stdout, the Markdown has no field table.
    `images`: the case images the HTML report draws shapes over; `eval_file`: the dataset, as
    an AgentV run folder's benchmark.json names it. Returns what was written, and where (for the
    command to say)."""
    from agentv_py.errors import OutputError
    from agentv_py.models.results import ResultRow
    from agentv_py.report.jsonl import read_rows

    source = summary.results_path if summary.results_path and summary.results_path != "<stdout>" else None
    written: list[tuple[str, Path]] = []

    def rows() -> Iterator[ResultRow]:
        if source is not None:
            yield from (row for _, row in read_rows(source) if isinstance(row, ResultRow))

    def write(path: Path, what: str, append: bool, fill: Callable[[TextIO], object]) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a" if append else "w", encoding="utf-8", newline="\n") as handle:
                fill(handle)
            written.append((what, path))
        except OSError as exc:
            kept = f"; the results are kept in {source}" if source is not None else ""
            raise OutputError(f"cannot write the {what} {path}: {exc.strerror or exc}{kept}") from None

    if reports.junit is not None:
        from agentv_py.report.junit import write_junit  # imported only when asked for: it costs ~30 ms

        junit, per_field = reports.junit, reports.junit_per_field
        write(
            junit,
            "JUnit report",
            False,
            lambda out: write_junit(
                out,
                rows,
                dataset=dataset,
                per_field=per_field,
                skipped=summary.skipped,
                strict_xfail=summary.strict_xfail,
                confidence=summary.confidence,
            ),
        )
    targets = [(path, append) for path, append in ((reports.summary_md, False), (reports.step_summary, True)) if path]
    if targets:
        from agentv_py.report.markdown import summary_markdown, tally_fields
        from agentv_py.report.summary import gate

        fields = tally_fields(rows()) if source is not None else None
        text = summary_markdown(
            summary, gate(summary, threshold, gates, baseline), fields, dataset=dataset, target=target
        )
        for path, append in targets:
            what = "step summary ($GITHUB_STEP_SUMMARY)" if append else "Markdown summary"
            write(path, what, append, lambda out: out.write(text + "\n"))
    if reports.html is not None and source is not None:
        if summary.completed:
            try:
                reports.html.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OutputError(f"cannot write the HTML report {reports.html}: {exc.strerror or exc}") from None
            write_html(Path(source), reports.html, None, images=images or {})
            written.append(("HTML report", reports.html))
        else:
            print("note: no HTML report: no case finished", file=sys.stderr)
    if reports.agentv_run is not None and source is not None:
        from agentv_py.report.agentv_run import write_agentv_run

        try:
            write_agentv_run(rows, reports.agentv_run, eval_file=eval_file)
        except OSError as exc:
            raise OutputError(
                f"cannot write the AgentV run folder {reports.agentv_run}: {exc.strerror or exc}; "
                f"the results are kept in {source}"
            ) from None
        written.append(("AgentV run folder", reports.agentv_run))
    return written


def say_written(console: Any, written: list[tuple[str, Path]]) -> None:
    """`Reports written to: junit.xml (JUnit report), ...` after a run's summary (nothing silent)."""
    from rich.text import Text

    from agentv_py.report.text import visible

    if written:
        listed = ", ".join(f"{visible(str(path))} ({what})" for what, path in written)
        console.print(Text(f"Reports written to: {listed}"), soft_wrap=True)


def _refuse_image_clash(target: Path, images: dict[str, list[str]]) -> None:
    """The case images a report embeds are inputs too: the page never replaces one (exit 2, before
    anything is written)."""
    from agentv_py.locate import inputs_among

    files = (
        (f"an image of case '{case_id}'", Path(image))
        for case_id, found in images.items()
        for image in found
        if not image.startswith("data:")
    )
    clash = inputs_among([("--out", target)], files)
    refuse_clash([("--out", target)], clash, "see agentv report --help")


def named_dataset(results: Path) -> Path | None:
    """The dataset the results file's manifest names (read for the case images): an input too."""
    from agentv_py.report.manifest import ManifestError, read_manifest

    try:
        return Path(read_manifest(results).dataset.path) if results.is_file() else None
    except ManifestError:
        return None


def write_html(
    results: Path,
    target: Path,
    dataset: Path | None,
    images: dict[str, list[str]] | None = None,
    shown: Path | None = None,
    by: str | None = None,
) -> ReportStats:
    """Build the report; a usage error (exit 2) for a results file with nothing to show,
    OutputError (exit 5) when the file cannot be written. The case images (for cases with
    geometry results only) come from `images`, else from `dataset` or the manifest's. `shown`:
    the results as the page and its messages name them (an AgentV run converted to `results`).
    `by`: also every number per value of that metadata key of the cases (`--by`)."""
    from agentv_py.errors import AgentvError, OutputError
    from agentv_py.report.html import ReportError, build_report
    from agentv_py.report.manifest import ManifestError, read_manifest, utc_now
    from agentv_py.report.text import visible

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
        target.parent.mkdir(parents=True, exist_ok=True)  # as eval's --html and --junit do
        return build_report(
            results, target, manifest=manifest, images=load_images, generated_at=utc_now(), shown=shown, by=by
        )
    except ReportError as exc:
        raise AgentvError(str(exc), hint=RESULTS_HINT) from None
    except OSError as exc:
        raise OutputError(f"cannot write the HTML report {target}: {exc.strerror or exc}") from None


# ----------------------------------------------------------------------------- the case images


def case_images(dataset: LoadedDataset) -> dict[str, list[str]]:
    """Each case's images as the HTML report embeds them: local files (absolute paths) and data
    URIs; an image given by URL is never fetched for a report."""
    return {
        prepared.case.id: [ref.value for ref in prepared.images if ref.source in ("file", "data")]
        for prepared in (dataset.cases[i] for i in cases_where(dataset.cases, IMAGES))
    }


def run_dataset(results: Path, dataset: Path | None) -> tuple[LoadedDataset | None, str | None]:
    """The dataset a results file was made from (`dataset`, else the one its manifest names),
    loaded; (None, why not) when it is unknown or does not load."""
    if dataset is None:
        try:
            dataset = Path(read_manifest(results).dataset.path)
        except ManifestError:
            return None, "no manifest names the dataset (pass --dataset)"
    try:
        return load_dataset(dataset), None
    except ConfigError as exc:
        return None, f"dataset {dataset} did not load: {exc.problems[0] if exc.problems else exc}"
    except AgentvError as exc:
        return None, f"dataset {dataset} did not load: {exc}"


def report_images(results: Path, dataset: Path | None) -> tuple[dict[str, list[str]], str | None]:
    """The images of the cases of a results file (`run_dataset`); ({}, why not) when its
    dataset is not available (the report is made without images)."""
    loaded, why = run_dataset(results, dataset)
    if loaded is None:
        return {}, f"{why}: shapes are drawn without the case images"
    return case_images(loaded), None
