"""The gate's interval is bench/stats.py's paired interval (which online cannot import)."""

from __future__ import annotations

import pytest

from dagpilot.bench.stats import paired_ratio_ci95
from dagpilot.online.interval import paired_ratio_interval


@pytest.mark.parametrize("count", [2, 5, 10, 11])
def test_the_same_interval_as_the_benchmarks(count: int) -> None:
    ours = [100.0 + 7.0 * ((i * 37) % 11) for i in range(count)]
    theirs = [105.0 + 3.0 * ((i * 17) % 7) for i in range(count)]
    mine, reference = paired_ratio_interval(ours, theirs), paired_ratio_ci95(ours, theirs)
    assert reference is not None
    assert (mine.mean, mine.low, mine.high) == pytest.approx(
        (reference.mean, reference.low, reference.high), rel=1e-12)


def test_identical_runs_pass_at_exactly_one_and_too_few_seeds_are_refused() -> None:
    same = paired_ratio_interval([10.0] * 10, [10.0] * 10)
    assert (same.low, same.high) == (1.0, 1.0)
    with pytest.raises(ValueError, match=r"2\.\.11"):
        paired_ratio_interval([1.0], [1.0])
