"""The network: shapes, masking, padding that changes nothing, and the encoders' symmetries."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dagpilot.policy import PolicyConfig, PolicyNet, collate, padded_index
from tests.policy.builders import policy_input

CONFIG = PolicyConfig(d_model=32, heads=4, layers=2, feedforward=64, pair_rank=16)


@pytest.fixture(scope="module")
def net() -> PolicyNet:
    return PolicyNet.create(CONFIG, seed=3).eval()


def test_one_logit_per_pair_and_minus_infinity_exactly_where_infeasible(net: PolicyNet) -> None:
    item = policy_input(5, 7, jobs=2)
    with torch.no_grad():
        output = net(collate([item]))
    assert output.logits.shape == (1, 5 * 7)
    assert output.values.shape == (1,)
    logits = output.logits.view(5, 7).numpy()
    assert np.array_equal(np.isneginf(logits), ~item.feasible)
    assert np.isfinite(logits[item.feasible]).all()


def test_the_same_seed_gives_the_same_weights_and_another_seed_others() -> None:
    first, again, other = (PolicyNet.create(CONFIG, seed) for seed in (1, 1, 2))
    for name, tensor in first.state_dict().items():
        assert torch.equal(tensor, again.state_dict()[name]), name
    assert any(not torch.equal(t, other.state_dict()[n]) for n, t in first.state_dict().items())


def test_a_padded_batch_evaluates_each_input_as_alone(net: PolicyNet) -> None:
    inputs = [policy_input(3, 4, seed=1), policy_input(6, 9, jobs=3, seed=2),
              policy_input(1, 2, seed=3, slots=3)]
    actions = [int(np.flatnonzero(item.feasible.ravel())[-1]) for item in inputs]
    with torch.no_grad():
        together = net.evaluate(inputs, actions)
        alone = [net.evaluate([item], [action]) for item, action in zip(inputs, actions,
                                                                         strict=True)]
    for field in ("log_probs", "values", "entropy"):
        assert torch.allclose(getattr(together, field),
                              torch.cat([getattr(a, field) for a in alone]), atol=1e-5), field


def test_log_probs_of_every_feasible_pair_sum_to_one(net: PolicyNet) -> None:
    item = policy_input(4, 5, jobs=2, seed=4)
    actions = np.flatnonzero(item.feasible.ravel()).tolist()
    with torch.no_grad():
        evaluation = net.evaluate([item] * len(actions), actions)
    assert float(evaluation.log_probs.exp().sum()) == pytest.approx(1.0, abs=1e-5)
    entropy = -(evaluation.log_probs.exp() * evaluation.log_probs).sum()
    assert float(evaluation.entropy[0]) == pytest.approx(float(entropy), abs=1e-5)


def test_scores_follow_a_permutation_of_the_candidates(net: PolicyNet) -> None:
    """Candidate order carries no meaning: permuting them permutes the scores."""
    item = policy_input(4, 6, jobs=4, seed=5)
    order = np.array([2, 0, 3, 1])
    o = item.observation
    permuted = dataclasses.replace(
        o, task_features=o.task_features[order], pair_job=o.pair_job[order],
        graph_features=o.graph_features[order], graph_positions=o.graph_positions[order],
        graph_valid=o.graph_valid[order], graph_status=o.graph_status[order])
    with torch.no_grad():
        before = net(collate([item]))
        after = net(collate([type(item)(permuted, item.feasible[order])]))
    assert torch.allclose(after.logits.view(4, 6), before.logits.view(4, 6)[order], atol=1e-5)
    assert torch.allclose(after.values, before.values, atol=1e-5)


def test_the_topology_positions_reach_the_scores(net: PolicyNet) -> None:
    """The positional encoding is the DAG place (depth, parents, children, b-level): moving
    a task in the DAG, with nothing else changed, changes the candidate's scores."""
    item = policy_input(2, 3, seed=6)
    moved = dataclasses.replace(item.observation,
                                graph_positions=item.observation.graph_positions + 1.0)
    with torch.no_grad():
        before = net(collate([item])).logits
        after = net(collate([type(item)(moved, item.feasible)])).logits
    finite = torch.isfinite(before)
    assert not torch.allclose(before[finite], after[finite])


def test_padding_slots_of_a_job_graph_are_ignored(net: PolicyNet) -> None:
    item = policy_input(3, 4, seed=7, slots=6)
    noisy = item.observation.graph_features.copy()
    noisy[~item.observation.graph_valid] = 99.0
    changed = dataclasses.replace(item.observation, graph_features=noisy)
    with torch.no_grad():
        before = net(collate([item])).logits
        after = net(collate([type(item)(changed, item.feasible)])).logits
    assert torch.equal(torch.isfinite(before), torch.isfinite(after))
    assert torch.allclose(before[torch.isfinite(before)], after[torch.isfinite(after)],
                          atol=1e-5)


def test_five_thousand_nodes_fit_in_one_decision(net: PolicyNet) -> None:
    """The pair scores are C x N numbers and nothing of C x N x d is kept: 16 candidates
    on 5,000 nodes is one ordinary forward pass."""
    item = policy_input(16, 5000, jobs=4, seed=8, feasible_share=0.5)
    with torch.no_grad():
        output = net(collate([item]))
    assert output.logits.shape == (1, 16 * 5000)
    assert torch.isfinite(output.values).all()


def test_padded_index_moves_an_action_into_the_wider_grid() -> None:
    assert padded_index(7, (3, 4), (5, 6)) == 1 * 6 + 3
    assert padded_index(0, (1, 1), (2, 2)) == 0


def test_a_batch_needs_a_feasible_pair_in_every_row(net: PolicyNet) -> None:
    item = policy_input(2, 3)
    empty = type(item)(item.observation, np.zeros_like(item.feasible))
    with pytest.raises(ValueError, match="feasible"):
        net(collate([empty]))


def test_stored_weights_rebuild_the_same_network(net: PolicyNet) -> None:
    rebuilt = PolicyNet.from_state(CONFIG, net.state_dict())
    batch = collate([policy_input(3, 5, seed=9)])
    with torch.no_grad():
        assert torch.equal(rebuilt(batch).logits, net(batch).logits)
    with pytest.raises(RuntimeError):
        PolicyNet.from_state(dataclasses.replace(CONFIG, d_model=64), net.state_dict())
