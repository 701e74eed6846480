"""The Decider: the model's placement when it answers in time; the kube-default fallback's when
there is no model, the policy raises, or the deadline passes (and while that late call still
runs); unschedulable when nothing fits."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from dagpilot.agent import Decision
from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.serve.deadline import DeadlineRunner
from dagpilot.serve.decisions import FALLBACK, MODEL, UNSCHEDULABLE, Decider
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.model_reload import Policy, Serving, greedy_policy
from tests.sim.helpers import job, task
from tests.test_agent import agent, filtered_cluster
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]

FEASIBLE = {"fit-a", "fit-b", "fit-c"}


class Source:
    def __init__(self, policy: Policy | None) -> None:
        self.serving = Serving(policy, "test-1") if policy is not None else None

    def current(self) -> Serving | None:
        return self.serving


def view(cpu: float) -> ClusterView:
    one = job("j", task("t", 30.0, cpu=cpu))
    return ClusterSnapshot.of(filtered_cluster(), (PodRef(0, one, one.tasks[0], 0, 0.0),))


@pytest.fixture
def runner() -> Iterator[DeadlineRunner]:
    made = DeadlineRunner(0.05)
    yield made
    made.close()


def test_the_model_decides_when_it_answers_in_time(runner: DeadlineRunner) -> None:
    choice = Decider(Source(greedy_policy(agent())), runner, Fallback()).decide(view(2.0))
    assert choice.outcome == MODEL and choice.version == "test-1" and choice.reason is None
    assert choice.placement is not None and choice.placement.node in FEASIBLE
    assert choice.decision is not None and choice.decision.policy_input is not None


def raises(_: ClusterView) -> Decision:
    raise RuntimeError("a defect")


@pytest.mark.parametrize(("policy", "reason"), [(None, "no model loaded"),
                                                (raises, "policy raised RuntimeError")])
def test_the_fallback_decides_without_a_model_or_when_the_policy_raises(
        runner: DeadlineRunner, policy: Policy | None, reason: str) -> None:
    choice = Decider(Source(policy), runner, Fallback()).decide(view(2.0))
    assert choice.outcome == FALLBACK and choice.reason == reason and choice.version is None
    assert choice.placement is not None and choice.placement.node in FEASIBLE


def test_a_late_decision_goes_to_the_fallback_and_so_do_those_while_it_runs(
        runner: DeadlineRunner) -> None:
    release = threading.Event()

    def stalls(snapshot: ClusterView) -> Decision:
        release.wait(30)
        return Decision(None)
    decider = Decider(Source(stalls), runner, Fallback())
    late = decider.decide(view(2.0))
    meanwhile = decider.decide(view(2.0))
    release.set()
    assert late.outcome == FALLBACK and late.reason == "no decision within 50 ms"
    assert meanwhile.outcome == FALLBACK and meanwhile.reason is not None
    assert "still running" in meanwhile.reason
    assert late.placement is not None and late.placement.node in FEASIBLE


def test_nothing_fits_is_unschedulable_for_the_model_and_the_fallback(
        runner: DeadlineRunner) -> None:
    for policy in (greedy_policy(agent()), None):
        choice = Decider(Source(policy), runner, Fallback()).decide(view(64.0))
        assert choice.outcome == UNSCHEDULABLE and choice.placement is None
