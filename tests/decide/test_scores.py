"""kube-default's scores against the formulas of the Kubernetes scheduler plugins, worked out by
hand on a three-node example, and Trimaran's TargetLoadPacking on four nodes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagpilot.core.snapshot import NodeSnapshot
from dagpilot.core.types import NodeAffinity, Requirement, Resources, Taint, TaintEffect, labels
from dagpilot.core.view import NodeSignals
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.scores import DEFAULT_WEIGHTS, SCORES, score_one
from dagpilot.decide.scores.base import AllocationScore
from dagpilot.decide.scores.normalize import default_normalize
from dagpilot.decide.scores.target_load_packing import TargetLoadPacking
from dagpilot.decide.scoring import Scoring
from tests.schedulers.views import GIB, node, task

# n1: 4 cpu 8 GiB with 1 cpu 2 GiB bound; n2: 8 cpu 16 GiB with 6 cpu 4 GiB bound, disk=ssd;
# n3: 4 cpu 8 GiB, empty, zone=b, tainted spot:PreferNoSchedule.
NODES = [
    NodeSnapshot(node("n1", 4, 8), allocated=Resources(1, 2 * GIB)),
    NodeSnapshot(dataclasses.replace(node("n2", 8, 16), labels=labels({"disk": "ssd"})),
             allocated=Resources(6, 4 * GIB)),
    NodeSnapshot(dataclasses.replace(node("n3", 4, 8), labels=labels({"zone": "b"}),
                                 taints=(Taint("spot", "", TaintEffect.PREFER_NO_SCHEDULE),))),
]
POD = task("p", 1, 60, memory_gib=2, affinity=NodeAffinity(preferred=(
    (5, (Requirement("zone", "In", ("b",)),)),
    (2, (Requirement("disk", "Exists"),)),
)))


def raw(name: str) -> list[int]:
    return [score_one(SCORES[name], POD, n) for n in NODES]


def test_least_allocated() -> None:
    # n1: cpu (4000-2000)*100/4000 = 50, memory (8-4)/8 -> 50; (50+50)/2 = 50
    # n2: cpu (8000-7000)*100/8000 = 12 (12.5 truncated), memory (16-6)/16 -> 62; 74/2 = 37
    # n3: cpu 75, memory 75 -> 75
    assert raw("NodeResourcesLeastAllocated") == [50, 37, 75]


def test_balanced_allocation() -> None:
    # fractions after placing: n1 (0.5, 0.5); n2 (0.875, 0.375): std 0.25; n3 (0.25, 0.25)
    assert raw("NodeResourcesBalancedAllocation") == [100, 75, 100]


def test_taint_toleration_counts_untolerated_prefer_no_schedule() -> None:
    assert raw("TaintToleration") == [0, 0, 1]
    normalised = SCORES["TaintToleration"].normalize(np.array([0.0, 0.0, 1.0]))
    assert normalised.tolist() == [100, 100, 0]


def test_node_affinity_sums_preferred_weights() -> None:
    assert raw("NodeAffinity") == [0, 2, 5]
    normalised = SCORES["NodeAffinity"].normalize(np.array([0.0, 2.0, 5.0]))
    assert normalised.tolist() == [0, 40, 100]  # 100 * 2 / 5


def test_kube_default_weighted_totals() -> None:
    # n1: 50 + 100 + 3*100 + 2*0 = 450; n2: 37 + 75 + 300 + 2*40 = 492; n3: 75 + 100 + 0 + 200
    scoring = Scoring.named(DEFAULT_WEIGHTS)
    arrays = NodeArrays.from_states(NODES)
    assert scoring.totals(POD, arrays, np.arange(3)).tolist() == [450, 492, 375]
    # Normalisation runs over the feasible nodes only: without n3, n2's affinity is the best.
    assert scoring.totals(POD, arrays, np.array([0, 1])).tolist() == [450, 37 + 75 + 300 + 200]


def test_scoring_caches_static_scores_per_constraint_key() -> None:
    scoring = Scoring.named(DEFAULT_WEIGHTS)
    arrays = NodeArrays.from_states(NODES)
    first = scoring.totals(POD, arrays, np.arange(3))
    again = scoring.totals(dataclasses.replace(POD, id="q"), arrays, np.arange(3))
    assert first.tolist() == again.tolist()
    plain = task("r", 1, 60, memory_gib=2)  # no preferences: affinity 0 everywhere
    assert scoring.totals(plain, arrays, np.arange(3)).tolist() == [450, 412, 175]


@pytest.mark.parametrize(("raw_scores", "reverse", "expected"), [
    ([0, 0, 0], False, [0, 0, 0]),
    ([0, 0, 0], True, [100, 100, 100]),
    ([1, 2, 3], False, [33, 66, 100]),
    ([1, 2, 3], True, [67, 34, 0]),
])
def test_default_normalize(raw_scores: list[float], reverse: bool, expected: list[int]) -> None:
    assert default_normalize(np.array(raw_scores, dtype=float), reverse).tolist() == expected


def test_least_allocated_uses_default_requests_for_a_pod_without_any() -> None:
    empty = NodeSnapshot(node("e", 1, 1))
    # 100m of 1000m -> 90; 200 MiB of 1 GiB -> (1024-200)*100/1024 = 80 (80.47); (90+80)/2 = 85
    nothing = dataclasses.replace(task("p", 0, 1), requests=Resources())
    assert score_one(SCORES["NodeResourcesLeastAllocated"], nothing, empty) == 85
    assert score_one(SCORES["NodeResourcesBalancedAllocation"], nothing, empty) == 100


def test_target_load_packing() -> None:
    def loaded(name: str, used: float, since: float = 0.0) -> NodeSnapshot:
        return NodeSnapshot(node(name, 10), signals=NodeSignals(0.0, cpu_used=used,
                                                            placed_since_sample=Resources(since)))
    nodes = [loaded("over-target", 2, since=1), loaded("idle", 0), loaded("full", 9.5),
             loaded("at-target", 2.5)]
    pod = task("p", 1, 60)  # predicted at 1.5 x its request: 1500m
    # over-target: (2000 + 1500 + 1500) / 10000 = 50 % > 40: round(40 * 50 / 60) = 33
    # idle: 15 %: round(60 * 15 / 40 + 40) = round(62.5) = 63 (half away from zero)
    # full: 110 % -> 0; at-target: 40 %: 60 * 40 / 40 + 40 = 100
    scores = TargetLoadPacking().scores(pod, NodeArrays.from_states(nodes))
    assert scores.tolist() == [33, 63, 0, 100]
    limited = dataclasses.replace(pod, limits=Resources(2))  # predicted at its limit: 2000m
    assert TargetLoadPacking(50).scores(limited, NodeArrays.from_states(nodes[1:2])).tolist() == [
        70]  # 20 %: 50 * 20 / 50 + 50


def test_registry_names_match() -> None:
    assert all(score.name == name for name, score in SCORES.items())
    assert dict(DEFAULT_WEIGHTS) == {"NodeResourcesLeastAllocated": 1,
                                     "NodeResourcesBalancedAllocation": 1,
                                     "TaintToleration": 3, "NodeAffinity": 2}


@settings(max_examples=80, deadline=None)
@given(request=st.tuples(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.5, 7.0]),
                         st.sampled_from([0, 1, 3 * GIB, 5 * GIB + 7])),
       bound=st.lists(st.tuples(st.sampled_from([0.0, 0.25, 1.0, 3.5, 6.0]),
                                st.integers(0, 12 * GIB)), min_size=1, max_size=6))
def test_row_scorers_give_the_vector_scores(request: tuple[float, int],
                                            bound: list[tuple[float, int]]) -> None:
    nodes = [NodeSnapshot(node(f"n{i}", 8, 12), allocated=Resources(cpu, memory))
             for i, (cpu, memory) in enumerate(bound)]
    one_task = dataclasses.replace(task("p", 0, 1), requests=Resources(*request))
    arrays = NodeArrays.from_states(nodes)
    capacity = arrays.statics.capacity_rows
    for name in ("NodeResourcesLeastAllocated", "NodeResourcesBalancedAllocation"):
        score = SCORES[name]
        assert isinstance(score, AllocationScore)
        row = score.row_scorer(one_task)
        by_row = [row(tuple(arrays.allocated[i].tolist()), capacity[i]) for i in range(len(nodes))]
        assert by_row == score.scores(one_task, arrays).tolist(), name


def test_node_totals_are_the_totals_when_static_scores_are_flat() -> None:
    scoring = Scoring.named(DEFAULT_WEIGHTS)
    plain = [NodeSnapshot(node("a", 4, 8), allocated=Resources(1, 2 * GIB)),
             NodeSnapshot(node("b", 8, 16))]
    arrays = NodeArrays.from_states(plain)
    separable = scoring.node_totals(task("p", 1, 60, memory_gib=2), arrays)
    assert separable is not None
    raw_totals, constant = separable
    expected = scoring.totals(task("p", 1, 60, memory_gib=2), arrays, np.arange(2))
    assert (raw_totals + constant).tolist() == expected.tolist()
    # A PreferNoSchedule taint or a preferred affinity makes the normalisation depend on the
    # feasible set: no per-node totals then.
    assert scoring.node_totals(POD, NodeArrays.from_states(NODES)) is None


def test_node_totals_without_allocation_scores() -> None:
    scoring = Scoring.named([("TaintToleration", 3)])
    arrays = NodeArrays.from_states([NodeSnapshot(node("a", 4, 8)), NodeSnapshot(node("b", 8, 16))])
    separable = scoring.node_totals(task("p", 1, 60), arrays)
    assert separable is not None
    assert separable[0].tolist() == [0.0, 0.0] and separable[1] == 300.0
