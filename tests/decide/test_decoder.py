"""The decoder's pieces that the agent tests do not reach on their own: the best-first top
nodes, one pod's mask and rejections for an extender."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.status import Code
from dagpilot.core.types import Cluster, Resources
from dagpilot.core.view import PodRef
from dagpilot.decide.decoder import Decoder, best_first
from dagpilot.decide.pcie import PENALTY
from tests.sim.helpers import gpus, job, node, task


@pytest.mark.parametrize("values", [
    [0.1, 0.5, 0.5, 0.2, 0.5, 0.0],  # a three-way tie: index order
    [0.3, 0.3],  # fewer values than asked
    [0.0] * 50 + [0.9] + [0.0] * 50,
    list(np.random.default_rng(0).random(5000)),
])
def test_the_best_first_are_a_stable_sorts_first(values: list[float]) -> None:
    array = np.array(values, dtype=np.float32)
    assert best_first(array, 3).tolist() == np.argsort(-array, kind="stable")[:3].tolist()


def pod_of(cpu: float, gpus_wanted: int = 0) -> PodRef:
    one = job("j", task("t", 10.0, cpu=cpu, gpus=gpus_wanted, gpu_model="A100"
                        if gpus_wanted else None))
    return PodRef(0, one, one.tasks[0], 0, 0.0)


def test_one_pod_that_fits_nowhere_gets_every_node_with_its_statuses() -> None:
    where = Cluster("c", (node("a", 2.0), node("b", 4.0, unschedulable=True)))
    view = ClusterSnapshot.of(where)
    decoder, pod = Decoder(), pod_of(8.0)
    candidates, bias = decoder.for_pod(view, pod)
    assert candidates.pods == (pod,) and not candidates.feasible.any() and bias is None
    rejected = dict(decoder.rejected(view, pod.task, [0, 1]))
    assert [s.plugin for s in rejected["a"]] == ["NodeResourcesFit"]
    assert {s.plugin for s in rejected["b"]} == {"NodeUnschedulable", "NodeResourcesFit"}
    assert all(s.code is not Code.SUCCESS for statuses in rejected.values() for s in statuses)


def test_one_multi_gpu_pod_is_narrowed_to_the_nodes_that_hold_it_on_one_complex() -> None:
    split = node("split", 32.0, gpus=gpus("A100", (2, 2)))
    whole = node("whole", 32.0, gpus=gpus("A100", (4, 2)))
    view = ClusterSnapshot.of(Cluster("g", (split, whole)))
    decoder, pod = Decoder(), pod_of(1.0, 4)
    candidates, bias = decoder.for_pod(view, pod)
    assert candidates.feasible.tolist() == [[False, True]] and bias is None
    (name, statuses), = decoder.rejected(view, pod.task, [0])
    assert name == "split" and [s.plugin for s in statuses] == ["PcieRootComplex"]
    # when no node holds it on one complex, none is rejected and all carry the penalty
    busy = view.with_node("whole", allocated=Resources(0, 0, 1, "A100"),
                          free_gpus=(1, 2, 3, 4, 5))
    candidates, bias = decoder.for_pod(busy, pod)
    assert candidates.feasible.tolist() == [[True, True]]
    assert bias is not None and bias.tolist() == [[np.float32(PENALTY)] * 2]
