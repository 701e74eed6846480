"""The paired 95 % interval of the gate: mean +- t(0.975, n - 1) s / sqrt(n) of per-seed ratios.

The same statistic as bench/stats.py (`paired_ratio_ci95`), which this layer cannot import
(online and bench are independent layers, .importlinter); the tests check that the two agree.
The gate needs 2..11 seeds (DEFAULT 10), so the t table for 1..10 degrees of freedom suffices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# t(0.975, df) for df = 1..10 (as bench/stats.py)
T_975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582,
         2.446912, 2.364624, 2.306004, 2.262157, 2.228139)
MAX_SEEDS = len(T_975) + 1


@dataclass(frozen=True)
class RatioInterval:
    mean: float
    low: float
    high: float
    samples: int


def paired_ratio_interval(numerators: Sequence[float],
                          denominators: Sequence[float]) -> RatioInterval:
    """The per-seed ratios' mean and 95 % interval; pairs with a zero denominator skipped."""
    ratios = [a / b for a, b in zip(numerators, denominators, strict=True) if b > 0]
    if not 2 <= len(ratios) <= MAX_SEEDS:
        raise ValueError(f"the gate needs 2..{MAX_SEEDS} paired seeds, got {len(ratios)}")
    count = len(ratios)
    mean = math.fsum(ratios) / count
    spread = math.sqrt(math.fsum((r - mean) ** 2 for r in ratios) / (count - 1) / count)
    half = T_975[count - 2] * spread
    return RatioInterval(mean, mean - half, mean + half, count)
