"""TopNodes follows the best feasible total and its nodes row by row, as a full pass would."""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Resources
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.node_log import NodeLog
from dagpilot.schedulers.top_nodes import TopNodes
from tests.schedulers.views import cluster_view, node, with_node


def full_pass(feasible: np.ndarray, totals: np.ndarray) -> tuple[float, list[int]]:
    masked = np.where(feasible, totals, -np.inf)
    best = float(masked.max())
    return best, (masked == best).nonzero()[0].tolist()


def test_row_updates_match_a_full_pass() -> None:
    rng = np.random.default_rng(4)
    specs = [node(f"n{i}", 4) for i in range(12)]
    view = cluster_view(specs)
    log, top = NodeLog(), TopNodes()
    feasible = rng.random(12) < 0.7
    totals = rng.integers(0, 4, 12).astype(float)  # few values: many ties
    for step in range(300):
        log.observe(NodeArrays.from_view(view), view)
        assert top.top(feasible, totals, log) == full_pass(feasible, totals), step
        row = int(rng.integers(12))  # one node changes, as after a placement
        feasible[row] = rng.random() < 0.7
        totals[row] = float(rng.integers(0, 4))
        view = with_node(view, f"n{row}", allocated=Resources(float(step + 1), 0))


def test_new_arrays_start_afresh() -> None:
    top = TopNodes()
    feasible = np.array([True, True, False])
    assert top.top(feasible, np.array([1.0, 2.0, 5.0]), None) == (2.0, [1])
    assert top.top(feasible.copy(), np.array([3.0, 2.0, 5.0]), None) == (3.0, [0])
