"""The record of a run: its results file (opened and locked before anything runs, a new default name
drawn exclusively, --resume's file appended to) and its manifest (written when the run starts,
again when it ends; a write that fails is exit 5 with the rows kept)."""

from __future__ import annotations

from pathlib import Path

from agentv_py.errors import OutputError, ResultsFileError
from agentv_py.eval_plan import EvalRequest
from agentv_py.loading.fingerprint import build_manifest, dataset_sha256
from agentv_py.models.manifest import RunManifest
from agentv_py.report.jsonl import JsonlWriter, ResultsUnavailable, default_results_path, open_new_results
from agentv_py.report.manifest import (
    manifest_path,
    utc_now,
    write_manifest,
)
from agentv_py.run_spec import ManifestSeed


def tool_version() -> str:
    """agentv's version as installed (the package metadata `agentv --version` prints too)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentv-py")
    except PackageNotFoundError:
        return "unknown"


def plan_options(request: EvalRequest) -> dict[str, object]:
    """The options a manifest records (those that change what a run does or how it is judged)."""
    return {
        "target": request.target,
        "targets": str(request.targets) if request.targets is not None else None,
        "workers": request.workers,
        "max_retries": request.max_retries,
        "eval_ids": list(request.eval_ids),
        "dry_run": request.dry_run,
        "judge_target": request.judge_target,
        "threshold": request.threshold,
        **(
            {"baseline": str(request.baseline), "max_drop": request.max_drop or 0.0, "allow_flips": request.allow_flips}
            if request.baseline
            else {}
        ),
        **({"shard": str(request.shard)} if request.shard is not None else {}),
        **({"executor": "ray", "ray_address": request.ray_address} if request.executor == "ray" else {}),
    }


def start_manifest(run_id: str, seed: ManifestSeed, results: JsonlWriter) -> RunManifest | None:
    """Write the manifest of a run that starts (none for JSONL on stdout); a manifest that cannot be
    written stops the run like a results file that cannot be (OutputError, exit 5)."""
    if results.path is None:
        return None
    manifest = build_manifest(
        run_id=run_id,
        results=results.path,
        dataset=seed.dataset,
        dataset_sha256=dataset_sha256(seed.dataset),
        cases=seed.cases,
        target=seed.target,
        judges=dict(seed.judges),
        secrets=seed.secrets,
        options=dict(seed.options),
        version=tool_version(),
        started_at=seed.started_at or utc_now(),
        target_fingerprint=seed.fingerprint,
    )
    update: dict[str, object] = {"derived_from": seed.derived_from, "shard": seed.shard, "skipped": dict(seed.skipped)}
    if seed.repeats > 1:
        update["repeats"] = seed.repeats
    if seed.rejudges > 1:
        update["rejudges"] = seed.rejudges
    if seed.recorded_target is not None:
        update["target"] = seed.recorded_target
    manifest = manifest.model_copy(update=update)
    record_manifest(results, manifest)
    return manifest


def record_manifest(results: JsonlWriter, manifest: RunManifest) -> None:
    assert results.path is not None
    path = manifest_path(results.path)
    try:
        write_manifest(path, manifest)
    except OSError as exc:
        raise OutputError(f"cannot write the run manifest {path}: {exc.strerror or exc}") from None


def open_results(out: str | None) -> JsonlWriter | None:
    """Open and lock the `--out` file before anything runs (None: the default file, made later
    by `execute`, has a name no other run uses). Raises ResultsFileError (exit 2)."""
    return None if out is None else open_results_file(out)


def open_resumed(path: Path) -> JsonlWriter:
    """Open and lock the file `--resume` appends to (nothing is changed until the run starts).
    Raises ResultsFileError (exit 2): no such file, not a file, or another agentv run writing it."""
    if not path.is_file():
        reason = "no such file" if not path.exists() else "not a regular file"
        raise ResultsFileError(f"cannot resume from {path}: {reason}")
    try:
        return JsonlWriter(path, append=True)
    except ResultsUnavailable as exc:
        hint = "wait for that run to finish" if exc.locked else None
        raise ResultsFileError(f"cannot resume from {path}: {exc.reason}", hint=hint) from None


def open_results_file(out: str, dataset_name: str | None = None) -> JsonlWriter:
    """A writer on `out`, or (`dataset_name` given) on a new default results file."""
    try:
        return JsonlWriter(out) if dataset_name is None else open_new_results(dataset_name)
    except ResultsUnavailable as exc:
        where = out if dataset_name is None else str(default_results_path(dataset_name).parent)
        if exc.locked:
            raise ResultsFileError(
                f"cannot write results to {where}: another agentv run is writing it",
                hint="wait for that run to finish, or pass another --out",
            ) from None
        raise ResultsFileError(f"cannot write results to {where}: {exc.reason}") from None


def write_failed(where: str, exc: OSError, written: int) -> OutputError:
    what = "stdout was closed" if isinstance(exc, BrokenPipeError) else f"cannot write results to {where}"
    rows = f"{written} row{'s' if written != 1 else ''}"
    return OutputError(
        f"{what} ({exc.strerror or exc}); the run was stopped after {rows} and its processes were killed"
    )
