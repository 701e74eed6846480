"""Shadow mode: dagpilot decides for the pods another scheduler places, and binds nothing.

The view follows the pods of `shadow_of` (default-scheduler). Each pod seen pending is decided
on once, as if it were the only one waiting (the decision's pending list is that pod), and a
"shadow" record goes to the journal: dagpilot's node (None when nothing fits), who decided
(model or fallback, with the model version) and the explanation, plus, once per job, the job as
an Argo Workflow with its arrival time ("shadow_job") and, whenever the inventory changes, the
cluster's Node objects ("shadow_cluster"), from which `dagpilot shadow report` replays the
recorded stream in the simulator. When the watch shows the pod bound, a
"shadow_outcome" record names the node the other scheduler chose. Pods first seen bound are
not decided on (counted as missed): the other scheduler was quicker than the watch. Nor are
the pods the view refuses (a required rule dagpilot does not implement: live/unsupported.py),
which dagpilot could not have placed.
"""

from __future__ import annotations

import logging
import queue
import threading
from datetime import UTC, datetime
from typing import Any

from dagpilot.core.view import PodRef
from dagpilot.journal import Journal
from dagpilot.live.inventory import node_manifest
from dagpilot.live.pods import PodRecord
from dagpilot.live.workflow_manifest import argo_name, workflow_manifest
from dagpilot.serve.decisions import Decider
from dagpilot.serve.explanation import explanation
from dagpilot.serve.scheduler_view import PinnedView, SchedulerView
from dagpilot.serve.serve_metrics import SchedulerMetrics

log = logging.getLogger(__name__)

KEEP_SHADOWED = 100_000  # pods remembered until their outcome; the oldest are forgotten


class ShadowLoop:
    def __init__(self, view: SchedulerView, decider: Decider, metrics: SchedulerMetrics,
                 journal: Journal | None) -> None:
        self.view = view
        self.decider = decider
        self.metrics = metrics
        self.journal = journal
        self.decided = 0
        self.outcomes = 0
        self._shadowed: dict[str, str | None] = {}  # API uid -> dagpilot's node
        self._jobs: set[str] = set()
        self._cluster: object = None  # the Cluster last journalled
        self._bound: queue.SimpleQueue[PodRecord] = queue.SimpleQueue()
        view.pod_listener = self._seen

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            if self.round() == 0:
                self.view.wakeup.wait(1.0)

    def round(self) -> int:
        view = self.view
        view.wakeup.clear()
        view.sync()
        self._record_outcomes()
        if self.journal is not None and view.cluster is not self._cluster:
            self._cluster = view.cluster
            self.journal.write("shadow_cluster", {"nodes": [node_manifest(spec)
                                                            for spec in view.cluster.nodes]})
        made = 0
        for pod in view.pending:
            uid = view.api_uid(pod)
            if uid is None or uid in self._shadowed:
                continue
            self._decide(pod, uid)
            made += 1
        self.metrics.queue_depth.set(len(view.pending))
        serving = self.decider.source.current()
        self.metrics.serving(serving.version if serving is not None else None)
        return made

    def _decide(self, pod: PodRef, uid: str) -> None:
        choice = self.decider.decide(PinnedView(self.view, (pod,)))
        self.metrics.decisions.labels(choice.outcome).inc()
        self.metrics.decision_seconds.observe(choice.decision_s)
        placement = choice.placement
        node = placement.node if placement is not None else None
        if len(self._shadowed) >= KEEP_SHADOWED:
            del self._shadowed[next(iter(self._shadowed))]
        self._shadowed[uid] = node
        self.decided += 1
        if self.journal is None:
            return
        key = self.view.pod_key(pod)
        if pod.job.id not in self._jobs:
            self._jobs.add(pod.job.id)
            self.journal.write("shadow_job", {"job": pod.job.id, "arrival_s": pod.created_s,
                                              "workflow": _workflow(pod)})
        record: dict[str, Any] = {
            "pod": key, "uid": uid, "job": pod.job.id, "task": pod.task.id,
            "instance": pod.instance, "node": node, "source": choice.outcome,
            "model": choice.version, "reason": choice.reason,
            "decision_ms": round(choice.decision_s * 1e3, 3)}
        if placement is not None:
            record["score"] = round(placement.score, 5)
            record["explanation"] = explanation(placement)
        self.journal.write("shadow", record)

    def _seen(self, record: PodRecord) -> None:
        """The watchers' threads: a pod record with a node (the loop matches it)."""
        if record.node is not None:
            self._bound.put(record)

    def _record_outcomes(self) -> None:
        while True:
            try:
                record = self._bound.get_nowait()
            except queue.Empty:
                return
            if record.uid not in self._shadowed:
                continue
            chosen = self._shadowed.pop(record.uid)
            self.outcomes += 1
            if self.journal is not None:
                self.journal.write("shadow_outcome", {
                    "pod": record.key, "uid": record.uid, "node": record.node,
                    "dagpilot": chosen, "agree": chosen == record.node})


def _workflow(pod: PodRef) -> dict[str, Any]:
    """The pod's job as an Argo Workflow, stamped with its arrival (the report's stream)."""
    manifest = workflow_manifest(pod.job, name=argo_name(pod.job.id))
    manifest["metadata"]["creationTimestamp"] = datetime.fromtimestamp(
        pod.job.arrival_s or pod.created_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return manifest
