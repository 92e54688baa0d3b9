"""`--shard K/N` and `agentv merge`: every case in exactly one shard, the same split everywhere, and
shards merged back equal the unsharded run; runs that do not belong together are refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentv_py.cli import app
from agentv_py.errors import AgentvError
from agentv_py.runner.engine import Shard, parse_shard, shard_of
from tests.conftest import comparable_rows

HINT = "K/N with 1 <= K <= N, e.g. --shard 2/4 for the second of four shards"


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args))


@pytest.mark.parametrize(
    "text, message",
    [
        ("0/4", "--shard 0/4: there is no shard 0 of 4"),
        ("5/4", "--shard 5/4: there is no shard 5 of 4"),
        ("1/0", "--shard 1/0: there is no shard 1 of 0"),
        ("a/b", "--shard 'a/b' is not K/N"),
        ("3", "--shard '3' is not K/N"),
        ("-1/2", "--shard '-1/2' is not K/N"),
        ("1/2/3", "--shard '1/2/3' is not K/N"),
        (" 1/2", "--shard ' 1/2' is not K/N"),
        ("١/٢", "--shard '١/٢' is not K/N"),  # Arabic-Indic digits: not ASCII
    ],
    ids=["zero", "past-the-last", "no-shards", "letters", "no-slash", "negative", "three-parts", "space", "non-ascii"],
)
def test_bad_shard_specs_are_usage_errors(text, message):
    with pytest.raises(AgentvError) as caught:
        parse_shard(text)
    assert caught.value.message == message and caught.value.hint == HINT


def test_good_shard_specs():
    assert parse_shard("2/4") == Shard(2, 4) and str(parse_shard("1/1")) == "1/1"


# Pinned: the split must never change between versions, machines or Python builds (a CI matrix
# of old and new runners must agree on it).
PINNED = {
    ("invoice-00001", 4): 3,
    ("invoice-00002", 4): 4,
    ("c0", 4): 4,
    ("c1", 3): 3,
    ("case 1/x", 4): 3,
    ("日本語", 3): 2,
    ("", 3): 2,
}


@pytest.mark.parametrize("case_id, count", list(PINNED), ids=[f"{i!r}-of-{n}" for i, n in PINNED])
def test_the_split_is_pinned(case_id, count):
    assert shard_of(case_id, count) == PINNED[case_id, count]
    digest = hashlib.sha256(case_id.encode()).digest()
    assert shard_of(case_id, count) == int.from_bytes(digest[:8], "big") % count + 1  # the documented rule


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.text(), unique=True, max_size=30), count=st.integers(min_value=1, max_value=9))
def test_every_case_is_in_exactly_one_shard(ids, count):
    shards = [[i for i in ids if shard_of(i, count) == k] for k in range(1, count + 1)]
    assert sorted(i for shard in shards for i in shard) == sorted(ids)


# -- eval --shard and merge, end to end --------------------------------------------------------

IDS = [f"c{i}" for i in range(12)] + ["naïve case", "line\nbreak", "[red]markup[/red]"]


def dataset(ws, ids=IDS) -> Path:
    ws.file(".agentv/targets.yaml", "targets:\n  - {name: m, provider: mock, echo_expected: true}\n")
    lines = [
        "execution:",
        "  target: m",
        "  evaluators:",
        "    - {type: field_accuracy, fields: [{path: a}]}",
        "evalcases:",
    ]
    for n, case_id in enumerate(ids):
        lines.append(f"  - id: {json.dumps(case_id)}")
        lines.append("    input_messages: [{role: user, content: x}]")
        lines.append(f"    expected_messages: [{{role: assistant, content: {{a: {n}}}}}]")
    return ws.file("dataset.yaml", "\n".join(lines) + "\n")


def shards(ws, count: int, which=None) -> list[str]:
    names = []
    for k in which or range(1, count + 1):
        result = invoke("eval", "dataset.yaml", "--shard", f"{k}/{count}", "--out", f"s{k}.jsonl")
        assert result.exit_code == 0, result.output
        assert f"(shard {k}/{count})" in result.stderr.splitlines()[0]
        names.append(f"s{k}.jsonl")
    return names


def test_shards_merged_equal_the_unsharded_run(ws):
    dataset(ws)
    assert invoke("eval", "dataset.yaml", "--out", "all.jsonl").exit_code == 0
    names = shards(ws, 3)
    per_shard = [len(Path(n).read_text().splitlines()) for n in names]
    assert sum(per_shard) == len(IDS) and all(per_shard)
    manifest = json.loads(Path("s2.jsonl.meta.json").read_text())
    assert manifest["shard"] == {"index": 2, "count": 3} and manifest["options"]["shard"] == "2/3"
    result = invoke("merge", *names, "-o", "merged.jsonl")
    assert result.exit_code == 0, result.output
    assert (
        result.stderr.splitlines()[0]
        == f"agentv: merged {len(IDS)} rows of 3 runs into merged.jsonl ({len(IDS)} cases in the dataset)"
    )
    assert comparable_rows(Path("merged.jsonl")) == comparable_rows(Path("all.jsonl"))
    merged, whole = (json.loads(Path(p).read_text()) for p in ("merged.jsonl.meta.json", "all.jsonl.meta.json"))
    assert "shard" not in merged and "shard" not in whole and "merged_from" not in whole
    assert merged["merged_from"] == [json.loads(Path(f"{n}.meta.json").read_text())["run_id"] for n in names]
    assert sorted(merged["dataset"]["case_ids"]) == sorted(whole["dataset"]["case_ids"])
    assert merged["case_evaluators"] == {i: whole["case_evaluators"][i] for i in merged["dataset"]["case_ids"]}
    assert merged["evaluators_sha256"] == whole["evaluators_sha256"]
    assert merged["status"] == "completed" and merged["counts"]["written"] == len(IDS)
    assert merged["gate"]["outcome"] == "ok"
    for command in (
        ["metrics", "merged.jsonl"],
        ["report", "merged.jsonl", "-o", "r.html"],
        ["compare", "all.jsonl", "merged.jsonl"],
    ):
        assert invoke(*command).exit_code == 0, command
    assert invoke("rescore", "merged.jsonl", "--out", "rescored.jsonl").exit_code == 0
    assert comparable_rows(Path("rescored.jsonl")) == comparable_rows(Path("all.jsonl"))


def test_a_missing_shard_is_reported_with_its_cases(ws):
    dataset(ws)
    names = shards(ws, 3, which=[1, 3])
    missing = [i for i in IDS if shard_of(i, 3) == 2]
    result = invoke("merge", *names, "-o", "merged.jsonl")
    assert result.exit_code == 1, result.output
    named = ", ".join(f"'{i}'" for i in missing[:10]).replace("\n", "\\n")
    assert result.stderr.splitlines()[-1] == (
        f"error: {len(missing)} cases of the dataset have no row (shards 2/3 not given): {named}"
    )
    allowed = invoke("merge", *names, "-o", "merged.jsonl", "--allow-missing")
    assert allowed.exit_code == 0 and allowed.stderr.splitlines()[-1].startswith("warning: ")


def test_the_merged_rows_are_gated_like_an_eval(ws):
    dataset(ws)
    names = shards(ws, 2)
    result = invoke("merge", *names, "-o", "merged.jsonl", "--threshold", "0.5")
    assert result.exit_code == 0
    assert json.loads(Path("merged.jsonl.meta.json").read_text())["gate"]["rule"] == "mean score >= 0.5"


def test_runs_that_do_not_belong_together_are_refused(ws):
    path = dataset(ws)
    names = shards(ws, 2)
    assert (
        invoke("merge", names[0], names[0], "-o", "m.jsonl").stderr.splitlines()[0] == "error: s1.jsonl is given twice"
    )
    assert (
        invoke("merge", *names, "-o", "s1.jsonl").stderr.splitlines()[0]
        == "error: --out s1.jsonl is the run s1.jsonl (s1.jsonl): an output never replaces an input; pass another path"
    )
    # the same shard twice (another file)
    Path("again.jsonl").write_text(Path("s1.jsonl").read_text())
    Path("again.jsonl.meta.json").write_text(Path("s1.jsonl.meta.json").read_text())
    result = invoke("merge", "s1.jsonl", "again.jsonl", "-o", "m.jsonl")
    assert (
        result.exit_code == 2
        and result.stderr.splitlines()[0] == "error: shard 1/2 is given twice: s1.jsonl and again.jsonl"
    )
    # a run of the dataset once it changed
    path.write_text(path.read_text() + "# changed\n")
    assert invoke("eval", "dataset.yaml", "--shard", "2/2", "--out", "changed.jsonl").exit_code == 0
    result = invoke("merge", "s1.jsonl", "changed.jsonl", "-o", "m.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0].startswith(
        "error: changed.jsonl is a run of another dataset than s1.jsonl: 'dataset' (sha256 "
    )
    # no manifest
    Path("s2.jsonl.meta.json").unlink()
    result = invoke("merge", "s1.jsonl", "s2.jsonl", "-o", "m.jsonl")
    assert result.exit_code == 2 and result.stderr.splitlines()[0].startswith("error: s2.jsonl: ")
    assert not Path("m.jsonl").exists()  # nothing written by a refused merge


def test_a_case_in_two_runs_and_a_bad_line_are_refused_and_nothing_is_written(ws):
    dataset(ws)
    assert invoke("eval", "dataset.yaml", "--out", "all.jsonl").exit_code == 0
    names = shards(ws, 2)
    result = invoke("merge", "all.jsonl", names[1], "-o", "m.jsonl")
    assert result.exit_code == 2
    first = json.loads(Path(names[1]).read_text().splitlines()[0])["eval_id"].replace("\n", "\\n")
    assert result.stderr.splitlines()[0] == f"error: case '{first}' has a row in both all.jsonl and {names[1]}"
    with open(names[0], "a") as handle:
        handle.write("{not json\n")
    result = invoke("merge", *names, "-o", "m.jsonl")
    assert result.exit_code == 2 and result.stderr.splitlines()[0].startswith(f"error: {names[0]}:")
    assert not Path("m.jsonl").exists() and not list(Path().glob(".m.jsonl.*"))


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda m: m["dataset"].update(evaluators_sha256="0" * 64),
            "error: s2.jsonl scored the dataset with other evaluators than s1.jsonl "
            "(evaluators sha256 000000000000 vs ",
        ),
        (
            lambda m: m["target"]["fingerprint"]["settings"].update(echo_expected="0" * 64),
            "error: s2.jsonl ran another version of the target than s1.jsonl:\n  setting echo_expected: changed\n"
            "hint: run every shard with the same target, or pass --allow-target-change to merge them anyway",
        ),
        (
            lambda m: m["target"].update(sha256="0" * 64),
            None,  # a config the answers do not depend on (a timeout): the fingerprint decides
        ),
        (
            lambda m: m.update(files={"/p/judge.py": "0" * 64}),
            None,  # s1 has no judge file: nothing to differ from
        ),
        (
            lambda m: m.update(shard={"index": 2, "count": 3}),
            "error: the runs are shards of different splits (N=2, N=3)",
        ),
    ],
    ids=["evaluators", "target", "target-config-only", "judge-file-only-in-one", "another-split"],
)
def test_manifests_that_differ_are_named(ws, edit, message):
    dataset(ws)
    names = shards(ws, 2)
    path = Path("s2.jsonl.meta.json")
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    result = invoke("merge", *names, "-o", "m.jsonl")
    if message is None:
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2 and result.stderr.startswith(message), result.stderr
    assert not Path("m.jsonl").exists()


def test_a_judge_file_that_changed_between_shards_is_named(ws):
    dataset(ws)
    names = shards(ws, 2)
    for name, digest in (("s1.jsonl.meta.json", "a" * 64), ("s2.jsonl.meta.json", "b" * 64)):
        manifest = json.loads(Path(name).read_text())
        manifest["files"] = {"/p/judge.py": digest}
        Path(name).write_text(json.dumps(manifest))
    result = invoke("merge", *names, "-o", "m.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == "error: judge file /p/judge.py differs between s1.jsonl and s2.jsonl"


def _with_rows(path: str, rows: list[dict]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def test_rows_that_are_not_their_runs_own_are_refused_or_left_out_never_gated(ws):
    """60 renamed copies of a passing row appended to a shard used to turn a failing gate into a
    pass: a row must be a case of the dataset, of its run's shard, that its run selected."""
    dataset(ws)
    names = shards(ws, 2)
    first = json.loads(Path(names[0]).read_text().splitlines()[0])
    _with_rows(names[0], [{**first, "eval_id": f"copy-{n}"} for n in range(60)])
    refused = invoke("merge", *names, "-o", "all.jsonl")
    assert refused.exit_code == 2 and not Path("all.jsonl").exists()
    line = len(Path(names[0]).read_text().splitlines()) - 59
    assert refused.stderr.splitlines()[0] == f"error: {names[0]}:{line}: case 'copy-0' is not a case of the dataset"
    assert "pass --exclude-foreign" in refused.stderr
    left_out = invoke("merge", *names, "-o", "all.jsonl", "--exclude-foreign")
    assert left_out.exit_code == 0, left_out.output
    assert "warning: left out 60 rows that are not their run's own (--exclude-foreign; not gated):" in left_out.stderr
    assert "  ... and 50 more" in left_out.stderr
    rows = [json.loads(text) for text in Path("all.jsonl").read_text().splitlines()]
    assert sorted(row["eval_id"] for row in rows) == sorted(IDS)


