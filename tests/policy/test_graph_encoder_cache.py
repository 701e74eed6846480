"""The graph encoder's summary cache: the same outputs as computing every time, forgotten
when the graph or the weights change, and never on a path that needs gradients."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dagpilot.policy import PolicyConfig, PolicyInput, PolicyNet, collate, greedy
from dagpilot.policy.graph_cache import GraphSummaryCache, _keys, _used_slots
from tests.policy.builders import policy_input

CONFIG = PolicyConfig(d_model=32, heads=4, layers=2, feedforward=64, pair_rank=16)
TOLERANCE = 1e-5


def fresh_net(seed: int = 3) -> PolicyNet:
    return PolicyNet.create(CONFIG, seed=seed)


def outputs(net: PolicyNet, inputs: list[PolicyInput]) -> tuple[torch.Tensor, torch.Tensor]:
    with torch.inference_mode():
        output = net(collate(inputs))
    return output.logits, output.values


def uncached(net: PolicyNet, inputs: list[PolicyInput]) -> tuple[torch.Tensor, torch.Tensor]:
    cache, net.graphs.summary_cache = net.graphs.summary_cache, None
    try:
        return outputs(net, inputs)
    finally:
        net.graphs.summary_cache = cache


def assert_close(a: torch.Tensor, b: torch.Tensor) -> None:
    finite = torch.isfinite(b)
    assert torch.equal(torch.isfinite(a), finite)
    assert torch.allclose(a[finite], b[finite], atol=TOLERANCE, rtol=0.0)


def cache_of(net: PolicyNet) -> GraphSummaryCache:
    cache = net.graphs.summary_cache
    assert cache is not None
    return cache


@pytest.mark.parametrize("batch", [1, 3])
def test_cached_outputs_equal_computed_ones_and_pick_the_same_action(batch: int) -> None:
    net = fresh_net()
    inputs = [policy_input(6, 9, jobs=2, slots=12, seed=seed) for seed in range(batch)]
    reference = uncached(net, inputs)
    first = outputs(net, inputs)  # fills the cache
    second = outputs(net, inputs)  # reads it
    cache = cache_of(net)
    assert cache.misses == 6 * batch and cache.hits == 6 * batch
    for logits, values in (first, second):
        assert_close(logits, reference[0])
        assert_close(values, reference[1])
        assert torch.equal(greedy(logits), greedy(reference[0]))


def test_a_candidate_in_another_batch_reads_its_summary_from_the_cache() -> None:
    """A summary depends on the candidate's own slots only, not on the batch's padding."""
    net = fresh_net()
    small, large = policy_input(2, 5, slots=3, seed=1), policy_input(5, 5, slots=16, seed=2)
    outputs(net, [small])
    hits = cache_of(net).hits
    together = outputs(net, [large, small])
    assert cache_of(net).hits == hits + 2  # both of `small`'s candidates
    reference = uncached(net, [large, small])
    assert_close(together[0], reference[0])
    assert_close(together[1], reference[1])


def test_a_changed_graph_is_summarised_again() -> None:
    net = fresh_net()
    item = policy_input(4, 6, slots=8, seed=4)
    outputs(net, [item])
    misses = cache_of(net).misses
    graph = item.observation.graph_features.copy()
    graph[2, 0, 0] += 1.0  # candidate 2's own slot: a task changed state, say
    changed = PolicyInput(dataclasses.replace(item.observation, graph_features=graph),
                          item.feasible)
    logits, values = outputs(net, [changed])
    assert cache_of(net).misses == misses + 1
    reference = uncached(net, [changed])
    assert_close(logits, reference[0])
    assert_close(values, reference[1])
    assert not torch.allclose(logits.view(4, 6)[2], outputs(net, [item])[0].view(4, 6)[2])


def test_changed_weights_forget_every_summary() -> None:
    net = fresh_net()
    item = policy_input(4, 6, seed=5)
    outputs(net, [item])
    other = fresh_net(seed=11)
    net.load_state_dict(other.state_dict())  # copies in place, as a checkpoint reload does
    logits, values = outputs(net, [item])
    reference = uncached(other, [item])
    assert_close(logits, reference[0])
    assert_close(values, reference[1])
    # an optimiser step moves the weights in place too
    optimiser = torch.optim.SGD(net.parameters(), lr=0.5)
    net.evaluate([item], [int(np.flatnonzero(item.feasible.ravel())[0])]).log_probs.sum().backward()
    optimiser.step()
    logits, _ = outputs(net, [item])
    assert_close(logits, uncached(net, [item])[0])
    assert not torch.allclose(logits[torch.isfinite(logits)],
                              reference[0][torch.isfinite(reference[0])])


def test_evaluate_and_gradients_never_use_the_cache() -> None:
    net = fresh_net()
    item = policy_input(5, 7, jobs=2, seed=6)
    outputs(net, [item])
    cache = cache_of(net)
    counts = (cache.hits, cache.misses, len(cache))
    action = int(np.flatnonzero(item.feasible.ravel())[0])
    evaluation = net.evaluate([item], [action])
    evaluation.log_probs.sum().backward()
    assert (cache.hits, cache.misses, len(cache)) == counts
    grads = [p.grad for p in net.graphs.transformer.parameters()]
    assert net.graphs.tokens.weight.grad is not None
    assert any(g is not None and bool(g.abs().sum() > 0) for g in grads)
    with torch.no_grad():  # no gradient wanted: the cache serves
        net(collate([item]))
    assert cache.hits == counts[0] + 5


def test_identical_graphs_are_summarised_once_and_the_cache_stays_bounded() -> None:
    net = fresh_net()
    net.graphs.summary_cache = GraphSummaryCache(capacity=3)
    item = policy_input(6, 4, slots=5, seed=7)
    o = item.observation
    same = np.zeros(6, dtype=np.int64)  # every candidate shows candidate 0's graph
    twins = PolicyInput(dataclasses.replace(
        o, graph_features=o.graph_features[same], graph_positions=o.graph_positions[same],
        graph_valid=o.graph_valid[same], graph_status=o.graph_status[same]), item.feasible)
    outputs(net, [twins])
    cache = cache_of(net)
    assert (cache.misses, len(cache)) == (6, 1)  # six rows asked, one summary computed
    outputs(net, [item])
    assert len(cache) == 3  # the least recently used went
    assert_close(outputs(net, [item])[0], uncached(net, [item])[0])


def test_the_cache_adds_no_state_dict_keys() -> None:
    net = fresh_net()
    outputs(net, [policy_input(3, 4, seed=8)])
    assert set(net.state_dict()) == {name for name, _ in net.named_parameters()}
    again = PolicyNet.from_state(CONFIG, net.state_dict())  # strict: nothing more, nothing less
    assert_close(outputs(again, [policy_input(3, 4, seed=8)])[0],
                 uncached(net, [policy_input(3, 4, seed=8)])[0])


def test_keys_tell_rows_apart_by_features_positions_mask_and_used_slots_only() -> None:
    """Two rows share a key exactly when their graph features, positions and masks agree up
    to their used slots (whatever lies past them)."""
    rng = np.random.default_rng(0)
    graph = torch.from_numpy(rng.normal(size=(1, 6, 3)).astype(np.float32)).repeat(6, 1, 1)
    positions = torch.from_numpy(rng.normal(size=(1, 6, 2)).astype(np.float32)).repeat(6, 1, 1)
    valid = torch.tensor([[True, True, True, False, False, False]]).repeat(6, 1)
    graph[1, 4] += 1.0  # past the used slots: the same key as row 0
    graph[2, 1, 2] += 1.0  # a feature
    positions[3, 2, 0] += 1.0  # a position
    valid[4, 2] = False  # a mask bit (the used slots stay 3)
    valid[5, 3] = True  # one more used slot
    keys = _keys(graph, positions, valid, _used_slots(valid))
    assert keys[0] == keys[1]
    assert len(set(keys)) == 5
