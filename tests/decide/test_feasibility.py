"""Feasibility: all filters over all nodes at once, the static part cached, reasons per node."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dagpilot.core.snapshot import NodeSnapshot
from dagpilot.core.status import Code
from dagpilot.core.types import Resources, Taint, Task, Toleration
from dagpilot.decide.feasibility import Feasibility, LiveMask
from dagpilot.decide.filters import filters
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.node_log import NodeLog
from tests.schedulers.views import GIB, cluster_view, node, task, with_node

TAINT = Taint("dedicated", "gpu")
NODES = [
    NodeSnapshot(node("free", 4)),
    NodeSnapshot(node("busy", 4), allocated=Resources(3.5, 0)),
    NodeSnapshot(dataclasses.replace(node("tainted", 4), taints=(TAINT,))),
    NodeSnapshot(node("down", 4), ready=False),
]


def test_mask_combines_static_and_dynamic_filters() -> None:
    feasibility = Feasibility(filters())
    arrays = NodeArrays.from_states(NODES)
    assert feasibility.mask(task("p", 1, 1), arrays).tolist() == [True, False, False, False]
    tolerant = task("q", 1, 1, tolerations=(Toleration("dedicated", "Exists"),))
    assert feasibility.mask(tolerant, arrays).tolist() == [True, False, True, False]


def test_static_masks_are_cached_per_constraint_key_and_read_only() -> None:
    feasibility = Feasibility(filters())
    arrays = NodeArrays.from_states(NODES)
    first = feasibility.static_mask(task("p", 1, 1), arrays)
    assert feasibility.static_mask(task("other", 3, 9), arrays) is first  # same constraints
    assert not first.flags.writeable
    rebuilt = NodeArrays.from_states(NODES)  # another cluster picture: the cache starts over
    assert feasibility.static_mask(task("p", 1, 1), rebuilt) is not first


def test_statuses_and_rejections_give_every_reason() -> None:
    feasibility = Feasibility(filters())
    view = cluster_view([n.spec for n in NODES])
    view = dataclasses.replace(view, nodes=tuple(NODES))
    big = task("p", 5, 1, memory_gib=1)
    statuses = feasibility.statuses(big, NODES[2])
    assert [(s.plugin, s.code) for s in statuses] == [
        ("NodeResourcesFit", Code.UNRESOLVABLE), ("TaintToleration", Code.UNRESOLVABLE)]
    rejected = dict(feasibility.rejections(big, view))
    assert set(rejected) == {"free", "busy", "tainted", "down"}
    assert "NodeReady" in rejected["down"] and "Insufficient cpu" in rejected["down"]
    assert feasibility.rejections(task("ok", 0.5, 1), view) == (
        ("tainted", "TaintToleration: node(s) had untolerated taint {dedicated: gpu}"),
        ("down", "NodeReady: node(s) had untolerated taint {node.kubernetes.io/not-ready: }"))


amounts = st.tuples(st.floats(0, 8, allow_nan=False), st.integers(0, 16), st.integers(0, 2))


def drawn(request: tuple[float, int, int], bound: list[tuple[float, int, int]],
          ready: list[bool]) -> tuple[list[NodeSnapshot], Task]:
    """Nodes of 8 cores and 16 GiB with the drawn allocations and readiness, and a task with
    the drawn request (cores, GiB, GPUs)."""
    nodes = [NodeSnapshot(node(f"n{i}", 8, 16), allocated=Resources(b[0], b[1] * GIB, 0),
                      ready=ready[i]) for i, b in enumerate(bound)]
    one_task = dataclasses.replace(task("p", 0, 1), requests=Resources(
        request[0], request[1] * GIB, request[2]))
    return nodes, one_task


@settings(max_examples=60, deadline=None)
@given(request=amounts, bound=st.lists(amounts, min_size=1, max_size=5),
       ready=st.lists(st.booleans(), min_size=5, max_size=5))
def test_mask_agrees_with_the_per_node_checks(request: tuple[float, int, int],
                                              bound: list[tuple[float, int, int]],
                                              ready: list[bool]) -> None:
    nodes, one_task = drawn(request, bound, ready)
    feasibility = Feasibility(filters())
    mask = feasibility.mask(one_task, NodeArrays.from_states(nodes))
    expected = [not feasibility.statuses(one_task, n) for n in nodes]
    assert mask.tolist() == expected
    fits = [one_task.requests.fits_in(n.spec.allocatable - n.allocated) and n.ready for n in nodes]
    assert mask.tolist() == fits  # the simulator's own check never refuses what passes


@settings(max_examples=60, deadline=None)
@given(request=amounts, bound=st.lists(amounts, min_size=1, max_size=5),
       ready=st.lists(st.booleans(), min_size=5, max_size=5))
def test_row_tests_agree_with_the_mask(request: tuple[float, int, int],
                                       bound: list[tuple[float, int, int]],
                                       ready: list[bool]) -> None:
    nodes, one_task = drawn(request, bound, ready)
    arrays = NodeArrays.from_states(nodes)
    for one in filters():
        test = one.row_test(one_task)
        static = one.mask(one_task, arrays) if one.static else np.ones(len(nodes), np.bool_)
        by_row = [bool(static[i]) and test(tuple(arrays.free[i].tolist()), ready[i])
                  for i in range(len(nodes))]
        assert by_row == one.mask(one_task, arrays).tolist(), one.name


def test_live_mask_follows_the_log_row_by_row() -> None:
    rng = np.random.default_rng(2)
    specs = [node(f"n{i}", 8, 16) for i in range(10)]
    view = cluster_view(specs)
    feasibility, log, live = Feasibility(filters()), NodeLog(), LiveMask()
    one_task = task("p", 2, 1, memory_gib=4)
    for step in range(200):
        arrays = NodeArrays.from_view(view)
        log.observe(arrays, view)
        static = feasibility.static_mask(one_task, arrays)
        mask = feasibility.live(one_task, arrays, static, live)
        assert mask.tolist() == feasibility.mask(one_task, arrays).tolist(), step
        assert live.count == int(mask.sum())
        name = f"n{int(rng.integers(10))}"
        view = with_node(view, name, allocated=Resources(float(rng.integers(0, 9)),
                                                         int(rng.integers(0, 17)) * GIB),
                         ready=bool(rng.random() < 0.8))
