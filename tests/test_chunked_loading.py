"""A big dataset is loaded a chunk at a time and its prepared cases are kept pickled in a temporary
file (`PreparedCases`): problems must be located exactly as a whole-file load locates them, checks
across cases must see every chunk, and the cases read back must run the same."""

from __future__ import annotations

import gc
import json
import threading
from pathlib import Path

import pytest

from agentv_py import run_eval
from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset
from agentv_py.loading.source import pack_case, unpack_cases
from agentv_py.prepared import PreparedCases, case_ids

SUITE = """\
execution:
  target: mock
  evaluators:
    - {type: field_accuracy, fields: [{path: a}, {path: total, match: numeric_tolerance, tolerance: 0.5}]}
evalcases:
"""


def case(i: int, total: object = None, extra: str = "") -> str:
    value = json.dumps({"a": i, "total": i if total is None else total})
    return f"  - id: c{i}\n    input_messages: [{{role: user, content: doc {i}}}]\n" + (
        f"    expected_messages: [{{role: assistant, content: {value}}}]\n{extra}"
    )


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_dataset(path)
    return [str(problem) for problem in caught.value.problems]


@pytest.fixture
def chunks_of_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PreparedCases, "chunk_cases", 2)


def test_problems_in_later_chunks_are_located_in_the_file(ws, chunks_of_two):
    text = SUITE + "".join(case(i) for i in range(4)) + "  - id: c1\n    bogus: 1\n" + case(5)
    path = ws.file("dataset.yaml", text)
    line = text.splitlines().index("  - id: c1", 12) + 1  # the second c1
    assert problems_of(path) == [
        f"dataset.yaml:{line}: evalcases[4].id: duplicate id 'c1' (first used by evalcases[1]); ids must be unique",
        f"dataset.yaml:{line + 1}: evalcases[4].bogus: unknown key 'bogus'. Valid keys: id, conversation_id, "
        "expected_outcome, outcome, criteria, input_messages, input, expected_messages, expected_output, "
        "evaluators, extend_evaluators, execution, rubrics, skip, xfail, description, note, reference_answer, "
        "conversation, metadata",
    ]


def test_a_suite_problem_is_reported_once_whatever_the_number_of_chunks(ws, chunks_of_two):
    text = SUITE.replace("tolerance: 0.5", "tolerance: -1") + "".join(case(i) for i in range(7))
    path = ws.file("dataset.yaml", text)
    assert problems_of(path) == [
        "dataset.yaml:4: execution.evaluators[0].fields[1].tolerance: tolerance must be a number >= 0, got -1.0"
    ]


def test_ground_truth_warnings_count_cases_of_every_chunk(ws, chunks_of_two):
    text = SUITE + "".join(case(i, total="n/a" if i % 2 else None) for i in range(13))
    loaded = load_dataset(ws.file("dataset.yaml", text))
    assert [str(w) for w in loaded.warnings] == [
        "dataset.yaml:4: execution.evaluators[0].fields[1]: field 'total': the expected value cannot be scored in "
        "cases c1, c3, c5, c7, c9 (and 1 more): expected value is not numeric: string 'n/a' (case 'c1'); "
        'those cases will be "could not score" (an evaluator error)'
    ]


def test_a_gate_may_name_a_field_only_a_later_chunks_case_scores(ws, chunks_of_two):
    own = "    evaluators: [{type: field_accuracy, fields: [{path: b}]}]\n"
    text = "gates:\n  fields:\n    b: {recall: 0.5}\n" + SUITE + "".join(case(i) for i in range(4)) + case(4, extra=own)
    loaded = load_dataset(ws.file("dataset.yaml", text))
    assert [p.case.id for p in loaded.cases if p.evaluators[0].display_name == "field_accuracy"] == [
        "c0",
        "c1",
        "c2",
        "c3",
        "c4",
    ]
    assert loaded.cases[4].evaluators[0].fields[0].path == "b"  # type: ignore[union-attr]


def test_cases_read_back_equal_the_cases_held(ws, monkeypatch):
    text = SUITE + "".join(case(i) for i in range(9))
    path = ws.file("dataset.yaml", text)
    whole = load_dataset(path)
    monkeypatch.setattr(PreparedCases, "chunk_cases", 2)
    chunked = load_dataset(path)
    assert case_ids(chunked.cases) == [f"c{i}" for i in range(9)] == case_ids(list(whole.cases))
    assert list(chunked.cases) == list(whole.cases)
    assert chunked.cases[-1] == whole.cases[8]
    assert chunked.cases[3:6] == whole.cases[3:6]
    assert [c.id for c in chunked.model.evalcases] == [c.id for c in whole.model.evalcases]
    with pytest.raises(IndexError):
        chunked.cases[9]
    # the suite's evaluators are shared by every case, as when held: stored once, not per case
    assert all(p.evaluators[0] is chunked.cases[0].evaluators[0] for p in chunked.cases)


