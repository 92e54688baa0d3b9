"""Per-field paired statistics of `agentv compare` (docs/statistics.md, "Per-field paired tests"):
for each field, the exact McNemar test on the cases whose field went hit -> miss or back, its
p-value adjusted across fields (Holm by default, Benjamini-Hochberg with `--correction bh`), and a
paired bootstrap interval on the field's F1 delta (cases resampled with both their runs' counts,
BCa bounds, a fixed seed). Fields are then ranked by evidence of change: adjusted p, then the
size of the F1 delta."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

from agentv_py.report.compare_store import Store
from agentv_py.report.lean_sums import WIDTH, unpack
from agentv_py.scoring.intervals import LEVEL, SEED, Interval, bootstrap_arrays, ratio
from agentv_py.scoring.stats import adjusted, mcnemar_p

if TYPE_CHECKING:
    import numpy as np

# Every scored pair's records, grouped: equal pairs are read once, with how many cases have them.
_PAIRED_RECORDS = (
    "SELECT b.fields, n.fields, COUNT(*) FROM base b JOIN new n ON n.id = b.id"
    " WHERE NOT (b.errored OR n.errored) GROUP BY b.fields, n.fields"
)
_NONE = (0, 0, 0)


class FieldStats(Protocol):
    slot: int
    hit_to_miss: int
    miss_to_hit: int
    p_value: float | None
    p_adjusted: float | None
    f1_delta_ci: Interval | None

    @property
    def f1_delta(self) -> float | None: ...


def add_field_statistics(
    store: Store, fields: dict[str, Any], correction: str = "holm", level: float = LEVEL, seed: int = SEED
) -> None:
    """Set each field's `p_value`, `p_adjusted` and `f1_delta_ci` (see the module)."""
    if not fields:
        return
    names = sorted(fields)
    p_values = [mcnemar_p(fields[name].hit_to_miss, fields[name].miss_to_hit) for name in names]
    for name, p, p_adj in zip(names, p_values, adjusted(p_values, correction), strict=True):
        fields[name].p_value, fields[name].p_adjusted = p, p_adj
    per_slot: dict[int, Counter[tuple[int, ...]]] = {}
    for before, after, cases in store.rows(_PAIRED_RECORDS):
        was, now = _counts(before), _counts(after)
        for slot in was.keys() | now.keys():
            per_slot.setdefault(slot, Counter())[(*was.get(slot, _NONE), *now.get(slot, _NONE))] += cases
    import numpy as np

    for name in names:
        change = fields[name]
        groups = per_slot.get(change.slot)
        if not groups or change.f1_delta is None:
            change.f1_delta_ci = None
            continue
        ordered = sorted(groups)  # the same cases give the same interval, whatever their order
        vectors = np.array(ordered, dtype=np.float64)
        weights = np.array([groups[key] for key in ordered], dtype=np.int64)
        [change.f1_delta_ci], _ = bootstrap_arrays(vectors, weights, f1_delta_statistic, level, seed)


def ranked(fields: dict[str, Any]) -> list[str]:
    """Field names by evidence of change: adjusted p-value, then the larger F1 delta, then name."""
    return sorted(
        fields,
        key=lambda name: (
            fields[name].p_adjusted if fields[name].p_adjusted is not None else 2.0,
            -abs(fields[name].f1_delta or 0.0),
            name,
        ),
    )


def _counts(record: bytes | None) -> dict[int, tuple[int, int, int]]:
    """A case's record as slot -> (tp, fp, fn)."""
    if record is None:
        return {}
    flat = unpack(record)
    return {
        flat[at]: (flat[at + 2], flat[at + 4], flat[at + 5])  # slot, status, tp, tn, fp, fn
        for at in range(0, len(flat), WIDTH)
    }


def f1_delta_statistic(sums: np.ndarray) -> np.ndarray:
    """For vectors (base tp, fp, fn, new tp, fp, fn): NEW's F1 minus BASE's, NEW's undefined F1 as
    0 (as `FieldChange.f1_delta` reads it), NaN where BASE's is undefined."""
    import numpy as np

    before = ratio(2 * sums[:, 0], 2 * sums[:, 0] + sums[:, 1] + sums[:, 2])
    after = np.nan_to_num(ratio(2 * sums[:, 3], 2 * sums[:, 3] + sums[:, 4] + sums[:, 5]), nan=0.0)
    delta: np.ndarray = (after - before).reshape(-1, 1)
    return delta
