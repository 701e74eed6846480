"""The Common Workflow Scheduler strategies: orders, node assignments, names."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.core.errors import SpecError
from dagpilot.schedulers import SCHEDULERS, cws
from dagpilot.schedulers.cws import cws_strategy
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
)

INPUTS = (300, 100, 200)  # read bytes of x, y, z


def test_rank_min_round_robin_sequence() -> None:
    # Ranks: s 2, x y z 1, t 0. rank_min breaks the tie by smaller input: y, z, x.
    # Cursor: s -> a (cursor 1); y -> b (cursor 0); z -> a (cursor 1); x: b is full, a
    # fits (cursor 1); t at 40 -> b.
    placements = TinyRun([diamond(inputs=INPUTS)], two_nodes(),
                         SCHEDULERS["cws-rank-min-rr"]()).run()
    assert placements == [(0, "J/s", "a"), (10, "J/y", "b"), (10, "J/z", "a"),
                          (10, "J/x", "a"), (40, "J/t", "b")]


def test_rank_max_fair_sequence() -> None:
    # rank_max: x, z, y. Fair: the node with the largest CPU share left after placing.
    # s: a 3/4, b 1/2 -> a. x: a 2/4, b 0 -> a. z: a 1/4, b 1/2 -> b. y: a 1/4, b 0 -> a.
    # t at 40: a 3/4 -> a.
    placements = TinyRun([diamond(inputs=INPUTS)], two_nodes(),
                         SCHEDULERS["cws-rank-max-fair"]()).run()
    assert placements == [(0, "J/s", "a"), (10, "J/x", "a"), (10, "J/z", "b"),
                          (10, "J/y", "a"), (40, "J/t", "a")]


@pytest.mark.parametrize(("prioritisation", "expected"), [
    ("fifo", ["x", "y", "z"]),
    ("rank", ["x", "y", "z"]),  # equal ranks: submission order
    ("rank-min", ["y", "z", "x"]),
    ("rank-max", ["x", "z", "y"]),
    ("max", ["x", "z", "y"]),
    ("min", ["y", "z", "x"]),
])
def test_prioritisations(prioritisation: str, expected: list[str]) -> None:
    work = diamond(inputs=INPUTS)
    view = cluster_view([node("big", 16)], pods_of(work, ["x", "y", "z"]))
    scheduler = SCHEDULERS[f"cws-{prioritisation}-fair"]()
    scheduler.reset(view.cluster, np.random.default_rng(0))
    _, placed = drain(scheduler, view)
    assert [name.split("/")[1] for name, _ in placed] == expected


def test_rank_beats_input_size_and_submission_order() -> None:
    work = job("J", [task("a", 1, 1), task("b", 1, 1, ["a"]), task("c", 1, 1, read_bytes=9)])
    view = cluster_view([node("big", 16)], pods_of(work, ["c", "a"]))
    for name in ("cws-rank-fair", "cws-rank-min-fair", "cws-rank-max-fair"):
        scheduler = SCHEDULERS[name]()
        scheduler.reset(view.cluster, np.random.default_rng(0))
        _, placed = drain(scheduler, view)
        assert [p for p, _ in placed] == ["J/a", "J/c"], name  # a has rank 1, c rank 0


def test_random_strategies_place_every_pod_where_it_fits() -> None:
    for name in ("cws-random-random", "cws-random-rr", "cws-fifo-random"):
        placements = TinyRun([diamond(inputs=INPUTS)], two_nodes(), SCHEDULERS[name](),
                             seed=3).run()
        assert sorted(p for _, p, _ in placements) == ["J/s", "J/t", "J/x", "J/y", "J/z"]


def test_twenty_one_strategies_and_their_names() -> None:
    assert len(cws.SCHEDULERS) == 21
    assert "cws-rank-min-rr" in SCHEDULERS
    assert all(SCHEDULERS[name]().name == name for name in cws.SCHEDULERS)


@pytest.mark.parametrize(("trace_name", "expected"), [
    ("rank_min_roundrobin", "cws-rank-min-rr"),
    ("fifo_fair", "cws-fifo-fair"),
    ("rank_max_random", "cws-rank-max-random"),
    ("cws-min-rr", "cws-min-rr"),
    ("original", "kube-default"),
])
def test_cws_strategy_lookup(trace_name: str, expected: str) -> None:
    assert cws_strategy(trace_name) == expected


def test_unknown_strategy_is_a_clear_error() -> None:
    with pytest.raises(SpecError, match="unknown CWS strategy"):
        cws_strategy("rank_median_fair")
