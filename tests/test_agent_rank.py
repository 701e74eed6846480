"""`Agent.rank(view, pod)`, the extender's question: one pod's feasible nodes with the policy's
scores, every other node with its Status values; the same scores `act` gives that pod, and no
change to what `act` decides afterwards."""

from __future__ import annotations

import dataclasses

import pytest

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.status import Code
from dagpilot.core.view import PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import filters
from tests.sim.helpers import job, task
from tests.state.sim_views import sim_env
from tests.test_agent import agent, filtered_cluster
from tests.test_agent_pcie import SPLIT, SPLIT_TOO, WHOLE, gpu_view
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too


def lone_pod(cpu: float) -> tuple[ClusterSnapshot, PodRef]:
    one = job("j", task("t", 30.0, cpu=cpu))
    pod = PodRef(0, one, one.tasks[0], 0, 0.0)
    return ClusterSnapshot.of(filtered_cluster(), (pod,)), pod


def test_the_feasible_nodes_are_scored_and_the_others_carry_the_filters_statuses() -> None:
    view, pod = lone_pod(2.0)
    ranking = agent().rank(view, pod)
    assert ranking.pod is pod
    assert ranking.feasible == ("fit-a", "fit-b", "fit-c")
    assert sum(ranking.scores) == pytest.approx(1.0, abs=1e-6)
    assert all(0.0 < score <= 1.0 for score in ranking.scores)
    checks = Feasibility(filters())
    assert ranking.rejected == tuple((n.spec.name, checks.statuses(pod.task, n))
                                     for n in view.nodes if n.spec.name not in ranking.feasible)
    assert [name for name, _ in ranking.rejected] == ["cordoned", "tiny", "tainted"]
    assert ranking.score("tiny") is None and ranking.score("fit-b") == ranking.scores[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ranking.scores = ()  # type: ignore[misc]


def test_the_scores_are_what_act_gives_the_pod() -> None:
    view, pod = lone_pod(2.0)
    placement = agent(4).act(view, greedy=True).placement
    ranking = agent(4).rank(view, pod)
    assert placement is not None
    assert ranking.score(placement.node) == pytest.approx(placement.score, rel=1e-5)
    for name, score in placement.alternatives:
        assert ranking.score(name) == pytest.approx(score, rel=1e-5)


def test_a_pod_that_fits_nowhere_gets_every_node_rejected_without_the_network() -> None:
    view, pod = lone_pod(64.0)
    ranking_agent = agent()
    ranking = ranking_agent.rank(view, pod)
    assert ranking.feasible == () and ranking.scores == ()
    assert len(ranking.rejected) == len(view.nodes)
    assert all(statuses and all(s.code is not Code.SUCCESS for s in statuses)
               for _, statuses in ranking.rejected)
    memory = ranking_agent.model.node_memory
    assert memory is not None and memory.full_passes == 0  # the network never ran


def test_a_node_only_the_root_complex_rule_rejects_says_so() -> None:
    view = gpu_view({"split": SPLIT, "whole": WHOLE, "split-too": SPLIT_TOO}, (4, "A100"))
    ranking = agent().rank(view, view.pending[0])
    assert ranking.feasible == ("whole",) and ranking.scores == (pytest.approx(1.0),)
    assert {name: [s.plugin for s in statuses] for name, statuses in ranking.rejected} == {
        "split": ["PcieRootComplex"], "split-too": ["PcieRootComplex"]}


def test_ranking_between_decisions_changes_no_decision() -> None:
    env_a, view_a = sim_env("builtin:mix:6", "builtin:default")
    env_b, view_b = sim_env("builtin:mix:6", "builtin:default")
    ranking, plain = agent(5), agent(5)
    for _ in range(25):
        for pod in list(view_a.pending)[:3]:
            ranking.rank(view_a, pod)
        mine, theirs = ranking.act(view_a, greedy=True), plain.act(view_b, greedy=True)
        assert mine.placement == theirs.placement
        assert (mine.action, mine.log_prob, mine.value) == (theirs.action, theirs.log_prob,
                                                            theirs.value)
        view_a, _, done, _ = env_a.step(mine.placement)
        view_b, _, _, _ = env_b.step(theirs.placement)
        if done:
            break
