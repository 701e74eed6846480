"""Spearman's rank correlation with average ranks for ties, checked against hand computation."""

from __future__ import annotations

import pytest

from dagpilot.bench.spearman import average_ranks, spearman


def test_average_ranks_share_the_ranks_they_span() -> None:
    assert average_ranks([10.0, 30.0, 20.0]).tolist() == [1.0, 3.0, 2.0]
    # 5 takes ranks 1-2 (1.5 each); 7 takes ranks 3-5 (4 each)
    assert average_ranks([7.0, 5.0, 7.0, 5.0, 7.0]).tolist() == [4.0, 1.5, 4.0, 1.5, 4.0]


def test_same_and_reversed_orders() -> None:
    assert spearman([1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0]) == pytest.approx(1.0)
    assert spearman([1.0, 2.0, 3.0, 4.0], [9.0, 7.0, 5.0, 1.0]) == pytest.approx(-1.0)


def test_ties_by_hand() -> None:
    # x ranks 1, 2.5, 2.5, 4; y ranks 1, 2, 3, 4. Centred (mean 2.5): x -1.5, 0, 0, 1.5;
    # y -1.5, -0.5, 0.5, 1.5. Sum of products 4.5; sums of squares 4.5 and 5.
    # rho = 4.5 / sqrt(4.5 x 5) = 0.9487
    assert spearman([1.0, 2.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]) == pytest.approx(
        4.5 / (4.5 * 5.0) ** 0.5)
    assert spearman([1.0, 2.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]) == pytest.approx(0.948683, abs=1e-6)


def test_without_ties_it_is_the_textbook_formula() -> None:
    x = [86.0, 97.0, 99.0, 100.0, 101.0, 103.0, 106.0, 110.0, 112.0, 113.0]
    y = [2.0, 20.0, 28.0, 27.0, 50.0, 29.0, 7.0, 17.0, 6.0, 12.0]
    ranks_y = [1, 6, 8, 7, 10, 9, 3, 5, 2, 4]
    d2 = sum((i + 1 - r) ** 2 for i, r in enumerate(ranks_y))
    assert spearman(x, y) == pytest.approx(1 - 6 * d2 / (10 * (10**2 - 1)))  # -0.1758


def test_undefined_cases() -> None:
    assert spearman([], []) is None
    assert spearman([1.0], [2.0]) is None
    assert spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None
    with pytest.raises(ValueError, match="pairs"):
        spearman([1.0, 2.0], [1.0])
