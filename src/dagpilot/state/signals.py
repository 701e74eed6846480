"""The nodes' sampled signals as arrays, read from the view with as little Python as possible.

Reading ten attributes of 5,000 NodeSignals objects costs milliseconds, and most decisions
come between two scrapes, when only the nodes that took a pod have new signals (their
`placed_since_sample` grew). A SignalTable keeps the objects it last read and re-reads only
the nodes whose signals object is not the same one as before. A view that builds new objects
on every read (a live collector) simply gets every row re-read. The arrays are stored column by
column, so that the per-signal arithmetic of the node features runs over contiguous memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import NodeSignals, NodeState

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

COLUMNS = ("sampled_s", "cpu_used", "memory_used", "memory_current", "membw_utilisation",
           "io_await_ms", "placed_cpu", "placed_memory", "placed_gpus")
SAMPLED_S, CPU_USED, MEMORY_USED, MEMORY_CURRENT, MEMBW, AWAIT_MS, PLACED_CPU, PLACED_MEMORY, \
    PLACED_GPUS = range(len(COLUMNS))


def signal_row(signals: NodeSignals) -> tuple[float, ...]:
    placed = signals.placed_since_sample
    return (signals.sampled_s, signals.cpu_used, signals.memory_used, signals.memory_current,
            signals.membw_utilisation, signals.io_await_ms, placed.cpu, placed.memory,
            placed.gpus)


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


_SIGNALS = attrgetter("signals")


class SignalTable:
    """Reads the signals of every node, re-reading only the nodes whose object changed."""

    __slots__ = ("_columns", "_ids", "_objects")

    def __init__(self) -> None:
        self._objects: list[NodeSignals] = []  # kept alive, so their ids cannot be reused
        self._ids: Ints = np.empty(0, dtype=np.int64)
        self._columns: Floats = np.empty((len(COLUMNS), 0))

    def read(self, nodes: Sequence[NodeState]) -> SignalArrays:
        objects = list(map(_SIGNALS, nodes))
        ids = np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))
        if ids.shape != self._ids.shape:
            changed = np.arange(len(objects))
            columns = np.empty((len(COLUMNS), len(objects)))
        else:
            changed = np.flatnonzero(ids != self._ids)
            # Copy on write: arrays handed out before stay as they were.
            columns = self._columns.copy() if len(changed) else self._columns
        if len(changed):
            # One flat pass of floats: numpy converts a list of row tuples several times slower.
            rows = map(signal_row, map(objects.__getitem__, changed.tolist()))
            columns[:, changed] = np.fromiter(chain.from_iterable(rows), dtype=np.float64,
                                              count=len(changed) * len(COLUMNS)).reshape(
                -1, len(COLUMNS)).T
            columns.flags.writeable = False
        self._objects, self._ids, self._columns = objects, ids, columns
        return SignalArrays(columns)
