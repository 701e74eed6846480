"""Weighted scoring, as the kube-scheduler framework does it: each plugin scores the feasible
nodes, normalises over them, and the node total is the weighted sum."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import NodeSpec, Task
from dagpilot.decide.node_arrays import Floats, NodeArrays
from dagpilot.decide.scores import SCORES, Score
from dagpilot.decide.scores.base import identity
from dagpilot.decide.signature import constraint_key


@dataclass(frozen=True, slots=True)
class _StaticRaw:
    raw: Floats
    constant: float | None  # the normalised score when every node's raw score is equal


class Scoring:
    """Totals over the feasible nodes; static plugins' raw scores are cached per constraint key."""

    def __init__(self, weighted: Sequence[tuple[Score, int]]) -> None:
        self.weighted = tuple(weighted)
        self._specs: tuple[NodeSpec, ...] = ()
        self._cache: dict[tuple[int, Hashable], _StaticRaw] = {}

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

    def _static(self, position: int, score: Score, task: Task, nodes: NodeArrays) -> _StaticRaw:
        if nodes.specs is not self._specs:
            self._specs, self._cache = nodes.specs, {}
        key = (position, constraint_key(task))
        cached = self._cache.get(key)
        if cached is None:
            raw = score.scores(task, nodes)
            equal = bool(raw.size) and bool((raw == raw[0]).all())
            constant = float(score.normalize(raw[:1])[0]) if equal else None
            cached = self._cache[key] = _StaticRaw(raw, constant)
        return cached
