"""The network's node memory: node embeddings and keys brought up to date row by row give
the logits a full computation gives, bit for bit (ties between identical nodes break alike),
forget the weights they were made with, and never serve a path that needs gradients."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dagpilot.policy import PolicyConfig, PolicyInput, PolicyNet, collate
from dagpilot.policy.row_memory import FULL_ROWS, MIN_BLOCK, RowMemory
from tests.policy.builders import policy_input

CONFIG = PolicyConfig(d_model=32, heads=4, layers=2, feedforward=64, pair_rank=16)
NODES = FULL_ROWS + 64  # above it: the memory's own path


def memory_of(net: PolicyNet) -> RowMemory:
    memory = net.node_memory
    assert memory is not None
    return memory


def logits(net: PolicyNet, item: PolicyInput) -> torch.Tensor:
    with torch.inference_mode():
        return net.logits(collate([item]))


def computed(net: PolicyNet, item: PolicyInput) -> torch.Tensor:
    """The logits with every node embedded afresh."""
    memory, net.node_memory = net.node_memory, None
    try:
        return logits(net, item)
    finally:
        net.node_memory = memory


def with_nodes(item: PolicyInput, nodes: np.ndarray) -> PolicyInput:
    return dataclasses.replace(
        item, observation=dataclasses.replace(item.observation, node_features=nodes))


def test_rows_brought_up_to_date_give_the_full_computations_logits_bit_for_bit() -> None:
    net = PolicyNet.create(CONFIG, seed=1)
    item = policy_input(4, NODES, jobs=2, seed=2)
    rng = np.random.default_rng(3)
    nodes = item.observation.node_features.copy()
    nodes[40:60] = nodes[40]  # identical nodes: exact ties the greedy choice breaks by index
    for step in range(12):
        if step:  # a few nodes change, as one placement changes its node; some go back
            changed = rng.choice(NODES, size=int(rng.integers(1, 4)), replace=False)
            nodes = nodes.copy()
            nodes[changed] = nodes[rng.integers(0, NODES, size=len(changed))]
        current = with_nodes(item, nodes)
        assert torch.equal(logits(net, current), computed(net, current)), step
    memory = memory_of(net)
    assert memory.full_passes == 1 and memory.partial_passes >= 9


def test_many_changed_rows_or_another_shape_take_a_full_pass() -> None:
    net = PolicyNet.create(CONFIG, seed=4)
    item = policy_input(3, NODES, seed=5)
    logits(net, item)
    shifted = with_nodes(item, item.observation.node_features + 1.0)  # every row (the clock)
    assert torch.equal(logits(net, shifted), computed(net, shifted))
    fewer = policy_input(3, NODES - 1, seed=6)
    assert torch.equal(logits(net, fewer), computed(net, fewer))
    assert memory_of(net).full_passes == 3


def test_a_row_becoming_nan_and_back_is_recomputed_each_time() -> None:
    net = PolicyNet.create(CONFIG, seed=7)
    item = policy_input(2, NODES, seed=8)
    logits(net, item)
    nodes = item.observation.node_features.copy()
    nodes[70, 3] = np.nan
    broken = with_nodes(item, nodes)
    assert torch.equal(torch.isnan(logits(net, broken)), torch.isnan(computed(net, broken)))
    assert torch.equal(logits(net, item), computed(net, item))


def test_changed_weights_forget_the_rows() -> None:
    net = PolicyNet.create(CONFIG, seed=9)
    item = policy_input(3, NODES, seed=10)
    logits(net, item)
    net.load_state_dict(PolicyNet.create(CONFIG, seed=11).state_dict())  # in place
    assert torch.equal(logits(net, item), computed(net, item))
    optimiser = torch.optim.SGD(net.parameters(), lr=0.5)
    net.evaluate([item], [int(np.flatnonzero(item.feasible.ravel())[0])]).log_probs.sum().backward()
    optimiser.step()
    assert torch.equal(logits(net, item), computed(net, item))


def test_gradients_and_batches_never_use_the_memory() -> None:
    net = PolicyNet.create(CONFIG, seed=12)
    item = policy_input(3, NODES, seed=13)
    logits(net, item)
    memory = memory_of(net)
    counts = (memory.full_passes, memory.partial_passes)
    net.evaluate([item], [int(np.flatnonzero(item.feasible.ravel())[0])]).log_probs.sum().backward()
    assert net.nodes.embed[0].weight.grad is not None
    with torch.no_grad():
        net(collate([item, policy_input(2, NODES, seed=14)]))  # two decisions at once
    assert (memory.full_passes, memory.partial_passes) == counts


def test_no_grad_and_inference_mode_may_take_turns() -> None:
    """The remembered outputs are inference tensors, updated in place under no_grad too."""
    net = PolicyNet.create(CONFIG, seed=15)
    item = policy_input(3, NODES, seed=16)
    logits(net, item)
    nodes = item.observation.node_features.copy()
    nodes[5] += 1.0
    with torch.no_grad():
        plain = net.logits(collate([with_nodes(item, nodes)]))
    assert torch.equal(plain, computed(net, with_nodes(item, nodes)))
    assert memory_of(net).partial_passes == 1


def test_the_memory_adds_no_state_dict_keys() -> None:
    net = PolicyNet.create(CONFIG, seed=17)
    logits(net, policy_input(2, NODES, seed=18))
    assert set(net.state_dict()) == {name for name, _ in net.named_parameters()}


@pytest.mark.parametrize("rows", [1, 2, 3, MIN_BLOCK])
def test_a_block_of_rows_comes_out_as_in_the_full_pass(rows: int) -> None:
    """What the memory relies on: a row computed in a block of MIN_BLOCK rows or more equals
    the full pass's row (for one to three rows alone the BLAS may round otherwise)."""
    net = PolicyNet.create(CONFIG, seed=19)
    nodes = torch.from_numpy(policy_input(1, 500, seed=20).observation.node_features)
    with torch.inference_mode():
        full = net.nodes(nodes)
        index = torch.arange(100, 100 + max(rows, MIN_BLOCK))
        assert torch.equal(net.nodes(nodes[index]), full[index])
