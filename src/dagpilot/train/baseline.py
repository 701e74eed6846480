"""The input-driven baseline (Mao et al., "Variance reduction for reinforcement learning in
input-driven environments", ICLR 2019; used by Decima).

How long jobs wait depends on the policy *and* on the arrival sequence, which the policy does
not control: a burst arriving in ten minutes makes every action now look bad. Replaying one
arrival sequence several times per iteration lets each replay subtract what the others got at
the same simulated time: a baseline that knows the future input but not this replay's
actions. For replay i at a decision at time t,

    b_i(t) = mean over the other replays j of x_j(t),

with x_j(t) the value of x_j at replay j's last decision at or before t (its first one when t
precedes it); time, not step index, aligns replays, since their decisions differ. Leaving
replay i out keeps the baseline independent of replay i's actions, hence unbiased. Applied to
Monte-Carlo returns this is Decima's baseline; training applies it to the GAE advantages
(train.targets), which reduces to the same thing with lambda = 1 and no critic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


def value_at(times: npt.ArrayLike, values: npt.ArrayLike, at: npt.ArrayLike) -> Floats:
    """Step function of one replay: values at its last time <= each `at` (first if before)."""
    t = np.asarray(times, dtype=np.float64)
    x = np.asarray(values, dtype=np.float64)
    position = np.searchsorted(t, np.asarray(at, dtype=np.float64), side="right") - 1
    return x[np.clip(position, 0, len(x) - 1)]


def input_driven_baseline(times: Sequence[npt.ArrayLike],
                          values: Sequence[npt.ArrayLike]) -> list[Floats]:
    """For each replay, the leave-one-out mean of the other replays' values at its decision
    times. With one replay (nothing to compare with) the baseline is zero."""
    if len(times) != len(values):
        raise ValueError("one time series per value series")
    replays = len(times)
    if replays < 2:
        return [np.zeros(len(np.asarray(v))) for v in values]
    out = []
    for i in range(replays):
        others = [value_at(times[j], values[j], times[i]) for j in range(replays)
                  if j != i and len(np.asarray(values[j]))]
        own = np.asarray(times[i], dtype=np.float64)
        out.append(np.mean(others, axis=0) if others else np.zeros(len(own)))
    return out
