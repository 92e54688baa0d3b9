"""The pure-Python optimal assignment (`scoring.assignment`): the pairs scipy's
`linear_sum_assignment` gives, ties included, so a base install pairs items exactly as one with
scipy; optimal by brute force; bad matrices refused."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment as scipy_assignment

from agentv_py.scoring import assignment
from agentv_py.scoring.assignment import linear_sum_assignment

TIED = st.sampled_from([0.0, 0.5, 0.8, 0.8, 1.0, 0.1 + 0.2, 0.3])  # ties, and two values one ulp apart
ANY = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def matrices(values: st.SearchStrategy[float]) -> st.SearchStrategy[list[list[float]]]:
    return st.integers(1, 7).flatmap(
        lambda columns: st.lists(st.lists(values, min_size=columns, max_size=columns), min_size=1, max_size=7)
    )


def scipy_pairs(matrix: list[list[float]], maximize: bool) -> list[tuple[int, int]]:
    rows, columns = scipy_assignment(np.array(matrix, dtype=float), maximize=maximize)
    return list(zip(rows.tolist(), columns.tolist(), strict=True))


@settings(max_examples=600, deadline=None)
@given(matrix=st.one_of(matrices(TIED), matrices(ANY)), maximize=st.booleans())
def test_the_pairs_are_scipys(matrix, maximize):
    assert linear_sum_assignment(matrix, maximize=maximize) == scipy_pairs(matrix, maximize)


@settings(max_examples=300, deadline=None)
@given(matrix=matrices(st.integers(0, 9).map(float)))
def test_the_total_is_the_brute_force_optimum(matrix):
    rows, columns = len(matrix), len(matrix[0])
    if rows <= columns:
        best = max(sum(matrix[i][j] for i, j in enumerate(p)) for p in itertools.permutations(range(columns), rows))
    else:
        best = max(sum(matrix[i][j] for j, i in enumerate(p)) for p in itertools.permutations(range(rows), columns))
    pairs = linear_sum_assignment(matrix, maximize=True)
    assert len(pairs) == min(rows, columns)
    assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
    assert sum(matrix[i][j] for i, j in pairs) == best


def test_big_matrices_give_the_same_pairs_with_or_without_scipy():
    rng = np.random.default_rng(3)
    matrix = np.round(rng.random((70, 60)), 1).tolist()  # 4,200 cells: scipy's solver when installed, many ties
    assert len(matrix) * len(matrix[0]) > assignment.COMPILED_FROM_CELLS
    pure = assignment._solve(matrix, 70, 60, True)
    assert linear_sum_assignment(matrix, maximize=True) == pure == scipy_pairs(matrix, True)


@pytest.mark.parametrize(
    ("matrix", "maximize", "message"),
    [
        ([[1.0, math.nan]], False, "matrix contains invalid numeric entries"),
        ([[1.0, -math.inf]], False, "matrix contains invalid numeric entries"),
        ([[1.0, math.inf]], True, "matrix contains invalid numeric entries"),
        ([[math.inf, math.inf], [1.0, 2.0]], False, "cost matrix is infeasible"),
    ],
    ids=["nan", "minus-inf", "plus-inf-maximised", "infeasible"],
)
def test_unusable_matrices_are_refused(matrix, maximize, message):
    with pytest.raises(ValueError, match=message):
        linear_sum_assignment(matrix, maximize=maximize)


@pytest.mark.parametrize("matrix", [[], [[]], [[], []]], ids=["no-rows", "no-columns", "rows-without-columns"])
def test_an_empty_matrix_has_no_pairs(matrix):
    assert linear_sum_assignment(matrix) == []
