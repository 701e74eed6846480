"""The distinct task graphs among many decisions' candidates, each kept once.

A job's graph slots change only when its tasks change state, and the pods of a stage share
their job's graph, so an iteration's candidates hold few distinct graphs (the PPO benchmark's
6,764 decisions: 13,043 candidates, 113 distinct graphs). Training's evaluation summarises
each distinct graph of a minibatch once (`TaskGraphEncoder.embed_distinct`) instead of once
per candidate. Two candidates share a graph when their features, positions and masks are
equal byte for byte, so one graph is one summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from dagpilot.policy.unique_rows import unique_rows
from dagpilot.state.observation import Observation


@dataclass(frozen=True)
class DistinctGraphs:
    """U distinct graphs and, for each of M candidates, the row of its graph."""

    graph: Tensor  # (U, K, graph_dim)
    positions: Tensor  # (U, K, position_dim)
    valid: Tensor  # (U, K) bool
    of_candidate: Tensor  # (M,) int64
    # graphs per attention layout (`packed_encoder.encode_valid`); empty: one for all
    groups: tuple[int, ...] = ()

    @classmethod
    def of(cls, observations: Sequence[Observation]) -> DistinctGraphs:
        """The distinct graphs of all the observations' candidates, in their order."""
        slots = max(o.graph_valid.shape[1] for o in observations)
        graph, positions, valid = (np.concatenate([widened(a, slots) for a in arrays])
                                   for arrays in zip(*((o.graph_features, o.graph_positions,
                                                        o.graph_valid) for o in observations),
                                                     strict=True))
        first, of_candidate = unique_rows(_row_bytes(graph, positions, valid))
        return cls(torch.from_numpy(graph[first]), torch.from_numpy(positions[first]),
                   torch.from_numpy(valid[first]),
                   torch.from_numpy(of_candidate.reshape(-1).astype(np.int64)))

    def used_slots(self) -> Tensor:
        """(U,) each graph's slots up to its last valid one (at least 1)."""
        last = self.valid.shape[1] - self.valid.flip(1).int().argmax(1)
        return torch.where(self.valid.any(1), last, 1)


def widened(array: npt.NDArray[np.generic], size: int) -> npt.NDArray[np.generic]:
    """(C, n, ...) -> (C, size, ...): zeros (False) after the n (graph slots, nodes)."""
    missing = size - array.shape[1]
    if not missing:
        return array
    return np.pad(array, ((0, 0), (0, missing), *([(0, 0)] * (array.ndim - 2))))


def _row_bytes(*arrays: npt.NDArray[np.generic]) -> npt.NDArray[np.uint8]:
    """(M, bytes): each row's bytes across the arrays (M, ...)."""
    return np.concatenate([np.ascontiguousarray(a).reshape(len(a), -1).view(np.uint8)
                           for a in arrays], axis=1)
