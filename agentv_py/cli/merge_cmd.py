"""`agentv merge RUN... -o ALL.jsonl`: the shards of one eval (`--shard K/N`) as one results file and
manifest, gated as the eval would have been."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentv_py.cli.base import EXIT_GATE_FAILED, THRESHOLD_OPTION, MergeCommand, app, boundary


@app.command(cls=MergeCommand, short_help="Merge the results of an eval's shards into one file, and gate it.")
@boundary
def merge(
    runs: list[Path] = typer.Argument(
        ..., metavar="RUN...", help="Results files of the shards (JSONL, each with its manifest).", show_default=False
    ),
    out: Path = typer.Option(..., "--out", "-o", metavar="PATH", help="The merged results file.", show_default=False),
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        metavar="DATASET",
        help="The dataset the shards ran (to name missing cases and apply its gates:).  "
        "[default: the path the manifests record, when the file there is unchanged]",
    ),
    threshold: float | None = THRESHOLD_OPTION,
    allow_missing: bool = typer.Option(
        False, "--allow-missing", help="Exit 0 although some cases of the dataset have no row in any run."
    ),
    exclude_foreign: bool = typer.Option(
        False,
        "--exclude-foreign",
        help="Leave out rows that are not their run's own (a case the dataset does not have, of another "
        "shard, or one the run did not select), counted and the first ones listed on stderr, instead of "
        "refusing the merge (exit 2). They are never gated.",
    ),
    allow_target_change: bool = typer.Option(
        False,
        "--allow-target-change",
        help="Merge runs although their target differs (its command, settings, script files or "
        "environment variables), said in a warning, instead of refusing the merge (exit 2) with "
        "what differs.",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every case and every miss in the summary."),
) -> int:
    """Check that the runs are shards of one eval (the same dataset file, evaluators, target and
    judge files; no case in two runs), write their rows to one results file with a merged manifest,
    report the cases no run has, and gate the merged rows like agentv eval (exit codes below)."""
    from agentv_py.cli.base import gate_exit
    from agentv_py.errors import AgentvError
    from agentv_py.recorder import tool_version
    from agentv_py.report.manifest import manifest_path
    from agentv_py.report.merge import MISSING_SHOWN, MergeError, merge_results
    from agentv_py.report.render import render_summary, stdout_console
    from agentv_py.report.summary import gate
    from agentv_py.report.text import visible
    from agentv_py.run_reports import refuse_clash, refuse_directory
    from agentv_py.runner.engine import shard_of
    from agentv_py.session import merge_dataset

    for given in runs:
        refuse_directory(given, "the run")
    refuse_directory(out, "--out", "pass the merged results file to write")
    loaded = merge_dataset(runs, dataset)
    read: list[tuple[str, Path | None]] = [("--dataset", loaded.path if loaded is not None else dataset)]
    for given in runs:
        read += [(f"the run {given}", given), (f"the manifest of the run {given}", manifest_path(given))]
    refuse_clash([("--out", out), ("the --out manifest", manifest_path(out))], read, "see agentv merge --help")
    gates = loaded.model.gates if loaded is not None else None
    try:
        merged = merge_results(
            runs,
            out,
            dataset_ids=loaded.cases.ids if loaded is not None else None,
            version=tool_version(),
            judge=lambda summary: gate(summary, threshold, gates),
            shard_of=shard_of,
            exclude_foreign=exclude_foreign,
            allow_target_change=allow_target_change,
        )
    except MergeError as exc:
        raise AgentvError(exc.message, hint=exc.hint) from None
    console = stdout_console()
    render_summary(console, merged.summary, verbose=verbose)
    print(
        f"agentv: merged {merged.rows} rows of {len(runs)} runs into {out} ({merged.cases} cases in the dataset)",
        file=sys.stderr,
    )
    for note in merged.notes:
        print(f"warning: {visible(note)}", file=sys.stderr)
    if merged.excluded:
        unlisted = merged.excluded - len(merged.excluded_shown)
        print(
            f"warning: left out {merged.excluded} row{'s' if merged.excluded != 1 else ''} that are not their "
            f"run's own (--exclude-foreign; not gated):",
            file=sys.stderr,
        )
        for said in merged.excluded_shown:
            print(f"  {visible(said)}", file=sys.stderr)
        if unlisted > 0:
            print(f"  ... and {unlisted} more", file=sys.stderr)
    for run in merged.incomplete:
        print(
            f"warning: {visible(run)} did not complete (its manifest says so): its missing cases are listed below",
            file=sys.stderr,
        )
    code = gate_exit(merged.summary, threshold, gates)
    if merged.missing:
        shards = f" (shards {', '.join(merged.missing_shards)} not given)" if merged.missing_shards else ""
        named = ""
        if merged.missing_ids:
            more = f" and {merged.missing - len(merged.missing_ids)} more" if merged.missing > MISSING_SHOWN else ""
            named = ": " + ", ".join(f"'{visible(i)}'" for i in merged.missing_ids) + more
        level = "warning" if allow_missing else "error"
        print(f"{level}: {merged.missing} cases of the dataset have no row{shards}{named}", file=sys.stderr)
        if not allow_missing and code == 0:
            return EXIT_GATE_FAILED
    return code
