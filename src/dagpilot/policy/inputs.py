"""What the network reads: one decision's `PolicyInput`, and `Batch`, many padded together.

A `PolicyInput` is a normalised observation plus the hard-constraint mask over its
(candidate, node) pairs, which comes from `decide`'s filters and is never learned, and an
optional fixed `bias` added to the pairs' logits (`decide.pcie`'s fallback penalty). Decisions
differ in their numbers of candidates C, nodes N, jobs J and used graph slots K, so `collate`
pads each to the batch's largest (and drops graph slots no candidate uses); padded candidates,
nodes, pairs and slots are masked out everywhere, which makes a batched evaluation equal to
evaluating each input alone. A single input (every decision) needs no padding: its arrays
become the batch as they are, shared, not copied.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from dagpilot.state.observation import Observation

Bools = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True)
class PolicyInput:
    """One decision: the normalised observation, `feasible[c, n]`, the filters' verdict, and
    `bias[c, n]`, fixed amounts added to the logits before the softmax (None: all 0). The bias
    is part of the input so that PPO's evaluation reads the logits the agent acted on; a
    PolicyInput pickled before it existed loads with None (the class default)."""

    observation: Observation
    feasible: Bools  # (C, N)
    bias: Floats | None = None  # (C, N)

    def __post_init__(self) -> None:
        candidates, nodes = len(self.observation.task_features), len(
            self.observation.node_features)
        if self.feasible.shape != (candidates, nodes):
            raise ValueError(f"feasible mask {self.feasible.shape} does not match "
                             f"{candidates} candidates x {nodes} nodes")
        if self.bias is not None and self.bias.shape != (candidates, nodes):
            raise ValueError(f"logit bias {self.bias.shape} does not match "
                             f"{candidates} candidates x {nodes} nodes")

    @property
    def shape(self) -> tuple[int, int]:
        """(candidates, nodes): the action is a flat index into this grid."""
        return (len(self.observation.task_features), len(self.observation.node_features))

    def stripped(self) -> PolicyInput:
        """The same arrays without the candidate PodRefs (and their Jobs): what a rollout keeps
        and ships between processes."""
        if not self.observation.candidates:
            return self
        return dataclasses.replace(
            self, observation=dataclasses.replace(self.observation, candidates=()))


@dataclass(frozen=True)
class Batch:
    """B decisions padded to the largest C, N, J and K among them."""

    nodes: Tensor  # (B, N, node_dim)
    node_valid: Tensor  # (B, N) bool
    tasks: Tensor  # (B, C, task_dim)
    candidate_valid: Tensor  # (B, C) bool
    pairs: Tensor  # (B, J, N, pair_dim)
    pair_job: Tensor  # (B, C) int64, row of `pairs` for each candidate
    graph: Tensor  # (B, C, K, graph_dim)
    positions: Tensor  # (B, C, K, position_dim)
    graph_valid: Tensor  # (B, C, K) bool
    feasible: Tensor  # (B, C, N) bool
    bias: Tensor | None = None  # (B, C, N) float, 0 where an input has none; None: no input has

    @property
    def size(self) -> int:
        return int(self.nodes.shape[0])

    @property
    def grid(self) -> tuple[int, int]:
        """(C, N) of the padded batch."""
        return (int(self.tasks.shape[1]), int(self.nodes.shape[1]))


def collate(inputs: Sequence[PolicyInput]) -> Batch:
    if not inputs:
        raise ValueError("collate needs at least one input")
    if len(inputs) == 1:
        return _single(inputs[0])
    observations = [item.observation for item in inputs]
    candidates = max(len(o.task_features) for o in observations)
    nodes = max(len(o.node_features) for o in observations)
    jobs = max(max(len(o.pair_features), 1) for o in observations)
    slots = _batch_slots(observations)
    return Batch(
        nodes=_pad([o.node_features for o in observations], (nodes,)),
        node_valid=_valid([len(o.node_features) for o in observations], nodes),
        tasks=_pad([o.task_features for o in observations], (candidates,)),
        candidate_valid=_valid([len(o.task_features) for o in observations], candidates),
        pairs=_pad([o.pair_features for o in observations], (jobs, nodes)),
        pair_job=_pad([o.pair_job for o in observations], (candidates,), np.int64),
        graph=_pad([o.graph_features[:, :slots] for o in observations], (candidates, slots)),
        positions=_pad([o.graph_positions[:, :slots] for o in observations],
                       (candidates, slots)),
        graph_valid=_pad([o.graph_valid[:, :slots] for o in observations], (candidates, slots),
                         np.bool_),
        feasible=_pad([item.feasible for item in inputs], (candidates, nodes), np.bool_),
        bias=_bias(inputs, (candidates, nodes)),
    )


def _single(item: PolicyInput) -> Batch:
    """What the padded path gives for one input, without its zeroed copies: the batch's
    tensors share the input's arrays (the network never writes into its batch)."""
    o = item.observation
    candidates, nodes = item.shape
    slots = _used_slots(o)
    pairs = o.pair_features if len(o.pair_features) else np.zeros(
        (1, nodes, *o.pair_features.shape[2:]))  # no candidate: one job row of zeros
    return Batch(
        nodes=_tensor(o.node_features, np.float32),
        node_valid=torch.ones(1, nodes, dtype=torch.bool),
        tasks=_tensor(o.task_features, np.float32),
        candidate_valid=torch.ones(1, candidates, dtype=torch.bool),
        pairs=_tensor(pairs, np.float32),
        pair_job=_tensor(o.pair_job, np.int64),
        graph=_tensor(o.graph_features[:, :slots], np.float32),
        positions=_tensor(o.graph_positions[:, :slots], np.float32),
        graph_valid=_tensor(o.graph_valid[:, :slots], np.bool_),
        feasible=_tensor(item.feasible, np.bool_),
        bias=None if item.bias is None else _tensor(item.bias, np.float32),
    )


