"""NodeLog: the rows that changed between decisions, from the view's change log or by comparing
arrays, and whether anything was freed."""

from __future__ import annotations

import numpy as np

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.types import Resources
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.node_log import NodeLog
from tests.schedulers.views import GIB, cluster_view, node, with_node


def arrays(view: ClusterSnapshot) -> NodeArrays:
    return NodeArrays.from_view(view)


def three_nodes() -> ClusterSnapshot:
    return cluster_view([node("a", 4), node("b", 8), node("c", 2)])


def logged() -> ClusterSnapshot:
    """Three nodes in a snapshot that keeps a change log, as the simulator does."""
    return ClusterSnapshot.of(three_nodes().cluster, logged=True)


def test_first_look_frees_and_restarts_every_cache() -> None:
    log, view = NodeLog(), three_nodes()
    position = log.end
    assert log.observe(arrays(view), view)
    assert log.since(position) is None
    assert log.free == [(4.0, 16 * GIB, 0.0), (8.0, 16 * GIB, 0.0), (2.0, 16 * GIB, 0.0)]


def test_compared_arrays_name_the_changed_rows_and_a_fall_frees() -> None:
    log, view = NodeLog(), three_nodes()
    log.observe(arrays(view), view)
    position = log.end
    bound = with_node(view, "b", allocated=Resources(3, 2 * GIB))
    assert not log.observe(arrays(bound), bound)  # more allocated: nothing freed
    assert log.since(position) == [1]
    assert log.free[1] == (5.0, 14 * GIB, 0.0)
    assert not log.observe(arrays(bound), bound)  # nothing changed
    assert log.since(position) == [1]
    assert log.observe(arrays(view), view)  # b freed again
    assert log.since(position) == [1, 1]


def test_a_node_back_to_ready_frees() -> None:
    log = NodeLog()
    down = with_node(three_nodes(), "c", ready=False)
    log.observe(arrays(down), down)
    position = log.end
    up = with_node(down, "c", ready=True)
    assert log.observe(arrays(up), up)
    assert log.since(position) == [2]
    assert log.ready == [True, True, True]


def test_view_change_log_gives_the_rows_without_comparing() -> None:
    log = NodeLog()
    view = logged()
    log.observe(arrays(view), view)
    position = log.end
    bound = with_node(view, "a", allocated=Resources(1, GIB))
    assert bound.changed_nodes(0) == (1, (0,))
    assert not log.observe(arrays(bound), bound)
    assert log.since(position) == [0]
    assert log.allocated[0] == (1.0, float(GIB), 0.0)
    freed = with_node(bound, "a", allocated=Resources())
    assert log.observe(arrays(freed), freed)


def test_mixed_sources_stay_consistent() -> None:
    # A change seen through the view's log, then a view without one that is back at the old
    # arrays: the comparison must be against the rows as last taken in, not a stale snapshot.
    log = NodeLog()
    view = logged()
    log.observe(arrays(view), view)
    bound = with_node(view, "a", allocated=Resources(1, GIB))
    log.observe(arrays(bound), bound)
    plain = three_nodes()
    assert log.observe(arrays(plain), plain)
    assert log.allocated[0] == (0.0, 0.0, 0.0)


def test_long_gaps_ask_for_a_recompute() -> None:
    log, view = NodeLog(), three_nodes()
    log.observe(arrays(view), view)
    position = log.end
    for step in range(40):
        changed = with_node(view, "a", allocated=Resources(step % 2, 0))
        log.observe(arrays(changed), changed)
    assert log.since(position) is None  # more rows than a recompute costs
    assert np.array_equal(np.array(log.free), arrays(changed).free)
