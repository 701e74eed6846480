"""The Score protocol: a kube-scheduler score plugin over all nodes at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from dagpilot.core.types import Task
from dagpilot.core.view import NodeState
from dagpilot.decide.node_arrays import Floats, NodeArrays
from dagpilot.decide.node_log import Row

MAX_NODE_SCORE = 100


class Score(Protocol):
    """Raw scores (integers held in floats, so that they are exact), then the plugin's
    NormalizeScore over the feasible nodes. `static` scores read only the pod spec and the
    node specs, so their raw arrays can be cached per constraint key."""

    @property
    def name(self) -> str: ...

    @property
    def static(self) -> bool: ...

    def scores(self, task: Task, nodes: NodeArrays) -> Floats: ...

    def normalize(self, raw: Floats) -> Floats: ...


RowScorer = Callable[[Row, tuple[float, float]], float]
"""One node's raw score for one pod, from the node's allocated (cpu, memory, GPUs) and its
(milli-CPU, memory) capacity, both positive."""


@runtime_checkable
class AllocationScore(Score, Protocol):
    """A score that reads only the pod's requests and the node's allocation and capacity, with
    no normalisation: `row_scorer(task)` scores one node from plain numbers, giving what
    `scores` gives that node, so a cache of raw scores can refresh only the nodes that
    changed."""

    def row_scorer(self, task: Task) -> RowScorer: ...


def score_one(score: Score, task: Task, node: NodeState) -> int:
    """One node's raw score: the vectorised formula on a one-node picture, so there is one
    formula per plugin."""
    return int(score.scores(task, NodeArrays.from_states([node]))[0])


def identity(raw: Floats) -> Floats:
    return raw


def floor_div(numerator: Floats, denominator: Floats | float) -> Floats:
    """Go's int64 division for non-negative integers held in float64 (exact below 2**53)."""
    result: Floats = np.floor_divide(numerator, denominator)
    return result
