"""GriTS: grid table similarity (Smock, Pesala and Abraham 2023, "GriTS: Grid table similarity
metric for table structure recognition", ICDAR; the authors' `grits-metric` package).

Each table is a grid (rows x columns, a spanning cell on every position it covers). GriTS_f is
2 * sum f(A'[i, j], B'[i, j]) / (|A| + |B|), where A' and B' are the most similar substructures
(subsets of rows and columns) of the two grids, found by the "factored 2D-MSS" heuristic: the
rows aligned by dynamic programming (each pair of rows scored by aligning their cells), then the
columns alike. Three cell similarities f:
- **top** (topology): the IoU of the cells' relative spans ([min col - j, min row - i, max col
  + 1 - j, max row + 1 - i]; [0, 0, 1, 1] for a cell that spans nothing);
- **con** (content): 2 * LCS / (|a| + |b|) of the cells' texts (1 for equal texts);
- **loc** (location): the IoU of the cells' boxes, where every cell has one.
A position no cell covers reads as an empty cell ([0, 0, 1, 1], "", an empty box).

Ported from `grits-metric` 0.7 (MIT), its tie-breaking and early exits included; the tests
compare with it on its README's examples and hundreds of generated tables. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentv_py.scoring.table_read import Table

MAX_WORK = 1_000_000  # grid positions of the true table x of the predicted one


@dataclass(frozen=True, slots=True)
class Grits:
    f1: float
    precision: float
    recall: float


def fscore(true_positive: float, n_true: int, n_pred: int) -> Grits:
    """GriTS's F-score: precision 1 with nothing predicted, recall 1 with nothing true."""
    precision = true_positive / n_pred if n_pred > 0 else 1.0
    recall = true_positive / n_true if n_true > 0 else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return Grits(f1, precision, recall)


def grits(pred: Table, true: Table, kind: str) -> Grits:
    """GriTS_top, GriTS_con or GriTS_loc (`kind`) of the predicted table against the true one."""
    true_grid, pred_grid = _grid(true, kind), _grid(pred, kind)
    rewards = _rewards(true_grid, pred_grid, kind)
    n_true = true.n_rows * true.n_cols
    n_pred = pred.n_rows * pred.n_cols
    return fscore(_factored_2dmss(rewards, (true.n_rows, true.n_cols), (pred.n_rows, pred.n_cols)), n_true, n_pred)


def _grid(table: Table, kind: str) -> list[list[Any]]:
    if kind == "top":
        return table.grid("top", (0, 0, 1, 1))
    if kind == "con":
        return table.grid("text", "")
    return table.grid("bbox", (0.0, 0.0, 0.0, 0.0))


def _rewards(true_grid: list[list[Any]], pred_grid: list[list[Any]], kind: str) -> Any:
    """f of every (true position, predicted position) pair, shaped [ti, tj, pi, pj]."""
    import numpy as np

    t_rows, p_rows = len(true_grid), len(pred_grid)
    t_cols = len(true_grid[0]) if t_rows else 0
    p_cols = len(pred_grid[0]) if p_rows else 0
    t_flat = [value for row in true_grid for value in row]
    p_flat = [value for row in pred_grid for value in row]
    matrix = _text_similarity(t_flat, p_flat) if kind == "con" else _iou(np.array(t_flat), np.array(p_flat))
    return matrix.reshape(t_rows, t_cols, p_rows, p_cols)


def _text_similarity(true: list[str], pred: list[str]) -> Any:
    """2 * LCS / (|a| + |b|) for each pair, 1 for equal texts (grits-metric's `lcs_similarity`);
    each distinct pair of texts compared once."""
    import numpy as np
    from rapidfuzz.distance import LCSseq
    from rapidfuzz.process import cdist

    t_unique, p_unique = list(dict.fromkeys(true)), list(dict.fromkeys(pred))
    if not t_unique or not p_unique:
        return np.zeros((len(true), len(pred)))
    lcs = cdist(t_unique, p_unique, scorer=LCSseq.similarity, dtype=np.int64)
    lengths = np.add.outer([len(t) for t in t_unique], [len(p) for p in p_unique])
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = 2 * lcs / lengths
    p_position = {text: j for j, text in enumerate(p_unique)}
    for i, text in enumerate(t_unique):
        j = p_position.get(text)
        if j is not None:
            similarity[i, j] = 1.0
    t_index = {text: i for i, text in enumerate(t_unique)}
    return similarity[np.ix_([t_index[t] for t in true], [p_position[p] for p in pred])]


