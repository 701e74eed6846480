"""Spearman's rank correlation with tied values given their average rank (numpy only)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray


def average_ranks(values: Sequence[float]) -> NDArray[np.float64]:
    """Ranks 1..n, smallest value first; tied values share the mean of the ranks they span."""
    data = np.asarray(values, dtype=float)
    order = np.argsort(data, kind="stable")
    ranks = np.empty(len(data), dtype=float)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and data[order[end + 1]] == data[order[start]]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """The Pearson correlation of the average ranks of x and y; None when it is undefined
    (fewer than two pairs, or every value of one side tied)."""
    if len(x) != len(y):
        raise ValueError(f"spearman needs pairs: {len(x)} x values, {len(y)} y values")
    if len(x) < 2:
        return None
    rank_x = average_ranks(x) - (len(x) + 1) / 2.0
    rank_y = average_ranks(y) - (len(y) + 1) / 2.0
    scale = float(np.sqrt(np.sum(rank_x**2) * np.sum(rank_y**2)))
    if scale == 0.0:
        return None
    return float(np.sum(rank_x * rank_y) / scale)
