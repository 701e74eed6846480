"""heft: upward rank first, earliest finish time, waiting for a faster busy node when it wins."""

from __future__ import annotations

import dataclasses

import numpy as np

from dagpilot.core.types import Resources
from dagpilot.schedulers import heft
from tests.schedulers.views import (
    TinyRun,
    apply,
    cluster_view,
    diamond,
    job,
    node,
    pods_of,
    task,
    two_nodes,
    with_node,
)


def test_diamond_sequence_with_a_fast_node() -> None:
    # b runs twice as fast. s: EFT a 10, b 5 -> b. At 5, by rank y (50), x (40), z (15):
    # y: a 45, b 25 -> b. x fits only on a (35); b would start when y ends at 25 and finish
    # at 40 -> a. z: a 10, b 7.5 -> b. t at 35: a 45, b 40 -> b.
    placements = TinyRun([diamond(y_runtime_s=40)], two_nodes(b_speed=2.0), heft.build()).run()
    assert placements == [(0, "J/s", "b"), (5, "J/y", "b"), (5, "J/x", "a"), (5, "J/z", "b"),
                          (35, "J/t", "b")]


def test_waits_for_a_busy_node_that_finishes_first() -> None:
    # "fast" (speed 4) is busy until 10 with a pod heft placed; "slow" is free.
    # A 40 s pod: slow finishes at 40, fast at 10 + 40 / 4 = 20 -> wait (None).
    nodes = [node("slow", 2), node("fast", 2, cpu_speed=4.0)]
    first = job("first", [task("p", 2, 40)])
    second = job("second", [task("q", 2, 40)])
    scheduler = heft.build()
    view = cluster_view(nodes, pods_of(first, ["p"]))
    scheduler.reset(view.cluster, np.random.default_rng(0))
    placement = scheduler.decide(view)
    assert placement is not None and placement.node == "fast"  # ends at 10
    view = apply(view, placement)
    view = dataclasses.replace(view, pending=tuple(pods_of(second, ["q"], 1)))
    assert scheduler.decide(view) is None
    # When fast frees up, the pod goes there.
    done = dataclasses.replace(with_node(view, "fast", allocated=Resources()), now_s=10.0)
    placement = scheduler.decide(done)
    assert placement is not None and placement.node == "fast"


def test_homogeneous_nodes_take_the_first_free_node() -> None:
    placements = TinyRun([diamond()], two_nodes(), heft.build()).run()
    assert [n for _, _, n in placements] == ["a", "a", "a", "a", "a"]
