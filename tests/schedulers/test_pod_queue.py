"""GroupedQueue: group heads in order, blocking and reopening, stale heap entries skipped."""

from __future__ import annotations

from dagpilot.schedulers.ordering import KeyOrder, PrioritySort, creation
from dagpilot.schedulers.pod_queue import GroupedQueue
from tests.schedulers.views import job, pods_of, task

WORK = job("J", [task("a1", 1, 1), task("b1", 2, 1), task("a2", 1, 1), task("c1", 4, 1)])
A1, B1, A2, C1 = pods_of(WORK, ["a1", "b1", "a2", "c1"])
ROOMY = (8.0, 1e12, 0.0)


def heads(queue: GroupedQueue) -> list[str]:
    """Takes pods in queue order until none is left open."""
    taken = []
    while (group := queue.best()) is not None:
        taken.append(queue.take(group).task.id)
    return taken


def test_pods_come_out_in_order_across_groups() -> None:
    queue = GroupedQueue(KeyOrder(creation))
    for pod in (A1, B1, A2, C1):
        queue.add(pod)
    assert len(queue.groups) == 3  # a1 and a2 share a spec
    assert heads(queue) == ["a1", "b1", "a2", "c1"]
    assert queue.groups == {}


def test_blocked_groups_wait_and_reopen_only_if_they_might_fit() -> None:
    queue = GroupedQueue(PrioritySort())
    for pod in (A1, B1, A2, C1):
        queue.add(pod)
    big = queue.best()
    assert big is not None and big.head is A1
    queue.block(big, 1.0)  # the 1-cpu group fits nowhere
    assert heads(queue) == ["b1", "c1"]
    queue.unblock((0.5, 1e12, 0.0), now_s=2.0)  # half a core free: still too small
    assert queue.best() is None
    queue.unblock(ROOMY, now_s=3.0)
    assert heads(queue) == ["a1", "a2"]


def test_a_group_blocked_then_emptied_by_a_rebuild_is_forgotten() -> None:
    queue = GroupedQueue(KeyOrder(creation))
    queue.add(A1)
    group = queue.best()
    assert group is not None
    queue.block(group, 1.0)
    queue.clear()
    queue.unblock(ROOMY, now_s=2.0)
    queue.add(A2)
    assert heads(queue) == ["a2"]


def test_new_pod_of_a_blocked_group_waits_with_it() -> None:
    queue = GroupedQueue(KeyOrder(creation))
    queue.add(A1)
    group = queue.best()
    assert group is not None
    queue.block(group, 1.0)
    queue.add(A2)
    assert queue.best() is None
    queue.unblock(ROOMY, now_s=2.0)
    assert heads(queue) == ["a1", "a2"]
