"""Two versions at once: with a canary active, every placement on a canary node is the canary
version's and every other one the stable's; a workflow's pods share a cohort; a pod its own
set cannot take goes to the other set's model; a new canary.json revision (abort) is followed
from the next decision; without a canary the decision is the plain Decider's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.types import Cluster, NodeSpec, Resources
from dagpilot.core.view import PodRef
from dagpilot.registry.canary import ABORTED, CanaryState, Gate, Stage, read_canary, write_canary
from dagpilot.serve.canary_reload import CanaryModel
from dagpilot.serve.deadline import DeadlineRunner
from dagpilot.serve.decisions import MODEL
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.model_by_node import CANARY, STABLE, NodeSetDecider, cohort_point
from dagpilot.serve.model_reload import ModelPolicy
from tests.canary_registry import stable_and_canary
from tests.sim.helpers import job, task
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "current"
GIB = 2**30
# zone-a: 2 small nodes (the canary); zone-b: 2 large ones. Canary share of CPU: 8 / 40.
CLUSTER = Cluster("two-zones", tuple(
    NodeSpec(name, Resources(cpu, 64 * GIB), zone=zone, rack=f"rack-{zone[-1]}")
    for name, cpu, zone in (("a-1", 4, "zone-a"), ("a-2", 4, "zone-a"),
                            ("b-1", 16, "zone-b"), ("b-2", 16, "zone-b"))))
ZONE_A = "topology.kubernetes.io/zone=zone-a"


def job_ids(cohort: str, count: int) -> list[str]:
    """Job ids that the hash puts in `cohort` at the canary share 0.2."""
    found = [f"wf-{i}" for i in range(1000) if (cohort_point(f"wf-{i}") < 0.2) == (
        cohort == CANARY)]
    return found[:count]


def pods(ids: list[str], cpu: float = 1.0) -> tuple[PodRef, ...]:
    made = []
    for index, job_id in enumerate(ids):
        one = job(job_id, task("t", 30.0, cpu=cpu))
        made.append(PodRef(index, one, one.tasks[0], 0, float(index)))
    return tuple(made)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return stable_and_canary(tmp_path)


@pytest.fixture
def runner() -> Iterator[DeadlineRunner]:
    made = DeadlineRunner(5.0)
    yield made
    made.close()


def start_canary(root: Path) -> None:
    write_canary(root, CanaryState("stable", "canary", (Stage(ZONE_A, 2), Stage("", 4)),
                                   Gate(max_regret_increase=None), revision=0), None)


def decider(root: Path, runner: DeadlineRunner) -> NodeSetDecider:
    return NodeSetDecider(ModelPolicy(root), runner, Fallback(), canary=CanaryModel(root))


def test_without_a_canary_the_stable_model_decides_over_every_node(
        root: Path, runner: DeadlineRunner) -> None:
    choice = decider(root, runner).decide(ClusterSnapshot.of(CLUSTER, pods(["wf-1"])))
    assert choice.outcome == MODEL and choice.version == "stable"
    assert choice.node_set is None and choice.cohort is None


def test_the_node_decides_the_model_and_the_workflow_decides_the_cohort(
        root: Path, runner: DeadlineRunner) -> None:
    start_canary(root)
    chosen = decider(root, runner)
    for ids in (job_ids(CANARY, 3), job_ids(STABLE, 3)):
        for pod in pods(ids):
            choice = chosen.decide(ClusterSnapshot.of(CLUSTER, (pod,)))
            assert choice.placement is not None and choice.outcome == MODEL
            canary_node = choice.placement.node.startswith("a-")
            assert choice.node_set == (CANARY if canary_node else STABLE)
            assert choice.version == ("canary" if canary_node else "stable")
            expected = CANARY if cohort_point(pod.job.id) < 0.2 else STABLE
            assert choice.cohort == expected == choice.node_set


def test_a_pod_its_own_nodes_cannot_take_goes_to_the_other_set(
        root: Path, runner: DeadlineRunner) -> None:
    start_canary(root)
    big = pods(job_ids(CANARY, 1), cpu=8.0)  # more than a zone-a node has
    choice = decider(root, runner).decide(ClusterSnapshot.of(CLUSTER, big))
    assert choice.placement is not None and choice.placement.node.startswith("b-")
    assert (choice.cohort, choice.node_set, choice.version) == (CANARY, STABLE, "stable")


def test_an_abort_is_followed_from_the_next_decision(root: Path,
                                                     runner: DeadlineRunner) -> None:
    start_canary(root)
    chosen = decider(root, runner)
    view = ClusterSnapshot.of(CLUSTER, pods(job_ids(CANARY, 1)))
    assert chosen.decide(view).version == "canary"
    state = read_canary(root)
    assert state is not None
    write_canary(root, replace(state, status=ABORTED), state.revision)
    chosen.canary.refresh()
    after = chosen.decide(view)
    assert after.version == "stable" and after.node_set is None
