"""The one rule for comparing a computed value with a threshold, everywhere: case verdicts,
`--threshold`, dataset and baseline gates, item pairing, fuzzy similarity, numeric tolerance,
geometry thresholds and `compare`'s `--max-drop`.

Computed values carry float noise (0.1 + 0.7 is 0.7999999999999999), so a value within
`NOISE` (relative, 1e-9, of the larger of 1, the limit and the operands' scale) of its limit
counts as at the limit: it meets a minimum and stays within a maximum. Values meant to differ
differ by far more than that; exact comparisons (integers, decimal strings) do not come here.

Pure and standard library only: the judge SDK reads it in judges' own interpreters.
"""

from __future__ import annotations

NOISE = 1e-9


def _allowance(limit: float, scale: float) -> float:
    return NOISE * max(1.0, abs(limit), abs(scale))


def at_least(value: float, minimum: float, scale: float = 0.0) -> bool:
    """value >= minimum, float noise forgiven (0.7999999999999999 meets 0.8)."""
    return value >= minimum - _allowance(minimum, scale)


def at_most(value: float, maximum: float, scale: float = 0.0) -> bool:
    """value <= maximum, float noise forgiven (0.30000000000000004 is within 0.3). `scale`: the
    magnitude of the operands a difference came from (1889.5 - 1889.4 carries their noise)."""
    return value <= maximum + _allowance(maximum, scale)


def lowest(minimum: float) -> float:
    """The smallest value `at_least(value, minimum)` accepts: one subtraction for comparing a
    whole matrix of values with one minimum (`value >= lowest(minimum)` is `at_least`)."""
    return minimum - _allowance(minimum, 0.0)
