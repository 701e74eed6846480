"""Queue orders: which pending pod comes next, and which pods share a group.

Smaller sort keys come first. Every order ends its keys with (creation time, uid), so ties
resolve to the older pod and the order is total.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Protocol

from dagpilot.core.view import PodRef
from dagpilot.decide.signature import placement_key
from dagpilot.schedulers.pod_queue import PodGroup, SortKey


class Order(Protocol):
    @property
    def random(self) -> bool:
        """Whether the next pod is drawn at random instead (the queue order is then unused)."""
        ...

    def group_key(self, pod: PodRef) -> Hashable: ...

    def key(self, pod: PodRef) -> SortKey: ...

    def head_key(self, group: PodGroup) -> SortKey: ...


def by_placement(pod: PodRef) -> Hashable:
    return placement_key(pod.task)


@dataclass(frozen=True)
class PrioritySort:
    """kube-scheduler's queue sort: higher priority first, then the earlier queue timestamp.

    The timestamp is the creation time, refreshed when the pod is found unschedulable
    (`AddUnschedulableIfNotPresent`), so a pod that failed waits behind pods queued before its
    failure. Groups hold one priority, so within a group the order is by creation time.
    """

    random: bool = False

    def group_key(self, pod: PodRef) -> Hashable:
        return (placement_key(pod.task), pod.priority)

    def key(self, pod: PodRef) -> SortKey:
        return (-pod.priority, pod.created_s, pod.uid)

    def head_key(self, group: PodGroup) -> SortKey:
        priority, created_s, uid = group.head_key
        return (priority, max(created_s, group.blocked_at), created_s, uid)


@dataclass(frozen=True)
class KeyOrder:
    """Smallest `key_of(pod)` first, then the older pod."""

    key_of: Callable[[PodRef], SortKey]
    group_of: Callable[[PodRef], Hashable] = by_placement
    random: bool = False

    def group_key(self, pod: PodRef) -> Hashable:
        return self.group_of(pod)

    def key(self, pod: PodRef) -> SortKey:
        return (*self.key_of(pod), pod.created_s, pod.uid)

    def head_key(self, group: PodGroup) -> SortKey:
        return group.head_key


def creation(pod: PodRef) -> SortKey:
    del pod
    return ()


@dataclass(frozen=True)
class RandomOrder:
    """A pending pod drawn uniformly among those that fit somewhere."""

    random: bool = True
    group_of: Callable[[PodRef], Hashable] = field(default=by_placement)

    def group_key(self, pod: PodRef) -> Hashable:
        return self.group_of(pod)

    def key(self, pod: PodRef) -> SortKey:
        return (pod.created_s, pod.uid)

    def head_key(self, group: PodGroup) -> SortKey:
        return group.head_key
