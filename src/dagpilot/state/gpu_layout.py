"""GPUs by PCIe root complex: how many free GPUs a multi-GPU pod can get on one complex.

A pod whose GPUs span root complexes gets a fifth of the bandwidth, so what matters for it is
the largest number of free GPUs on one complex, not the node's total. The layout is fixed per
cluster; per decision only the nodes with several complexes and some (not all) GPUs bound need
their free GPUs read one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import NodeSpec
from dagpilot.core.view import NodeState

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class GpuLayout:
    total: Floats  # (nodes,) GPUs per node
    largest_complex: Floats  # (nodes,) GPUs on the node's largest root complex
    split: Ints  # indices of the nodes whose GPUs sit on more than one complex
    complex_of: tuple[tuple[int, ...], ...]  # for each split node: root complex of each GPU
    split_position: Ints  # (nodes,) each node's position in `split`, -1 when not split

    @classmethod
    def of(cls, specs: Sequence[NodeSpec]) -> GpuLayout:
        total = np.array([len(spec.gpus) for spec in specs], dtype=np.float64)
        largest = np.array([max((len(group) for group in spec.root_complexes.values()),
                                default=0) for spec in specs], dtype=np.float64)
        split = [index for index, spec in enumerate(specs) if len(spec.root_complexes) > 1]
        complexes = tuple(tuple(gpu.root_complex for gpu in specs[index].gpus)
                          for index in split)
        position = np.full(len(specs), -1, dtype=np.int64)
        position[split] = np.arange(len(split))
        return cls(total, largest, np.array(split, dtype=np.int64), complexes, position)

    def free_on_best_complex(self, free: Floats, states: Sequence[NodeState],
                             rows: Ints | None = None) -> Floats:
        """(nodes,) the most free GPUs on one root complex, given each node's free GPU count;
        with `rows`, `free` and the result are of those nodes only, in that order."""
        largest, total, position = ((self.largest_complex, self.total, self.split_position)
                                    if rows is None else (self.largest_complex[rows],
                                                          self.total[rows],
                                                          self.split_position[rows]))
        best = np.minimum(free, largest)  # exact unless some GPUs of a split node are bound
        split = np.flatnonzero(position >= 0)  # and some are not
        partial = split[(free[split] > 0) & (free[split] < total[split])]
        for row in partial.tolist():
            node = row if rows is None else int(rows[row])
            best[row] = _best_complex(states[node].free_gpus, self.complex_of[position[row]])
        return best


def _best_complex(free_gpus: tuple[int, ...], complex_of: tuple[int, ...]) -> float:
    counts: dict[int, int] = {}
    for gpu in free_gpus:
        counts[complex_of[gpu]] = counts.get(complex_of[gpu], 0) + 1
    return float(max(counts.values(), default=0))
