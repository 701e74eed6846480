"""kube-default: placement sequences worked out by hand from the plugin formulas."""

from __future__ import annotations

import numpy as np

from dagpilot.core.types import Resources
from dagpilot.schedulers import kube_default
from dagpilot.schedulers.ordering import PrioritySort
from dagpilot.schedulers.pod_queue import GroupedQueue
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
    # s at 0: a 84 + 90 + 300 = 474 against b 71 + 78 + 300 = 449 -> a.
    # x at 10 (2 cpu): a 71 + 78 = 149 against b 46 + 53 = 99 -> a.
    # y (1 cpu): a (2 cpu bound) 56 + 68 = 124 against b 71 + 78 = 149 -> b.
    # z (1 cpu): a 124 against b (1 bound) 43 + 56 = 99 -> a.  t at 40: as s -> a.
    placements = TinyRun([diamond()], two_nodes(), kube_default.build()).run()
    assert placements == [(0, "J/s", "a"), (10, "J/x", "a"), (10, "J/y", "b"),
                          (10, "J/z", "a"), (40, "J/t", "a")]


def test_higher_priority_first_then_older() -> None:
    low = job("low", [task("p", 1, 10)], arrival_s=0)
    high = job("high", [task("p", 1, 10)], arrival_s=5, priority=10)
    later = job("later", [task("p", 1, 10)], arrival_s=6)
    pending = pods_of(low, ["p"], 0) + pods_of(high, ["p"], 1) + pods_of(later, ["p"], 2)
    scheduler = kube_default.build()
    view = cluster_view([node("a", 2)], pending, now_s=6)
    scheduler.reset(view.cluster, np.random.default_rng(0))
    _, placed = drain(scheduler, view)
    assert placed == [("high/p", "a"), ("low/p", "a")]  # "later" fits nowhere now


def test_unschedulable_pod_is_skipped_then_retried_when_resources_free() -> None:
    work = job("J", [task("big", 2, 10), task("small", 1, 10)])
    scheduler = kube_default.build()
    view = cluster_view([node("a", 4)], pods_of(work, ["big", "small"]))
    view = with_node(view, "a", allocated=Resources(3, 0))
    scheduler.reset(view.cluster, np.random.default_rng(0))
    view, placed = drain(scheduler, view)
    assert placed == [("J/small", "a")]
    assert scheduler.decide(view) is None  # nothing freed: "big" is not re-evaluated
    view = with_node(view, "a", allocated=Resources(1, 0))
    view, placed = drain(scheduler, view)
    assert placed == [("J/big", "a")]


def test_ties_are_broken_at_random_with_the_run_generator() -> None:
    work = job("J", [task("p", 1, 10)])
    chosen = set()
    for seed in range(12):
        scheduler = kube_default.build()
        view = cluster_view([node(f"n{i}", 4) for i in range(4)], pods_of(work, ["p"]))
        scheduler.reset(view.cluster, np.random.default_rng(seed))
        placement = scheduler.decide(view)
        assert placement is not None
        again = kube_default.build()
        again.reset(view.cluster, np.random.default_rng(seed))
        assert again.decide(view) == placement  # one seed, one choice
        chosen.add(placement.node)
    assert len(chosen) > 1


def test_queue_timestamp_is_refreshed_when_a_pod_fails() -> None:
    work = job("J", [task("old", 2, 10), task("new", 1, 10)])
    old, new = pods_of(work, ["old"], 0, created_s=0.0)[0], pods_of(work, ["new"], 1, 3.0)[0]
    queue = GroupedQueue(PrioritySort())
    queue.add(old)
    queue.add(new)
    old_group = queue.best()
    assert old_group is not None and old_group.head is old
    queue.block(old_group, now_s=5.0)  # failed at 5: queued behind pods queued before 5
    queue.unblock((8.0, 1e12, 0.0), now_s=6.0)
    best = queue.best()
    assert best is not None and best.head is new
    assert PrioritySort().head_key(old_group) == (0, 5.0, 0.0, 0)
