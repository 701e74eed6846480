"""The last outputs of a row-wise computation, brought up to date row by row, for inference.

The node encoder and the pair scorer's key projection map each node's feature row to its
embedding and key alone, and between two decisions of one decision point few rows change:
the nodes that took a pod (a scrape, or the clock moving the signals' age, changes them all).
So the last input and outputs are remembered and only the rows whose bytes differ
(`state.row_changes`) go through the layers again; at 1,000 nodes that is about 0.1 ms instead of
0.5. The rows go in one block of at least MIN_BLOCK: for one to three rows the BLAS takes
kernels that round differently from the full pass (MKL with AVX2), and a row must come out
bit for bit as the full pass gives it, or exact ties between identical nodes (greedy takes
the first) would break another way. Many changed rows get a full pass: gathering and
scattering them would cost more, and so does the bookkeeping itself on few rows: up to
`full_rows` (FULL_ROWS) every call is a full pass.

The memory is for one (N, D) input at a time, and forgets everything when the weights it
depends on change (`WeightsWatch`); call `clear` after writing into `parameter.data`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from dagpilot.policy.weights_watch import WeightsWatch
from dagpilot.state.row_changes import RowChanges

MIN_BLOCK = 16  # rows per partial pass; the first rows fill it up (they come out the same)
FULL_SHARE = 0.25  # more changed rows than this share of them: one full pass
FULL_ROWS = 256
"""Up to this many rows every call is a full pass, and nothing is remembered: finding the
changed rows and computing a block costs more (on an AMD EPYC, 256 against 80 us at 100 nodes,
about equal at 800; 246 against 310 at 1,000, 338 against 1,464 at 5,000)."""

Compute = Callable[[Tensor], tuple[Tensor, ...]]


class RowMemory:
    """`compute(rows)` of the last (N, D) rows; `full_passes` and `partial_passes` count
    the calls that computed every row and those that computed a block (for tests)."""

    __slots__ = ("_changes", "_outputs", "_watch", "full_passes", "full_rows",
                 "partial_passes")

    def __init__(self, full_rows: int = FULL_ROWS) -> None:
        self.full_rows = full_rows  # up to this many rows: full passes, nothing remembered
        self._changes = RowChanges()
        self._outputs: tuple[Tensor, ...] = ()
        self._watch = WeightsWatch()
        self.full_passes = 0
        self.partial_passes = 0

    def clear(self) -> None:
        self._changes.forget()
        self._outputs = ()

    def outputs(self, rows: Tensor, parameters: Sequence[Tensor],
                compute: Compute) -> tuple[Tensor, ...]:
        """`compute(rows)` for (N, D) rows, where each output row depends on its input row
        alone, through these `parameters`. The outputs are the memory's own, updated in place
        by the next call: read them before, and never write into them."""
        if len(rows) <= self.full_rows:
            self.full_passes += 1
            with torch.inference_mode():
                return compute(rows)
        if self._watch.moved(parameters):
            self.clear()
        changed = self._changes.since_last(rows.numpy(), FULL_SHARE)
        if len(rows) < 2 * MIN_BLOCK or not self._outputs:
            changed = None
        # Inference mode also under no_grad: the outputs are inference tensors, which may be
        # updated in place only there.
        with torch.inference_mode():
            if changed is None:
                self._outputs = compute(rows)
                self.full_passes += 1
            elif len(changed):
                self._update(rows, changed, compute)
        return self._outputs

    def _update(self, rows: Tensor, changed: npt.NDArray[np.int64], compute: Compute) -> None:
        """Compute the changed rows (in one block with the first MIN_BLOCK) into the
        remembered outputs."""
        block = np.zeros(len(rows), dtype=np.bool_)
        block[changed] = True
        block[:MIN_BLOCK] = True
        index = torch.from_numpy(np.flatnonzero(block))
        for old, new in zip(self._outputs, compute(rows[index]), strict=True):
            old.index_copy_(0, index, new)
        self.partial_passes += 1
