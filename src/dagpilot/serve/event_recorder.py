"""The scheduler's Events, posted off the bind path by one thread from a bounded queue.

A Scheduled or FailedScheduling Event is a note for people, not part of the placement:
kube-scheduler's event broadcaster is asynchronous too and drops what its queue cannot hold
(1,000 events). `record` never blocks: it queues the Event, or counts it in `dropped` (and
calls `on_drop`) when the queue is full. A post the API server could not take for a passing
reason (no answer, 429, 5xx: not `KubeApiError.refused`) is tried again after `backoff_s`
(client-go's broadcaster, which kube-scheduler uses, tries an Event 12 times); a refusal gives
it up at once. `close` posts what is queued, within `drain_s`, without waiting between tries.
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
BACKOFF_S = (0.5, 2.0)  # the waits before the second and third try of a post


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
                 capacity: int = CAPACITY, on_drop: Callable[[], None] | None = None,
                 on_give_up: Callable[[], None] | None = None,
                 backoff_s: tuple[float, ...] = BACKOFF_S) -> None:
        self.api = api
        self.scheduler_name = scheduler_name
        self.dropped = 0  # Events the full queue refused
        self.posted = 0  # Events the API server accepted
        self.given_up = 0  # Events the API server refused, or did not take after every try
        self._on_drop = on_drop
        self._on_give_up = on_give_up
        self._backoff_s = backoff_s
        self._closing = threading.Event()
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
        self._closing.set()
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
            self._post(event)

    def _post(self, event: PodEvent) -> None:
        """One Event, tried again after each wait of `backoff_s` while the failure passes."""
        for wait_s in (*self._backoff_s, None):
            try:
                self.api.create_event(event.namespace, self._body(event))
                self.posted += 1
                return
            except KubeApiError as error:
                if wait_s is None or error.refused:
                    log.info("pod %s/%s: no %s Event: %s", event.namespace, event.name,
                             event.reason, error.message)
                    break
                self._closing.wait(wait_s)  # closing: the queue drains without waiting
            except Exception:  # the thread must outlive one bad post
                log.exception("pod %s/%s: no %s Event", event.namespace, event.name,
                              event.reason)
                break
        self.given_up += 1
        if self._on_give_up is not None:
            self._on_give_up()

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
