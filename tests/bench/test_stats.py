"""Paired ratios and t confidence intervals on known numbers."""

from __future__ import annotations

import math

import pytest

from dagpilot.bench.stats import mean_ci95, paired_ratio_ci95, paired_ratios, t_quantile_975


def test_mean_and_interval_of_one_to_five() -> None:
    interval = mean_ci95([1, 2, 3, 4, 5])
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    assert interval.mean == pytest.approx(3.0)
    assert (interval.low, interval.high) == pytest.approx((3 - half, 3 + half))


def test_one_seed_gives_a_point_interval() -> None:
    interval = mean_ci95([1.7])
    assert (interval.mean, interval.low, interval.high) == (1.7, 1.7, 1.7)


def test_paired_ratios_are_taken_seed_by_seed() -> None:
    assert paired_ratios([2, 4, 6], [1, 2, 2]) == [2, 2, 3]
    interval = paired_ratio_ci95([2, 4, 6], [1, 2, 2])
    assert interval is not None
    half = 4.302653 * math.sqrt(1 / 3) / math.sqrt(3)
    assert interval.mean == pytest.approx(7 / 3)
    assert (interval.low, interval.high) == pytest.approx((7 / 3 - half, 7 / 3 + half))
    assert interval.as_dict() == {"mean": interval.mean, "ci95": [interval.low, interval.high]}


def test_zero_denominators_are_skipped_and_lengths_must_match() -> None:
    assert paired_ratio_ci95([1.0], [0.0]) is None
    with pytest.raises(ValueError, match="length"):
        paired_ratios([1.0, 2.0], [1.0])


@pytest.mark.parametrize(("df", "expected"), [(1, 12.706205), (4, 2.776445), (10, 2.228139),
                                              (11, 2.200985), (30, 2.042272), (120, 1.979930)])
def test_t_quantiles_match_published_tables(df: int, expected: float) -> None:
    assert t_quantile_975(df) == pytest.approx(expected, abs=2e-5)


def test_t_quantiles_match_scipy_where_installed() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in range(1, 300):
        assert t_quantile_975(df) == pytest.approx(float(stats.t.ppf(0.975, df)), abs=1e-5)


def test_t_quantile_needs_a_degree_of_freedom() -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile_975(0)
