"""Table tests for the PCIe root-complex rule: which nodes fit a multi-GPU pod on one complex,
which ones the rule rejects (and why), and when it falls back to a penalty instead."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.snapshot import NodeSnapshot
from dagpilot.core.status import Code
from dagpilot.core.types import Gpu, NodeSpec, Resources, Task
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.pcie import PENALTY, PcieRootComplex
from tests.schedulers.views import GIB, task

ALL = tuple(range(8))


def gpu_node(name: str, models: tuple[str, str] = ("A100", "A100")) -> NodeSpec:
    """Two root complexes of four GPUs: 0-3 on rc0 (models[0]), 4-7 on rc1 (models[1])."""
    return NodeSpec(name, Resources(32, 64 * GIB, 8, models[0]),
                    gpus=tuple(Gpu(i, models[i // 4], i // 4) for i in range(8)))


def state(spec: NodeSpec, free: tuple[int, ...]) -> NodeSnapshot:
    """The node with every GPU but `free` bound (allocated agrees with free_gpus)."""
    bound = spec.allocatable.gpus - len(free)
    return NodeSnapshot(spec, Resources(0, 0, bound, spec.allocatable.gpu_model), free)


def wanting(gpus: int, model: str | None = "A100") -> Task:
    return dataclasses.replace(task("p", 1, 10), requests=Resources(1, GIB, gpus, model))


@pytest.mark.parametrize(("free", "gpus", "model", "reason"), [
    (ALL, 4, "A100", None),
    ((0, 1, 4, 5, 6), 4, "A100",
     "no PCIe root complex with 4 free GPU(s) of model A100 (free per complex: rc0=2, rc1=3)"),
    ((0, 1, 4, 5, 6), 3, "A100", None),  # rc1 has three
    ((0, 1, 4, 5, 6), 4, None,
     "no PCIe root complex with 4 free GPU(s) (free per complex: rc0=2, rc1=3)"),
    ((0, 1, 2, 3, 4), 5, "A100",  # more than any complex holds
     "no PCIe root complex with 5 free GPU(s) of model A100 (free per complex: rc0=4, rc1=1)"),
    ((0, 4), 1, "A100", None),  # one GPU: nothing to spread
    ((), 1, "A100", None),
])
def test_check_on_two_complexes_of_four(free: tuple[int, ...], gpus: int, model: str | None,
                                        reason: str | None) -> None:
    status = PcieRootComplex().check(wanting(gpus, model), state(gpu_node("g"), free))
    if reason is None:
        assert status.ok
    else:
        assert (status.code, status.reasons, status.plugin) == (
            Code.UNSCHEDULABLE, (reason,), "PcieRootComplex")
        assert str(status) == f"PcieRootComplex: {reason}"


MIXED = gpu_node("mixed", ("A100", "V100"))


@pytest.mark.parametrize(("free", "gpus", "model", "reason"), [
    (ALL, 4, "A100", None),
    (ALL, 4, "V100", None),
    ((0, 1, 4, 5, 6, 7), 3, "A100",  # rc1's four free GPUs are V100s
     "no PCIe root complex with 3 free GPU(s) of model A100 (free per complex: rc0=2, rc1=0)"),
    ((0, 1, 4, 5, 6, 7), 3, None, None),  # any model: rc1 will do
])
def test_only_gpus_of_the_requested_model_count(free: tuple[int, ...], gpus: int,
                                                model: str | None, reason: str | None) -> None:
    status = PcieRootComplex().check(wanting(gpus, model), state(MIXED, free))
    assert status.reasons == (() if reason is None else (reason,))


def test_a_node_without_gpu_detail_counts_as_one_complex() -> None:
    plain = NodeSpec("t4", Resources(8, 16 * GIB, 4, "T4"))
    half = NodeSnapshot(plain, Resources(0, 0, 2, "T4"))
    rule = PcieRootComplex()
    assert rule.check(wanting(2, "T4"), half).ok
    assert rule.check(wanting(3, "T4"), half).reasons == (
        "no PCIe root complex with 3 free GPU(s) of model T4 (free per complex: rc0=2)",)


SPLIT = (0, 1, 4, 5, 6)  # rc0=2, rc1=3
WHOLE = (4, 5, 6, 7)  # rc1=4


@pytest.mark.parametrize(("frees", "feasible", "gpus", "kept", "penalised"), [
    # one node fits on one complex: the split one is rejected
    ((SPLIT, WHOLE), (True, True), 4, (False, True), False),
    ((SPLIT, ALL, WHOLE), (True, True, True), 4, (False, True, True), False),
    # every node fits: nothing to reject
    ((ALL, WHOLE), (True, True), 4, None, False),
    # none fits: every node stays, with the penalty
    ((SPLIT, (0, 1, 2, 4, 5, 6)), (True, True), 4, None, True),
    # the only node that fits is filtered out already: only the others count
    ((SPLIT, WHOLE), (True, False), 4, None, True),
    # a node the filters rejected stays rejected, whatever its complexes
    ((SPLIT, WHOLE, ALL), (True, True, False), 4, (False, True, False), False),
    # fewer than two GPUs: the rule does not apply
    ((SPLIT, WHOLE), (True, True), 1, None, False),
    ((SPLIT, WHOLE), (True, True), 0, None, False),
])
def test_apply_rejects_split_nodes_only_when_another_fits(
        frees: tuple[tuple[int, ...], ...], feasible: tuple[bool, ...], gpus: int,
        kept: tuple[bool, ...] | None, penalised: bool) -> None:
    states = [state(gpu_node(f"n{i}"), free) for i, free in enumerate(frees)]
    rule, pod = PcieRootComplex(), wanting(gpus)
    verdict = rule.apply(pod, NodeArrays.from_states(states), np.array(feasible))
    assert verdict.penalised == penalised
    assert (None if verdict.kept is None else tuple(verdict.kept.tolist())) == kept
    if verdict.kept is not None:  # what it rejected, `check` explains
        for one, was, now in zip(states, feasible, verdict.kept.tolist(), strict=True):
            assert rule.check(pod, one).ok == now or not was


def test_nodes_with_and_without_gpus_bound_are_judged_alike() -> None:
    """Nodes with no GPU bound are settled by their largest complex, the others by their free
    GPUs: both give the per-node answer of `check`."""
    rng = np.random.default_rng(3)
    rule = PcieRootComplex()
    for _ in range(40):
        states = [state(gpu_node(f"n{i}", ("A100", "V100") if i % 3 == 0 else ("A100", "A100")),
                        ALL if rng.random() < 0.3 else tuple(sorted(
                            rng.choice(8, size=int(rng.integers(0, 9)), replace=False).tolist())))
                  for i in range(6)]
        pod = wanting(int(rng.integers(2, 6)), "A100" if rng.random() < 0.7 else None)
        feasible = np.ones(len(states), dtype=np.bool_)
        verdict = rule.apply(pod, NodeArrays.from_states(states), feasible)
        fits = [rule.check(pod, one).ok for one in states]
        if not any(fits):
            assert verdict.penalised and verdict.kept is None
        elif all(fits):
            assert not verdict.penalised and verdict.kept is None
        else:
            assert verdict.kept is not None and verdict.kept.tolist() == fits


def test_the_penalty_is_the_log_of_the_cross_complex_bandwidth_share() -> None:
    assert pytest.approx(math.log(1 / PhysicsParameters().pcie_cross_complex_factor)) == PENALTY
