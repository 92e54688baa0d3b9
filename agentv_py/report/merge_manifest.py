"""The merged manifest of `agentv merge` (report/merge.py): its case lists streamed from the merge's
store (every case once, in merged order), and the hash of its evaluators, computed as streamed."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

from agentv_py.models.manifest import RunManifest
from agentv_py.report.jsonstream import Pairs, write_json


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def evaluators_sha256(db: sqlite3.Connection) -> str:
    """`canonical_sha256` of the merged {case id: evaluator hash} map, computed as it is streamed
    (keys in code point order, as `json.dumps(sort_keys=True)` orders them)."""
    digest = hashlib.sha256(b"{")
    for n, (raw, value) in enumerate(db.execute("SELECT id, digest FROM evaluators ORDER BY id")):
        pair = json.dumps(_text(raw), ensure_ascii=False) + ":" + json.dumps(value, ensure_ascii=False)
        digest.update((b"," if n else b"") + pair.encode("utf-8", "surrogatepass"))
    digest.update(b"}")
    return digest.hexdigest()


def write_streamed_manifest(path: Path, manifest: RunManifest, db: sqlite3.Connection) -> None:
    """The merged manifest, its case lists streamed from the store (rows in merged order),
    written atomically like any manifest."""

    def case_ids() -> Iterator[str]:
        for (raw,) in db.execute("SELECT id FROM rows GROUP BY id ORDER BY MIN(seq)"):  # a case's runs: once
            yield _text(raw)

    def case_evaluators() -> Iterator[tuple[str, str]]:
        for raw, value in db.execute(
            "SELECT e.id, e.digest FROM rows r JOIN evaluators e ON e.id = r.id GROUP BY e.id ORDER BY MIN(r.seq)"
        ):
            yield _text(raw), value

    data = manifest.model_dump(mode="json")
    data["dataset"]["case_ids"] = case_ids()
    data["case_evaluators"] = Pairs(case_evaluators())
    fd, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as handle:
            write_json(handle, data, ensure_ascii=False)
            handle.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
