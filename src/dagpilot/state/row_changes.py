"""Which rows of a (rows, columns) array changed since the last one, bit for bit.

The memories that bring per-row results up to date between decisions (normalised node
features, the network's node embeddings) need the rows whose values differ from the last
decision's. Rows are compared as same-size integers, so the comparison is exact (a NaN equals
the same NaN, -0.0 differs from 0.0: both as the computation would see them), in one flat pass
(a reduction along each short row costs several times more).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
PROBE_ROWS = 32  # when all of the first rows changed, most likely all did: no full comparison


class RowChanges:
    """The last array seen (a private copy) and the rows that differ from it."""

    __slots__ = ("_differs", "_last")

    def __init__(self) -> None:
        self._last: npt.NDArray[Any] | None = None
        self._differs = np.empty((0, 0), dtype=np.bool_)  # kept: a fresh one costs page faults

    def forget(self) -> None:
        self._last = None

    def since_last(self, rows: npt.NDArray[Any], share: float = 1.0) -> Ints | None:
        """The indices of the rows of `rows` that differ from the last array (ascending), and
        remember `rows`. None when there is no last array of this shape and type, or more
        than `share` of the rows differ, or (with `share` below 1) each of the first
        PROBE_ROWS does: take every row as changed then."""
        last = self._last
        if last is None or last.shape != rows.shape or last.dtype != rows.dtype or rows.ndim != 2:
            self._last = rows.copy()
            return None
        bits = np.dtype(f"u{rows.itemsize}")
        probe = min(PROBE_ROWS, len(rows))  # the clock moves a column of every row: seen here
        if probe and share < 1.0 and (rows[:probe].view(bits) != last[:probe].view(bits)).any(
                axis=1).all():
            np.copyto(last, rows)
            return None
        if self._differs.shape != rows.shape:
            self._differs = np.empty(rows.shape, dtype=np.bool_)
        differing = np.flatnonzero(np.not_equal(rows.view(bits), last.view(bits),
                                                out=self._differs))
        if len(differing) > share * rows.size:  # then more than that share of the rows too
            np.copyto(last, rows)
            return None
        at = differing // rows.shape[1]  # ascending, a row once per differing value
        changed = at[np.flatnonzero(np.diff(at, prepend=-1))]
        last[changed] = rows[changed]
        return None if len(changed) > share * len(rows) else changed