def _iou(true: Any, pred: Any) -> Any:
    """IoU of each pair of [x0, y0, x1, y1] boxes, 0 without overlap (grits-metric's `iou`)."""
    import numpy as np

    if not len(true) or not len(pred):
        return np.zeros((len(true), len(pred)))
    t = true.astype(float)[:, None, :]
    p = pred.astype(float)[None, :, :]
    wide = (t[..., 0] <= p[..., 2]) & (p[..., 0] <= t[..., 2])
    tall = (t[..., 1] <= p[..., 3]) & (p[..., 1] <= t[..., 3])
    width = np.where(wide, np.minimum(t[..., 2], p[..., 2]) - np.maximum(t[..., 0], p[..., 0]), 0.0)
    height = np.where(tall, np.minimum(t[..., 3], p[..., 3]) - np.maximum(t[..., 1], p[..., 1]), 0.0)
    inter = width * height
    areas = (t[..., 2] - t[..., 0]) * (t[..., 3] - t[..., 1]) + (p[..., 2] - p[..., 0]) * (p[..., 3] - p[..., 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(inter == 0, 0.0, inter / (areas - inter))


def _factored_2dmss(rewards: Any, t_shape: tuple[int, int], p_shape: tuple[int, int]) -> float:
    """The true-positive score of the factored 2D most similar substructures (grits-metric's
    `factored_2dmss`, its early exits kept: they decide the same alignments)."""
    (t_rows, t_cols), (p_rows, p_cols) = t_shape, p_shape
    cells: list[list[list[list[float]]]] = rewards.tolist()  # [ti][tj][pi][pj]
    if t_shape == p_shape:
        identity = 0.0
        for i in range(t_rows):
            for j in range(t_cols):
                identity += cells[i][j][i][j]
        if identity >= (max(t_shape) - 1) * min(t_shape):
            return identity
    t_aligned, p_aligned = _align_outer(rewards.transpose(0, 2, 1, 3).tolist(), t_rows, p_rows)
    if t_cols == p_cols:
        score = 0.0
        for k in range(len(t_aligned)):
            for col in range(t_cols):
                score += cells[t_aligned[k]][col][p_aligned[k]][col]
        if score >= len(t_aligned) * t_cols - 1:
            return score
    t_cols_aligned, p_cols_aligned = _align_outer(rewards.transpose(1, 3, 0, 2).tolist(), t_cols, p_cols)
    score = 0.0
    for ti, pi in zip(t_aligned, p_aligned, strict=True):
        for tj, pj in zip(t_cols_aligned, p_cols_aligned, strict=True):
            score += cells[ti][tj][pi][pj]
    return score


def _align_outer(pairs: list[list[list[list[float]]]], n: int, m: int) -> tuple[list[int], list[int]]:
    """Align the outer sequences (rows, or columns): `pairs[x][y]` is the reward matrix of their
    inner sequences, a pair scored by aligning those (grits-metric's `_align_2d_outer`)."""
    scores = [[0.0] * (m + 1) for _ in range(n + 1)]
    pointers = [[0] * (m + 1) for _ in range(n + 1)]
    for x in range(1, n + 1):
        pointers[x][0] = -1
    for y in range(1, m + 1):
        pointers[0][y] = 1
    for x in range(1, n + 1):
        above, here, pointer, row = scores[x - 1], scores[x], pointers[x], pairs[x - 1]
        for y in range(1, m + 1):
            diagonal = above[y - 1] + _align_inner(row[y - 1])
            skip_true = above[y]
            skip_pred = here[y - 1]
            best = max(diagonal, skip_true, skip_pred)
            here[y] = best
            pointer[y] = 0 if diagonal == best else (-1 if skip_true == best else 1)
    t_aligned: list[int] = []
    p_aligned: list[int] = []
    x, y = n, m
    while x or y:
        step = pointers[x][y]
        if step == -1:
            x -= 1
        elif step == 1:
            y -= 1
        else:
            x, y = x - 1, y - 1
            t_aligned.append(x)
            p_aligned.append(y)
    return t_aligned[::-1], p_aligned[::-1]


def _align_inner(rewards: list[list[float]]) -> float:
    """The best alignment score of two inner sequences, `rewards[x][y]` pairing their items
    (grits-metric's `_align_1d`)."""
    m = len(rewards[0]) if rewards else 0
    previous = [0.0] * (m + 1)
    for gains in rewards:
        current = [0.0] * (m + 1)
        for y in range(m):
            diagonal = previous[y] + gains[y]
            skip_true = previous[y + 1]
            skip_pred = current[y]
            current[y + 1] = max(diagonal, skip_true, skip_pred)
        previous = current
    return previous[m]
