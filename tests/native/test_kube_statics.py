"""kube_statics: the fixed inputs of the native kube-default, from the Python decide code."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dagpilot.core.snapshot import NodeSnapshot
from dagpilot.core.types import (
    Cluster,
    Gpu,
    Job,
    NodeAffinity,
    Requirement,
    Resources,
    Taint,
    TaintEffect,
    Toleration,
)
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import DEFAULT_FILTERS, filters
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.native.kube_statics import kube_statics
from tests.schedulers.views import GIB, job, node, task

SOFT = Taint("soft", "", TaintEffect.PREFER_NO_SCHEDULE)
GPU_TAINT = Taint("nvidia.com/gpu", "present")
GPU_TOLERATION = Toleration("nvidia.com/gpu", "Exists")
NOT_READY = Toleration("node.kubernetes.io/not-ready", "Exists")
GPU_NODE = dataclasses.replace(node("g", 16, 64), allocatable=Resources(16, 64 * GIB, 2, "A100"),
                               taints=(GPU_TAINT,), gpus=(Gpu(0, "A100", 0), Gpu(1, "A100", 0)))
CLUSTER = Cluster("statics", (
    node("a", 4, labels=(("tier", "fast"),)),
    node("b", 8, taints=(SOFT,)),
    node("c", 2, unschedulable=True),
    GPU_NODE,
))
PREFER_FAST = NodeAffinity(preferred=((10, (Requirement("tier", "In", ("fast",)),)),))


def jobs() -> list[Job]:
    plain = task("plain", 1, 10)
    return [
        job("first", [plain, task("twin", 1, 10, ["plain"]),  # same placement key as "plain"
                      task("idle", 0, 10, ["plain"], memory_gib=0, tolerations=(NOT_READY,))],
            priority=3),
        job("second", [
            task("gpu", 4, 10, memory_gib=8, tolerations=(GPU_TOLERATION,)),
            dataclasses.replace(task("fast", 1, 10, affinity=PREFER_FAST), priority=7),
            task("limited", 1, 10, limits=Resources(0, 2 * GIB)),
        ]),
    ]


def gpu_jobs() -> list[Job]:
    trained = dataclasses.replace(task("gpu", 4, 10, memory_gib=8, tolerations=(GPU_TOLERATION,)),
                                  requests=Resources(4, 8 * GIB, 2, "A100"))
    return [job("ml", [trained])]


def test_tasks_with_one_placement_key_share_a_class_in_input_order() -> None:
    klass, statics = kube_statics(jobs(), CLUSTER)
    assert klass.dtype == np.int32
    assert klass.tolist() == [0, 0, 1, 2, 3, 4]  # limits alone make "limited" a class of its own
    assert len(statics["need"]) == 5


def test_pod_priority_is_the_tasks_else_the_jobs() -> None:
    _, statics = kube_statics(jobs(), CLUSTER)
    assert statics["priority"].tolist() == [3, 3, 3, 0, 7, 0]


def test_static_masks_are_the_static_filters_of_each_class() -> None:
    every = jobs() + gpu_jobs()
    klass, statics = kube_statics(every, CLUSTER)
    feasibility = Feasibility(filters(DEFAULT_FILTERS))
    nodes = NodeArrays.from_states([NodeSnapshot(spec) for spec in CLUSTER.nodes])
    tasks = [t for j in every for t in j.tasks]
    for index, one in enumerate(tasks):
        constraint = statics["constraint"][klass[index]]
        expected = feasibility.static_mask(one, nodes).astype(np.uint8)
        assert statics["static_mask"][constraint].tolist() == expected.tolist(), one.id
    tolerant = statics["constraint"][klass[3]]
    assert statics["static_mask"][tolerant].tolist() == [1, 1, 0, 1]  # tolerates the GPU taint
    gpu = statics["constraint"][klass[-1]]
    assert statics["static_mask"][gpu].tolist() == [0, 0, 0, 1]  # asks for two A100s
    plain = statics["constraint"][klass[0]]
    assert statics["static_mask"][plain].tolist() == [1, 1, 0, 0]  # cordoned, GPU taint


def test_requests_as_the_filters_and_scores_read_them() -> None:
    klass, statics = kube_statics(jobs(), CLUSTER)
    plain, idle = klass[0], klass[2]
    assert statics["need"][plain].tolist() == [1 - 1e-9, float(GIB), -math.inf]
    assert statics["need"][idle].tolist() == [-math.inf, -math.inf, -math.inf]
    assert statics["request_least"][idle].tolist() == [100.0, 200.0 * 1024 * 1024]
    assert statics["request_balanced"][idle].tolist() == [0.0, 0.0]
    assert statics["request_least"][plain].tolist() == [1000.0, float(GIB)]
    assert statics["clip"].tolist() == [0, 1, 0, 0, 0]
    assert statics["tolerates_not_ready"].tolist() == [0, 1, 0, 0, 0]


def test_static_scores_equal_everywhere_fold_into_a_constant() -> None:
    klass, statics = kube_statics(jobs(), CLUSTER)
    assert statics["static_weight"].tolist() == [3.0, 2.0]  # TaintToleration, NodeAffinity
    assert statics["static_reverse"].tolist() == [1, 0]
    plain, gpu, fast = (statics["constraint"][klass[i]] for i in (0, 3, 4))
    # The soft taint on "b" makes TaintToleration differ between nodes for every class.
    assert statics["static_raw"][0, plain].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert math.isnan(statics["static_constant"][0, plain])
    assert math.isnan(statics["separable_constant"][plain])
    assert statics["static_constant"][1, plain] == 0.0  # no preferred terms: 0 everywhere
    assert statics["static_raw"][1, fast].tolist() == [10.0, 0.0, 0.0, 0.0]
    assert math.isnan(statics["static_constant"][1, fast])
    assert statics["static_raw"][0, gpu].tolist() == [0.0, 1.0, 0.0, 0.0]


def test_a_cluster_without_soft_taints_is_separable() -> None:
    cluster = Cluster("plain", (node("a", 4), node("b", 8)))
    klass, statics = kube_statics(jobs()[:1], cluster)
    constraint = statics["constraint"][klass[0]]
    assert statics["static_constant"][:, constraint].tolist() == [100.0, 0.0]
    assert statics["separable_constant"][constraint] == 300.0  # 3 x 100 + 2 x 0


@pytest.mark.parametrize(("count", "limit"), [(50, 50), (150, 100), (1000, 420)])
def test_partial_search_limit(count: int, limit: int) -> None:
    cluster = Cluster("many", tuple(node(f"n{i}", 4) for i in range(count)))
    _, statics = kube_statics(jobs()[:1], cluster)
    assert statics["nodes_to_find"].tolist() == [limit]


def test_capacity_in_milli_cpu_and_bytes() -> None:
    _, statics = kube_statics(jobs(), CLUSTER)
    assert statics["capacity_milli"][:2].tolist() == [[4000.0, 16.0 * GIB], [8000.0, 16.0 * GIB]]
    assert statics["capacity_positive"].tolist() == [1]


def test_arrays_have_the_kinds_and_shapes_kube_c_reads() -> None:
    klass, statics = kube_statics(jobs(), CLUSTER)
    classes, nodes, tasks = 5, len(CLUSTER.nodes), len(klass)
    constraints = len(statics["static_mask"])
    expected = {
        "nodes_to_find": ("<i4", (1,)), "capacity_positive": ("|u1", (1,)),
        "capacity_milli": ("<f8", (nodes, 2)), "priority": ("<i8", (tasks,)),
        "constraint": ("<i4", (classes,)), "need": ("<f8", (classes, 3)),
        "request_least": ("<f8", (classes, 2)), "request_balanced": ("<f8", (classes, 2)),
        "clip": ("|u1", (classes,)), "tolerates_not_ready": ("|u1", (classes,)),
        "static_mask": ("|u1", (constraints, nodes)),
        "static_raw": ("<f8", (2, constraints, nodes)),
        "static_constant": ("<f8", (2, constraints)), "static_weight": ("<f8", (2,)),
        "static_reverse": ("|u1", (2,)), "separable_constant": ("<f8", (constraints,)),
    }
    assert {key: (a.dtype.str, a.shape) for key, a in statics.items()} == expected
    assert all(a.flags.c_contiguous for a in statics.values())
