"""GroupedQueue: pending pods grouped by what filters and node choice read, each group ordered.

Pods of one group are interchangeable for feasibility, so a group that fits nowhere is blocked
as a whole (kube-scheduler's unschedulable pods) until resources are freed. The heads of the
open groups sit in a heap, so the next pod costs O(log groups), however many pods wait.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from itertools import count
from typing import TYPE_CHECKING

from dagpilot.core.view import PodRef
from dagpilot.decide.feasibility import LiveMask
from dagpilot.decide.filters.node_resources_fit import needs
from dagpilot.decide.node_arrays import Bools

if TYPE_CHECKING:
    from dagpilot.schedulers.ordering import Order

SortKey = tuple[float, ...]
Amounts = tuple[float, float, float]


class PodGroup:
    """Pods with one group key, a heap on the order's key; `blocked_at` is the last time the
    group fitted nowhere (kube-scheduler re-stamps a pod's queue time when it fails); `need`
    is the least free cpu, memory and GPUs a node must have for them."""

    __slots__ = ("blocked", "blocked_at", "entries", "feasible", "key", "need", "static_mask")

    def __init__(self, key: Hashable, pod: PodRef, blocked_at: float) -> None:
        self.key = key
        self.entries: list[tuple[SortKey, PodRef]] = []
        self.blocked = False
        self.blocked_at = blocked_at
        need = needs(pod.requests).tolist()
        self.need: Amounts = (need[0], need[1], need[2])
        self.static_mask: Bools | None = None
        self.feasible = LiveMask()  # where its pods fit, kept current across decisions

    @property
    def head(self) -> PodRef:
        return self.entries[0][1]

    @property
    def head_key(self) -> SortKey:
        return self.entries[0][0]

    def could_fit(self, most_free: Amounts) -> bool:
        """Whether some node might hold one of these pods: no resource asked beyond the largest
        free amount of any node (necessary, not sufficient)."""
        need = self.need
        return need[0] <= most_free[0] and need[1] <= most_free[1] and need[2] <= most_free[2]

    def __len__(self) -> int:
        return len(self.entries)


class GroupedQueue:
    def __init__(self, order: Order) -> None:
        self.order = order
        self.groups: dict[Hashable, PodGroup] = {}
        self._heads: list[tuple[SortKey, int, PodGroup]] = []  # open groups; stale ones skipped
        self._blocked: list[PodGroup] = []
        self._sequence = count()
        self._stamps: dict[Hashable, float] = {}  # blocked times kept across clear()

    def add(self, pod: PodRef) -> None:
        key = self.order.group_key(pod)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = PodGroup(key, pod, self._stamps.pop(key, float("-inf")))
        sort_key = self.order.key(pod)
        heapq.heappush(group.entries, (sort_key, pod))
        if not group.blocked and group.entries[0][0] == sort_key:
            self._push(group)

    def _push(self, group: PodGroup) -> None:
        heapq.heappush(self._heads, (self.order.head_key(group), next(self._sequence), group))

    def clear(self) -> None:
        """Forget every pod; blocked times survive so that queue order does not jump."""
        self._stamps = {key: group.blocked_at for key, group in self.groups.items()}
        self.groups, self._heads, self._blocked = {}, [], []

    def unblock(self, most_free: Amounts, now_s: float) -> None:
        """Resources were freed: reopen the blocked groups that might fit now. The others
        fail again at once, as kube-scheduler's retry would."""
        still = []
        for group in self._blocked:
            if not group.entries:  # emptied by a rebuild: forget it
                group.blocked = False
                if self.groups.get(group.key) is group:
                    del self.groups[group.key]
            elif group.could_fit(most_free):
                group.blocked = False
                self._push(group)
            else:
                group.blocked_at = now_s
                still.append(group)
        self._blocked = still

    def block(self, group: PodGroup, now_s: float) -> None:
        if not group.blocked:
            group.blocked = True
            self._blocked.append(group)
        group.blocked_at = now_s

    def open_groups(self) -> list[PodGroup]:
        return [group for group in self.groups.values() if group.entries and not group.blocked]

    def best(self) -> PodGroup | None:
        """The open group whose head comes first in the order."""
        heads, head_key = self._heads, self.order.head_key
        while heads:
            key, _, group = heads[0]
            if not group.blocked and group.entries and key == head_key(group):
                return group
            heapq.heappop(heads)  # stale: blocked, emptied, or its head changed since
        return None

    def take(self, group: PodGroup, position: int = 0) -> PodRef:
        """Remove and return the pod at `position` of an open group's heap (0: its head)."""
        entries = group.entries
        if position == 0:
            pod = heapq.heappop(entries)[1]
        else:
            pod = entries[position][1]
            entries[position] = entries[-1]
            entries.pop()
            heapq.heapify(entries)
        if not entries:
            # Pods joining later were created after any stamp, so the stamp can go too.
            del self.groups[group.key]
        else:
            self._push(group)
        return pod
