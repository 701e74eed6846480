"""Observation: everything the policy reads at one decision, as float32 arrays and masks."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import PodRef
from dagpilot.state.schema import FEATURE_SCHEMA_VERSION, GRAPH, NODE, PAIR, POSITION, TASK

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Observation:
    """N nodes (cluster order), C candidate pods, J distinct sets of hosts among their jobs,
    K graph slots.

    `pair_features[pair_job[c], n]` describes node n for candidate c (its distance to where the
    candidate's job runs); it is stored once per set of hosts, not per candidate or per job,
    to stay small at 5,000 nodes (jobs on the same nodes, or on none yet, share a row).
    """

    node_features: F32  # (N, NODE.dim)
    task_features: F32  # (C, TASK.dim)
    pair_features: F32  # (J, N, PAIR.dim), J distinct host sets
    pair_job: npt.NDArray[np.int64]  # (C,) row of pair_features for each candidate
    graph_features: F32  # (C, K, GRAPH.dim)
    graph_positions: F32  # (C, K, POSITION.dim)
    graph_valid: npt.NDArray[np.bool_]  # (C, K) the slot holds a task
    graph_status: npt.NDArray[np.int8]  # (C, K) job_graph.FINISHED / READY / BLOCKED / EMPTY
    candidates: tuple[PodRef, ...]
    normalised: bool = False
    schema_version: int = FEATURE_SCHEMA_VERSION

    def arrays(self) -> Mapping[str, F32]:
        """The feature arrays by schema group name."""
        return {NODE.name: self.node_features, TASK.name: self.task_features,
                PAIR.name: self.pair_features, GRAPH.name: self.graph_features,
                POSITION.name: self.graph_positions}

    def rows(self, group: str) -> F32:
        """(rows, dim) of one group as statistics should see it: graph slots only where valid."""
        array = self.arrays()[group]
        if group in (GRAPH.name, POSITION.name):
            return array[self.graph_valid]
        return array.reshape(-1, array.shape[-1])

    def with_arrays(self, arrays: Mapping[str, F32], normalised: bool) -> Observation:
        """A copy with some group arrays replaced; graph padding stays zero."""
        valid = self.graph_valid[..., None]
        graph = arrays.get(GRAPH.name, self.graph_features)
        positions = arrays.get(POSITION.name, self.graph_positions)
        return dataclasses.replace(
            self,
            node_features=arrays.get(NODE.name, self.node_features),
            task_features=arrays.get(TASK.name, self.task_features),
            pair_features=arrays.get(PAIR.name, self.pair_features),
            graph_features=np.where(valid, graph, np.float32(0.0)).astype(np.float32),
            graph_positions=np.where(valid, positions, np.float32(0.0)).astype(np.float32),
            normalised=normalised)
