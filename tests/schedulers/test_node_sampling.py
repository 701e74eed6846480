"""kube-scheduler's numFeasibleNodesToFind and the rotating search start."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.schedulers.node_sampling import first_feasible, first_feasible_indices, nodes_to_find


@pytest.mark.parametrize(("total", "expected"), [
    (10, 10), (99, 99), (100, 100),  # below 100 every node; 100 * 50 % = 50 -> at least 100
    (500, 230),  # 50 - 4 = 46 %
    (1000, 420),  # 50 - 8 = 42 %
    (5000, 500),  # 50 - 40 = 10 %
    (10000, 500),  # 50 - 80 < 5 -> 5 %
])
def test_nodes_to_find(total: int, expected: int) -> None:
    assert nodes_to_find(total) == expected


def test_percentage_setting() -> None:
    assert nodes_to_find(1000, percentage=30) == 300
    assert nodes_to_find(200, percentage=10) == 100


def test_first_feasible_rotates_from_start() -> None:
    feasible = np.array([True, False, True, True, False, True])
    found, examined = first_feasible(feasible, start=3, limit=2)
    assert found.tolist() == [False, False, False, True, False, True]
    assert examined == 3  # nodes 3, 4, 5
    found, examined = first_feasible(feasible, start=5, limit=3)
    assert found.tolist() == [True, False, True, False, False, True]
    assert examined == 4  # nodes 5, 0, 1, 2
    found, examined = first_feasible(feasible, start=1, limit=10)
    assert found is feasible and examined == 6


@pytest.mark.parametrize("seed", range(20))
def test_first_feasible_indices_is_first_feasible_as_indices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    total = int(rng.integers(1, 40))
    feasible = rng.random(total) < rng.random()
    start, limit = int(rng.integers(total)), int(rng.integers(1, total + 2))
    found, examined = first_feasible(feasible, start, limit)
    indices, counted = first_feasible_indices(feasible, start, limit)
    assert indices.tolist() == np.flatnonzero(found).tolist()
    assert counted == examined
