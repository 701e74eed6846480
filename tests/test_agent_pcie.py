"""The agent and the PCIe root-complex rule: a multi-GPU pod never spans complexes when some node
holds it on one; when none does it is still placed, with the fallback penalty in the logits,
and the stored policy input gives PPO the very log-probability the agent acted on. The agent
names a node only: the kubelet picks the GPUs there (`sim.kubelet`), as for every scheduler."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dagpilot.core.scheduler import Placement
from dagpilot.core.snapshot import ClusterSnapshot, NodeSnapshot
from dagpilot.core.types import Cluster, Resources
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import filters
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.pcie import PENALTY, PcieRootComplex
from dagpilot.policy import PolicyInput, collate, log_probs
from dagpilot.sim import SimEnv
from dagpilot.sim.kubelet import preferred_gpus
from tests.sim.helpers import gpus, job, node, settings, task
from tests.test_agent import agent
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]  # autouse: torch on one thread here too

SPLIT = (0, 1, 4, 5, 6)  # rc0=2, rc1=3 free
WHOLE = (4, 5, 6, 7)  # rc1=4 free
SPLIT_TOO = (0, 1, 2, 4, 5, 6)  # rc0=3, rc1=3 free


def gpu_view(frees: dict[str, tuple[int, ...]], *pods: tuple[int, str | None]) -> ClusterSnapshot:
    """Nodes of 2 complexes x 4 A100s with the given free GPUs, and one pending pod per
    (GPUs, model) in `pods`."""
    specs = tuple(node(name, 32.0, gpus=gpus("A100", (4, 4))) for name in frees)
    states = tuple(NodeSnapshot(spec, Resources(0, 0, 8 - len(free), "A100"), free)
                   for spec, free in zip(specs, frees.values(), strict=True))
    tasks = [task(f"t{i}", 10.0, gpus=count, gpu_model=model)
             for i, (count, model) in enumerate(pods)]
    one = job("j", *tasks)
    pending = tuple(PodRef(i, one, one.task(t.id), 0, 0.0) for i, t in enumerate(tasks))
    return ClusterSnapshot(0.0, Cluster("gpus", specs), states, pending)


def on_one_complex(view: ClusterView, name: str, chosen: tuple[int, ...]) -> bool:
    spec = next(n for n in view.cluster.nodes if n.name == name)
    return len({spec.gpus[i].root_complex for i in chosen}) == 1


def kubelet_pick(view: ClusterView, placement: Placement) -> tuple[int, ...]:
    """The GPUs the simulator's kubelet gives the placement on its node."""
    state = next(n for n in view.nodes if n.spec.name == placement.node)
    requests = placement.pod.requests
    return preferred_gpus(state.spec, state.free_gpus, requests.gpus, requests.gpu_model)


def test_a_four_gpu_pod_never_goes_where_it_would_span_complexes() -> None:
    view = gpu_view({"split": SPLIT, "whole": WHOLE, "split-too": SPLIT_TOO}, (4, "A100"))
    for seed in range(8):
        decision = agent(seed).act(view, greedy=False,
                                   generator=torch.Generator().manual_seed(seed))
        placement = decision.placement
        assert placement is not None and decision.policy_input is not None
        assert placement.node == "whole" and placement.gpus == ()  # the kubelet's to pick
        assert kubelet_pick(view, placement) == (4, 5, 6, 7)
        assert decision.policy_input.feasible.tolist() == [[False, True, False]]
        assert decision.policy_input.bias is None  # a node fits: nothing penalised
    reasons = dict(placement.rejected)
    assert reasons == {
        "split": "PcieRootComplex: no PCIe root complex with 4 free GPU(s) of model A100 "
                 "(free per complex: rc0=2, rc1=3)",
        "split-too": "PcieRootComplex: no PCIe root complex with 4 free GPU(s) of model A100 "
                     "(free per complex: rc0=3, rc1=3)"}


def test_when_no_node_fits_on_one_complex_the_pod_is_placed_with_the_penalty() -> None:
    view = gpu_view({"split": SPLIT, "split-too": SPLIT_TOO}, (4, "A100"))
    decision = agent().act(view, greedy=True)
    assert decision.placement is not None and decision.policy_input is not None
    assert decision.placement.rejected == ()  # both stay feasible
    assert decision.policy_input.feasible.tolist() == [[True, True]]
    assert decision.policy_input.bias is not None
    assert decision.policy_input.bias.tolist() == [[pytest.approx(PENALTY)] * 2]


