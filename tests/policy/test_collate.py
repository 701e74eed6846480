"""collate: a single input (every decision's) takes a path without padding, which must give
exactly the batch that the padded path gives for it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from dagpilot.policy import Batch, PolicyInput, collate
from tests.policy.builders import policy_input

INPUTS = {
    "one candidate": policy_input(1, 3, slots=1),
    "several jobs": policy_input(5, 7, jobs=3, seed=1),
    "short graphs": policy_input(4, 6, seed=2, slots=12),
    "many nodes": policy_input(16, 500, jobs=4, seed=3),
}


def _with_bias(item: PolicyInput) -> PolicyInput:
    bias = np.where(item.feasible, -0.5, 0.0).astype(np.float32)
    return dataclasses.replace(item, bias=bias)


def _fields(batch: Batch) -> dict[str, torch.Tensor | None]:
    return {field.name: getattr(batch, field.name) for field in dataclasses.fields(batch)}


def _assert_first_row_is(single: Batch, padded: Batch) -> None:
    for name, tensor in _fields(single).items():
        other = getattr(padded, name)
        if tensor is None:
            assert other is None, name
            continue
        assert other is not None, name
        assert tensor.shape[0] == 1, name
        assert tensor.dtype == other.dtype, name
        assert torch.equal(tensor[0], other[0]), name


@pytest.mark.parametrize("name", sorted(INPUTS))
@pytest.mark.parametrize("biased", [False, True])
def test_one_input_gives_the_padded_paths_batch(name: str, biased: bool) -> None:
    """Two copies of one input need no padding, so the padded path's first row is what
    that input alone must give."""
    item = _with_bias(INPUTS[name]) if biased else INPUTS[name]
    _assert_first_row_is(collate([item]), collate([item, item]))


def test_one_input_gives_the_first_row_of_a_batch_with_a_smaller_one() -> None:
    item, smaller = policy_input(6, 9, jobs=2, seed=4), policy_input(2, 4, seed=5, slots=1)
    _assert_first_row_is(collate([item]), collate([item, smaller]))


def test_graph_slots_no_candidate_uses_are_dropped_alone_as_in_a_batch() -> None:
    item = policy_input(3, 4, seed=6, slots=10)
    valid = item.observation.graph_valid.copy()
    valid[:, 5:] = False  # slots 5..9 empty for every candidate
    o = item.observation
    trimmed = dataclasses.replace(item, observation=dataclasses.replace(
        o, graph_valid=valid, graph_features=o.graph_features * valid[..., None],
        graph_positions=o.graph_positions * valid[..., None]))
    batch = collate([trimmed])
    assert batch.graph.shape[2] <= 5
    _assert_first_row_is(batch, collate([trimmed, trimmed]))


def test_an_input_without_candidates_gets_one_row_of_zero_pair_features() -> None:
    item = policy_input(0, 5)
    empty = dataclasses.replace(item, observation=dataclasses.replace(
        item.observation, pair_features=np.zeros((0, 5, item.observation.pair_features.shape[2]),
                                                 dtype=np.float32)))
    single = collate([empty])
    assert single.pairs.shape == (1, 1, 5, empty.observation.pair_features.shape[2])
    assert not single.pairs.any()
    _assert_first_row_is(single, collate([empty, empty]))


def test_read_only_and_other_typed_arrays_are_converted_without_warnings() -> None:
    """Read-only arrays (the encoder hands some out) get copied rather than wrapped (torch
    warns about those); float64 features become float32 as in the padded path."""
    item = policy_input(3, 5, jobs=2, seed=7)
    o = item.observation
    nodes = o.node_features.astype(np.float64)
    for array in (nodes, o.task_features, o.graph_features, item.feasible):
        array.flags.writeable = False
    odd = dataclasses.replace(item, observation=dataclasses.replace(
        o, node_features=nodes))  # type: ignore[arg-type]  # float64 on purpose
    single = collate([odd])  # filterwarnings=error: a warning fails here
    assert single.nodes.dtype == torch.float32
    _assert_first_row_is(single, collate([odd, odd]))


def test_inputs_of_one_shape_stack_as_the_padded_path_pads_them() -> None:
    """Inputs that agree in every shape are stacked, not padded (lock-step lanes often do):
    the batch is the padded path's, float64 features converted as there."""
    same = [policy_input(6, 9, jobs=2, seed=seed) for seed in (4, 8)]
    o = same[1].observation
    same[1] = dataclasses.replace(same[1], observation=dataclasses.replace(
        o, node_features=o.node_features.astype(np.float64)))
    stacked = collate(same)
    padded = collate([*same, policy_input(2, 9, seed=5, slots=1)])
    for name, tensor in _fields(stacked).items():
        other = getattr(padded, name)
        assert (tensor is None) == (other is None), name
        if tensor is not None and other is not None:
            assert tensor.dtype == other.dtype, name
            assert torch.equal(tensor, other[:2]), name
