"""The distinct task graphs among many decisions' candidates, each kept once.

A job's graph slots change only when its tasks change state, and the pods of a stage share
their job's graph, so an iteration's candidates hold few distinct graphs (the PPO benchmark's
6,764 decisions: 13,043 candidates, 113 distinct graphs). Training's evaluation summarises
each distinct graph of a minibatch once (`TaskGraphEncoder.embed_distinct`) instead of once
per candidate. A graph is keyed as `GraphSummaryCache` keys it, by the exact bytes of its
features, positions and mask up to its last valid slot, so one key is one summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from dagpilot.policy.graph_cache import graph_keys, used_slots
from dagpilot.state.observation import Observation


@dataclass(frozen=True)
class DistinctGraphs:
    """U distinct graphs and, for each of M real candidates (in `candidate_valid.nonzero()`
    order), the row of its graph."""

    graph: Tensor  # (U, K, graph_dim)
    positions: Tensor  # (U, K, position_dim)
    valid: Tensor  # (U, K) bool
    of_candidate: Tensor  # (M,) int64


class GraphPool:
    """Distinct graphs gathered decision by decision; `add` says which each candidate has."""

    def __init__(self) -> None:
        self._rows: dict[bytes, int] = {}
        self._graphs: list[tuple[Tensor, Tensor, Tensor]] = []

    def __len__(self) -> int:
        return len(self._graphs)

    def add(self, observation: Observation) -> npt.NDArray[np.int64]:
        """(C,) the pool row of each candidate's graph, new graphs added."""
        graph = torch.from_numpy(np.asarray(observation.graph_features, np.float32))
        positions = torch.from_numpy(np.asarray(observation.graph_positions, np.float32))
        valid = torch.from_numpy(np.asarray(observation.graph_valid, np.bool_))
        rows = np.empty(len(graph), np.int64)
        widths = used_slots(valid)
        for candidate, key in enumerate(graph_keys(graph, positions, valid, widths)):
            row = self._rows.get(key)
            if row is None:
                row = self._rows[key] = len(self._graphs)
                width = int(widths[candidate])
                self._graphs.append((graph[candidate, :width], positions[candidate, :width],
                                     valid[candidate, :width]))
            rows[candidate] = row
        return rows

    def stacked(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(U, K, graph_dim) graphs, (U, K, position_dim) positions and (U, K) masks, padded
        to the widest graph's used slots K, and (U,) each graph's used slots."""
        if not self._graphs:
            raise ValueError("no graphs were added")
        widths = torch.tensor([len(valid) for _, _, valid in self._graphs])
        padded = [torch.nn.utils.rnn.pad_sequence(list(part), batch_first=True)
                  for part in zip(*self._graphs, strict=True)]
        return padded[0], padded[1], padded[2], widths
