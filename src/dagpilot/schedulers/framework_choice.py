"""FrameworkChoice: kube-scheduler's node selection for one pod: partial node search, weighted
normalised scores over the feasible nodes, and a uniform draw among the top-scoring ones
(`selectHost` keeps a reservoir sample of the nodes with the maximum score). A NaN total is no
score (top_nodes.py): when no candidate scores, the draw is among them all, the score NaN."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.node_arrays import Bools, NodeArrays
from dagpilot.decide.scoring import Scoring
from dagpilot.schedulers.node_choice import Choice, NodeChoice
from dagpilot.schedulers.node_sampling import first_feasible_indices, nodes_to_find
from dagpilot.schedulers.top_nodes import UNSCORED, TopNodes, top_of


class FrameworkChoice(NodeChoice):
    def __init__(self, scoring: Scoring, rng: np.random.Generator, percentage: int = 0) -> None:
        self._scoring = scoring
        self._rng = rng
        self._percentage = percentage
        self._start = 0  # nextStartNodeIndex
        self._limits: dict[int, int] = {}  # numFeasibleNodesToFind by cluster size
        self._top = TopNodes()

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        total = len(nodes)
        limit = self._limits.get(total)
        if limit is None:
            limit = self._limits[total] = nodes_to_find(total, self._percentage)
        separable = self._scoring.node_totals(pod.task, nodes)
        if separable is not None and limit >= total:  # every feasible node, totals kept current
            raw, constant = separable
            best, winners = self._top.top(feasible, raw, nodes.log)
            pick = 0 if len(winners) == 1 else int(self._rng.integers(len(winners)))
            return winners[pick], (float("nan") if best == UNSCORED else best + constant)
        candidates, examined = first_feasible_indices(feasible, self._start, limit)
        self._start = (self._start + examined) % total
        if separable is not None:
            raw, constant = separable
            best, positions = top_of(raw[candidates])
            return self._draw(candidates[positions], best + constant)
        best, positions = top_of(self._scoring.totals(pod.task, nodes, candidates))
        return self._draw(candidates[positions], best)

    def _draw(self, winners: npt.NDArray[np.intp], best: float) -> Choice:
        """`selectHost`: a uniform draw among the nodes with the top score."""
        pick = 0 if len(winners) == 1 else int(self._rng.integers(len(winners)))
        return int(winners[pick]), float(best)
