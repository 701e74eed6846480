"""The normalised node features of the last decision, brought up to date row by row.

Normalising is element-wise (each value by its feature's statistics), so a node whose raw
row did not change since the last decision has the same normalised row; between two decisions
of one decision point that is every node but the few that took a pod. Serving and
benchmarking normalise with one frozen Normaliser for the whole session, so the last output
is kept and only the changed rows (`RowChanges`) are normalised again: at 1,000 nodes with
trained statistics that is a few hundredths of a millisecond instead of about half of one.
Another normaliser, or node count, starts afresh. Each call hands out an array of its own.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dagpilot.state.normaliser import Normaliser
from dagpilot.state.observation import Observation
from dagpilot.state.row_changes import RowChanges
from dagpilot.state.schema import NODE

F32 = npt.NDArray[np.float32]
FULL_SHARE = 0.5  # more changed rows than this share (the clock moved): normalise all
FULL_ROWS = 2048
"""Up to this many rows every row is normalised: finding the changed ones costs more (with the
simulator: 55 against 18 us at 48 nodes, 124 against 88 at 1,000; 354 against 503 at 5,000)."""


class NormalisedNodes:
    """`normaliser.normalise`, with the node rows that did not change taken from last time."""

    __slots__ = ("_changes", "_normalised", "_normaliser", "full_rows")

    def __init__(self, full_rows: int = FULL_ROWS) -> None:
        self.full_rows = full_rows  # up to this many rows: normalise all, keep nothing
        self._changes = RowChanges()
        self._normaliser: Normaliser | None = None
        self._normalised: F32 | None = None

    def normalise(self, normaliser: Normaliser, observation: Observation) -> Observation:
        """What `normaliser.normalise(observation)` gives."""
        if observation.normalised:
            return observation
        return normaliser.normalise(observation,
                                    nodes=self.nodes(normaliser, observation.node_features))

    def nodes(self, normaliser: Normaliser, raw: F32) -> F32:
        """`normaliser.apply(NODE, raw)`, from the kept rows where `raw` did not change."""
        if len(raw) <= self.full_rows:
            return normaliser.apply(NODE, raw)
        changed = self._changes.since_last(raw, FULL_SHARE)
        kept = self._normalised
        if (changed is None or normaliser is not self._normaliser or kept is None
                or kept.shape != raw.shape):
            kept = self._normalised = normaliser.apply(NODE, raw)
            self._normaliser = normaliser
        elif len(changed):
            kept[changed] = normaliser.apply(NODE, raw[changed])
        return kept.copy()  # the caller's own: the kept one changes with the next call
