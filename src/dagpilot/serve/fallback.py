"""The fallback: the kube-default port (schedulers/kube_default.py) on the same live view.

Whatever stops the policy from deciding (no model, a refused model, an exception, a missed
deadline) hands the decision to kube-scheduler's default profile as dagpilot ports it, so a
pod is never left waiting on dagpilot's model. The port keeps per-cluster state: it is reset
whenever the view's Cluster object changes (a node added, removed, cordoned, relabelled).
"""

from __future__ import annotations

import numpy as np

from dagpilot.core.scheduler import Placement, Scheduler
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView
from dagpilot.schedulers import kube_default


class Fallback:
    def __init__(self, seed: int = 0) -> None:
        self._scheduler: Scheduler = kube_default.build()
        self._rng = np.random.default_rng(seed)
        self._cluster: Cluster | None = None

    def decide(self, view: ClusterView) -> Placement | None:
        if view.cluster is not self._cluster:
            self._cluster = view.cluster
            self._scheduler.reset(view.cluster, self._rng)
        return self._scheduler.decide(view)
