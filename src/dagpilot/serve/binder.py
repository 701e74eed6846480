"""Bindings, off the scheduling loop: a pods/binding POST, then what a bind leaves behind.

`Binder.bind` queues the bind in a small thread pool and returns at once (the loop has assumed
the pod in the view); each job POSTs the Binding (naming the pod's uid), then annotates the pod
with `dagpilot.io/decision` and records the Scheduled Event. The loop collects the results
(`done`) on its own thread and forgets the pods whose bind failed. A failure is classified, not
raised: `gone` (404: the pod was deleted), `conflict` (409: bound meanwhile, or another pod of
that name), `refused` (another 4xx, e.g. RBAC: retrying will not help soon) or `retry`
(timeouts, 5xx). Unschedulable pods get their PodScheduled=False condition and FailedScheduling
Event through the same pool.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dagpilot.core.scheduler import Placement
from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import KubeApi
from dagpilot.serve.explanation import DECISION_ANNOTATION

log = logging.getLogger(__name__)

BOUND, GONE, CONFLICT, REFUSED, RETRY = "bound", "gone", "conflict", "refused", "retry"
COMPONENT = "dagpilot"


@dataclass(frozen=True)
class BindRequest:
    placement: Placement
    namespace: str
    name: str
    uid: str | None
    annotation: str
    message: str  # the Scheduled Event's


@dataclass(frozen=True)
class BindResult:
    request: BindRequest
    result: str  # BOUND, GONE, CONFLICT, REFUSED or RETRY
    detail: str
    bind_s: float


def classify(error: KubeApiError) -> str:
    if error.status == 404:
        return GONE
    if error.status == 409:
        return CONFLICT
    if error.status is not None and 400 <= error.status < 500 and error.status != 429:
        return REFUSED
    return RETRY


class Binder:
    def __init__(self, api: KubeApi, *, workers: int = 4, scheduler_name: str = COMPONENT,
                 wakeup: threading.Event | None = None) -> None:
        self.api = api
        self.scheduler_name = scheduler_name
        self.requests = 0  # binding POSTs sent (what the two-replica test counts)
        self._wakeup = wakeup  # set when a result is in: the loop collects it
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dagpilot-bind")
        self._done: queue.SimpleQueue[BindResult] = queue.SimpleQueue()
        self._count_lock = threading.Lock()
        self.in_flight = 0  # the loop's thread only

    def bind(self, request: BindRequest) -> None:
        self.in_flight += 1
        self._pool.submit(self._bind, request)

    def done(self) -> list[BindResult]:
        """The results that have come back since the last call (the loop's thread)."""
        results = []
        while True:
            try:
                results.append(self._done.get_nowait())
            except queue.Empty:
                break
        self.in_flight -= len(results)
        return results

    def mark_unschedulable(self, namespace: str, name: str, message: str) -> None:
        self._pool.submit(self._unschedulable, namespace, name, message)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)

    def _bind(self, request: BindRequest) -> None:
        started = time.perf_counter()
        with self._count_lock:
            self.requests += 1
        try:
            self.api.bind(request.namespace, request.name, request.placement.node, request.uid)
        except KubeApiError as error:
            self._finish(BindResult(request, classify(error), error.message,
                                    time.perf_counter() - started))
            return
        except Exception as error:  # never lose a result: the loop must forget the pod
            self._finish(BindResult(request, RETRY, repr(error)[:300],
                                    time.perf_counter() - started))
            return
        self._finish(BindResult(request, BOUND, "", time.perf_counter() - started))
        self._after_bind(request)

    def _finish(self, result: BindResult) -> None:
        self._done.put(result)
        if self._wakeup is not None:
            self._wakeup.set()

    def _after_bind(self, request: BindRequest) -> None:
        try:
            self.api.patch_pod(request.namespace, request.name, {
                "metadata": {"annotations": {DECISION_ANNOTATION: request.annotation}}})
        except KubeApiError as error:
            log.info("pod %s/%s: no decision annotation: %s", request.namespace,
                     request.name, error.message)
        self._event(request.namespace, request.name, request.uid, kind="Normal",
                    reason="Scheduled", message=request.message)

    def _unschedulable(self, namespace: str, name: str, message: str) -> None:
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": message, "lastTransitionTime": _now(),
                     "lastProbeTime": None}
        try:
            self.api.patch_pod_status(namespace, name, {"status": {"conditions": [condition]}})
        except KubeApiError as error:
            log.info("pod %s/%s: no PodScheduled condition: %s", namespace, name,
                     error.message)
        self._event(namespace, name, None, kind="Warning", reason="FailedScheduling",
                    message=message)

    def _event(self, namespace: str, name: str, uid: str | None, *, kind: str, reason: str,
               message: str) -> None:
        now = _now()
        involved: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "namespace": namespace,
                                    "name": name}
        if uid is not None:
            involved["uid"] = uid
        event = {"apiVersion": "v1", "kind": "Event",
                 "metadata": {"generateName": f"{name[:200]}.", "namespace": namespace},
                 "involvedObject": involved, "type": kind, "reason": reason,
                 "message": message, "source": {"component": self.scheduler_name},
                 "reportingComponent": self.scheduler_name, "reportingInstance": COMPONENT,
                 "firstTimestamp": now, "lastTimestamp": now, "count": 1}
        try:
            self.api.create_event(namespace, event)
        except KubeApiError as error:
            log.info("pod %s/%s: no %s Event: %s", namespace, name, reason, error.message)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