def test_the_penalty_moves_probability_from_a_split_pod_to_other_candidates() -> None:
    """With q the unpenalised probability of placing the 4-GPU pod somewhere, the penalty makes
    it q / 5 / (q / 5 + 1 - q): the pod's row is scaled by 1/5 before renormalising."""
    view = gpu_view({"split": SPLIT, "split-too": SPLIT_TOO}, (4, "A100"), (0, None))
    decision = agent(3).act(view, greedy=True)
    stored = decision.policy_input
    assert stored is not None and stored.bias is not None
    row = [pod.task.requests.gpus for pod in stored.observation.candidates].index(4)
    assert np.flatnonzero(stored.bias.any(axis=1)).tolist() == [row]  # the CPU pod: untouched
    model = agent(3).model

    def p_row(item: PolicyInput) -> float:
        with torch.no_grad():
            probabilities = log_probs(model(collate([item])).logits)[0].exp()
        return float(probabilities.view(item.shape)[row].sum())

    q = p_row(dataclasses.replace(stored, bias=None))
    assert 0.01 < q < 0.99  # both pods stand a chance: the test can see the shift
    assert p_row(stored) == pytest.approx(q / 5 / (q / 5 + 1 - q), rel=1e-4)


@pytest.mark.parametrize("frees", [
    {"split": SPLIT, "whole": WHOLE},  # the rule narrows the mask
    {"split": SPLIT, "split-too": SPLIT_TOO},  # the rule adds the penalty
])
def test_the_stored_input_reproduces_the_acting_log_prob_in_evaluation(
        frees: dict[str, tuple[int, ...]]) -> None:
    view = gpu_view(frees, (4, "A100"), (0, None), (2, "A100"))
    sampler = agent(5)
    for seed in range(6):
        decision = sampler.act(view, greedy=False, generator=torch.Generator().manual_seed(seed))
        assert decision.policy_input is not None
        stored = decision.policy_input.stripped()  # as the rollout keeps and ships it
        with torch.no_grad():
            evaluation = sampler.model.evaluate([stored], [decision.action])
        assert float(evaluation.log_probs[0]) == pytest.approx(decision.log_prob, abs=1e-5)


def test_single_gpu_and_cpu_pods_see_the_filters_mask_unchanged() -> None:
    view = gpu_view({"split": SPLIT, "empty": ()}, (1, "A100"), (0, None))
    observed = agent().observe(view)
    assert observed is not None and observed.bias is None
    checks = Feasibility(filters())
    nodes = NodeArrays.from_view(view)
    expected = [checks.mask(pod.task, nodes).tolist() for pod in observed.candidates.pods]
    assert observed.candidates.feasible.tolist() == expected


def test_no_sampled_multi_gpu_placement_spans_complexes_when_a_node_could_avoid_it() -> None:
    """Long 3-GPU pods, then 2-GPU pods, on four nodes of 2 x 4 GPUs: a node holding two
    3-GPU pods has one GPU free on each complex, so a 2-GPU pod fits there only split. Whenever
    another feasible node holds the pod on one complex, its GPUs must be on one complex."""
    where = Cluster("gpus", tuple(node(f"g{i}", 64.0, gpus=gpus("A100", (4, 4)))
                                  for i in range(4)))
    sizes = (3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2)
    jobs = [job(f"j{i}", task("t", 1000.0, gpus=size, gpu_model="A100"), arrival_s=float(i))
            for i, size in enumerate(sizes)]
    checks, rule = Feasibility(filters()), PcieRootComplex()
    contested = 0  # decisions with a node that fits on one complex and one that does not
    for seed in range(3):
        env = SimEnv(jobs, where, settings())
        view, done = env.reset(seed), False
        sampler, generator = agent(seed), torch.Generator().manual_seed(seed)
        while not done:
            placement = sampler.act(view, greedy=False, generator=generator).placement
            if placement is not None:
                pod = placement.pod.task
                fits = [rule.check(pod, state).ok for state in view.nodes
                        if not checks.statuses(pod, state)]
                if any(fits):
                    assert on_one_complex(view, placement.node, kubelet_pick(view, placement))
                    contested += not all(fits)
            view, _, done, _ = env.step(placement)
    assert contested >= 10  # the rule had split nodes to reject, often
