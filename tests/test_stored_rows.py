"""The results file `agentv rescore` reads: which line stands for each case, held as arrays."""

from __future__ import annotations

import pytest

from agentv_py.stored_rows import LineIndex

IDS = ["a", "b", "c", "d"]
PLACES = {case_id: i for i, case_id in enumerate(IDS)}


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        pytest.param({}, {}, id="no-rows"),
        pytest.param({"c": 1, "a": 2}, {1: "c", 2: "a"}, id="rows-in-file-order"),
        pytest.param({"a": 9, "b": 3, "d": 5}, {3: "b", 5: "d", 9: "a"}, id="sorted-by-line"),
        pytest.param({"a": 4, "gone": 2, "c": 7}, {4: "a", 7: "c"}, id="cases-not-in-the-dataset-left-out"),
    ],
)
def test_a_line_index_maps_each_taken_line_to_its_case(last: dict[str, int], expected: dict[int, str]) -> None:
    index = LineIndex(last, PLACES, IDS)
    assert dict(index) == expected
    assert list(index) == sorted(expected)
    assert index.positions == [PLACES[expected[number]] for number in sorted(expected)]
    assert index.get(8) is None and 8 not in index
    with pytest.raises(KeyError):
        index[8]
