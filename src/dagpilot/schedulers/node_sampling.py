"""kube-scheduler's partial node search: on large clusters it stops filtering after
`numFeasibleNodesToFind` feasible nodes, starting where the previous pod's search stopped.

numFeasibleNodesToFind: all nodes below 100; otherwise percentage = 50 - nodes / 125 (at least
5 %, integer arithmetic), nodes * percentage / 100, and never fewer than 100.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dagpilot.decide.node_arrays import Bools

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE = 5


def nodes_to_find(total: int, percentage: int = 0) -> int:
    """How many feasible nodes kube-scheduler looks for; `percentage` 0 is adaptive."""
    if total < MIN_FEASIBLE_NODES_TO_FIND:
        return total
    if percentage == 0:
        percentage = max(50 - total // 125, MIN_FEASIBLE_NODES_PERCENTAGE)
    return max(total * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def first_feasible(feasible: Bools, start: int, limit: int) -> tuple[Bools, int]:
    """(the first `limit` feasible nodes searching from `start` round the list, nodes examined)."""
    total = len(feasible)
    if limit >= total:
        return feasible, total
    positions = np.flatnonzero(np.roll(feasible, -start))
    if len(positions) <= limit:
        return feasible, total
    found = np.zeros(total, dtype=np.bool_)
    found[(positions[:limit] + start) % total] = True
    return found, int(positions[limit - 1]) + 1


def first_feasible_indices(feasible: Bools, start: int,
                           limit: int) -> tuple[npt.NDArray[np.intp], int]:
    """`first_feasible` as sorted node indices: (indices, nodes examined)."""
    positions = np.flatnonzero(feasible)
    total = len(feasible)
    if limit >= total or len(positions) <= limit:
        return positions, total
    split = int(np.searchsorted(positions, start))
    if split + limit <= len(positions):  # the search ends before wrapping round
        found = positions[split:split + limit]
        return found, int(found[-1]) - start + 1
    wrapped = positions[:split + limit - len(positions)]
    return np.concatenate((wrapped, positions[split:])), int(wrapped[-1]) + total - start + 1