def _tensor(array: npt.NDArray[np.generic], dtype: type[np.generic]) -> Tensor:
    """(1, ...) tensor over the array, converted to `dtype` only if it is another (a copy
    also when it is read-only: torch tensors are writable views)."""
    array = np.asarray(array, dtype=dtype)
    if not array.flags.writeable:
        array = array.copy()
    return torch.from_numpy(array).unsqueeze(0)


def _bias(inputs: Sequence[PolicyInput], grid: tuple[int, int]) -> Tensor | None:
    """The inputs' logit biases padded to the grid with 0 (None when none has one, which
    leaves the logits of bias-free batches untouched)."""
    if all(item.bias is None for item in inputs):
        return None
    return _pad([np.zeros(item.shape, np.float32) if item.bias is None else item.bias
                 for item in inputs], grid)


def _used_slots(observation: Observation) -> int:
    """Graph slots up to the last one any candidate uses: a small job fills few of the K
    slots, and attention over empty ones is wasted work (they are masked anyway)."""
    return _last_used_slot(observation.graph_valid)


def _batch_slots(observations: Sequence[Observation]) -> int:
    """The largest `_used_slots` of the inputs: one pass over their masks when they have as
    many slots each (every input of one model does)."""
    if len({o.graph_valid.shape[1] for o in observations}) == 1:
        return _last_used_slot(np.concatenate([o.graph_valid for o in observations]))
    return max(_used_slots(o) for o in observations)


def _last_used_slot(graph_valid: Bools) -> int:
    """`_used_slots` of (C, K) slot masks, of one input or of several concatenated."""
    used = np.flatnonzero(graph_valid.any(axis=0))
    return int(used[-1]) + 1 if len(used) else 1


def _pad(arrays: Sequence[npt.NDArray[np.generic]], lead: tuple[int, ...],
         dtype: type[np.generic] = np.float32) -> Tensor:
    """Stack arrays, zero-padding their leading axes to `lead` (trailing axes must agree)."""
    shapes = {array.shape for array in arrays}
    if len(shapes) == 1 and next(iter(shapes))[:len(lead)] == lead:
        # nothing to pad (lock-step lanes often agree): one stack, not a copy per input
        return torch.from_numpy(np.stack(arrays).astype(dtype, copy=False))
    tail = next((a.shape[len(lead):] for a in arrays if a.size), arrays[0].shape[len(lead):])
    out = np.zeros((len(arrays), *lead, *tail), dtype=dtype)
    for row, array in enumerate(arrays):
        if array.size:
            out[row][tuple(slice(0, size) for size in array.shape[:len(lead)])] = array
    return torch.from_numpy(out)


def _valid(lengths: Sequence[int], size: int) -> Tensor:
    # numpy, not torch: a few microseconds against tens for torch's small-tensor calls
    return torch.from_numpy(np.arange(size)[None, :] < np.array(lengths)[:, None])
