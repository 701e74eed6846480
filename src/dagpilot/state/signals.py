"""The nodes' sampled signals as arrays, read from the view with as little Python as possible.

Reading ten attributes of 5,000 NodeSignals objects costs milliseconds, and most decisions
come between two scrapes, when only the nodes that took a pod have new signals (their
`placed_since_sample` grew). A SignalTable keeps the objects it last read and re-reads only
the nodes whose signals object is not the same one as before. A view that builds new objects
on every read (a live collector) simply gets every row re-read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import NodeSignals, NodeState

Floats = npt.NDArray[np.float64]

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
    """(nodes, len(COLUMNS)) float64: one row per node, columns as named in COLUMNS."""

    table: Floats

    def column(self, index: int) -> Floats:
        return self.table[:, index]


class SignalTable:
    """Reads the signals of every node, re-reading only the rows whose object changed."""

    __slots__ = ("_ids", "_objects", "_table")

    def __init__(self) -> None:
        self._objects: list[NodeSignals] = []  # kept alive, so their ids cannot be reused
        self._ids: npt.NDArray[np.int64] = np.empty(0, dtype=np.int64)
        self._table: Floats = np.empty((0, len(COLUMNS)))

    def read(self, nodes: Sequence[NodeState]) -> SignalArrays:
        objects = [node.signals for node in nodes]
        ids = np.fromiter(map(id, objects), dtype=np.int64, count=len(objects))
        if ids.shape != self._ids.shape:
            changed = np.arange(len(objects))
            table = np.empty((len(objects), len(COLUMNS)))
        else:
            changed = np.flatnonzero(ids != self._ids)
            # Copy on write: arrays handed out before stay as they were.
            table = self._table.copy() if len(changed) else self._table
        if len(changed):
            rows = [signal_row(objects[index]) for index in changed.tolist()]
            table[changed] = np.array(rows, dtype=np.float64).reshape(-1, len(COLUMNS))
            table.flags.writeable = False
        self._objects, self._ids, self._table = objects, ids, table
        return SignalArrays(table)
