"""Generalised advantage estimation (Schulman et al., 2016).

    delta_t = r_t + gamma * V(s_{t+1}) * (1 - done_t) - V(s_t)
    A_t     = delta_t + gamma * lambda * (1 - done_t) * A_{t+1}
    return_t = A_t + V(s_t)          (the critic's target)

lambda = 1 gives the Monte-Carlo return minus the value; lambda = 0 the one-step TD error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Targets:
    advantages: Floats
    returns: Floats


def gae(rewards: npt.ArrayLike, values: npt.ArrayLike, dones: npt.ArrayLike, *, gamma: float,
        lam: float, last_value: float = 0.0) -> Targets:
    """Advantages and returns of one trajectory; `last_value` is V after its last step (ignored
    when that step is terminal)."""
    r = np.asarray(rewards, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    d = np.asarray(dones, dtype=np.float64)
    if not r.shape == v.shape == d.shape or r.ndim != 1:
        raise ValueError("rewards, values and dones must be 1-D and of one length")
    advantages = np.zeros_like(r)
    running, next_value = 0.0, last_value
    for t in range(len(r) - 1, -1, -1):
        alive = 1.0 - d[t]
        delta = r[t] + gamma * next_value * alive - v[t]
        running = delta + gamma * lam * alive * running
        advantages[t] = running
        next_value = v[t]
    return Targets(advantages, advantages + v)
