"""Bindings, off the scheduling loop: a pods/binding POST that carries the decision too.

`Binder.bind` queues the bind in a small thread pool and returns at once (the loop has assumed
the pod in the view); each job POSTs the Binding (naming the pod's uid) with the
`dagpilot.io/decision` annotation in its metadata: the API server copies a Binding's
annotations onto the pod as it sets the node (registry/core/pod/storage
setPodHostAndAnnotations), so one request places and annotates. The Scheduled Event goes to
the EventRecorder's queue (serve/event_recorder.py), never holding a bind thread. The loop
collects the results (`done`) on its own thread and forgets the pods whose bind failed. A
failure is classified, not raised: `gone` (404: the pod was deleted), `conflict` (409: bound
meanwhile, or another pod of that name), `refused` (another 4xx, e.g. RBAC: retrying will not
help soon) or `retry` (timeouts, 5xx). Unschedulable pods get their PodScheduled=False
condition through the same pool and their FailedScheduling Event through the recorder.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

from dagpilot.core.scheduler import Placement
from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import KubeApi
from dagpilot.serve.event_recorder import COMPONENT, EventRecorder, PodEvent
from dagpilot.serve.explanation import DECISION_ANNOTATION

log = logging.getLogger(__name__)

BOUND, GONE, CONFLICT, REFUSED, RETRY = "bound", "gone", "conflict", "refused", "retry"
# binds in flight at once: a bind waits tens of ms on a busy API server (etcd's write), and
# kube-scheduler binds each pod in its own goroutine; 4 capped a backlog at 4 / bind time
BIND_WORKERS = 16


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
    if error.refused:
        return REFUSED
    return RETRY


class Binder:
    def __init__(self, api: KubeApi, *, workers: int = BIND_WORKERS,
                 scheduler_name: str = COMPONENT,
                 wakeup: threading.Event | None = None,
                 on_event_dropped: Callable[[], None] | None = None,
                 on_event_given_up: Callable[[], None] | None = None) -> None:
        self.api = api
        self.scheduler_name = scheduler_name
        self.requests = 0  # binding POSTs sent (what the two-replica test counts)
        self.events = EventRecorder(api, scheduler_name=scheduler_name,
                                    on_drop=on_event_dropped, on_give_up=on_event_given_up)
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
        self.events.close()  # after the pool: its last jobs may still queue Events

    def _bind(self, request: BindRequest) -> None:
        started = time.perf_counter()
        with self._count_lock:
            self.requests += 1
        try:
            self.api.bind(request.namespace, request.name, request.placement.node, request.uid,
                          annotations={DECISION_ANNOTATION: request.annotation})
        except KubeApiError as error:
            self._finish(BindResult(request, classify(error), error.message,
                                    time.perf_counter() - started))
            return
        except Exception as error:  # never lose a result: the loop must forget the pod
            self._finish(BindResult(request, RETRY, repr(error)[:300],
                                    time.perf_counter() - started))
            return
        self._finish(BindResult(request, BOUND, "", time.perf_counter() - started))
        self.events.record(PodEvent(request.namespace, request.name, request.uid,
                                    "Normal", "Scheduled", request.message))

    def _finish(self, result: BindResult) -> None:
        self._done.put(result)
        if self._wakeup is not None:
            self._wakeup.set()

    def _unschedulable(self, namespace: str, name: str, message: str) -> None:
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": message, "lastTransitionTime": _now(),
                     "lastProbeTime": None}
        try:
            self.api.patch_pod_status(namespace, name, {"status": {"conditions": [condition]}})
        except KubeApiError as error:
            log.info("pod %s/%s: no PodScheduled condition: %s", namespace, name,
                     error.message)
        self.events.record(PodEvent(namespace, name, None, "Warning", "FailedScheduling",
                                    message))


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
