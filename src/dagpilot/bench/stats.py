"""Paired comparisons over seeds: per-seed ratios, their mean and 95 % confidence interval.

Every scheduler runs on the same seeds with the same arrival sequences, so A/B is computed per
seed and the seeds are the samples (a paired design: the workload's own variance cancels). The
interval is mean +- t(0.975, n - 1) x s / sqrt(n), with s the sample standard deviation; with
one seed there is no spread to estimate and the interval is [x, x].

The t quantile needs no scipy: a table for 1-10 degrees of freedom, and beyond that the
Cornish-Fisher expansion of t around the normal quantile (error below 1e-5 from 11 on).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Z_975 = 1.959963984540054  # the standard normal 0.975 quantile
# t(0.975, df) for df = 1..10 (scipy.stats.t.ppf, rounded to 6 decimals)
T_975_TABLE = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582,
               2.446912, 2.364624, 2.306004, 2.262157, 2.228139)


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean over seeds with its 95 % confidence interval."""

    mean: float
    low: float
    high: float
    samples: int

    def as_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "ci95": [self.low, self.high]}


def t_quantile_975(degrees_of_freedom: int) -> float:
    """The 0.975 quantile of Student's t distribution."""
    if degrees_of_freedom < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {degrees_of_freedom}")
    if degrees_of_freedom <= len(T_975_TABLE):
        return T_975_TABLE[degrees_of_freedom - 1]
    z, n = Z_975, float(degrees_of_freedom)
    terms = ((z**3 + z) / 4,
             (5 * z**5 + 16 * z**3 + 3 * z) / 96,
             (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
             (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160)
    return z + sum(term / n ** (power + 1) for power, term in enumerate(terms))


def mean_ci95(values: Sequence[float]) -> Interval:
    """The mean of the values and its t-distribution 95 % confidence interval."""
    if not values:
        raise ValueError("a confidence interval needs at least one value")
    count = len(values)
    mean = math.fsum(values) / count
    if count == 1:
        return Interval(mean, mean, mean, 1)
    variance = math.fsum((value - mean) ** 2 for value in values) / (count - 1)
    half = t_quantile_975(count - 1) * math.sqrt(variance / count)
    return Interval(mean, mean - half, mean + half, count)


def paired_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """numerator / denominator, seed by seed (pairs with a zero denominator are skipped)."""
    if len(numerators) != len(denominators):
        raise ValueError(f"paired samples differ in length: {len(numerators)} vs "
                         f"{len(denominators)}")
    return [a / b for a, b in zip(numerators, denominators, strict=True) if b > 0]


def paired_ratio_ci95(numerators: Sequence[float],
                      denominators: Sequence[float]) -> Interval | None:
    """Mean and 95 % interval of the per-seed ratios; None when no pair has a ratio."""
    ratios = paired_ratios(numerators, denominators)
    return mean_ci95(ratios) if ratios else None


def bracketed(interval: Interval | None) -> str:
    """`mean [low, high]` to three decimals, as the benchmark reports print it; "-" for none."""
    if interval is None:
        return "-"
    return f"{interval.mean:.3f} [{interval.low:.3f}, {interval.high:.3f}]"
