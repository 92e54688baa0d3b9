"""Run manifests on disk: `<results>.meta.json` beside a results file, written atomically when a
run starts and when it ends, read back by `rescore` and `--resume`. What goes into one is
built from the run's inputs by `loading.fingerprint`."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

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
            "stopped_early": summary.stop_early.to_json()
            if summary.stop_early is not None and summary.stop_early.stopped
            else None,
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
    its case lists are streamed to the file, never dumped to a dict or built as one string; the
    text is `json.dump(indent=2, ensure_ascii=False)`'s."""
    fd, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            _dump(handle, manifest)
            handle.write("\n")
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _dump(handle: IO[str], manifest: RunManifest) -> None:
    """The manifest as `json.dump(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False)`
    writes it: all but the case lists dumped (small), then each list written where a marker holds
    its place, a thousand entries at a time."""
    marker = f"agentv-stream-{secrets.token_hex(8)}"
    ids, per_case = manifest.dataset.case_ids, manifest.case_evaluators
    skeleton = manifest.model_copy(
        update={"case_evaluators": {}, "dataset": manifest.dataset.model_copy(update={"case_ids": []})}
    ).model_dump(mode="json")
    skeleton["dataset"]["case_ids"] = marker + "-ids"
    skeleton["case_evaluators"] = marker + "-map"
    text = json.dumps(skeleton, indent=2, ensure_ascii=False)
    encode = json.encoder.encode_basestring  # json.dump's encoding of a str (ensure_ascii=False)
    streams: dict[str, tuple[str, str, Iterator[str]]] = {
        marker + "-ids": ("[", "]", (encode(case_id) for case_id in ids)),
        marker + "-map": ("{", "}", (encode(key) + ": " + encode(value) for key, value in per_case.items())),
    }
    for part in re.split(f'"({marker}-(?:ids|map))"', text):
        if part not in streams:
            handle.write(part)
            continue
        opening, closing, items = streams[part]
        line = text[: text.index(f'"{part}"')].rsplit("\n", 1)[-1]
        pad = "\n" + " " * (len(line) - len(line.lstrip(" ")))
        handle.write(opening)
        written = False
        while batch := list(itertools.islice(items, 1000)):
            handle.write(("," if written else "") + pad + "  " + ("," + pad + "  ").join(batch))
            written = True
        handle.write((pad if written else "") + closing)


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
        text = data.decode("utf-8")
        del data  # not held beside the text, nor the text beside what it holds
        raw = json.loads(text)
        del text
    except (UnicodeDecodeError, ValueError) as exc:
        raise ManifestError(f"{shown} is not JSON ({exc}): it was edited or cut short") from None
    try:
        return _compact(RunManifest.model_validate(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise ManifestError(f"{shown} is not a run manifest: {where}: {first['msg']}") from None


def _compact(manifest: RunManifest) -> RunManifest:
    """The per-case map of a manifest read back, held small: its values (a few distinct evaluator
    hashes) one string each, its keys the strings of `dataset.case_ids` when both list the same
    cases in the same order (as agentv writes them). Equal to what was read."""
    per_case, ids = manifest.case_evaluators, manifest.dataset.case_ids
    if not per_case:
        return manifest
    shared: dict[str, str] = {}
    keys: Iterable[str] = ids if len(ids) == len(per_case) and all(map(str.__eq__, ids, per_case)) else per_case
    pairs = zip(keys, per_case.values(), strict=True)
    manifest.case_evaluators = {key: shared.setdefault(value, value) for key, value in pairs}
    return manifest
