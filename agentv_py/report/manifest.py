"""Run manifests on disk: `<results>.meta.json` beside a results file, written atomically when a
run starts and when it ends, read back by `rescore` and `--resume`. What goes into one is
built from the run's inputs by `loading.fingerprint`."""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import tempfile
from pathlib import Path

from pydantic import ValidationError

from agentv_py.models.manifest import Counts, GateCheckInfo, GateInfo, RunManifest
from agentv_py.report.summary import GateResult, RunSummary

MANIFEST_SUFFIX = ".meta.json"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024


class ManifestError(Exception):
    """A manifest that is missing, unreadable or not a manifest; the message says which."""


def manifest_path(results: str | Path) -> Path:
    """`run.jsonl` -> `run.jsonl.meta.json` (beside it, whatever its suffix)."""
    path = Path(results)
    return path.with_name(path.name + MANIFEST_SUFFIX)


def new_run_id() -> str:
    """`20261122T072522Z-3f9a1c2b`: sortable by start time, unique across machines."""
    return f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def finish_manifest(manifest: RunManifest, summary: RunSummary, result: GateResult | None) -> RunManifest:
    """The manifest of a run that ended: end time, status, counts and gate."""
    stats = summary.stats()
    status = "interrupted" if summary.interrupted else "completed"
    return manifest.model_copy(
        update={
            "ended_at": utc_now(),
            "status": status,
            "counts": Counts(
                selected=summary.total_selected,
                written=summary.completed,
                passed=summary.passed,
                partial=summary.partial,
                failed=summary.failed,
                target_errors=summary.errored,
                evaluator_errors=summary.evaluator_errors,
                mean_score=round(stats.mean, 6) if stats else None,
            ),
            "gate": GateInfo(
                rule=result.rule,
                outcome=result.outcome,
                passed=result.passed,
                message=result.message,
                checks=[
                    GateCheckInfo(
                        name=c.name,
                        value=None if c.value is None else round(c.value, 6),
                        op=c.op,
                        limit=c.limit,
                        passed=c.passed,
                        shown=c.shown,
                        detail=c.detail or None,
                    )
                    for c in result.checks
                ],
            )
            if result is not None
            else None,
        }
    )


def write_manifest(path: Path, manifest: RunManifest) -> None:
    """Write atomically (a temporary file in the same directory, then rename): a reader sees the
    old manifest or the new one, never half of one. A run of 100,000 cases has a 10 MB manifest:
    it is streamed to the file, not built as one string."""
    data = manifest.model_dump(mode="json")
    fd, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)  # written as encoded: no whole text in memory
            handle.write("\n")
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def read_manifest(results: str | Path) -> RunManifest:
    """The manifest of a results file; ManifestError (with what to do) when it is missing, not
    readable, not JSON or not a manifest."""
    path = manifest_path(results)
    shown = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise ManifestError(f"no run manifest beside {results} (looked for {shown})") from None
    except OSError as exc:
        raise ManifestError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{shown} is over {MAX_MANIFEST_BYTES // (1024 * 1024)} MB: not a run manifest")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ManifestError(f"{shown} is not JSON ({exc}): it was edited or cut short") from None
    try:
        return RunManifest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise ManifestError(f"{shown} is not a run manifest: {where}: {first['msg']}") from None
