"""Reuse never mixes extractor versions: `--resume`, `--rerun-failed` and `agentv merge` compare
the target's fingerprint (command, settings, script files, environment) between the run that made
the rows and now, or between the runs merged, and refuse a change (exit 2, what changed, never a
value) unless `--allow-target-change`; a manifest without a fingerprint is said and reused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.cli.test_resume import CASES, _agentv, _answer, _calls, _manifest, _rows

VALUE = "value-never-shown-9f2c"  # of an environment variable: no message may show it


def _workspace(ws) -> None:
    """Six cases; the extractor `run.sh` (named by the command, so part of the fingerprint) runs
    each case's own script, which records the call and answers."""
    ws.file("run.sh", '. "$1"\n')
    ws.cli_target("sh run.sh {FILES}")
    ws.cases_dataset([(case, _answer(ws, case), {"a": 1, "b": 2}) for case in CASES])


def _cut_run(ws, env: dict[str, str] | None = None) -> Path:
    """A run of every case cut to the rows of c0, c1, c2 (as an interrupted run leaves them)."""
    _workspace(ws)
    result = _agentv(["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1"], ws.root, env)
    assert result.returncode == 0, result.stderr
    out = ws.root / "out.jsonl"
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:3]))
    return out


def _edit_script(ws) -> dict[str, str]:
    ws.file("run.sh", '# v2\n. "$1"\n')
    return {}


def _change_command(ws) -> dict[str, str]:
    ws.cli_target("sh ./run.sh {FILES}")
    return {}


def _change_setting(ws) -> dict[str, str]:
    ws.cli_target("sh run.sh {FILES}", extra="cwd: .")
    return {}


def _set_variable(ws) -> dict[str, str]:
    return {"EXTRACTOR_MODEL": VALUE}


@pytest.mark.parametrize(
    ("flag", "verb", "change", "diff"),
    [
        ("--resume", "cannot resume from", _edit_script, "script run.sh: changed"),
        ("--resume", "cannot resume from", _change_command, "command: changed"),
        ("--resume", "cannot resume from", _change_setting, "setting cwd: changed"),
        ("--resume", "cannot resume from", _set_variable, "env EXTRACTOR_MODEL: added"),
        ("--rerun-failed", "cannot re-run cases of", _edit_script, "script run.sh: changed"),
    ],
    ids=["script-edited", "command-changed", "setting-changed", "variable-set", "rerun-failed"],
)
def test_a_changed_target_is_refused_with_what_changed(ws, flag, verb, change, diff):
    out = _cut_run(ws)
    before = out.read_bytes()
    env = change(ws)
    args = ["eval", "dataset.yaml", flag, "out.jsonl"] + (["--out", "new.jsonl"] if flag != "--resume" else [])
    result = _agentv(args, ws.root, env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"error: {verb} out.jsonl: the target changed since its rows were made:",
        f"  {diff}",
        "hint: pass --allow-target-change to reuse them anyway, or start a new run",
    ]
    assert VALUE not in result.stderr + result.stdout
    assert out.read_bytes() == before and sorted(_calls(ws)) == CASES  # nothing ran, nothing written
    assert not (ws.root / "new.jsonl").exists()


def test_allow_target_change_resumes_and_records_the_target_now(ws):
    out = _cut_run(ws)
    _edit_script(ws)
    result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl", "--allow-target-change"], ws.root)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "warning: reusing rows another version of the target made (--allow-target-change): script run.sh: changed"
    )
    assert [row["eval_id"] for row in _rows(out)][:3] == CASES[:3]  # the rows kept, then the new ones
    assert sorted(row["eval_id"] for row in _rows(out)) == CASES
    assert sorted(_calls(ws)) == sorted(CASES + ["c3", "c4", "c5"])
    scripts = _manifest(out)["target"]["fingerprint"]["scripts"]
    assert scripts == {"run.sh": hashlib.sha256(b'# v2\n. "$1"\n').hexdigest()}  # the target as it is now
    again = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root)
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr


def test_an_unchanged_target_resumes_without_a_word(ws):
    out = _cut_run(ws, {"EXTRACTOR_MODEL": VALUE})
    result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root, {"EXTRACTOR_MODEL": VALUE})
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith("agentv: resuming out.jsonl (3 rows kept): 3 cases")
    assert "warning" not in result.stderr
    assert sorted(row["eval_id"] for row in _rows(out)) == CASES
    fingerprint = _manifest(out)["target"]["fingerprint"]
    assert set(fingerprint) == {"command", "settings", "scripts", "env"}
    assert fingerprint["env"]["EXTRACTOR_MODEL"] == hashlib.sha256(VALUE.encode()).hexdigest()
    assert VALUE not in json.dumps(_manifest(out))


def _unrecord(manifest: Path) -> None:
    """The manifest as an agentv before fingerprints wrote it."""
    data = json.loads(manifest.read_text())
    del data["target"]["fingerprint"]
    manifest.write_text(json.dumps(data))


def test_a_manifest_without_a_fingerprint_is_said_and_resumed(ws):
    out = _cut_run(ws)
    _unrecord(ws.root / "out.jsonl.meta.json")
    _edit_script(ws)  # what such a manifest cannot show
    result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "warning: the manifest of out.jsonl does not record the target's fingerprint (an older agentv wrote "
        "it, or its target is unknown): the target's scripts and environment are not compared with the "
        "target's now, only its config"
    )
    assert sorted(row["eval_id"] for row in _rows(out)) == CASES
    assert "fingerprint" in _manifest(out)["target"]  # recorded from now on


def _shards(ws, edit_between: bool) -> None:
    _workspace(ws)
    for k in (1, 2):
        if k == 2 and edit_between:
            _edit_script(ws)
        result = _agentv(["eval", "dataset.yaml", "--shard", f"{k}/2", "--out", f"s{k}.jsonl"], ws.root)
        assert result.returncode == 0, result.stderr


def test_merging_runs_of_different_target_scripts_is_refused_unless_allowed(ws):
    _shards(ws, edit_between=True)
    result = _agentv(["merge", "s1.jsonl", "s2.jsonl", "-o", "m.jsonl"], ws.root)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "error: s2.jsonl ran another version of the target than s1.jsonl:",
        "  script run.sh: changed",
        "hint: run every shard with the same target, or pass --allow-target-change to merge them anyway",
    ]
    assert not (ws.root / "m.jsonl").exists()
    allowed = _agentv(["merge", "s1.jsonl", "s2.jsonl", "-o", "m.jsonl", "--allow-target-change"], ws.root)
    assert allowed.returncode == 0, allowed.stderr
    assert (
        "warning: s2.jsonl ran another version of the target than s1.jsonl (--allow-target-change): "
        "script run.sh: changed"
    ) in allowed.stderr.splitlines()
    assert sorted(row["eval_id"] for row in _rows(ws.root / "m.jsonl")) == CASES


def test_merging_a_run_without_a_fingerprint_is_said_and_done(ws):
    _shards(ws, edit_between=False)
    _unrecord(ws.root / "s2.jsonl.meta.json")
    result = _agentv(["merge", "s1.jsonl", "s2.jsonl", "-o", "m.jsonl"], ws.root)
    assert result.returncode == 0, result.stderr
    assert (
        "warning: the manifest of s2.jsonl does not record the target's fingerprint (an older agentv wrote "
        "it, or its target is unknown): the runs' targets are compared by their config only"
    ) in result.stderr.splitlines()
    assert sorted(row["eval_id"] for row in _rows(ws.root / "m.jsonl")) == CASES