def test_a_row_of_another_shard_is_refused(ws):
    dataset(ws)
    names = shards(ws, 2)
    other = next(i for i in IDS if shard_of(i, 2) == 2)
    moved = [json.loads(t) for t in Path(names[1]).read_text().splitlines() if json.loads(t)["eval_id"] == other]
    lines = [t for t in Path(names[1]).read_text().splitlines() if json.loads(t)["eval_id"] != other]
    Path(names[1]).write_text("".join(t + "\n" for t in lines))
    _with_rows(names[0], moved)  # the row now sits in shard 1's file
    refused = invoke("merge", *names, "-o", "all.jsonl", "--dataset", "dataset.yaml")
    assert refused.exit_code == 2, refused.output
    assert f"case '{other}' belongs to shard 2/2, not to this run's 1/2" in refused.stderr.splitlines()[0]


def test_a_row_of_a_case_the_run_did_not_select_is_refused(ws):
    dataset(ws)
    result = invoke("eval", "dataset.yaml", "--eval-id", "c1", "--out", "one.jsonl")
    assert result.exit_code == 0, result.output
    row = json.loads(Path("one.jsonl").read_text().splitlines()[0])
    _with_rows("one.jsonl", [{**row, "eval_id": "c2"}])  # a real case, but not one this run ran
    refused = invoke("merge", "one.jsonl", "-o", "all.jsonl", "--allow-missing")
    assert refused.exit_code == 2, refused.output
    assert refused.stderr.splitlines()[0] == (
        "error: one.jsonl:2: case 'c2' is not one of the cases its run selected (its manifest)"
    )


