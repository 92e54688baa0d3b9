"""TEDS: tree-edit-distance-based similarity of two tables (Zhong et al. 2020, "Image-based table
recognition: data, model, and evaluation", ECCV; PubTabNet's `src/metric.py`).

TEDS(a, b) = 1 - TED(a, b) / max(|a|, |b|), where TED is the edit distance between the tables'
trees (`table > thead/tbody > tr > td`) with insertions and deletions costing 1 and renaming a
node costing 1 when the tags or a cell's spans differ, else, between two cells, the normalised
Levenshtein distance of their content tokens (characters, and `<b>`-like tags inside a cell) and 0
between other nodes. |t| is PubTabNet's count: the elements under the `<table>`. TEDS-Struct
(`structure_only`) drops the content, so only the structure is compared.

The edit distance is Zhang and Shasha's algorithm (1989), exact like the APTED the reference
uses; the tests compare with PubTabNet's published values and the packaged reference
(`table-recognition-metric`). Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache

from agentv_py.scoring.table_read import Node, Table

MAX_NODES = 600  # per tree (about 550 cells): a few seconds at most; time grows as the square of the nodes


class _Flat:
    """A tree in postorder: each node, its leftmost leaf's index, and the keyroots."""

    def __init__(self, root: Node) -> None:
        self.nodes: list[Node] = []
        self.lml: list[int] = []
        self._number(root)
        keyroots: dict[int, int] = {}
        for index, leaf in enumerate(self.lml):
            keyroots[leaf] = index
        self.keyroots = sorted(keyroots.values())

    def _number(self, root: Node) -> None:
        stack: list[tuple[Node, int]] = [(root, 0)]
        first_leaf: list[int] = []  # by stack depth: the leftmost leaf of the node being built
        while stack:
            node, child = stack[-1]
            if child < len(node.children):
                stack[-1] = (node, child + 1)
                stack.append((node.children[child], 0))
                continue
            stack.pop()
            index = len(self.nodes)
            self.nodes.append(node)
            leaf = first_leaf.pop() if node.children else index
            self.lml.append(leaf)
            if stack and stack[-1][1] == 1:  # this node was its parent's first child
                first_leaf.append(leaf)


def _rename_cost(a: Node, b: Node) -> float:
    if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
        return 1.0
    if a.tag == "td" and (a.content or b.content):
        x, y = a.content or (), b.content or ()
        return _levenshtein()(x, y) / max(len(x), len(y))
    return 0.0


@lru_cache(maxsize=1)
def _levenshtein() -> Callable[[tuple[str, ...], tuple[str, ...]], int]:
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance


def tree_edit_distance(a: Node, b: Node, rename: Callable[[Node, Node], float] = _rename_cost) -> float:
    """The least total cost of deletions (1), insertions (1) and renamings turning tree `a` into
    tree `b`. When both have one shape (only cells' contents differ), renaming each node into its
    counterpart costs U, an upper bound, and the edit distance of the two postorder sequences, L, a
    lower bound (a tree mapping keeps postorder order, so it is a sequence alignment of the same
    cost): L = U settles it (the common case: a few cells misread). Else Zhang-Shasha."""
    fa, fb = _Flat(a), _Flat(b)
    if _structure(a) == _structure(b):
        upper = sum(rename(x, y) for x, y in zip(fa.nodes, fb.nodes, strict=True))
        if _sequence_distance(fa.nodes, fb.nodes, rename) >= upper - 1e-9:
            return upper
    return _zhang_shasha(fa, fb, rename)


def _sequence_distance(xs: list[Node], ys: list[Node], rename: Callable[[Node, Node], float]) -> float:
    """Weighted edit distance of two node sequences (deletion and insertion 1, `rename` otherwise)."""
    previous = [float(j) for j in range(len(ys) + 1)]
    for i, x in enumerate(xs, start=1):
        current = [float(i)]
        for j, y in enumerate(ys, start=1):
            best = previous[j] + 1.0
            left = current[j - 1] + 1.0
            if left < best:
                best = left
            if best > previous[j - 1]:  # only then can renaming (cost >= 0) do better
                diagonal = previous[j - 1] + rename(x, y)
                if diagonal < best:
                    best = diagonal
            current.append(best)
        previous = current
    return previous[-1]


def _zhang_shasha(fa: _Flat, fb: _Flat, rename: Callable[[Node, Node], float]) -> float:
    la, lb = fa.lml, fb.lml
    na, nb = fa.nodes, fb.nodes
    treedist = [[0.0] * len(nb) for _ in range(len(na))]
    costs: dict[tuple[int, int], float] = {}
    for i in fa.keyroots:
        li = la[i]
        for j in fb.keyroots:
            lj = lb[j]
            if li == i and lj == j:  # two leaves: renaming (at most 1) beats deleting and inserting (2)
                cost = costs[(i, j)] = rename(na[i], nb[j])
                treedist[i][j] = cost
                continue
            rows, cols = i - li + 2, j - lj + 2
            fd = [[0.0] * cols for _ in range(rows)]
            for x in range(1, rows):
                fd[x][0] = float(x)
            first = fd[0]
            for y in range(1, cols):
                first[y] = float(y)
            for x in range(1, rows):
                ax = li + x - 1
                lax = la[ax]
                above, here = fd[x - 1], fd[x]
                td_row = treedist[ax]
                for y in range(1, cols):
                    by = lj + y - 1
                    best = above[y] + 1.0
                    left = here[y - 1] + 1.0
                    if left < best:
                        best = left
                    if lax == li and lb[by] == lj:
                        known = costs.get((ax, by))
                        cost = rename(na[ax], nb[by]) if known is None else known
                        costs[(ax, by)] = cost
                        diagonal = above[y - 1] + cost
                        if diagonal < best:
                            best = diagonal
                        here[y] = best
                        td_row[by] = best
                    else:
                        diagonal = fd[lax - li][lb[by] - lj] + td_row[by]
                        here[y] = diagonal if diagonal < best else best
    return treedist[len(na) - 1][len(nb) - 1]


def _structure(node: Node) -> Node:
    if node.content is not None:
        return Node(node.tag, node.colspan, node.rowspan, ())
    return Node(node.tag, children=tuple(_structure(child) for child in node.children))


_REMEMBERED = 100_000  # pairs (about 15 MiB): every run of a large dataset's `--repeat`


@lru_cache(maxsize=_REMEMBERED)
def _remembered(key: bytes) -> list[float]:
    return []  # filled once by `teds`; keyed by a digest, so the cache holds no trees


def teds(pred: Table, true: Table, structure_only: bool = False) -> float:
    """TEDS (or TEDS-Struct) of the predicted table against the true one. The last pairs scored
    are remembered by digest, in this process: a `--repeat` run whose answers repeat, or a
    `--rejudge` of one answer, does not recompute them."""
    a, b = (_structure(pred.tree), _structure(true.tree)) if structure_only else (pred.tree, true.tree)
    if a == b:
        return 1.0
    count = max(pred.counted, true.counted)
    if count == 0:
        return 1.0
    slot = _remembered(hashlib.blake2b(repr((a, b, count)).encode(), digest_size=16).digest())
    if not slot:
        slot.append(1.0 - tree_edit_distance(a, b) / count)
    return slot[0]


def tree_size(table: Table) -> int:
    """Nodes of the table's tree (what MAX_NODES bounds)."""
    count, stack = 0, [table.tree]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children)
    return count
