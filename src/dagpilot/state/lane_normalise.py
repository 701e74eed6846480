"""Several raw observations normalised together: lock-step rollouts' lanes (`train.lockstep`).

`Normaliser.normalise` applies each feature group's statistics in its own numpy calls, per
observation: five groups, a few tens of microseconds each, for every lane at every round.
Normalising is element-wise, so each group of all the lanes' observations is normalised in
one call over their rows one lane after another, then cut back into lanes: each lane gets
what `normaliser.normalise` gives it alone, bit for bit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from itertools import accumulate

import numpy as np
import numpy.typing as npt

from dagpilot.state.normaliser import Normaliser
from dagpilot.state.observation import Observation
from dagpilot.state.schema import GRAPH, GROUPS, NODE, PAIR, POSITION, TASK

F32 = npt.NDArray[np.float32]
STACKED = tuple(group for group in GROUPS if group is not NODE)  # nodes: normalised already


def normalise_lanes(normaliser: Normaliser, observations: Sequence[Observation],
                    nodes: Sequence[F32]) -> list[Observation]:
    """`normaliser.normalise(observation, nodes=rows)` of each lane; `nodes`: each lane's
    normalised node rows."""
    if len(observations) != len(nodes):
        raise ValueError("normalising lanes needs one set of node rows per observation")
    if any(observation.normalised for observation in observations):
        raise ValueError("normalise_lanes takes raw observations, not normalised ones")
    arrays = [observation.arrays() for observation in observations]
    groups = {group.name: normaliser.apply(group, np.concatenate(
        [lane[group.name] for lane in arrays])) for group in STACKED}
    # graph padding stays zero, as `Observation.with_arrays` keeps it: masked stacked too
    valid = np.concatenate([observation.graph_valid for observation in observations])[..., None]
    for group in (GRAPH, POSITION):
        groups[group.name] = np.where(valid, groups[group.name], np.float32(0.0)).astype(
            np.float32)
    lanes = {name: _cut(stacked, [len(lane[name]) for lane in arrays])
             for name, stacked in groups.items()}
    return [dataclasses.replace(
        observation, node_features=rows, task_features=lanes[TASK.name][lane],
        pair_features=lanes[PAIR.name][lane], graph_features=lanes[GRAPH.name][lane],
        graph_positions=lanes[POSITION.name][lane], normalised=True)
        for lane, (observation, rows) in enumerate(zip(observations, nodes, strict=True))]


def _cut(stacked: F32, lengths: Sequence[int]) -> list[F32]:
    """The stacked rows of one group back into lanes of these lengths (slices: `np.split`
    gives the same views at several times the cost)."""
    return [stacked[end - length:end]
            for end, length in zip(accumulate(lengths), lengths, strict=True)]
