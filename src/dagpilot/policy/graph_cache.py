"""A bounded memory of the task-graph Transformer's per-candidate summaries, for inference.

A candidate's graph slots (the tasks of its job around it: requests, statuses, DAG positions)
change only when a task of the job changes state, so consecutive decisions show the
Transformer the same graphs again and again; the candidate's own time-varying features do not
enter it (they go through the encoder's separate task MLP). The summary of one candidate
depends only on its valid slots (attention and pooling are masked), so it is remembered under
the exact bytes of that candidate's graph features, positions and valid mask up to its last
valid slot: the same input gives the same summary, whatever the batch around it, up to its
last bits (the BLAS picks its kernels by the number of rows it is given; `PolicyNet.forget`
empties the memory, so that a new session computes as a fresh network does).

The memory is only correct for the weights it was computed with: it forgets everything when a
parameter of the summarising layers changes (`WeightsWatch`; writing into `parameter.data` in
place escapes it, so call `clear` after that). The least recently used entries go first once
`capacity` is reached. The encoder consults the cache only when no gradient is wanted.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from dagpilot.policy.weights_watch import WeightsWatch

# Summaries kept: 2 x d floats each, under keys of up to K x (graph + position features) floats.
DEFAULT_CAPACITY = 2048

Summarise = Callable[[Tensor, Tensor, Tensor], Tensor]


class GraphSummaryCache:
    """Per-candidate summaries (M, width) by graph bytes; `hits` and `misses` count rows."""

    __slots__ = ("_entries", "_watch", "capacity", "hits", "misses")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("the graph summary cache needs a capacity of at least 1")
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[bytes, npt.NDArray[np.float32]] = OrderedDict()
        self._watch = WeightsWatch()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def summaries(self, graph: Tensor, positions: Tensor, valid: Tensor,
                  parameters: Sequence[Tensor], summarise: Summarise) -> Tensor:
        """(M, K, .) graphs of M candidates -> (M, width) summaries, computing (with
        `summarise`, over the same three arrays cut to fewer rows and slots) only the rows
        not remembered for these exact `parameters`, and identical rows once."""
        if self._watch.moved(parameters):
            self._entries.clear()
        used = _used_slots(valid)
        keys = _keys(graph, positions, valid, used)
        found: dict[bytes, npt.NDArray[np.float32]] = {}
        first: dict[bytes, int] = {}  # the first row of each key not remembered
        for row, key in enumerate(keys):
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                found[key] = entry
            else:
                first.setdefault(key, row)
        hits = sum(key in found for key in keys)
        self.hits += hits
        self.misses += len(keys) - hits
        if first:
            rows = list(first.values())
            width = int(used[rows].max())
            index = torch.tensor(rows, dtype=torch.int64)
            computed = summarise(graph[index, :width], positions[index, :width],
                                 valid[index, :width]).numpy()
            for key, summary in zip(first, computed, strict=True):
                found[key] = self._entries[key] = summary.copy()  # a copy frees the batch
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return torch.from_numpy(np.stack([found[key] for key in keys]))


def _used_slots(valid: Tensor) -> npt.NDArray[np.int64]:
    """(M,) per row: slots up to its last valid one (at least 1)."""
    mask = valid.numpy()
    slots = mask.shape[1]
    last = slots - np.argmax(mask[:, ::-1], axis=1)  # one past the last True; K when none
    return np.where(mask.any(axis=1), last, 1).astype(np.int64)


def _keys(graph: Tensor, positions: Tensor, valid: Tensor,
          used: npt.NDArray[np.int64]) -> list[bytes]:
    """The exact bytes of each row's graph features, positions and mask, slot by slot, up
    to its used slots (a slot's bytes are of fixed width, so the length tells the slot
    count): the three laid side by side once, so that a row's key is one slice's bytes."""
    mask = valid.numpy()
    rows, slots = mask.shape
    side_by_side = np.concatenate([np.ascontiguousarray(part).reshape(rows, slots, -1).view(
        np.uint8) for part in (graph.numpy(), positions.numpy(), mask)], axis=2)
    per_slot = side_by_side.shape[2]
    flat = side_by_side.reshape(rows, slots * per_slot)
    return [flat[row, :width * per_slot].tobytes() for row, width in enumerate(used.tolist())]
