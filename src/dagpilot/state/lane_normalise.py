"""Several raw observations normalised together: lock-step rollouts' lanes (`train.lockstep`).

`Normaliser.normalise` applies each feature group's statistics in its own numpy calls, per
observation: five groups, a few tens of microseconds each, for every lane at every round.
Normalising is element-wise, so each group of all the lanes' observations is normalised in
one call over their rows one lane after another, then cut back into lanes: each lane gets
what `normaliser.normalise` gives it alone, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.state.normaliser import Normaliser
from dagpilot.state.observation import Observation
from dagpilot.state.schema import GROUPS, NODE

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
    groups = {group.name: _cut(normaliser.apply(group, np.concatenate(
        [observation.arrays()[group.name] for observation in observations])), observations,
        group.name) for group in STACKED}
    return [observation.with_arrays({NODE.name: rows, **{name: lanes[lane]
                                                      for name, lanes in groups.items()}},
                                    True)
            for lane, (observation, rows) in enumerate(zip(observations, nodes, strict=True))]


def _cut(stacked: F32, observations: Sequence[Observation], group: str) -> list[F32]:
    """The stacked rows of one group back into lanes."""
    ends = np.cumsum([len(observation.arrays()[group]) for observation in observations])
    return np.split(stacked, ends[:-1])
