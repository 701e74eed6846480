"""The scheduler's Events leave from a bounded queue: recording never waits on the API server,
what a full queue cannot hold is dropped and counted, close posts what is queued, a failure
that may pass (no answer, 429, 5xx) is tried again and any other is not, and a failed post
does not stop the ones after it. (The live tests see the Events arrive.)"""

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
            raise KubeApiError("test", "HTTP 403: forbidden", 403)
        return event


class FailingApi:
    """An API that fails each Event POST with the next of `failures`, then accepts."""

    def __init__(self, *failures: int | None) -> None:
        self.failures = list(failures)
        self.calls = 0

    def create_event(self, namespace: str, event: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.failures:
            status = self.failures.pop(0)
            raise KubeApiError("test", f"HTTP {status}", status)
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
    assert recorder.posted == 3  # event 0's post was refused; the thread went on
    assert recorder.given_up == 1


def _posted(api: FailingApi) -> EventRecorder:
    recorder = EventRecorder(api, backoff_s=(0.0, 0.0))
    recorder.record(_event(0))
    recorder.close()
    return recorder


def test_a_failure_that_may_pass_is_tried_again() -> None:
    api = FailingApi(503, None)  # a server error, then no answer at all
    recorder = _posted(api)
    assert (api.calls, recorder.posted, recorder.given_up) == (3, 1, 0)
    api = FailingApi(429)
    assert (_posted(api).posted, api.calls) == (1, 2)


def test_an_event_is_given_up_after_three_tries_or_at_once_when_refused() -> None:
    api, given_up = FailingApi(500, 502, 504), []
    recorder = EventRecorder(api, backoff_s=(0.0, 0.0), on_give_up=lambda: given_up.append(1))
    recorder.record(_event(0))
    recorder.close()
    assert (api.calls, recorder.posted, recorder.given_up, len(given_up)) == (3, 0, 1, 1)
    api = FailingApi(422)  # the API server refused this Event: trying again cannot help
    recorder = _posted(api)
    assert (api.calls, recorder.posted, recorder.given_up) == (1, 0, 1)


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
