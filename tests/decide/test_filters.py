"""Table tests for every filter: the per-node check (with its reasons) and the vectorised mask
agree, and both give the hand-worked answer."""

from __future__ import annotations

import dataclasses

import pytest

from dagpilot.core.snapshot import NodeSnapshot
from dagpilot.core.status import Code
from dagpilot.core.types import (
    Gpu,
    NodeAffinity,
    NodeSpec,
    Requirement,
    Resources,
    Taint,
    TaintEffect,
    Task,
    Toleration,
    labels,
)
from dagpilot.decide.filters import DEFAULT_FILTERS, FILTERS, Filter
from dagpilot.decide.node_arrays import NodeArrays
from tests.schedulers.views import GIB, node, task


def judge(flt: Filter, one_task: Task, one_node: NodeSnapshot) -> tuple[Code, tuple[str, ...]]:
    status = flt.check(one_task, one_node)
    mask = flt.mask(one_task, NodeArrays.from_states([one_node]))
    assert bool(mask[0]) == status.ok, "check and mask disagree"
    assert status.ok or status.plugin == flt.name
    return status.code, status.reasons


OK = (Code.SUCCESS, ())
BIG = node("big", 8, 32)


@pytest.mark.parametrize(("requests", "allocated", "expected"), [
    (Resources(2, 4 * GIB), Resources(6, 28 * GIB), OK),  # exactly full afterwards
    (Resources(2.5, GIB), Resources(6, 0), (Code.UNSCHEDULABLE, ("Insufficient cpu",))),
    (Resources(1, 8 * GIB), Resources(7.5, 28 * GIB),
     (Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"))),
    (Resources(9, GIB), Resources(), (Code.UNRESOLVABLE, ("Insufficient cpu",))),
    (Resources(0, 0), Resources(8, 32 * GIB), OK),  # asks for nothing: always fits
    (Resources(0.1 + 0.2, 0), Resources(7.7, 0), OK),  # float slack, as Resources.fits_in
    (Resources(1, GIB, gpus=1), Resources(), (Code.UNRESOLVABLE, ("Insufficient nvidia.com/gpu",))),
])
def test_node_resources_fit(requests: Resources, allocated: Resources,
                            expected: tuple[Code, tuple[str, ...]]) -> None:
    one_task = dataclasses.replace(task("p", 0, 1), requests=requests)
    assert judge(FILTERS["NodeResourcesFit"], one_task, NodeSnapshot(BIG, allocated)) == expected


GPU_NODE = NodeSpec("g", Resources(32, 64 * GIB, 4, "A100"),
                    gpus=tuple(Gpu(i, "A100" if i < 3 else "V100", i // 2) for i in range(4)))


@pytest.mark.parametrize(("requests", "spec", "expected"), [
    (Resources(1, GIB, 3, "A100"), GPU_NODE, OK),
    (Resources(1, GIB, 4, "A100"), GPU_NODE,
     (Code.UNRESOLVABLE, ("node(s) didn't have 4 GPU(s) of model A100",))),
    (Resources(1, GIB, 1, "H100"), GPU_NODE,
     (Code.UNRESOLVABLE, ("node(s) didn't have 1 GPU(s) of model H100",))),
    (Resources(1, GIB, 2, None), GPU_NODE, OK),  # any model
    (Resources(1, GIB, 0, "A100"), BIG, OK),  # no GPUs asked for: the model is moot
    (Resources(1, GIB, 2, "T4"), NodeSpec("t", Resources(8, GIB, 2, "T4")), OK),  # no GPU list
])
def test_gpu_model(requests: Resources, spec: NodeSpec,
                   expected: tuple[Code, tuple[str, ...]]) -> None:
    one_task = dataclasses.replace(task("p", 0, 1), requests=requests)
    assert judge(FILTERS["GpuModel"], one_task, NodeSnapshot(spec)) == expected


GPU_TAINT = Taint("nvidia.com/gpu", "present", TaintEffect.NO_SCHEDULE)
EVICT = Taint("maintenance", "", TaintEffect.NO_EXECUTE)
SOFT = Taint("spot", "", TaintEffect.PREFER_NO_SCHEDULE)


@pytest.mark.parametrize(("taints", "tolerations", "expected"), [
    ((), (), OK),
    ((SOFT,), (), OK),  # PreferNoSchedule only lowers the score
    ((GPU_TAINT,), (), (Code.UNRESOLVABLE,
                        ("node(s) had untolerated taint {nvidia.com/gpu: present}",))),
    ((GPU_TAINT,), (Toleration("nvidia.com/gpu", "Exists"),), OK),
    ((GPU_TAINT, EVICT), (Toleration("nvidia.com/gpu", "Equal", "present"),),
     (Code.UNRESOLVABLE, ("node(s) had untolerated taint {maintenance: }",))),
    ((GPU_TAINT, EVICT), (), (Code.UNRESOLVABLE, (
        "node(s) had untolerated taint {nvidia.com/gpu: present}",
        "node(s) had untolerated taint {maintenance: }"))),
    ((GPU_TAINT, EVICT), (Toleration("", "Exists"),), OK),  # tolerates everything
    ((GPU_TAINT,), (Toleration("nvidia.com/gpu", "Exists", effect=TaintEffect.NO_EXECUTE),),
     (Code.UNRESOLVABLE, ("node(s) had untolerated taint {nvidia.com/gpu: present}",))),
])
def test_taint_toleration(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...],
                          expected: tuple[Code, tuple[str, ...]]) -> None:
    one_task = task("p", 1, 1, tolerations=tolerations)
    spec = dataclasses.replace(BIG, taints=taints)
    assert judge(FILTERS["TaintToleration"], one_task, NodeSnapshot(spec)) == expected


ZONE_B = dataclasses.replace(BIG, labels=labels({"zone": "b", "disk": "ssd", "gen": "5"}))
IN_B = Requirement("zone", "In", ("b",))
IN_A = Requirement("zone", "In", ("a",))
NEWER = Requirement("gen", "Gt", ("4",))
MISMATCH = "node(s) didn't match Pod's node affinity"


@pytest.mark.parametrize(("selector", "required", "expected"), [
    ({}, (), OK),
    ({"zone": "b"}, (), OK),
    ({"zone": "a"}, (), (Code.UNRESOLVABLE, ("node(s) didn't match Pod's node selector zone=a",))),
    ({}, ((IN_B, NEWER),), OK),  # one term, every requirement holds
    ({}, ((IN_A,), (IN_B,)), OK),  # terms are ORed
    ({}, ((IN_A, NEWER),), (Code.UNRESOLVABLE, (MISMATCH,))),  # requirements are ANDed
    ({}, ((),), (Code.UNRESOLVABLE, (MISMATCH,))),  # an empty term matches nothing
    ({"zone": "a", "disk": "hdd"}, ((IN_A,),), (Code.UNRESOLVABLE, (
        "node(s) didn't match Pod's node selector disk=hdd",
        "node(s) didn't match Pod's node selector zone=a", MISMATCH))),
])
def test_node_affinity(selector: dict[str, str], required: tuple[tuple[Requirement, ...], ...],
                       expected: tuple[Code, tuple[str, ...]]) -> None:
    one_task = task("p", 1, 1, node_selector=labels(selector),
                    affinity=NodeAffinity(required=required))
    assert judge(FILTERS["NodeAffinity"], one_task, NodeSnapshot(ZONE_B)) == expected


CORDONED = Toleration("node.kubernetes.io/unschedulable", "Exists")
NOT_READY = Toleration("node.kubernetes.io/not-ready", "Exists", effect=TaintEffect.NO_SCHEDULE)


@pytest.mark.parametrize(("unschedulable", "tolerations", "expected"), [
    (False, (), OK),
    (True, (), (Code.UNRESOLVABLE, ("node(s) were unschedulable",))),
    (True, (CORDONED,), OK),
])
def test_node_unschedulable(unschedulable: bool, tolerations: tuple[Toleration, ...],
                            expected: tuple[Code, tuple[str, ...]]) -> None:
    one_task = task("p", 1, 1, tolerations=tolerations)
    spec = dataclasses.replace(BIG, unschedulable=unschedulable)
    assert judge(FILTERS["NodeUnschedulable"], one_task, NodeSnapshot(spec)) == expected


@pytest.mark.parametrize(("ready", "tolerations", "expected"), [
    (True, (), OK),
    (False, (), (Code.UNSCHEDULABLE,
                 ("node(s) had untolerated taint {node.kubernetes.io/not-ready: }",))),
    (False, (NOT_READY,), OK),
])
def test_node_ready(ready: bool, tolerations: tuple[Toleration, ...],
                    expected: tuple[Code, tuple[str, ...]]) -> None:
    one_task = task("p", 1, 1, tolerations=tolerations)
    assert judge(FILTERS["NodeReady"], one_task, NodeSnapshot(BIG, ready=ready)) == expected


def test_masks_cover_every_node_in_order() -> None:
    nodes = [NodeSnapshot(node("n0", 2)), NodeSnapshot(node("n1", 8)),
             NodeSnapshot(node("n2", 8), allocated=Resources(7, 0)),
             NodeSnapshot(node("n3", 8), ready=False)]
    arrays = NodeArrays.from_states(nodes)
    one_task = task("p", 4, 1)
    fits = FILTERS["NodeResourcesFit"].mask(one_task, arrays)
    ready = FILTERS["NodeReady"].mask(one_task, arrays)
    assert fits.tolist() == [False, True, False, True]
    assert ready.tolist() == [True, True, True, False]


def test_registry_names_match_and_default_order() -> None:
    assert all(flt.name == name for name, flt in FILTERS.items())
    assert DEFAULT_FILTERS[:3] == ("NodeUnschedulable", "NodeReady", "NodeResourcesFit")
    assert set(DEFAULT_FILTERS) == set(FILTERS)
