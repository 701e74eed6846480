"""The live view as a scheduler reads it.

`SchedulerView` is a LiveView that wakes the scheduling loop when an event arrives (no
polling), tells a pod's API uid, and passes every pod record it is fed to an optional
listener (shadow mode watches where another scheduler puts pods). `PinnedView` shows a view
with a pending list fixed when the decision starts: the pods the unschedulable queue lets
through, and a list that cannot change under a policy call that outlives its deadline. The
loop pins one PinnedView again for each decision (`pin`) while no call can still be reading it:
the decoder keeps the reasons each node rejects a pod spec for until the change log lists the
node, for the same view object only, so a new object per decision threw them all away.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, NodeState, PodRef
from dagpilot.live.kube_api import Resource
from dagpilot.live.pods import PodRecord
from dagpilot.live.view import LiveView
from dagpilot.live.watcher import Change, Relist

PodListener = Callable[[PodRecord], None]


class SchedulerView(LiveView):
    """Made as a LiveView is: `SchedulerView.connect(kubeconfig, ...)`, then `start`."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.wakeup = threading.Event()
        self.pod_listener: PodListener | None = None

    def feed(self, item: Relist | Change) -> None:
        super().feed(item)
        listener = self.pod_listener
        if listener is not None and item.resource is Resource.PODS:
            for record in item.records if isinstance(item, Relist) else (item.record,):
                if isinstance(record, PodRecord):
                    listener(record)
        self.wakeup.set()

    def api_uid(self, pod: PodRef) -> str | None:
        """The API server's uid of a PodRef this view gave (a bind names it: a pod deleted
        and created again under the same name is not bound by mistake)."""
        return self._uids.get(pod.uid)


class PinnedView:
    """A ClusterView delegating to `view`, with `pending` fixed."""

    def __init__(self, view: ClusterView, pending: Sequence[PodRef]) -> None:
        self._view = view
        self._pending = tuple(pending)

    def pin(self, pending: Sequence[PodRef]) -> PinnedView:
        """This view with another pending list (the next decision's); only while no policy
        call past its deadline may still be reading the list it has now."""
        self._pending = tuple(pending)
        return self

    @property
    def now_s(self) -> float:
        return self._view.now_s

    @property
    def cluster(self) -> Cluster:
        return self._view.cluster

    @property
    def nodes(self) -> Sequence[NodeState]:
        return self._view.nodes

    @property
    def pending(self) -> Sequence[PodRef]:
        return self._pending

    def job_nodes(self, job_id: str) -> Sequence[str]:
        return self._view.job_nodes(job_id)

    def rtt_ms(self, node_a: str, node_b: str) -> float:
        return self._view.rtt_ms(node_a, node_b)

    def finished_tasks(self, job_id: str) -> frozenset[str]:
        return self._view.finished_tasks(job_id)

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self._view.resource_arrays()

    def ready_mask(self) -> np.ndarray:
        return self._view.ready_mask()

    def signal_arrays(self) -> np.ndarray:
        return self._view.signal_arrays()

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        return self._view.changed_nodes(since)
