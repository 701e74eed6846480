"""FreedWatch: tells whether anything was freed since the previous decision.

Placements only add requests, so a pod that fit nowhere still fits nowhere unless some node
gained free resources or became ready; comparing each decision's arrays with the previous
ones makes retrying unschedulable pods exact and cheap.
"""

from __future__ import annotations

import numpy as np

from dagpilot.decide.node_arrays import Bools, Floats, NodeArrays

SLACK = 1e-9


class FreedWatch:
    def __init__(self) -> None:
        self._floor: Floats | None = None  # the previous allocation, less a rounding slack
        self._ready: Bools | None = None

    def saw_freed(self, nodes: NodeArrays) -> bool:
        floor, was_ready = self._floor, self._ready
        if floor is None or was_ready is None or floor.shape != nodes.allocated.shape:
            self._floor, self._ready = nodes.allocated - SLACK, nodes.ready.copy()
            return True
        # count_nonzero is a plain C loop; ndarray.any goes through the ufunc machinery.
        freed = bool(np.count_nonzero(np.less(nodes.allocated, floor))
                     or np.count_nonzero(np.greater(nodes.ready, was_ready)))
        np.subtract(nodes.allocated, SLACK, out=floor)
        np.copyto(was_ready, nodes.ready)
        return freed
