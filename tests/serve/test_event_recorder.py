"""The scheduler's Events leave from a bounded queue: recording never waits on the API server,
what a full queue cannot hold is dropped and counted, close posts what is queued, and a
failed post does not stop the ones after it. (The live tests see the Events arrive.)"""

from __future__ import annotations

import threading
from typing import Any

from dagpilot.live.errors import KubeApiError
from dagpilot.serve.event_recorder import EventRecorder, PodEvent


class HeldApi:
    """An API whose Event POSTs wait until `release` is set; the first one fails."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.bodies: list[dict[str, Any]] = []

    def create_event(self, namespace: str, event: dict[str, Any]) -> dict[str, Any]:
        self.started.set()
        self.release.wait(30)
        self.bodies.append(event)
        if len(self.bodies) == 1:
            raise KubeApiError("test", "HTTP 500: refused", 500)
        return event


def _event(index: int) -> PodEvent:
    return PodEvent("ns", f"p{index}", f"uid-{index}", "Normal", "Scheduled", f"m{index}")


def test_a_full_queue_drops_and_counts_and_close_posts_the_rest() -> None:
    api, drops = HeldApi(), []
    recorder = EventRecorder(api, capacity=3, on_drop=lambda: drops.append(1))
    recorder.record(_event(0))
    assert api.started.wait(10)  # the thread holds event 0: the queue is empty again
    for index in range(1, 6):
        recorder.record(_event(index))  # 1-3 queued, 4 and 5 dropped, none waits
    assert recorder.dropped == 2 and len(drops) == 2
    api.release.set()
    recorder.close()
    assert [b["involvedObject"]["name"] for b in api.bodies] == ["p0", "p1", "p2", "p3"]
    assert recorder.posted == 3  # event 0's post failed; the thread went on


def test_an_event_names_its_pod_and_the_scheduler() -> None:
    api = HeldApi()
    api.release.set()
    recorder = EventRecorder(api, scheduler_name="dagpilot-b")
    recorder.record(PodEvent("team", "train-0", None, "Warning", "FailedScheduling", "0/3"))
    recorder.close()
    [body] = api.bodies
    assert body["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "team",
                                      "name": "train-0"}
    assert body["metadata"] == {"generateName": "train-0.", "namespace": "team"}
    assert (body["type"], body["reason"], body["message"]) == ("Warning", "FailedScheduling",
                                                               "0/3")
    assert body["source"] == {"component": "dagpilot-b"}
