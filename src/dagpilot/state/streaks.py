"""How many samples running each node's storage has been congested.

A single view shows only the last sample, so "await > 50 ms three samples running" needs a
memory of the samples before: one AwaitStreaks per episode or live session (held by the
EncodeContext). A node's streak moves only when a new sample of it arrives (its `sampled_s`
changes), so encoding one view several times does not count a sample twice. Samples that
came and went between two encodings are not seen: the streak counts the samples observed. A
sample older than the last one seen (a new episode on the same cluster) restarts the count.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

MAX_STREAK = 10  # longer streaks say nothing more, and keep the feature bounded


class AwaitStreaks:
    """Per node: the sample time last counted and the congested samples running."""

    __slots__ = ("_last_sampled_s", "_streak")

    def __init__(self) -> None:
        self._last_sampled_s: Floats = np.empty(0)
        self._streak: Ints = np.empty(0, dtype=np.int64)

    def observe(self, sampled_s: Floats, congested: Bools, rows: Ints | None = None) -> Ints:
        """Count the nodes' new samples; returns every node's streak (a copy). With `rows`,
        the arrays hold those nodes only, in that order, and so does the result: for a
        caller that knows no other node has a new sample (after a call with every node)."""
        if rows is not None:
            return self._observe_rows(sampled_s, congested, rows)
        if self._streak.shape != sampled_s.shape:  # first call, or another cluster
            self._last_sampled_s = np.full(sampled_s.shape, np.nan)
            self._streak = np.zeros(sampled_s.shape, dtype=np.int64)
        fresh = sampled_s != self._last_sampled_s  # NaN never equals: the first sample counts
        # A sample older than the last one seen means a new episode: count from scratch.
        base = np.where(sampled_s < self._last_sampled_s, 0, self._streak)
        grown = np.minimum(base + 1, MAX_STREAK)
        self._streak = np.where(fresh, np.where(congested, grown, 0), self._streak)
        self._last_sampled_s = sampled_s.copy()
        return self._streak.copy()

    def _observe_rows(self, sampled_s: Floats, congested: Bools, rows: Ints) -> Ints:
        if not len(self._streak):
            raise ValueError("count every node's samples once before counting some rows")
        last, streak = self._last_sampled_s[rows], self._streak[rows]
        fresh = sampled_s != last
        base = np.where(sampled_s < last, 0, streak)
        grown = np.minimum(base + 1, MAX_STREAK)
        streak = np.where(fresh, np.where(congested, grown, 0), streak)
        self._streak[rows] = streak  # own arrays: only copies were handed out
        self._last_sampled_s[rows] = sampled_s
        return streak


def observe_lanes(lanes: Sequence[AwaitStreaks], sampled_s: Floats, congested: Bools) -> Ints:
    """`AwaitStreaks.observe` of several lanes' nodes at once (`state.lane_nodes`): the
    arrays hold each lane's nodes one lane after another, as many for each; each lane counts
    its own nodes' samples, by the same element-wise steps, in one pass."""
    count = len(sampled_s) // len(lanes) if lanes else 0
    if count * len(lanes) != len(sampled_s):
        raise ValueError("every lane needs as many nodes as the others")
    for streaks in lanes:
        if streaks._streak.shape != (count,):  # first call, or another cluster
            streaks._last_sampled_s = np.full(count, np.nan)
            streaks._streak = np.zeros(count, dtype=np.int64)
    last = np.concatenate([streaks._last_sampled_s for streaks in lanes])
    streak = np.concatenate([streaks._streak for streaks in lanes])
    fresh = sampled_s != last
    base = np.where(sampled_s < last, 0, streak)
    grown = np.minimum(base + 1, MAX_STREAK)
    streak = np.where(fresh, np.where(congested, grown, 0), streak)
    for lane, streaks in enumerate(lanes):
        rows = slice(lane * count, (lane + 1) * count)
        streaks._streak, streaks._last_sampled_s = streak[rows].copy(), sampled_s[rows].copy()
    return streak
