"""`agentv compare`'s gate: what counts as a regression of NEW against BASE.

By default it is a golden test: NEW regresses when any case went from pass to not pass, any case
has an error it did not have in BASE, the mean score fell, or any field's F1 fell (a field BASE
scored that NEW gets wrong every time, or does not score, counts as F1 0). Options loosen it, each
explicitly: `max_drop` lets the mean and each field's F1 fall by that much, `allow_flips` lets that
many cases go from pass to not pass, and `significant_only` gates on the paired tests instead of
any change (McNemar on pass/fail and on each field's hit/miss at `alpha`, the fields' p-values
adjusted across fields by `correction`; the bootstrap interval of the mean delta wholly below
-max_drop). New errors fail in every mode: an error is no noise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from agentv_py.scoring.stats import mcnemar_p
from agentv_py.scoring.thresholds import at_most

SHOWN_IDS = 5  # case ids named in a regression line


@dataclass(frozen=True)
class Rules:
    max_drop: float = 0.0
    allow_flips: int = 0
    significant_only: bool = False
    alpha: float = 0.05
    correction: str = "holm"  # the fields' p-values adjusted across fields: holm or bh


class _Field(Protocol):
    hit_to_miss: int
    miss_to_hit: int
    p_adjusted: float | None

    @property
    def f1_delta(self) -> float | None: ...


class _Result(Protocol):
    pass_to_fail: int
    fail_to_pass: int
    p_value: float | None
    ci95: tuple[float, float] | None

    @property
    def fields(self) -> Mapping[str, _Field]: ...

    @property
    def mean_delta(self) -> float | None: ...

    def flipped(self, limit: int = -1) -> Iterator[str]: ...

    def new_errors(self, limit: int = -1) -> Iterator[str]: ...

    def new_error_count(self) -> int: ...


def regressions(result: _Result, rules: Rules) -> list[str]:
    """Why NEW is worse than BASE by `rules` (empty: it is not), each naming what regressed."""
    found: list[str] = []
    errors = result.new_error_count()
    if errors:
        found.append(f"{_cases(errors)} with a new error: {_ids(result.new_errors, errors)}")
    if rules.significant_only:
        found += _significant(result, rules)
        return found
    if result.pass_to_fail > rules.allow_flips:
        flips = result.pass_to_fail
        found.append(
            f"{_cases(flips)} went from pass to not pass (> --allow-flips {rules.allow_flips}): "
            f"{_ids(result.flipped, flips)}"
        )
    delta = result.mean_delta
    if delta is not None and not at_most(-delta, rules.max_drop):
        found.append(f"mean score fell by {-delta:.4f} (> --max-drop {rules.max_drop:g})")
    for name, moved in sorted(result.fields.items()):
        f1 = moved.f1_delta
        if f1 is not None and not at_most(-f1, rules.max_drop):
            found.append(f"field {name}: F1 fell by {-f1:.4f} (> --max-drop {rules.max_drop:g})")
    return found


def _significant(result: _Result, rules: Rules) -> list[str]:
    found = []
    p = result.p_value
    if p is not None and p < rules.alpha and result.pass_to_fail > result.fail_to_pass:
        found.append(
            f"{result.pass_to_fail} pass->not pass vs {result.fail_to_pass} back: "
            f"McNemar p = {p:.4g} < --alpha {rules.alpha:g}"
        )
    if result.ci95 is not None and result.ci95[1] < -rules.max_drop:
        low, high = result.ci95
        found.append(f"mean score fell: its 95% interval {low:+.4f} .. {high:+.4f} is below -{rules.max_drop:g}")
    for name, moved in sorted(result.fields.items()):
        p_field = moved.p_adjusted
        if p_field is None:  # not computed (a result built elsewhere): the field's own test
            p_field = mcnemar_p(moved.hit_to_miss, moved.miss_to_hit)
        if p_field < rules.alpha and moved.hit_to_miss > moved.miss_to_hit:
            found.append(
                f"field {name}: {moved.hit_to_miss} hit->miss vs {moved.miss_to_hit} back: "
                f"McNemar p = {p_field:.4g} ({rules.correction}-adjusted across fields) < --alpha {rules.alpha:g}"
            )
    return found


def _cases(count: int) -> str:
    return "1 case" if count == 1 else f"{count} cases"


def _ids(listing: Callable[[int], Iterable[str]], count: int) -> str:
    shown = ", ".join(listing(SHOWN_IDS))
    return shown + (f" (and {count - SHOWN_IDS} more)" if count > SHOWN_IDS else "")
