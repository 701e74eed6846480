"""The policy input's optional logit bias (the PCIe fallback penalty): added to the feasible
pairs' logits, padded with 0, part of what `evaluate` reads, and absent from inputs stored
before it existed."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
import torch

from dagpilot.policy import PolicyConfig, PolicyInput, PolicyNet, collate
from dagpilot.policy.distribution import masked_logits
from tests.policy.builders import policy_input

CONFIG = PolicyConfig(d_model=32, heads=4, layers=1, feedforward=64, pair_rank=16)


def biased(item: PolicyInput, seed: int) -> PolicyInput:
    """`item` with a bias of -1.6 on a random half of its rows."""
    rows = np.random.default_rng(seed).random(item.shape[0]) < 0.5
    bias = np.where(rows[:, None] & item.feasible, np.float32(-1.6), np.float32(0.0))
    return dataclasses.replace(item, bias=bias.astype(np.float32))


def test_masked_logits_add_the_bias_where_feasible_and_stay_minus_infinity_elsewhere() -> None:
    scores = torch.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    feasible = torch.tensor([[[True, False], [True, True]]])
    bias = torch.tensor([[[-1.5, -1.5], [0.0, -0.5]]])
    logits = masked_logits(scores, feasible, bias)
    assert logits.tolist() == [[-0.5, float("-inf"), 3.0, 3.5]]
    assert masked_logits(scores, feasible).tolist() == [[1.0, float("-inf"), 3.0, 4.0]]


def test_collate_pads_the_bias_with_zero_and_leaves_it_out_when_no_input_has_one() -> None:
    plain, other = policy_input(2, 3, seed=1), policy_input(3, 4, seed=2)
    assert collate([plain, other]).bias is None
    with_bias = biased(other, seed=0)
    assert with_bias.bias is not None
    batch = collate([plain, with_bias])
    assert batch.bias is not None and tuple(batch.bias.shape) == (2, 3, 4)
    assert not batch.bias[0].any()  # no bias, and padding: 0
    assert np.array_equal(batch.bias[1].numpy(), with_bias.bias)


def test_a_bias_of_the_wrong_shape_is_refused() -> None:
    item = policy_input(2, 3)
    with pytest.raises(ValueError, match="logit bias"):
        dataclasses.replace(item, bias=np.zeros((3, 2), dtype=np.float32))


def test_evaluation_reads_the_bias_and_a_mixed_batch_equals_each_input_alone() -> None:
    net = PolicyNet.create(CONFIG, seed=0).eval()
    inputs = [biased(policy_input(3, 4, seed=1), 1), policy_input(5, 6, jobs=2, seed=2),
              biased(policy_input(2, 7, seed=3), 3)]
    actions = [int(np.flatnonzero(item.feasible.ravel())[0]) for item in inputs]
    with torch.no_grad():
        together = net.evaluate(inputs, actions)
        alone = torch.cat([net.evaluate([item], [action]).log_probs
                           for item, action in zip(inputs, actions, strict=True)])
        unbiased = net.evaluate([dataclasses.replace(item, bias=None) for item in inputs],
                                actions)
    assert torch.allclose(together.log_probs, alone, atol=1e-5)
    assert not torch.allclose(together.log_probs[0], unbiased.log_probs[0], atol=1e-3)
    assert torch.equal(together.values, unbiased.values)  # the critic does not read it


def test_stripped_and_pickled_inputs_keep_their_bias() -> None:
    item = biased(policy_input(3, 4, seed=5), 5)
    for copy in (item.stripped(), pickle.loads(pickle.dumps(item.stripped()))):
        assert copy.bias is not None and item.bias is not None
        assert np.array_equal(copy.bias, item.bias)


def test_an_input_stored_before_the_bias_existed_loads_without_one() -> None:
    """Unpickling restores the instance dict; one saved without `bias` falls back to the class
    default, None."""
    item = policy_input(3, 4, seed=6)
    state = dict(vars(item))
    del state["bias"]
    old = PolicyInput.__new__(PolicyInput)
    old.__dict__.update(state)
    assert old.bias is None
    assert collate([old]).bias is None
