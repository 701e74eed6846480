"""random: a uniform draw among the pods that fit, then among their feasible nodes."""

from __future__ import annotations

import numpy as np

from dagpilot.schedulers import random_pick
from tests.schedulers.views import TinyRun, cluster_view, diamond, drain, node, pods_of, two_nodes


def test_draws_follow_the_generator() -> None:
    # Three pods, two nodes with room for all: each decision draws the pod among those left
    # (in creation order), then the node among the feasible ones, from one Generator.
    work = diamond()
    view = cluster_view([node("a", 8), node("b", 8)], pods_of(work, ["x", "y", "z"]))
    scheduler = random_pick.build()
    scheduler.reset(view.cluster, np.random.default_rng(7))
    _, placed = drain(scheduler, view)
    mirror = np.random.default_rng(7)
    left, expected = ["J/x", "J/y", "J/z"], []
    # The queue holds y and z in one group (same spec) after x's group: draws index that list.
    while left:
        pod = left.pop(int(mirror.integers(len(left))))
        expected.append((pod, "ab"[int(mirror.integers(2))]))
    assert placed == expected


def test_whole_dag_places_every_pod_and_one_seed_gives_one_sequence() -> None:
    first = TinyRun([diamond()], two_nodes(), random_pick.build(), seed=11).run()
    again = TinyRun([diamond()], two_nodes(), random_pick.build(), seed=11).run()
    assert first == again
    assert sorted(p for _, p, _ in first) == ["J/s", "J/t", "J/x", "J/y", "J/z"]
    sequences = {tuple(TinyRun([diamond()], two_nodes(), random_pick.build(), seed=s).run())
                 for s in range(8)}
    assert len(sequences) > 1
