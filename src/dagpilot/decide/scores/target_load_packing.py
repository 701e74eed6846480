"""TargetLoadPacking (Trimaran, kubernetes-sigs/scheduler-plugins `targetloadpacking.go`).

Predicted CPU use of a node, in percent of its capacity:
  100 * (measured cores + pods bound since the sample + the incoming pod) / capacity,
a pod predicted at its CPU limit when it has one, else at 1.5 x its request, else 1 core
(`PredictUtilisation`, requests multiplier 1.5, default 1000m). With target T (40 % default):
  predicted <= T:        score = round((100 - T) * predicted / T + T)
  T < predicted <= 100:  score = round(T * (100 - predicted) / (100 - T))
  predicted > 100:       score = 0
So nodes are packed towards T and spread past it. No normalisation. The metrics are the
sampled NodeSignals (stale by up to one scrape); `placed_since_sample` covers the pods the
sample cannot show yet (Trimaran's ScheduledPodsCache), each counted at 1.5 x its request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dagpilot.core.types import Task
from dagpilot.decide.node_arrays import CPU, Floats, NodeArrays
from dagpilot.decide.scores.base import identity

REQUESTS_MULTIPLIER = 1.5
DEFAULT_MILLI_CORES = 1000.0


def round_half_away(values: Floats) -> Floats:
    """Go's math.Round for the non-negative values here (numpy's rint rounds half to even)."""
    rounded: Floats = np.floor(values + 0.5)
    return rounded


def predicted_pod_milli(task: Task) -> float:
    if task.limits is not None and task.limits.cpu > 0:
        return float(np.rint(task.limits.cpu * 1000.0))
    if task.requests.cpu > 0:
        return float(round_half_away(np.array(task.requests.cpu * 1000.0 * REQUESTS_MULTIPLIER)))
    return DEFAULT_MILLI_CORES


@dataclass(frozen=True)
class TargetLoadPacking:
    target_percent: float = 40.0
    name: ClassVar[str] = "TargetLoadPacking"
    static: ClassVar[bool] = False
    normalize = staticmethod(identity)

    def scores(self, task: Task, nodes: NodeArrays) -> Floats:
        signals = [state.signals for state in nodes.states]
        measured = np.array([s.cpu_used for s in signals]) * 1000.0
        unseen = np.array([s.placed_since_sample.cpu for s in signals]) * 1000.0
        capacity = np.rint(nodes.allocatable[:, CPU] * 1000.0)
        load = measured + round_half_away(unseen * REQUESTS_MULTIPLIER) + predicted_pod_milli(task)
        predicted = 100.0 * load / np.where(capacity > 0, capacity, 1.0)
        target = self.target_percent
        below = round_half_away((100.0 - target) * predicted / target + target)
        above = round_half_away(target * np.maximum(100.0 - predicted, 0.0) / (100.0 - target))
        score = np.where(predicted <= target, below, np.where(predicted > 100.0, 0.0, above))
        return np.where(capacity > 0, score, 0.0)
