"""StepTable and `PolicyNet.evaluate_rows`: a minibatch gathered from the table, each distinct
graph and node row encoded once, gives what `evaluate` gives on the same inputs and actions
(log-probabilities, values, entropies and every parameter's gradient), up to float rounding."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dagpilot.policy import PolicyConfig, PolicyInput, PolicyNet, collate
from dagpilot.policy.distinct_graphs import DistinctGraphs
from dagpilot.policy.network import Evaluation
from dagpilot.policy.step_table import StepTable, _attention_groups
from tests.policy.builders import policy_input

CONFIG = PolicyConfig(d_model=16, heads=2, layers=2, feedforward=32, pair_rank=8)


def _with_bias(item: PolicyInput) -> PolicyInput:
    return dataclasses.replace(item, bias=np.where(item.feasible, -0.5, 0.0).astype(np.float32))


def _decisions() -> list[PolicyInput]:
    """Decisions of several sizes (candidates, nodes, jobs, graph slots), one with a logit
    bias, and repeats: repeated graphs and node rows are what the table encodes once."""
    varied = [policy_input(3, 5, seed=1), policy_input(1, 5, slots=1, seed=2),
              policy_input(6, 4, jobs=3, seed=3, slots=12), _with_bias(policy_input(2, 5, seed=4)),
              policy_input(4, 5, jobs=2, seed=5)]
    return [*varied, varied[0], varied[2], varied[0]]


def _actions(inputs: list[PolicyInput], seed: int = 0) -> list[int]:
    """A feasible flat (candidate, node) index for each input."""
    rng = np.random.default_rng(seed)
    return [int(rng.choice(np.flatnonzero(item.feasible.ravel()))) for item in inputs]


def _gradients(net: PolicyNet, evaluation: Evaluation) -> dict[str, torch.Tensor]:
    net.zero_grad()
    (evaluation.log_probs.sum() + evaluation.values.sum() + evaluation.entropy.sum()).backward()
    return {name: torch.zeros_like(p) if p.grad is None else p.grad.clone()
            for name, p in net.named_parameters()}


@pytest.mark.parametrize("rows", [[0, 1, 2, 3, 4, 5, 6, 7], [7, 2, 5], [3], [1, 0]])
def test_rows_of_the_table_evaluate_as_the_inputs_do(rows: list[int]) -> None:
    net = PolicyNet.create(CONFIG, seed=0)
    inputs, actions = _decisions(), _actions(_decisions())
    reference = net.evaluate([inputs[i] for i in rows], [actions[i] for i in rows])
    expected = _gradients(net, reference)
    table = StepTable.of(inputs, actions)
    evaluation = net.evaluate_rows(table, torch.tensor(rows))
    gradients = _gradients(net, evaluation)
    for field in ("log_probs", "values", "entropy"):
        torch.testing.assert_close(getattr(evaluation, field), getattr(reference, field),
                                   rtol=1e-5, atol=1e-6, msg=field)
    assert any(bool(g.abs().sum() > 0) for g in gradients.values())
    for name, gradient in gradients.items():
        torch.testing.assert_close(gradient, expected[name], rtol=1e-4, atol=1e-6, msg=name)


def test_a_minibatch_is_padded_as_collate_pads_it() -> None:
    inputs = _decisions()
    table = StepTable.of(inputs, _actions(inputs))
    for rows in ([0, 1], [2, 4], [1, 3]):
        batch, gathered = collate([inputs[i] for i in rows]), table.rows(torch.tensor(rows))
        assert torch.equal(gathered.tasks, batch.tasks)
        assert torch.equal(gathered.candidate_valid, batch.candidate_valid)
        assert torch.equal(gathered.node_valid, batch.node_valid)
        assert torch.equal(gathered.node_rows[gathered.node_of], batch.nodes)
        assert torch.equal(gathered.pairs, batch.pairs)
        assert torch.equal(gathered.pair_job, batch.pair_job)
        assert torch.equal(gathered.feasible, batch.feasible)


def test_actions_index_the_minibatch_grid() -> None:
    """An action is a flat index c x N + n into its own input's grid (2 x 4 here); in a
    minibatch with a 5-node input it moves into the padded grid, as `padded_index` moves it."""
    small, wide = policy_input(2, 4, seed=7), policy_input(6, 5, seed=8)
    table = StepTable.of([small, wide], [1 * 4 + 3, 5 * 5 + 2])
    assert table.rows(torch.tensor([0, 1])).actions.tolist() == [1 * 5 + 3, 5 * 5 + 2]
    assert table.rows(torch.tensor([0])).actions.tolist() == [1 * 4 + 3]


def test_identical_graphs_share_a_row_and_different_ones_do_not() -> None:
    item = policy_input(4, 3, seed=9)
    twin = dataclasses.replace(item.observation, graph_features=item.observation.graph_features
                               .copy())
    changed = item.observation.graph_features.copy()
    changed[0, 0, 0] += 1.0
    graphs = DistinctGraphs.of([item.observation, twin, dataclasses.replace(
        item.observation, graph_features=changed)])
    first, again, altered = graphs.of_candidate.view(3, 4).tolist()
    assert again == first
    assert altered[0] not in first and altered[1:] == first[1:]
    assert len(graphs.graph) == len(set(first)) + 1
    for row, candidate in zip(first, range(4), strict=True):
        assert torch.equal(graphs.graph[row], torch.from_numpy(
            item.observation.graph_features[candidate]))


def test_used_slots_run_to_the_last_valid_slot() -> None:
    valid = torch.tensor([[True, False, True, False], [True, False, False, False],
                          [False, False, False, False]])
    graphs = DistinctGraphs(torch.zeros(3, 4, 1), torch.zeros(3, 4, 1), valid,
                            torch.arange(3))
    assert graphs.used_slots().tolist() == [3, 1, 1]


def test_a_table_needs_an_action_per_input() -> None:
    with pytest.raises(ValueError, match="one action"):
        StepTable.of([policy_input(2, 3)], [])


@pytest.mark.parametrize(("widths", "groups"), [
    ([2, 3, 3, 4, 32, 32], (4, 2)),  # 4 x 4 + 2 x 32 padded slots instead of 6 x 32
    ([8, 8, 9, 10], ()),  # nearly even: one layout
    ([32], ()),
])
def test_narrow_graphs_are_attended_apart_when_that_pads_much_less(
        widths: list[int], groups: tuple[int, ...]) -> None:
    assert _attention_groups(widths) == groups
