"""`agentv eval --resume / --rerun-failed / --retry-errors`: an interrupted run continued with
every case run exactly once, only failed or errored cases re-run into a new file, and every
reuse that could be wrong refused with what changed."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentv_py.models.manifest import DatasetInfo, RunManifest, TargetInfo
from agentv_py.report.reuse import manifest_differences
from tests.conftest import REPO_ROOT, stderr_of

CASES = [f"c{i}" for i in range(6)]

THEIRS = "<library's words>"
"""In an expected message, stands for words a library writes (json, orjson, pydantic), which any
release of it may change: the test pins agentv's part around them, never theirs."""


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected` exactly, each THEIRS in it standing for some (non-empty) text."""
    return re.fullmatch(".+".join(map(re.escape, expected.split(THEIRS))), actual, re.DOTALL) is not None


OK = '{"a": 1, "b": 2}'


def _agentv(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`agentv ARGS` as a program in `cwd`, with this environment and `env`'s variables."""
    return subprocess.run(
        [sys.executable, "-m", "agentv_py", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
    )


def _spawn(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentv_py", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )


def _answer(ws, case_id: str, gate: str | None = None, body: str = OK) -> str:
    """A case's target script: wait for the file `gate` (if any), record the call, answer."""
    wait = f"while [ ! -f {ws.root / gate} ]; do sleep 0.02; done; " if gate else ""
    return f"{wait}echo {case_id} >> {ws.root / 'calls'}; echo '{body}'"


def _counting_workspace(ws, gates: dict[str, str] | None = None) -> None:
    """Six cases; case ids in `gates` block until their gate file exists (so a run can be
    interrupted at a known case). Each answer is recorded in `calls` once it is given."""
    ws.cli_target("sh {FILES}")
    ws.cases_dataset([(case, _answer(ws, case, (gates or {}).get(case)), {"a": 1, "b": 2}) for case in CASES])


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]  # fails on any invalid line


def _calls(ws) -> list[str]:
    path = ws.root / "calls"
    return path.read_text().split() if path.exists() else []


def _manifest(path: Path) -> dict:
    return json.loads(path.with_name(path.name + ".meta.json").read_text())


def _interrupt_when(proc: subprocess.Popen[str], out: Path, rows: int) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if out.exists() and out.read_text().count("\n") >= rows:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stderr = stderr_of(proc, timeout=20)
    assert proc.returncode == 130, stderr
    return stderr


def test_an_interrupted_run_resumed_twice_runs_every_case_exactly_once(ws):
    _counting_workspace(ws, {"c2": "go-1", "c4": "go-2"})
    out = ws.root / "out.jsonl"
    first = _spawn(["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1"], ws.root)
    _interrupt_when(first, out, 2)  # c0, c1 written; c2 waits for go-1
    assert [row["eval_id"] for row in _rows(out)] == ["c0", "c1"]
    run_id = _manifest(out)["run_id"]
    assert _manifest(out)["status"] == "interrupted"

    (ws.root / "go-1").touch()
    second = _spawn(["eval", "dataset.yaml", "--resume", "out.jsonl", "--workers", "1"], ws.root)
    stderr = _interrupt_when(second, out, 4)  # c2, c3 appended; c4 waits for go-2
    assert (
        "agentv: resuming out.jsonl (2 rows kept): 4 cases of 'dataset' against target 't' from "
        ".agentv/targets.yaml (1 worker)"
    ) in stderr
    assert [row["eval_id"] for row in _rows(out)] == ["c0", "c1", "c2", "c3"]  # valid JSONL after Ctrl-C

    (ws.root / "go-2").touch()
    third = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl", "--workers", "1"], ws.root)
    assert third.returncode == 0, third.stderr
    rows = _rows(out)
    assert [row["eval_id"] for row in rows] == CASES  # each case exactly once
    assert sorted(_calls(ws)) == CASES  # each case's target answered once over the three runs
    assert {row["run_id"] for row in rows} == {run_id}
    manifest = _manifest(out)
    assert (manifest["run_id"], manifest["status"]) == (run_id, "completed")
    assert (manifest["counts"]["written"], manifest["counts"]["passed"]) == (6, 6)  # over all rows of the file
    assert "Totals: 6 cases  6 passed" in third.stdout

    again = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root)
    assert again.returncode == 0, again.stderr
    assert "agentv: nothing left to run: every selected case of 'dataset' has a row in out.jsonl" in again.stderr
    assert "Totals: 6 cases  6 passed" in again.stdout and sorted(_calls(ws)) == CASES


def test_a_row_cut_short_by_a_crash_is_removed_and_its_case_runs_again(ws):
    _counting_workspace(ws)
    out = ws.root / "out.jsonl"
    assert _agentv(["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1"], ws.root).returncode == 0
    data = out.read_bytes()
    out.write_bytes(data[: len(data) - 40])  # the last row (c5) cut in the middle
    (ws.root / "calls").unlink()
    result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "warning: the last line of out.jsonl (line 6) was cut short (the run stopped while writing it): "
        "it is removed and its case runs again"
    )
    assert [row["eval_id"] for row in _rows(out)] == CASES and _calls(ws) == ["c5"]


def _finished_run(ws) -> Path:
    _counting_workspace(ws)
    assert _agentv(["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "1"], ws.root).returncode == 0
    out = ws.root / "out.jsonl"
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]))  # an interrupted run: rows of c0, c1, c2
    return out


def test_a_changed_dataset_or_target_is_refused_with_what_changed(ws):
    out = _finished_run(ws)
    before = out.read_bytes()
    old_sha = _manifest(out)["dataset"]["sha256"]
    dataset = ws.root / "dataset.yaml"
    dataset.write_text(dataset.read_text().replace("{path: a}, {path: b}", "{path: a}", 1))
    ws.cli_target("sh  {FILES}")
    result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root)
    assert result.returncode == 2, result.stderr
    new_sha = hashlib.sha256(dataset.read_bytes()).hexdigest()
    lines = result.stderr.splitlines()
    assert lines == [
        "error: cannot resume from out.jsonl: its rows were made from other inputs:",
        f"  the dataset content changed (sha256 {old_sha[:12]}… → {new_sha[:12]}…)",
        "  the evaluators of cases 'c0', 'c1', 'c2', 'c3', 'c4' and 1 more changed",
        "  the target changed:",
        "    command: changed",
        "hint: pass --force and --allow-target-change to reuse them anyway, or start a new run",
    ]
    assert out.read_bytes() == before and sorted(_calls(ws)) == CASES  # nothing ran, nothing written

    # --force accepts the other inputs, never the target (tests/cli/test_target_change.py)
    forced = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl", "--force"], ws.root)
    assert forced.returncode == 2, forced.stderr
    assert forced.stderr.splitlines() == [
        "error: cannot resume from out.jsonl: the target changed since its rows were made:",
        "  command: changed",
        "hint: pass --allow-target-change to reuse them anyway, or start a new run",
    ]
    forced = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl", "--force", "--allow-target-change"], ws.root)
    assert forced.returncode == 0, forced.stderr
    assert forced.stderr.splitlines()[:2] == [
        "warning: reusing rows made from other inputs (--force): "
        f"the dataset content changed (sha256 {old_sha[:12]}… → {new_sha[:12]}…); "
        "the evaluators of cases 'c0', 'c1', 'c2', 'c3', 'c4' and 1 more changed",
        "warning: reusing rows another version of the target made (--allow-target-change): command: changed",
    ]
    assert sorted(row["eval_id"] for row in _rows(out)) == CASES
    assert sorted(_calls(ws)) == sorted(CASES + ["c3", "c4", "c5"])


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (None, "no run manifest beside out.jsonl (looked for out.jsonl.meta.json)"),
        ('{"run_id": ', "out.jsonl.meta.json is not JSON (" + THEIRS + "): it was edited or cut short"),
        ('{"run_id": "x"}', "out.jsonl.meta.json is not a run manifest: tool: " + THEIRS),
    ],
    ids=["missing", "cut-short", "edited"],
)
def test_a_missing_or_edited_manifest_is_refused_unless_forced(ws, damage, message):
    out = _finished_run(ws)
    meta = ws.root / "out.jsonl.meta.json"
    if damage is None:
        meta.unlink()
    else:
        meta.write_text(damage)
    result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and matches(f"error: cannot resume from out.jsonl: {message}", lines[0]), lines
    assert lines[-1] == "hint: --force resumes from the rows alone"
    run_id = _rows(out)[0]["run_id"]
    forced = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl", "--force"], ws.root)
    assert forced.returncode == 0, forced.stderr
    assert "reusing the rows as they are (--force)" in forced.stderr.splitlines()[0]
    assert sorted(row["eval_id"] for row in _rows(out)) == CASES
    assert {row["run_id"] for row in _rows(out)} == {run_id} == {_manifest(out)["run_id"]}


def test_results_of_another_dataset_are_refused_even_with_force(ws):
    _counting_workspace(ws)
    other = ws.root / "other.yaml"
    other.write_text((ws.root / "dataset.yaml").read_text())
    assert _agentv(["eval", "other.yaml", "--out", "out.jsonl"], ws.root).returncode == 0
    for extra in ([], ["--force"]):
        result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl", *extra], ws.root)
        assert result.returncode == 2, result.stderr
        assert result.stderr.splitlines() == [
            "error: cannot resume from out.jsonl: it holds results of dataset 'other', not of 'dataset'",
            "hint: pass the dataset it was made from, or start a new run",
        ]


def test_rows_of_cases_not_in_the_dataset_are_kept_and_reported(ws):
    out = _finished_run(ws)
    ghost = {**_rows(out)[0], "eval_id": "ghost"}
    with out.open("a") as handle:
        handle.write(json.dumps(ghost) + "\n")
    result = _agentv(["eval", "dataset.yaml", "--resume", "out.jsonl"], ws.root)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "warning: out.jsonl holds rows of 1 case not in the dataset ('ghost'): kept"
    )
    assert sorted(row["eval_id"] for row in _rows(out)) == sorted([*CASES, "ghost"])
    assert "Totals: 7 cases" in result.stdout  # the summary covers every row of the file


@pytest.mark.parametrize(
    ("args", "error", "hint"),
    [
        (
            ["--resume", "out.jsonl", "--out", "x.jsonl"],
            "--resume and --out cannot be used together: --resume appends to the results file it resumes",
            "see agentv eval --help",
        ),
        (
            ["--resume", "out.jsonl", "--retry-errors", "out.jsonl"],
            "--resume and --retry-errors cannot be used together",
            "see agentv eval --help",
        ),
        (["--force"], "--force goes with --resume, --rerun-failed or --retry-errors", "see agentv eval --help"),
        (
            ["--allow-target-change"],
            "--allow-target-change goes with --resume, --rerun-failed or --retry-errors",
            "see agentv eval --help",
        ),
        (
            ["--rerun-failed", "out.jsonl", "--out", "out.jsonl"],
            "--out names the file --rerun-failed reads (out.jsonl); that file is never changed: pass another --out",
            "--resume out.jsonl adds the missing rows to it instead",
        ),
        (["--resume", "nope.jsonl"], "cannot resume from nope.jsonl: no such file", None),
        (["--rerun-failed", "nope.jsonl"], "cannot re-run cases of nope.jsonl: no such file", None),
        (["--rerun-failed", "fx"], "cannot re-run cases of fx: not a regular file", None),
        (["--resume", "fx"], "cannot resume from fx: not a regular file", None),
        (
            ["--resume", "notes.txt"],
            "cannot resume from notes.txt: line 1 is not JSON: " + THEIRS,
            "agentv reuses only a results file it wrote (JSONL rows)",
        ),
    ],
    ids=[
        "resume-and-out",
        "two-modes",
        "force-alone",
        "allow-target-change-alone",
        "out-is-the-source",
        "no-file",
        "no-file-rerun",
        "directory-rerun",
        "directory",
        "not-jsonl",
    ],
)
def test_bad_reuse_options_and_files_are_refused_before_anything_runs(ws, args, error, hint):
    out = _finished_run(ws)
    (ws.root / "notes.txt").write_text("some notes\nnot rows\n")
    before = out.read_bytes()
    result = _agentv(["eval", "dataset.yaml", *args], ws.root)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == (2 if hint else 1) and matches(f"error: {error}", lines[0]), lines
    assert lines[1:] == ([f"hint: {hint}"] if hint else [])
    assert out.read_bytes() == before and sorted(_calls(ws)) == CASES


@pytest.mark.parametrize(
    ("flag", "error", "hint"),
    [
        ("--resume", "cannot resume from out.jsonl: another agentv run is writing it", "wait for that run to finish"),
        (
            "--rerun-failed",
            "cannot re-run cases of out.jsonl: another agentv run is writing it",
            "wait for that run to finish",
        ),
    ],
)
def test_a_results_file_another_run_is_writing_is_refused(ws, flag, error, hint):
    out = _finished_run(ws)
    with out.open("ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as a running agentv holds it
        result = _agentv(["eval", "dataset.yaml", flag, "out.jsonl"], ws.root)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"error: {error}", f"hint: {hint}"]
    assert sorted(_calls(ws)) == CASES


def _mixed_workspace(ws) -> Path:
    """p1 passes; f1 answers wrongly and e1 fails (exit 1) until the file `fixed` exists."""
    ws.cli_target("sh {FILES}")
    fixed = ws.root / "fixed"
    wrong = f"if [ -f {fixed} ]; then echo '{OK}'; else echo '{{\"a\": 9, \"b\": 9}}'; fi"
    broken = f"if [ -f {fixed} ]; then echo '{OK}'; else exit 1; fi"
    cases = [
        ("p1", f"echo p1 >> {ws.root / 'calls'}; echo '{OK}'", {"a": 1, "b": 2}),
        ("f1", f"echo f1 >> {ws.root / 'calls'}; {wrong}", {"a": 1, "b": 2}),
        ("e1", f"echo e1 >> {ws.root / 'calls'}; {broken}", {"a": 1, "b": 2}),
    ]
    ws.cases_dataset(cases)
    result = _agentv(["eval", "dataset.yaml", "--out", "old.jsonl", "--max-retries", "0"], ws.root)
    assert result.returncode == 4, result.stderr
    (ws.root / "calls").unlink()
    fixed.touch()
    return ws.root / "old.jsonl"


@pytest.mark.parametrize(
    ("flag", "rerun", "code", "header"),
    [
        ("--rerun-failed", ["e1", "f1"], 0, "agentv: re-running 2 cases of 'dataset' that did not pass in old.jsonl"),
        ("--retry-errors", ["e1"], 1, "agentv: re-running 1 case of 'dataset' with an error in old.jsonl"),
    ],
)
def test_rerun_failed_and_retry_errors_run_only_those_into_a_new_file(ws, flag, rerun, code, header):
    old = _mixed_workspace(ws)
    old_bytes, old_meta = old.read_bytes(), _manifest(old)
    result = _agentv(["eval", "dataset.yaml", flag, "old.jsonl", "--out", "new.jsonl"], ws.root)
    assert result.returncode == code, result.stderr
    assert header in result.stderr
    assert sorted(_calls(ws)) == rerun  # only those cases' targets ran
    assert old.read_bytes() == old_bytes and _manifest(old) == old_meta  # the old file is untouched
    new = ws.root / "new.jsonl"
    rows = {row["eval_id"]: row for row in _rows(new)}
    assert sorted(rows) == ["e1", "f1", "p1"]  # every case: re-run rows and copied ones
    manifest = _manifest(new)
    assert {row["run_id"] for row in rows.values()} == {manifest["run_id"]} != {old_meta["run_id"]}
    assert manifest["derived_from"] == old_meta["run_id"] and manifest["counts"]["written"] == 3
    assert rows["e1"]["status"] == "ok"
    assert rows["f1"]["verdict"] == ("pass" if "f1" in rerun else "fail")


def test_rerun_failed_with_every_case_passed_runs_nothing(ws):
    _counting_workspace(ws)
    assert _agentv(["eval", "dataset.yaml", "--out", "old.jsonl"], ws.root).returncode == 0
    result = _agentv(["eval", "dataset.yaml", "--rerun-failed", "old.jsonl", "--out", "new.jsonl"], ws.root)
    assert result.returncode == 0, result.stderr
    assert "agentv: nothing left to run: every selected case of 'dataset' passed in old.jsonl" in result.stderr
    assert sorted(_calls(ws)) == CASES and len(_rows(ws.root / "new.jsonl")) == 6


def _manifest_of(**changes: object) -> RunManifest:
    base = RunManifest(
        run_id="r",
        tool={"name": "agentv", "version": "0"},
        results="/p/out.jsonl",
        dataset=DatasetInfo(path="/p/d.yaml", name="d", sha256="a" * 64, cases=2, case_ids=["c1", "c2"]),
        case_evaluators={"c1": "1" * 64, "c2": "2" * 64},
        files={"/p/judge.py": "3" * 64},
        target=TargetInfo(name="t", provider="cli", sha256="4" * 64),
        judges={"j": TargetInfo(name="j", provider="openai", sha256="5" * 64)},
        options={"dry_run": False, "workers": 4},
        started_at="2026-01-01T00:00:00Z",
    )
    return base.model_copy(update=changes)


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (_manifest_of(), []),
        (_manifest_of(options={"dry_run": False, "workers": 8, "threshold": 0.5}), []),
        (_manifest_of(case_evaluators={"c1": "1" * 64}), []),  # fewer cases selected: what both select is compared
        (
            _manifest_of(dataset=DatasetInfo(path="/q/d.yaml", name="d", sha256="b" * 64, cases=2)),
            [
                "the dataset is another file (/p/d.yaml → /q/d.yaml)",
                f"the dataset content changed (sha256 {'a' * 12}… → {'b' * 12}…)",
            ],
        ),
        (_manifest_of(case_evaluators={"c1": "1" * 64, "c2": "9" * 64}), ["the evaluators of case 'c2' changed"]),
        (
            _manifest_of(files={"/p/judge.py": "6" * 64, "/p/prompt.md": "7" * 64}),
            [
                f"the judge file /p/judge.py changed (sha256 {'3' * 12}… → {'6' * 12}…)",
                "judges read files they did not read before: /p/prompt.md",
            ],
        ),
        (_manifest_of(files={}), ["judges no longer read: /p/judge.py"]),
        # the eval target is target_diff's (tests/report/test_target_diff.py), under --allow-target-change
        (_manifest_of(target=TargetInfo(name="u", provider="cli", sha256="8" * 64)), []),
        (
            _manifest_of(judges={"k": TargetInfo(name="k", provider="openai", sha256="5" * 64)}),
            ["the judge target 'j' is no longer used", "the judge target 'k' is new"],
        ),
        (
            _manifest_of(judges={"j": TargetInfo(name="j", provider="openai", sha256="0" * 64)}),
            [f"the judge target 'j' config changed (sha256 {'5' * 12}… → {'0' * 12}…)"],
        ),
        (_manifest_of(options={"dry_run": True}), ["--dry-run was off and is on now"]),
    ],
    ids=[
        "same",
        "options-that-change-no-row",
        "fewer-cases",
        "dataset",
        "evaluators",
        "judge-files",
        "judge-file-gone",
        "target",
        "judge-set",
        "judge-config",
        "dry-run",
    ],
)
def test_manifest_differences_say_what_changed(current, expected):
    assert manifest_differences(_manifest_of(), current) == expected


def test_rerun_failed_runs_a_row_whose_verdict_contradicts_its_results(ws):
    """A row edited to say pass while its evaluator results say fail did not pass: it runs again."""
    _counting_workspace(ws)
    ws.file("fx/c2.json", 'echo \'{"a": 9, "b": 9}\'')  # c2 answers wrongly: score 0, fail
    assert _agentv(["eval", "dataset.yaml", "--out", "old.jsonl"], ws.root).returncode == 1
    lines = (ws.root / "old.jsonl").read_text().splitlines()
    edited = [
        json.dumps({**row, "verdict": "pass"}) if row["eval_id"] == "c2" else json.dumps(row)
        for row in map(json.loads, lines)
    ]
    (ws.root / "old.jsonl").write_text("\n".join(edited) + "\n")
    result = _agentv(["eval", "dataset.yaml", "--rerun-failed", "old.jsonl", "--out", "new.jsonl"], ws.root)
    assert "agentv: re-running 1 case of 'dataset' that did not pass in old.jsonl (5 rows copied)" in result.stderr
    assert "[1/1] fail    0.000  c2" in result.stderr  # c2 ran again, and fails as it did
