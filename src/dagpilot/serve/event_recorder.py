"""The scheduler's Events, posted off the bind path by one thread from a bounded queue.

A Scheduled or FailedScheduling Event is a note for people, not part of the placement:
kube-scheduler's event broadcaster is asynchronous too and drops what its queue cannot hold
(1,000 events). `record` never blocks: it queues the Event, or counts it in `dropped` (and
calls `on_drop`) when the queue is full. `close` posts what is queued, within `drain_s`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from dagpilot.live.errors import KubeApiError

log = logging.getLogger(__name__)

CAPACITY = 1000  # kube-scheduler's maxQueuedEvents
COMPONENT = "dagpilot"


class EventApi(Protocol):
    def create_event(self, namespace: str, event: dict[str, Any]) -> Any: ...


@dataclass(frozen=True)
class PodEvent:
    namespace: str
    name: str
    uid: str | None
    kind: str  # Normal or Warning
    reason: str  # Scheduled, FailedScheduling
    message: str


class EventRecorder:
    def __init__(self, api: EventApi, *, scheduler_name: str = COMPONENT,
                 capacity: int = CAPACITY, on_drop: Callable[[], None] | None = None) -> None:
        self.api = api
        self.scheduler_name = scheduler_name
        self.dropped = 0  # Events the full queue refused
        self.posted = 0  # Events the API server accepted
        self._on_drop = on_drop
        self._queue: queue.Queue[PodEvent | None] = queue.Queue(maxsize=capacity)
        self._thread = threading.Thread(target=self._post_all, name="dagpilot-events",
                                        daemon=True)
        self._thread.start()

    def record(self, event: PodEvent) -> None:
        """Queues `event`; never blocks (a full queue drops it, counted)."""
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1
            if self._on_drop is not None:
                self._on_drop()

    def close(self, drain_s: float = 10.0) -> None:
        """Posts what is queued (at most `drain_s`), then stops the thread."""
        deadline = time.monotonic() + drain_s
        while True:  # the stop marker needs a free slot: wait for one, within the deadline
            try:
                self._queue.put(None, timeout=max(0.0, deadline - time.monotonic()))
                break
            except queue.Full:
                if time.monotonic() >= deadline:
                    self._discard_queued()
        self._thread.join(max(0.0, deadline - time.monotonic()))

    def _discard_queued(self) -> None:
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return
            self.dropped += 1

    def _post_all(self) -> None:
        while (event := self._queue.get()) is not None:
            try:
                self.api.create_event(event.namespace, self._body(event))
                self.posted += 1
            except KubeApiError as error:
                log.info("pod %s/%s: no %s Event: %s", event.namespace, event.name,
                         event.reason, error.message)
            except Exception:  # the thread must outlive one bad post
                log.exception("pod %s/%s: no %s Event", event.namespace, event.name,
                              event.reason)

    def _body(self, event: PodEvent) -> dict[str, Any]:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        involved: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                                    "namespace": event.namespace, "name": event.name}
        if event.uid is not None:
            involved["uid"] = event.uid
        return {"apiVersion": "v1", "kind": "Event",
                "metadata": {"generateName": f"{event.name[:200]}.",
                             "namespace": event.namespace},
                "involvedObject": involved, "type": event.kind, "reason": event.reason,
                "message": event.message, "source": {"component": self.scheduler_name},
                "reportingComponent": self.scheduler_name, "reportingInstance": COMPONENT,
                "firstTimestamp": now, "lastTimestamp": now, "count": 1}
