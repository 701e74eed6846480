"""Weighted scoring, as the kube-scheduler framework does it: each plugin scores the feasible
nodes, normalises over them, and the node total is the weighted sum."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import NodeSpec, Resources, Task
from dagpilot.decide.node_arrays import Floats, NodeArrays
from dagpilot.decide.node_log import NodeLog, Row
from dagpilot.decide.scores import SCORES, Score
from dagpilot.decide.scores.base import AllocationScore, RowScorer, identity
from dagpilot.decide.signature import constraint_key

MEMO_TASKS = 4096  # tasks remembered by identity before the memo starts afresh


@dataclass(frozen=True, slots=True)
class _StaticRaw:
    raw: Floats
    constant: float | None  # the normalised score when every node's raw score is equal


class _LiveTotals:
    """The weighted sum of the allocation plugins' raw scores for one request, on every node,
    as of a position of a NodeLog, and the function that scores one node."""

    __slots__ = ("log", "position", "raw", "score_row")

    def __init__(self, score_row: RowScorer) -> None:
        self.raw: Floats | None = None
        self.log: NodeLog | None = None
        self.position = -1
        self.score_row = score_row


def _weighted_sum(scorers: Sequence[tuple[RowScorer, int]]) -> RowScorer:
    if len(scorers) in (1, 2) and all(weight == 1 for _, weight in scorers):
        if len(scorers) == 1:
            return scorers[0][0]
        (first, _), (second, _) = scorers

        def pair(allocated: Row, capacity: tuple[float, float]) -> float:
            return first(allocated, capacity) + second(allocated, capacity)

        return pair  # kube-default's two allocation scores, without the loop

    def score(allocated: Row, capacity: tuple[float, float]) -> float:
        total = 0.0
        for scorer, weight in scorers:
            total += weight * scorer(allocated, capacity)
        return total

    return score


class Scoring:
    """Totals over the feasible nodes; static plugins' raw scores are cached per constraint key.

    When every plugin is either static with the same score on every node, or an allocation
    score (`AllocationScore`, no normalisation), a node's total depends on that node alone:
    `node_totals` then keeps every node's total per request and refreshes only the nodes the
    NodeLog says changed."""

    def __init__(self, weighted: Sequence[tuple[Score, int]]) -> None:
        self.weighted = tuple(weighted)
        self._specs: tuple[NodeSpec, ...] = ()
        self._cache: dict[tuple[int, Hashable], _StaticRaw] = {}
        self._by_allocation = tuple((score, weight) for score, weight in self.weighted
                                    if isinstance(score, AllocationScore)
                                    and score.normalize is identity)
        self._separable = all(score.static or (score, weight) in self._by_allocation
                              for score, weight in self.weighted)
        self._constants: dict[Hashable, float | None] = {}
        self._live: dict[Resources, _LiveTotals] = {}
        self._by_task: dict[int, tuple[Task, float | None, _LiveTotals | None]] = {}

    @classmethod
    def named(cls, weights: Sequence[tuple[str, int]]) -> Scoring:
        return cls([(SCORES[name], weight) for name, weight in weights])

    def totals(self, task: Task, nodes: NodeArrays, feasible: npt.NDArray[np.intp]) -> Floats:
        """Weighted, normalised totals for the nodes at the indices `feasible`."""
        direct: Floats | None = None  # plugins without normalisation, summed over all nodes
        normalised: Floats | None = None  # the others, over the feasible nodes
        constant = 0.0  # plugins that score every node alike add the same amount to each
        for position, (score, weight) in enumerate(self.weighted):
            if score.static:
                cached = self._static(position, score, task, nodes)
                if cached.constant is not None:
                    constant += weight * cached.constant
                    continue
                raw = cached.raw
            else:
                raw = score.scores(task, nodes)
            if weight != 1:
                raw = weight * raw if score.normalize is identity else raw
            if score.normalize is identity:
                direct = raw if direct is None else direct + raw
                continue
            part = score.normalize(raw[feasible])
            part = weight * part if weight != 1 else part
            normalised = part if normalised is None else normalised + part
        total = np.full(len(feasible), constant) if direct is None else direct[feasible] + constant
        return total if normalised is None else total + normalised

    def node_totals(self, task: Task, nodes: NodeArrays) -> tuple[Floats, float] | None:
        """(raw totals of every node, a constant to add to each), when every node's total
        depends on that node alone (see the class); else None, and `totals` is the way. The
        array is shared: do not modify; valid until the next call."""
        if not self._separable:
            return None
        self._same_cluster(nodes)
        memo = self._by_task.get(id(task))
        if memo is None or memo[0] is not task:  # pods of one task share the lookups
            constant = self._constant(task, nodes)
            live = None if constant is None else self._live_for(task)
            if len(self._by_task) > MEMO_TASKS:
                self._by_task.clear()
            memo = self._by_task[id(task)] = (task, constant, live)
        _, constant, live = memo
        if constant is None or live is None:
            return None
        return self._refresh(live, task, nodes), constant

    def _constant(self, task: Task, nodes: NodeArrays) -> float | None:
        """The static plugins' weighted total, when it is the same on every node."""
        key = constraint_key(task)
        if key not in self._constants:
            constant: float | None = 0.0
            for position, (score, weight) in enumerate(self.weighted):
                if score.static:
                    cached = self._static(position, score, task, nodes).constant
                    constant = None if cached is None or constant is None else \
                        constant + weight * cached
            self._constants[key] = constant
        return self._constants[key]

    def _live_for(self, task: Task) -> _LiveTotals:
        live = self._live.get(task.requests)
        if live is None:
            scorers = [(score.row_scorer(task), weight) for score, weight in self._by_allocation]
            live = self._live[task.requests] = _LiveTotals(_weighted_sum(scorers))
        return live

    def _refresh(self, live: _LiveTotals, task: Task, nodes: NodeArrays) -> Floats:
        """The live totals brought up to date: the changed rows only, when the log says which."""
        log, raw = nodes.log, live.raw
        rows = None
        if raw is not None and log is not None and log is live.log \
                and nodes.statics.capacity_positive:
            rows = log.since(live.position)
        if rows is None or raw is None or log is None:
            raw = np.zeros(len(nodes))
            for score, weight in self._by_allocation:
                raw += weight * score.scores(task, nodes) if weight != 1 else \
                    score.scores(task, nodes)
            live.raw = raw
        else:
            score_row = live.score_row
            allocated, capacity = log.allocated, nodes.statics.capacity_rows
            for row in rows:
                raw[row] = score_row(allocated[row], capacity[row])
        live.log = log
        live.position = -1 if log is None else log.end
        return raw

    def _same_cluster(self, nodes: NodeArrays) -> None:
        """Forget the caches when the nodes are those of another cluster."""
        if nodes.specs is not self._specs:
            self._specs, self._cache = nodes.specs, {}
            self._constants, self._live, self._by_task = {}, {}, {}

    def _static(self, position: int, score: Score, task: Task, nodes: NodeArrays) -> _StaticRaw:
        self._same_cluster(nodes)
        key = (position, constraint_key(task))
        cached = self._cache.get(key)
        if cached is None:
            raw = score.scores(task, nodes)
            equal = bool(raw.size) and bool((raw == raw[0]).all())
            constant = float(score.normalize(raw[:1])[0]) if equal else None
            cached = self._cache[key] = _StaticRaw(raw, constant)
        return cached
