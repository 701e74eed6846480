"""The fallback: the kube-default port (schedulers/kube_default.py) on the same live view.

Whatever stops the policy from deciding (no model, a refused model, an exception, a missed
deadline) hands the decision to kube-scheduler's default profile as dagpilot ports it, so a
pod is never left waiting on dagpilot's model. The port keeps per-cluster state: it is reset
whenever the view's Cluster object changes (a node added, removed, cordoned, relabelled).
Between two fallback calls the model places pods and held-back pods leave the pinned pending
list: when a pod the last call left pending is gone, the port's queue is rebuilt from the
view's list (its incremental follow assumes only its own placements remove pods, and a stale
pod queued twice crashed the loop with a TypeError from the queue's heap).
"""

from __future__ import annotations

import numpy as np

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView
from dagpilot.schedulers import kube_default
from dagpilot.schedulers.list_scheduler import ListScheduler


class Fallback:
    def __init__(self, seed: int = 0) -> None:
        self._scheduler: ListScheduler = kube_default.build()
        self._rng = np.random.default_rng(seed)
        self._cluster: Cluster | None = None
        self._left: set[int] = set()  # the PodRef uids the last call left pending

    def decide(self, view: ClusterView) -> Placement | None:
        pending = {pod.uid for pod in view.pending}
        if view.cluster is not self._cluster:
            self._cluster = view.cluster
            self._scheduler.reset(view.cluster, self._rng)
        elif not self._left <= pending:  # some left without this port placing them
            self._scheduler.resync()
        placement = self._scheduler.decide(view)
        if placement is not None:
            pending.discard(placement.pod.uid)
        self._left = pending
        return placement
