"""Pieces of `agentv eval` that are not its options: the reuse options read together, the run's
header line, and several datasets run one after the other (one summary each, one exit code)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_py.cli.base import (
    EXIT_CASE_ERRORS,
    EXIT_CONFIG,
    EXIT_GATE_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    visible_lines,
)

if TYPE_CHECKING:
    from agentv_py.eval_plan import EvalPlan, ReuseMode


def reuse_option(
    resume: Path | None,
    rerun_failed: Path | None,
    retry_errors: Path | None,
    out: str | None,
    force: bool,
    allow_target_change: bool,
) -> tuple[Path | None, ReuseMode | None]:
    """The results file to reuse and how, from the options; a usage error (exit 2) for options
    that cannot go together."""
    from agentv_py.errors import AgentvError

    options: list[tuple[str, Path | None, ReuseMode]] = [
        ("--resume", resume, "resume"),
        ("--rerun-failed", rerun_failed, "rerun_failed"),
        ("--retry-errors", retry_errors, "retry_errors"),
    ]
    given = [(flag, path, mode) for flag, path, mode in options if path is not None]
    usage = "see agentv eval --help"
    if len(given) > 1:
        raise AgentvError(f"{given[0][0]} and {given[1][0]} cannot be used together", hint=usage)
    if not given:
        for flag, given_flag in (("--force", force), ("--allow-target-change", allow_target_change)):
            if given_flag:
                raise AgentvError(f"{flag} goes with --resume, --rerun-failed or --retry-errors", hint=usage)
        return None, None
    flag, path, mode = given[0]
    if mode == "resume" and out is not None:
        raise AgentvError(
            "--resume and --out cannot be used together: --resume appends to the results file it resumes",
            hint=usage,
        )
    if out is not None and out != "-" and Path(out).exists() and path.exists() and Path(out).samefile(path):
        raise AgentvError(
            f"--out names the file {flag} reads ({out}); that file is never changed: pass another --out",
            hint=f"--resume {path} adds the missing rows to it instead",
        )
    return path, mode


def run_header(plan: EvalPlan, workers: int) -> str:
    """The run's first line: what runs, against what; with a reused results file, what it reuses."""
    from agentv_py.report.text import plural

    executor = ", Ray executor" if plan.spec.execution.kind == "ray" else ""
    against = f"against target '{plan.target.name}' {plan.target_origin} ({plural(workers, 'worker')}{executor})"
    if plan.shard is not None:
        against = f"(shard {plan.shard}) {against}"
    left_out = [
        plural(count, what)
        for count, what in ((len(plan.spec.manifest.skipped), "skipped case"), (plan.spec.excluded, "excluded case"))
        if count
    ]
    if left_out:
        against = f"{against}; {', '.join(left_out)} not run"
    reuse = plan.reuse
    seed = plan.spec.manifest
    runs = [f"{seed.repeats} runs each"] if seed.repeats > 1 else []
    runs += [f"each answer scored {seed.rejudges} times"] if seed.rejudges > 1 else []
    if runs:
        against = f"({', '.join(runs)}) {against}"
    if reuse is None:
        return f"agentv: {plural(len(plan.cases), 'case')} of '{plan.dataset.name}' {against}"
    kept = len(reuse.kept)
    if not plan.cases:
        what = {
            "resume": f"every selected case of '{plan.dataset.name}' has a row in",
            "rerun_failed": f"every selected case of '{plan.dataset.name}' passed in",
            "retry_errors": f"no selected case of '{plan.dataset.name}' has an error in",
        }[reuse.mode]
        return f"agentv: nothing left to run: {what} {reuse.shown}"
    if reuse.mode == "resume":
        return (
            f"agentv: resuming {reuse.shown} ({plural(kept, 'row')} kept): "
            f"{plural(len(plan.cases), 'case run' if seed.repeats > 1 else 'case')} of '{plan.dataset.name}' {against}"
        )
    why = "that did not pass" if reuse.mode == "rerun_failed" else "with an error"
    return (
        f"agentv: re-running {plural(len(plan.cases), 'case')} of '{plan.dataset.name}' {why} in "
        f"{reuse.shown} ({plural(kept, 'row')} copied) {against}"
    )


# Several datasets end in the worst of their exit codes, in this order (130 stops the others at once).
_SEVERITY = (EXIT_INTERNAL, EXIT_OUTPUT, EXIT_CONFIG, EXIT_CASE_ERRORS, EXIT_GATE_FAILED, EXIT_OK)
_SAID = {
    EXIT_OK: "gate passed",
    EXIT_GATE_FAILED: "gate failed",
    EXIT_CONFIG: "not run (a usage or configuration error)",
    EXIT_INTERNAL: "internal error",
    EXIT_CASE_ERRORS: "errors",
    EXIT_OUTPUT: "output could not be written",
    EXIT_INTERRUPTED: "interrupted",
}


def dataset_files(arguments: Sequence[Path]) -> list[Path]:
    """The datasets DATASET... stands for (a directory: every dataset below it; a quoted glob: its
    matches; `loading.discover`); one that stands for none is a usage error (exit 2)."""
    from agentv_py.errors import AgentvError
    from agentv_py.loading.discover import expand_paths

    expanded = expand_paths(arguments)
    if expanded.empty:
        argument, why = expanded.empty[0]
        raise AgentvError(f"{argument or repr(argument)}: {why}", hint="give dataset files, directories or globs")
    return expanded.files


def refuse_one_file_options(count: int, given: Mapping[str, object]) -> None:
    """Options that name one file (`--out`, `--resume`, `--junit`, ...) cannot serve several datasets."""
    from agentv_py.errors import AgentvError

    named = [flag for flag, value in given.items() if value not in (None, False)]
    if named:
        raise AgentvError(
            f"{', '.join(named)} name{'s' if len(named) == 1 else ''} one file, and {count} datasets were given",
            hint="run the datasets one by one for those, or leave them out: each dataset gets its own results "
            "file in .agentv/results/ (and $GITHUB_STEP_SUMMARY gets each one's summary)",
        )


def run_each(files: Sequence[Path], run_one: Callable[[Path], int]) -> int:
    """Run each dataset in turn; an error that stops one (exit 2, say) is said, and the next runs.
    Ends with one line per dataset and returns the worst exit code (an interrupt stops at once)."""
    from agentv_py.errors import AgentvError
    from agentv_py.loading import display_path
    from agentv_py.report.text import visible

    codes: list[tuple[Path, int]] = []
    for path in files:
        try:
            code = run_one(path)
        except AgentvError as exc:
            print(f"error: {visible(display_path(path))}: {visible_lines(exc.message)}", file=sys.stderr)
            if exc.hint:
                print(f"hint: {visible_lines(exc.hint)}", file=sys.stderr)
            code = exc.exit_code
        codes.append((path, code))
        if code == EXIT_INTERRUPTED:
            break
    print(f"Datasets: {len(codes)} of {len(files)} run")
    for path, code in codes:
        print(visible(f"  {display_path(path)}: {_SAID.get(code, 'exit ' + str(code))} (exit {code})"))
    found = {code for _, code in codes}
    if EXIT_INTERRUPTED in found:
        return EXIT_INTERRUPTED
    return next((code for code in _SEVERITY if code in found), EXIT_INTERNAL)
