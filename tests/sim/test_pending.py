from __future__ import annotations

import pytest

from dagpilot.core.view import PodRef
from dagpilot.sim.pending import NEAR_END, PendingPods
from tests.sim.helpers import job, task

JOB = job("j", task("a", 1, instances=200))


def pods(count: int) -> dict[int, PodRef]:
    return {uid: PodRef(uid, JOB, JOB.tasks[0], uid, 0.0) for uid in range(count)}


@pytest.mark.parametrize("count", [0, 1, 5, NEAR_END * 2 + 7, 200])
def test_pending_pods_behave_like_a_tuple(count: int) -> None:
    queue = pods(count)
    view = PendingPods(queue)
    reference = tuple(queue.values())
    assert len(view) == count and bool(view) == bool(count)
    assert list(view) == list(reference)
    assert list(reversed(view)) == list(reversed(reference))
    for index in range(-count, count):
        assert view[index] is reference[index]
    for window in (slice(0, 8), slice(3, 5), slice(None, 2), slice(-3, None), slice(10, 150, 7)):
        assert tuple(view[window]) == reference[window]
    with pytest.raises(IndexError):
        view[count]
    with pytest.raises(IndexError):
        view[-count - 1]


def test_pending_pods_follow_the_queue_once_told() -> None:
    queue = pods(100)
    view = PendingPods(queue)
    assert view[50].uid == 50
    del queue[50]
    view.changed()
    assert view[50].uid == 51 and len(view) == 99
    assert view.index(queue[99]) == 98
