"""Optimal assignment (the rectangular linear sum assignment problem) in pure Python.

The shortest augmenting path algorithm of Crouse (2016), "On implementing 2D rectangular
assignment algorithms", the one scipy's `linear_sum_assignment` implements, with the same
choices wherever several assignments are optimal: columns are scanned from the last, a tie for
the shortest path goes to a column not yet assigned, a tall matrix is solved transposed. So the
pairs are the ones scipy gives (a test checks it on random matrices full of ties), and the base
install scores `match: items` without scipy. O(rows² x columns): scipy's compiled solver takes over
for big matrices when the geometry extra is installed; the answer is the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

# Above this many cells, scipy's solver is used when it is installed (same pairs, compiled speed).
COMPILED_FROM_CELLS = 2_500


def linear_sum_assignment(cost: Sequence[Sequence[float]], maximize: bool = False) -> list[tuple[int, int]]:
    """The (row, column) pairs of a minimum (maximum with `maximize`) total cost assignment,
    sorted by row: min(rows, columns) pairs. ValueError for NaN or -inf entries (+inf with
    maximize), or when no complete assignment has a finite cost."""
    rows = len(cost)
    columns = len(cost[0]) if rows else 0
    if rows == 0 or columns == 0:
        return []
    if rows * columns > COMPILED_FROM_CELLS:
        try:
            from scipy.optimize import linear_sum_assignment as compiled
        except ImportError:
            pass
        else:
            found_rows, found_columns = compiled(cost, maximize=maximize)
            return [(int(i), int(j)) for i, j in zip(found_rows, found_columns, strict=True)]
    return _solve(cost, rows, columns, maximize)


def greedy_pairs(ranked: Iterable[tuple[float, int, int]]) -> list[tuple[int, int, float]]:
    """Greedy assignment: each (score, row, column), best first as given, taken when its row and
    its column are both still free."""
    rows: set[int] = set()
    columns: set[int] = set()
    pairs = []
    for score, i, j in ranked:
        if i not in rows and j not in columns:
            rows.add(i)
            columns.add(j)
            pairs.append((i, j, score))
    return pairs


def _solve(cost: Sequence[Sequence[float]], rows: int, columns: int, maximize: bool) -> list[tuple[int, int]]:
    transpose = columns < rows  # every row of the solved matrix gets a column
    matrix = [list(map(float, line)) for line in (zip(*cost, strict=True) if transpose else cost)]
    if transpose:
        rows, columns = columns, rows
    if maximize:
        matrix = [[-value for value in line] for line in matrix]
    for line in matrix:
        if len(line) != columns:
            raise ValueError("cost matrix rows differ in length")
        if any(math.isnan(value) or value == -math.inf for value in line):
            raise ValueError("matrix contains invalid numeric entries")
    inf = math.inf
    u = [0.0] * rows  # dual variables
    v = [0.0] * columns
    column_of = [-1] * rows
    row_of = [-1] * columns
    path = [-1] * columns
    for current in range(rows):
        # Dijkstra over the columns from `current`, reduced costs, to the nearest unassigned column.
        shortest = [inf] * columns
        seen_rows = [False] * rows
        seen_columns = [False] * columns
        remaining = list(range(columns - 1, -1, -1))
        i, lowest_so_far, sink = current, 0.0, -1
        while sink == -1:
            seen_rows[i] = True
            line, u_i = matrix[i], u[i]
            lowest, index = inf, -1
            for position, j in enumerate(remaining):
                reduced = lowest_so_far + line[j] - u_i - v[j]
                if reduced < shortest[j]:
                    path[j] = i
                    shortest[j] = reduced
                if shortest[j] < lowest or (shortest[j] == lowest and row_of[j] == -1):
                    lowest, index = shortest[j], position
            lowest_so_far = lowest
            if lowest == inf:
                raise ValueError("cost matrix is infeasible")
            j = remaining[index]
            if row_of[j] == -1:
                sink = j
            else:
                i = row_of[j]
            seen_columns[j] = True
            remaining[index] = remaining[-1]
            remaining.pop()
        u[current] += lowest_so_far
        for i in range(rows):
            if seen_rows[i] and i != current:
                u[i] += lowest_so_far - shortest[column_of[i]]
        for j in range(columns):
            if seen_columns[j]:
                v[j] -= lowest_so_far - shortest[j]
        j = sink
        while True:  # augment along the path
            i = path[j]
            row_of[j] = i
            column_of[i], j = j, column_of[i]
            if i == current:
                break
    if transpose:
        return sorted((column_of[r], r) for r in range(rows))
    return list(enumerate(column_of))
