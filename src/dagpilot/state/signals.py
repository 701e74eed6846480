"""The nodes' sampled signals as arrays: `ClusterView.signal_arrays`, with names.

Reading ten attributes of 5,000 NodeSignals objects costs milliseconds, so views hand the
signals out as columns (the simulator keeps them up to date as it scrapes and binds; a live
collector gets them as columns from its queries). The arrays are stored column by column, so
that the per-signal arithmetic of the node features runs over contiguous memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import SIGNAL_COLUMNS, ClusterView

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

COLUMNS = SIGNAL_COLUMNS
SAMPLED_S, CPU_USED, MEMORY_USED, MEMORY_CURRENT, MEMBW, AWAIT_MS, PLACED_CPU, PLACED_MEMORY, \
    PLACED_GPUS = range(len(COLUMNS))


@dataclass(frozen=True, slots=True)
class SignalArrays:
    """(len(COLUMNS), nodes) float64, read-only: one row per signal as named in COLUMNS, one
    column per node."""

    columns: Floats

    def column(self, index: int) -> Floats:
        """One signal of every node (contiguous)."""
        column: Floats = self.columns[index]
        return column

    def of_nodes(self, nodes: Ints) -> SignalArrays:
        """The signals of some nodes only, in the order given."""
        return SignalArrays(self.columns[:, nodes])


def read(view: ClusterView) -> SignalArrays:
    """The view's signals, named."""
    return SignalArrays(view.signal_arrays())
