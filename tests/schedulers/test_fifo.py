"""fifo: oldest pod first, first node that fits, work-conserving."""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Resources
from dagpilot.schedulers import fifo
from tests.schedulers.views import (
    TinyRun,
    cluster_view,
    diamond,
    drain,
    job,
    node,
    pods_of,
    task,
    two_nodes,
    with_node,
)


def test_diamond_sequence() -> None:
    # Everything fits on a (4 cpu) in turn: s; then x, y, z together; t when x ends at 40.
    placements = TinyRun([diamond()], two_nodes(), fifo.build()).run()
    assert placements == [(0, "J/s", "a"), (10, "J/x", "a"), (10, "J/y", "a"),
                          (10, "J/z", "a"), (40, "J/t", "a")]


def test_an_oldest_pod_that_fits_nowhere_does_not_block_younger_ones() -> None:
    work = job("J", [task("big", 3, 10), task("small", 1, 10)])
    scheduler = fifo.build()
    view = with_node(cluster_view([node("a", 2), node("b", 4)], pods_of(work, ["big", "small"])),
                     "b", allocated=Resources(2, 0))
    scheduler.reset(view.cluster, np.random.default_rng(0))
    _, placed = drain(scheduler, view)
    assert placed == [("J/small", "a")]
