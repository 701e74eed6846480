"""Random but well-formed policy inputs, of any size, for the network tests."""

from __future__ import annotations

import numpy as np

from dagpilot.policy import PolicyInput
from dagpilot.state.observation import Observation
from dagpilot.state.schema import GRAPH, NODE, PAIR, POSITION, TASK


def policy_input(candidates: int, nodes: int, *, jobs: int = 1, slots: int = 8,
                 seed: int = 0, feasible_share: float = 0.6) -> PolicyInput:
    """C candidates over `jobs` jobs on N nodes; each candidate's graph has 1..slots valid
    slots (slot 0 always: the candidate); every candidate fits on at least one node."""
    rng = np.random.default_rng(seed)

    def floats(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    lengths = rng.integers(1, slots + 1, size=candidates)
    valid = np.arange(slots)[None, :] < lengths[:, None]
    graph = floats(candidates, slots, GRAPH.dim) * valid[..., None]
    positions = floats(candidates, slots, POSITION.dim) * valid[..., None]
    feasible = rng.random((candidates, nodes)) < feasible_share
    feasible[np.arange(candidates), rng.integers(0, nodes, size=candidates)] = True
    observation = Observation(
        node_features=floats(nodes, NODE.dim), task_features=floats(candidates, TASK.dim),
        pair_features=(rng.random((jobs, nodes, PAIR.dim)) < 0.3).astype(np.float32),
        pair_job=np.arange(candidates, dtype=np.int64) % jobs,
        graph_features=graph.astype(np.float32), graph_positions=positions.astype(np.float32),
        graph_valid=valid, graph_status=np.where(valid, 1, -1).astype(np.int8),
        candidates=(), normalised=True)
    return PolicyInput(observation, feasible)
