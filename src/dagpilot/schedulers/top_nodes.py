"""TopNodes: for one feasibility mask and one array of totals, the best total among the feasible
nodes and every node that has it, kept current from decision to decision.

kube-scheduler draws its node among those with the top score. Recomputing that from the arrays
takes a few vector passes per pod; but between two decisions only the rows the NodeLog names
change (usually the one node the previous pod went to), so the top is updated row by row: a row
that rises above the best becomes the only winner, one that reaches it joins the winners, one
that leaves it is dropped, and only when no winner is left is the top recomputed.

A total that is NaN is no score: it ranks below every number (UNSCORED), so such a node wins
only when no candidate scores, and then they all tie and kube-default draws among them all;
the choice's score is then NaN. The native kube-default does the same (csrc/kube_choice.c,
held to `top_of` by tests/native/test_native_equals_python.py).
"""

from __future__ import annotations

import math
import sys
from bisect import insort

import numpy as np
import numpy.typing as npt

from dagpilot.decide.node_arrays import Bools, Floats
from dagpilot.decide.node_log import NodeLog

MAX_TRACKED = 256  # masks followed at once; past this the oldest are forgotten
UNSCORED = -sys.float_info.max  # a NaN total: below every score, above an infeasible node


def scored(totals: Floats) -> Floats:
    """The totals with NaN (no score) as UNSCORED; the same array when none is NaN."""
    unscored = np.isnan(totals)
    return np.where(unscored, UNSCORED, totals) if unscored.any() else totals


def top_of(totals: Floats) -> tuple[float, npt.NDArray[np.intp]]:
    """(the best of the candidates' totals, the positions of those that have it, in order);
    when no candidate scores, every position, and NaN."""
    ranked = scored(totals)
    best = float(ranked.max())
    return (float("nan") if best == UNSCORED else best), np.flatnonzero(ranked == best)


class _Top:
    __slots__ = ("best", "feasible", "log", "masked", "position", "totals", "winners")

    def __init__(self, feasible: Bools, totals: Floats) -> None:
        self.feasible = feasible
        self.totals = totals
        # -inf where it does not fit, UNSCORED where the total is NaN
        self.masked: Floats = np.where(feasible, scored(totals), -np.inf)
        self.best = float(self.masked.max())
        self.winners: list[int] = (self.masked == self.best).nonzero()[0].tolist()
        self.log: NodeLog | None = None
        self.position = -1

    def update(self, rows: list[int]) -> None:
        masked, feasible, totals = self.masked, self.feasible, self.totals
        best, winners = self.best, self.winners
        for row in rows:
            new = float(totals[row]) if feasible[row] else -np.inf
            if math.isnan(new):  # no score
                new = UNSCORED
            old = float(masked[row])
            if new == old:
                continue
            masked[row] = new
            if old == best:
                winners.remove(row)
            if new > best:
                best, winners = new, [row]
            elif new == best:
                insort(winners, row)
        if not winners:  # the last winner fell: find the new top
            best = float(masked.max())
            winners = (masked == best).nonzero()[0].tolist()
        self.best, self.winners = best, winners


class TopNodes:
    """The top of (feasible, totals) pairs; both arrays must be kept current in place between
    calls (a new array object starts afresh)."""

    def __init__(self) -> None:
        self._tops: dict[int, _Top] = {}

    def top(self, feasible: Bools, totals: Floats, log: NodeLog | None) -> tuple[float, list[int]]:
        """(the best total among the feasible nodes, the nodes that have it, in index order;
        UNSCORED and every feasible node when none scores). The list is shared: do not
        modify."""
        top = self._tops.get(id(feasible))
        rows = None
        if top is not None and top.feasible is feasible and top.totals is totals \
                and log is not None and top.log is log:
            rows = log.since(top.position)
        if top is None or rows is None or top.feasible is not feasible \
                or top.totals is not totals:
            if len(self._tops) >= MAX_TRACKED:
                self._tops.clear()
            top = self._tops[id(feasible)] = _Top(feasible, totals)
        elif rows:
            top.update(rows)
        top.log = log
        top.position = -1 if log is None else log.end
        return top.best, top.winners
