"""What the agent does for speed changes nothing it decides or explains: the critic skipped
when no value is wanted, rejection reasons kept between decisions (tests/decide has the
memory's own tests, and the top nodes found without a full sort); and garbage collection kept
out of a `dagpilot` decision."""

from __future__ import annotations

import gc
import math
from collections.abc import Hashable

import numpy as np
import torch

from dagpilot.agent import Agent, DagpilotScheduler, Decision
from dagpilot.clusters import load_cluster
from dagpilot.core.snapshot import ClusterSnapshot, NodeSnapshot
from dagpilot.core.types import Resources
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import filters
from dagpilot.decide.pcie import PcieRootComplex
from dagpilot.decide.signature import placement_key
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals
from tests.sim.helpers import cluster, job, node, task
from tests.state.sim_views import sim_env
from tests.test_agent import agent, filtered_cluster
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too


def reasons_now(view: ClusterView, decision: Decision) -> tuple[tuple[str, str], ...]:
    """The rejected nodes' reasons worked out from scratch, as the agent did before it kept
    them: every failing filter's, or the root-complex rule's."""
    assert decision.placement is not None and decision.policy_input is not None
    task_ = decision.placement.pod.task
    feasible = decision.policy_input.feasible[decision.action // decision.policy_input.shape[1]]
    checks, rule = Feasibility(filters()), PcieRootComplex()
    return tuple((view.nodes[i].spec.name, "; ".join(str(s) for s in (
        checks.statuses(task_, view.nodes[i]) or (rule.check(task_, view.nodes[i]),))))
        for i in np.flatnonzero(~feasible).tolist())


def test_kept_rejection_reasons_equal_reasons_worked_out_afresh_at_every_decision() -> None:
    """A run on the 48-node cluster where nodes fill and free, so that the reasons a node
    gives change while the agent keeps them."""
    where = load_cluster("builtin:default")
    jobs = assign_arrivals(load("builtin:mix:40"), ArrivalSpec("poisson", 1.5),
                           where.capacity.cpu, np.random.default_rng(1), 1800.0)
    env, view = sim_env(jobs, where)
    explaining = agent(3)
    rejected_sets: dict[Hashable, set[frozenset[str]]] = {}
    placed = 0
    for _ in range(150):
        decision = explaining.act(view, greedy=True)
        if decision.placement is not None:
            placed += 1
            assert decision.placement.rejected == reasons_now(view, decision)
            rejected_sets.setdefault(placement_key(decision.placement.pod.task), set()).add(
                frozenset(dict(decision.placement.rejected)))
        view, _, done, _ = env.step(decision.placement)
        if done:
            break
    assert placed > 100
    # nodes filled and freed while the reasons were kept: one pod spec met other rejections
    assert any(len(sets) > 1 for sets in rejected_sets.values())


def test_a_view_without_a_change_log_gets_its_reasons_worked_out_every_time() -> None:
    where = filtered_cluster()
    pod_job = job("j", task("t", 30.0, cpu=2.0))
    pending = (PodRef(0, pod_job, pod_job.tasks[0], 0, 0.0),)
    explaining = agent()
    for cpu_bound in (0.0, 7.0):  # "fit-a" fills up between two decisions
        view = ClusterSnapshot(0.0, where, tuple(
            NodeSnapshot(spec, Resources(cpu_bound if spec.name == "fit-a" else 0.0, 0))
            for spec in where.nodes), pending)
        decision = explaining.act(view, greedy=True)
        assert decision.placement is not None
        assert decision.placement.rejected == reasons_now(view, decision)
        assert ("fit-a" in dict(decision.placement.rejected)) == (cpu_bound > 0)


def test_skipping_the_critic_changes_no_choice_and_leaves_the_value_unknown() -> None:
    _, view = sim_env("builtin:mix:6", "builtin:default")
    with_value, without = agent(4), agent(4)
    for _ in range(5):
        full = with_value.act(view, greedy=True)
        quick = without.act(view, greedy=True, value=False)
        assert (quick.action, quick.log_prob, quick.placement) == (
            full.action, full.log_prob, full.placement)
        assert math.isfinite(full.value) and math.isnan(quick.value)


class _Probe(Agent):
    """A real agent that notes whether the collector may run during its act, and leaves
    behind enough new objects for a collection to come due."""

    events: list[str]
    kept: list[list[int]]

    def act(self, view: ClusterView, *, greedy: bool, generator: torch.Generator | None = None,
            value: bool = True) -> Decision:
        self.events.append(f"collector enabled: {gc.isenabled()}")
        decision = super().act(view, greedy=greedy, generator=generator, value=value)
        self.kept.extend([index] for index in range(3 * gc.get_threshold()[0]))
        self.events.append("decided")
        return decision


def test_a_collection_due_during_a_dagpilot_decision_runs_after_it() -> None:
    base = agent(5)
    probe = _Probe(base.model, base.normaliser)
    probe.events, probe.kept = [], []
    scheduler = DagpilotScheduler(probe)
    _, view = sim_env("builtin:mix:4", "builtin:default")

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            probe.events.append("collection")

    gc.callbacks.append(note)
    try:
        scheduler.decide(view)
        probe.events.append("returned")
        probe.kept.append([])  # the caller's next allocation
    finally:
        gc.callbacks.remove(note)
    assert probe.events[:3] == ["collector enabled: False", "decided", "returned"]
    assert "collection" in probe.events[3:]  # deferred, not skipped
    assert gc.isenabled()


def test_a_caller_without_automatic_collections_keeps_it_so() -> None:
    gc.disable()
    try:
        DagpilotScheduler(agent(5)).decide(sim_env("builtin:mix:4", "builtin:default")[1])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nothing_to_place_is_a_decision_without_a_value() -> None:
    where = cluster(node("n", 1.0))
    big = job("big", task("t", 10.0, cpu=16.0))
    view = ClusterSnapshot.of(where, (PodRef(0, big, big.tasks[0], 0, 0.0),))
    assert agent().act(view, greedy=True, value=False).placement is None