@pytest.mark.parametrize("run_id", ["20260101T000000Z-deadbeef", None], ids=["another-run", "no-run-id"])
def test_a_row_another_run_wrote_is_not_its_own(ws, run_id):
    """A shard's own case, replaced by a row of another run (or one without a run id): refused,
    or with --exclude-foreign left out, never gated."""
    dataset(ws)
    names = shards(ws, 2)
    lines = [json.loads(t) for t in Path(names[0]).read_text().splitlines()]
    forged = {**lines[0], "run_id": run_id}
    Path(names[0]).write_text("".join(json.dumps(row) + "\n" for row in [forged, *lines[1:]]))
    refused = invoke("merge", *names, "-o", "all.jsonl", "--dataset", "dataset.yaml")
    assert refused.exit_code == 2, refused.output
    own = json.loads(Path(f"{names[0]}.meta.json").read_text())["run_id"]
    written_by = f"run {run_id}" if run_id else "no run (it has no run_id)"
    assert refused.stderr.splitlines()[0] == (
        f"error: {names[0]}:1: case '{lines[0]['eval_id']}' was written by {written_by}, not by this file's run {own}"
    )
    left_out = invoke("merge", *names, "-o", "all.jsonl", "--dataset", "dataset.yaml", "--exclude-foreign")
    assert left_out.exit_code != 0  # the case it stood for has no row: missing, not passed
    merged = Path("all.jsonl").read_text().splitlines() if Path("all.jsonl").exists() else []
    assert lines[0]["eval_id"] not in [
        json.loads(line)["eval_id"] for line in merged
    ]  # not a substring: a run id may hold it
