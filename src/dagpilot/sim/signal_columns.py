"""Every node's sampled signals as columns, kept up to date as the simulation scrapes and binds.

`ClusterView.signal_arrays` is what feature encoders read instead of a pass over the nodes'
`signals`. A node's signals change in two ways only: a scrape (every node gets a new sample
time) and a pod bound since the sample (that node's `placed_since_sample` grows). So a scrape
drops the array and a bind marks its node; the next read rebuilds what is marked, into a new
array (arrays handed out before are never written), and hands out the same array object while
nothing changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dagpilot.core.view import signal_columns
from dagpilot.sim.nodes import SimNode


class SignalColumns:
    __slots__ = ("_columns", "_marked", "_nodes")

    def __init__(self, nodes: Sequence[SimNode]) -> None:
        self._nodes = nodes
        self._columns: np.ndarray | None = None
        self._marked: set[int] = set()  # node indices whose signals changed since the last read

    def scraped(self) -> None:
        """Every node has a new sample."""
        self._columns = None
        self._marked.clear()

    def placed(self, index: int) -> None:
        """A pod was bound to node `index`: its placed-since-sample figures grew."""
        if self._columns is not None:
            self._marked.add(index)

    def arrays(self) -> np.ndarray:
        columns = self._columns
        if columns is not None and not self._marked:
            return columns
        nodes = self._nodes
        if columns is None:
            columns = signal_columns([node.signals for node in nodes])
        else:
            rows = sorted(self._marked)
            columns = columns.copy()
            columns[:, rows] = signal_columns([nodes[index].signals for index in rows])
            self._marked.clear()
        columns.flags.writeable = False
        self._columns = columns
        return columns
