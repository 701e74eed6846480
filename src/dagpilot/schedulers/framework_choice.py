"""FrameworkChoice: kube-scheduler's node selection for one pod: partial node search, weighted
normalised scores over the feasible nodes, and a uniform draw among the top-scoring ones
(`selectHost` keeps a reservoir sample of the nodes with the maximum score)."""

from __future__ import annotations

import numpy as np

from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.node_arrays import Bools, NodeArrays
from dagpilot.decide.scoring import Scoring
from dagpilot.schedulers.node_choice import Choice, NodeChoice
from dagpilot.schedulers.node_sampling import first_feasible, nodes_to_find


class FrameworkChoice(NodeChoice):
    def __init__(self, scoring: Scoring, rng: np.random.Generator, percentage: int = 0) -> None:
        self._scoring = scoring
        self._rng = rng
        self._percentage = percentage
        self._start = 0  # nextStartNodeIndex

    def choose(self, pod: PodRef, feasible: Bools, allowed: Bools, nodes: NodeArrays,
               view: ClusterView) -> Choice | None:
        total = len(nodes)
        limit = nodes_to_find(total, self._percentage)
        found, examined = first_feasible(feasible, self._start, limit)
        self._start = (self._start + examined) % total
        candidates = np.flatnonzero(found)
        totals = self._scoring.totals(pod.task, nodes, candidates)
        best = totals[totals.argmax()]
        winners = candidates[totals == best]
        pick = 0 if len(winners) == 1 else int(self._rng.integers(len(winners)))
        return int(winners[pick]), float(best)
