"""Pods no node can take: kube-scheduler's message, and when to try them again.

The message is kube-scheduler's, word for word in form: "0/48 nodes are available: 12
Insufficient cpu, 36 node(s) had untolerated taint {k: v}." (each reason counted over the nodes
that give it, reasons in sorted order). A pod found unschedulable is held back from decisions
until the cluster changes (a node added or changed, a pod's resources freed) and its backoff has
passed, doubling from 1 s to at most 10 s per attempt, as kube-scheduler's unschedulable and
backoff queues do; after `flush_s` without any change it is tried again anyway.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from dagpilot.core.status import Status

INITIAL_BACKOFF_S = 1.0
MAX_BACKOFF_S = 10.0
FLUSH_S = 300.0  # kube-scheduler's podMaxInUnschedulablePodsDuration


def unschedulable_message(nodes: int,
                          rejected: Sequence[tuple[str, tuple[Status, ...]]]) -> str:
    counts: Counter[str] = Counter()
    for _, statuses in rejected:
        for status in statuses:
            counts.update(set(status.reasons or (status.plugin,)))
    body = ", ".join(f"{count} {reason}" for reason, count in sorted(counts.items()))
    return f"0/{nodes} nodes are available: {body}." if body \
        else f"0/{nodes} nodes are available."


@dataclass
class Held:
    attempts: int
    held_s: float
    ready_s: float  # the backoff's end
    moved: bool = False  # the cluster changed since it was held
    message: str = ""


class UnschedulableQueue:
    """The pods held back (by the view's PodRef.uid) and when each may be tried again."""

    def __init__(self, initial_s: float = INITIAL_BACKOFF_S, max_s: float = MAX_BACKOFF_S,
                 flush_s: float = FLUSH_S) -> None:
        self.initial_s, self.max_s, self.flush_s = initial_s, max_s, flush_s
        self._held: dict[int, Held] = {}

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, uid: int, now_s: float, message: str) -> bool:
        """Holds the pod back; whether its message is new (worth a status update and an
        Event, as kube-scheduler writes one when the condition changes)."""
        old = self._held.get(uid)
        attempts = old.attempts + 1 if old is not None else 1
        backoff = min(self.max_s, self.initial_s * 2 ** (attempts - 1))
        self._held[uid] = Held(attempts, now_s, now_s + backoff, message=message)
        return old is None or old.message != message

    def cluster_changed(self) -> None:
        for held in self._held.values():
            held.moved = True

    def eligible(self, uid: int, now_s: float) -> bool:
        held = self._held.get(uid)
        return held is None or (held.moved and now_s >= held.ready_s) \
            or now_s - held.held_s >= self.flush_s

    def next_ready_s(self) -> float | None:
        """When the first pod the cluster's changes freed comes out of backoff."""
        moved = [held.ready_s for held in self._held.values() if held.moved]
        return min(moved) if moved else None

    def release(self, uid: int) -> None:
        """The pod is placed or gone."""
        self._held.pop(uid, None)

    def keep_only(self, uids: set[int]) -> None:
        """Forgets pods no longer pending (bound by someone else, deleted)."""
        for uid in [uid for uid in self._held if uid not in uids]:
            del self._held[uid]