def test_cases_are_read_back_safely_from_many_threads(ws, monkeypatch):
    monkeypatch.setattr(PreparedCases, "chunk_cases", 3)
    loaded = load_dataset(ws.file("dataset.yaml", SUITE + "".join(case(i) for i in range(40))))
    seen: list[list[str]] = []

    def read(step: int) -> None:
        seen.append([loaded.cases[(i * step) % 40].case.id for i in range(200)])

    threads = [threading.Thread(target=read, args=(step,)) for step in (1, 3, 7, 11)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == sorted([f"c{(i * step) % 40}" for i in range(200)] for step in (1, 3, 7, 11))


def test_an_eval_of_chunks_gives_the_rows_and_fingerprints_of_a_whole_load(ws, monkeypatch):
    ws.file(".agentv/targets.yaml", "targets:\n  - {name: mock, provider: mock, echo_expected: true}\n")
    path = ws.file("dataset.yaml", SUITE + "".join(case(i) for i in range(7)))

    def rows_and_manifest(out: str) -> tuple[list[dict[str, object]], dict[str, object]]:
        run_eval(path, out=out, workers=3)
        rows = [json.loads(line) for line in Path(out).read_text().splitlines()]
        for row in rows:
            for key in ("timestamp", "duration_ms", "trace", "run_id"):
                row.pop(key, None)
        manifest = json.loads(Path(out + ".meta.json").read_text())
        return sorted(rows, key=lambda r: str(r["eval_id"])), manifest

    whole_rows, whole = rows_and_manifest("whole.jsonl")
    monkeypatch.setattr(PreparedCases, "chunk_cases", 2)
    chunked_rows, chunked = rows_and_manifest("chunked.jsonl")
    assert chunked_rows == whole_rows
    assert len(whole_rows) == 7
    for key in ("case_evaluators", "evaluators", "evaluators_sha256"):
        assert chunked[key] == whole[key]
    assert chunked["dataset"]["case_ids"] == whole["dataset"]["case_ids"]  # type: ignore[index]


def test_fingerprints_and_flags_of_cases_with_their_own_evaluators_and_rubrics(ws, chunks_of_two):
    from agentv_py.loading.fingerprint import canonical_sha256, config_data, evaluator_fingerprints
    from agentv_py.prepared import IMAGES, OWN_EVALUATORS, RUBRICS, cases_where

    own = "    evaluators: [{type: field_accuracy, fields: [{path: a}]}]\n"
    rubrics = "    rubrics: [is right]\n"
    extras = ["", own, "", rubrics, "", "", own + rubrics]
    loaded = load_dataset(ws.file("dataset.yaml", SUITE + "".join(case(i, extra=extras[i]) for i in range(7))))
    assert cases_where(loaded.cases, OWN_EVALUATORS) == [1, 6]
    assert cases_where(loaded.cases, RUBRICS) == [3, 6]
    assert cases_where(loaded.cases, IMAGES) == []
    _, per_case, _ = evaluator_fingerprints(loaded.cases)
    expected = {
        prepared.case.id: canonical_sha256([canonical_sha256(config_data(c)) for c in prepared.evaluators])
        for prepared in loaded.cases
    }
    assert per_case == expected
    assert len(set(per_case.values())) == 4  # the suite's, its own, rubric + suite, rubric + its own


def test_a_rescore_of_chunks_reads_each_chunk_back_twice_and_matches_a_whole_load(ws, monkeypatch):
    """Once to check the cases' input files against the output, once to score them: planning the
    re-score (are there judges? the manifest's fingerprints) reads back only a case per evaluator
    list (here 2: c5's own, and c0 for the suite's), not every case again."""
    import pickle

    from tests.cli.test_eval import invoke

    ws.file(".agentv/targets.yaml", "targets:\n  - {name: mock, provider: mock, echo_expected: true}\n")
    own = "    evaluators: [{type: field_accuracy, fields: [{path: a}]}]\n"
    ws.file("dataset.yaml", SUITE + "".join(case(i, extra=own if i == 5 else "") for i in range(7)))
    assert invoke("eval", "dataset.yaml", "--out", "run.jsonl").exit_code == 0
    loads = 0
    real_loads = pickle.loads

    def counted(data: bytes) -> object:
        nonlocal loads
        loads += 1
        return real_loads(data)

    def rescored(out: str) -> tuple[list[dict[str, object]], dict[str, object]]:
        result = invoke("rescore", "run.jsonl", "--out", out)
        assert result.exit_code == 0, result.output
        found = [json.loads(line) for line in Path(out).read_text().splitlines()]
        for row in found:
            for key in ("timestamp", "run_id"):
                row.pop(key, None)
        manifest = json.loads(Path(out + ".meta.json").read_text())
        return found, {key: manifest[key] for key in ("case_evaluators", "evaluators", "evaluators_sha256", "files")}

    whole = rescored("whole.jsonl")
    monkeypatch.setattr(PreparedCases, "chunk_cases", 2)
    monkeypatch.setattr("agentv_py.prepared.pickle.loads", counted)
    assert rescored("chunked.jsonl") == whole
    assert loads <= 2 * 4 + 2  # 7 cases in 4 chunks (a pass over every case per use: 16 and more)


def test_unpacked_cases_are_old_objects_and_what_another_froze_stays_frozen() -> None:
    # A chunk of cases lives on while it is validated: young collections must not walk it again.
    packed = tuple(pack_case({"id": str(i), "l": [[i], {"k": [i]}]}) for i in range(3000))
    gc.collect()
    cases = unpack_cases(packed)
    oldest = {id(item) for item in gc.get_objects(generation=2)}
    assert {id(cases), id(cases[0]["l"]), id(cases[2999]["l"][1]["k"])} <= oldest
    assert cases[2999] == {"id": "2999", "l": [[2999], {"k": [2999]}]}
    assert gc.isenabled()
    gc.freeze()  # someone else's frozen objects: unpacking must not thaw them
    try:
        frozen = gc.get_freeze_count()
        unpack_cases(packed)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
