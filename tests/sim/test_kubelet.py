"""The kubelet's device allocation: one PCIe root complex when one holds the pod (the fullest
that does), else the fewest complexes, fullest first; and the simulator uses it for every
scheduler whose placement names no GPUs."""

from __future__ import annotations

import pytest

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Gpu, NodeSpec
from dagpilot.core.view import ClusterView
from dagpilot.sim import SimEnv
from dagpilot.sim.kubelet import preferred_gpus
from tests.sim.helpers import cluster, gpus, job, node, settings, task

EIGHT = node("g", 32.0, gpus=gpus("A100", (4, 4)))
THREE_COMPLEXES = node("t", 32.0, gpus=gpus("A100", (2, 4, 3)))  # rc0=0-1 rc1=2-5 rc2=6-8


@pytest.mark.parametrize(("spec", "free", "wanted", "model", "expected"), [
    (EIGHT, (0, 4, 5, 6, 7), 2, None, (4, 5)),  # complex 0 has one free GPU: complex 1
    (EIGHT, (0, 1, 4, 5, 6), 2, None, (0, 1)),  # both fit: the fuller one, 4-6 stay together
    (EIGHT, (0, 1, 4, 5), 2, None, (0, 1)),  # a tie: the complex of the first free GPU
    (EIGHT, (3, 4, 5, 6, 7), 1, None, (3,)),  # one GPU: the fullest complex that has it
    (EIGHT, (0, 1, 4, 5, 6), 4, None, (0, 4, 5, 6)),  # none holds 4: complex 1's 3, then 0's
    (EIGHT, (0, 1, 2, 5, 6), 4, None, (0, 1, 2, 5)),  # 3 on complex 0, the first of complex 1
    (THREE_COMPLEXES, (0, 1, 3, 4, 6, 7, 8), 5, None, (0, 1, 6, 7, 8)),  # 3 + 2, not 2 + 2 + 1
    (THREE_COMPLEXES, (0, 3, 6), 3, None, (0, 3, 6)),  # one free on each: all three
    (EIGHT, (0, 1, 2, 3), 1, "V100", ()),  # the wrong model
    (EIGHT, (0, 1), 3, None, ()),  # too few free
    (EIGHT, (2, 3, 4), 0, None, ()),  # no GPU asked for
])
def test_the_preferred_allocation(spec: NodeSpec, free: tuple[int, ...], wanted: int,
                                  model: str | None, expected: tuple[int, ...]) -> None:
    assert preferred_gpus(spec, free, wanted, model) == expected


def test_a_mixed_node_gives_only_gpus_of_the_pods_model() -> None:
    mixed = node("m", 32.0, gpus=(Gpu(0, "V100", 0), Gpu(1, "A100", 0), Gpu(2, "A100", 1),
                                  Gpu(3, "A100", 1)))
    assert preferred_gpus(mixed, (0, 1, 2, 3), 2, "A100") == (2, 3)
    assert preferred_gpus(mixed, (0, 1, 2, 3), 2, None) == (0, 1)


class NodeOnly:
    """Binds every pending pod to one node, naming no GPUs (as every baseline does)."""

    name = "node-only"

    def reset(self, seed: int) -> None:
        del seed

    def decide(self, view: ClusterView) -> Placement | None:
        return Placement(view.pending[0], "g") if view.pending else None


def test_the_simulator_gives_a_node_only_placement_the_kubelets_gpus() -> None:
    """A 1-GPU pod, then a 2-GPU pod: the first free GPUs would be 1 and 2, across complexes
    (2 + 2 GPUs); the kubelet keeps the pair on complex 1. (A third pod keeps the run at a
    decision, so the view can be read.)"""
    where = cluster(node("g", 8.0, gpus=gpus("A100", (2, 2))))
    jobs = [job("j", task("one", 100.0, gpus=1), task("pair", 100.0, gpus=2),
                    task("last", 100.0, gpus=1))]
    env = SimEnv(jobs, where, settings())
    view = env.reset(seed=0)
    scheduler = NodeOnly()
    view, *_ = env.step(scheduler.decide(view))
    assert view.nodes[0].free_gpus == (1, 2, 3)
    view, *_ = env.step(scheduler.decide(view))
    assert view.nodes[0].free_gpus == (1,)  # the pair took 2 and 3
