"""physics-rules: each of the seed's rules, on two nodes that LeastAllocated alone ranks a
before b (b has a little more CPU bound), moves the pod to b exactly when its rule fires."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dagpilot.core.snapshot import Binding, ClusterSnapshot, NodeSnapshot
from dagpilot.core.types import Cluster, NodeSpec, Resources, Task
from dagpilot.core.view import NodeSignals, PodRef
from dagpilot.schedulers import SCHEDULERS
from dagpilot.schedulers.physics_rules import RuleWeights, build
from tests.sim.helpers import GIB, gpus, job, node, task

A_SPEC = node("a", 16.0, 64 * GIB, gpus=gpus("A100", (2, 2)))
B_SPEC = node("b", 16.0, 64 * GIB, gpus=gpus("A100", (2, 2)))
HEAVY = task("heavy", 100.0, cpu=4.0, cpu_intensity=0.9)
LIGHT = task("light", 100.0, cpu=0.5, cpu_intensity=0.5)
PAIR = task("pair", 100.0, cpu=1.0, gpus=2, gpu_model="A100")
SHUFFLE = task("shuffle", 100.0, cpu=1.0, comm_group="g", comm_share=0.3)
PEER = task("peer", 100.0, cpu=1.0, comm_group="g", comm_share=0.3)
QUIET = NodeSignals(sampled_s=15.0, memory_used=4 * GIB, memory_current=5 * GIB)


def state(spec: NodeSpec, cpu: float, signals: NodeSignals,
          free_gpus: tuple[int, ...] = (0, 1, 2, 3), memory: int = 4 * GIB) -> NodeSnapshot:
    return NodeSnapshot(spec, Resources(cpu, memory, 4 - len(free_gpus), "A100"), free_gpus,
                        pods=1, signals=signals)


def choose(pod_task: Task, a: NodeSnapshot, b: NodeSnapshot, *, peer_on: str | None = None,
           weights: RuleWeights | None = None) -> str:
    tasks = [pod_task] + ([PEER] if peer_on else [])
    one = job("j", *tasks)
    pod = PodRef(1, one, one.task(pod_task.id), 0, 0.0)
    bindings = (Binding(PodRef(2, one, one.task("peer"), 0, 0.0), peer_on),) if peer_on else ()
    view = ClusterSnapshot(20.0, Cluster("two", (A_SPEC, B_SPEC)), (a, b), (pod,),
                           bindings=bindings)
    scheduler = build(weights) if weights else build()
    scheduler.reset(view.cluster, np.random.default_rng(0))
    placement = scheduler.decide(view)
    assert placement is not None
    return placement.node


HOT = dataclasses.replace(QUIET, membw_utilisation=0.95)  # MBPI 0.93 > 0.8
POLLUTED = dataclasses.replace(QUIET, memory_current=8 * GIB)  # ratio 2 > 1.8


@pytest.mark.parametrize(("case", "pod_task", "a", "b", "peer_on", "expected"), [
    ("no rule fires: LeastAllocated", HEAVY, state(A_SPEC, 1.0, QUIET),
     state(B_SPEC, 2.0, QUIET), None, "a"),
    ("MBPI > 0.8, CPU-heavy pod: avoided", HEAVY, state(A_SPEC, 1.0, HOT),
     state(B_SPEC, 2.0, QUIET), None, "b"),
    ("MBPI > 0.8, light pod: no matter", LIGHT, state(A_SPEC, 1.0, HOT),
     state(B_SPEC, 2.0, QUIET), None, "a"),
    # a: more memory bound but far less CPU, so LeastAllocated still ranks it first
    ("page cache polluted: the most free memory", LIGHT,
     state(A_SPEC, 1.0, POLLUTED, memory=20 * GIB), state(B_SPEC, 8.0, QUIET), None, "b"),
    ("ratio at 1.8: not polluted", LIGHT,
     state(A_SPEC, 1.0, dataclasses.replace(QUIET, memory_current=int(4 * GIB * 1.8)),
           memory=20 * GIB), state(B_SPEC, 8.0, QUIET), None, "a"),
    ("communication group: next to its peer", SHUFFLE, state(A_SPEC, 1.0, QUIET),
     state(B_SPEC, 2.0, QUIET), "b", "b"),
    ("multi-GPU pod: the node with a whole complex free", PAIR,
     state(A_SPEC, 1.0, QUIET, free_gpus=(1, 2)), state(B_SPEC, 2.0, QUIET, free_gpus=(2, 3)),
     None, "b"),
])
def test_each_rule_moves_the_pod_only_when_it_fires(case: str, pod_task: Task, *,
                                                    a: NodeSnapshot, b: NodeSnapshot,
                                                    peer_on: str | None, expected: str) -> None:
    assert choose(pod_task, a, b, peer_on=peer_on) == expected, case


def test_a_rule_weighted_zero_does_not_act() -> None:
    off = RuleWeights(mbpi=0.0)
    assert choose(HEAVY, state(A_SPEC, 1.0, HOT), state(B_SPEC, 2.0, QUIET), weights=off) == "a"


def test_storage_congestion_counts_only_after_three_samples_running() -> None:
    """Await of 100 ms on a 2 ms network disk is level 2 (50x): a is avoided from the third
    congested sample on, and again preferred once a sample is calm."""
    scheduler = build()
    cluster = Cluster("two", (A_SPEC, B_SPEC))
    scheduler.reset(cluster, np.random.default_rng(0))
    chosen = []
    for sample, await_ms in enumerate((100.0, 100.0, 100.0, 100.0, 1.0)):
        signals = dataclasses.replace(QUIET, sampled_s=15.0 * (sample + 1), io_await_ms=await_ms)
        one = job(f"j{sample}", LIGHT)
        pod = PodRef(sample + 1, one, one.task("light"), 0, 0.0)
        view = ClusterSnapshot(15.0 * (sample + 1) + 1, cluster,
                               (state(A_SPEC, 1.0, signals), state(B_SPEC, 2.0, QUIET)), (pod,))
        placement = scheduler.decide(view)
        assert placement is not None
        chosen.append(placement.node)
    assert chosen == ["a", "a", "b", "b", "a"]


def test_registered_by_name() -> None:
    assert SCHEDULERS["physics-rules"]().name == "physics-rules"
